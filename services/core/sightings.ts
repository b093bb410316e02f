// When each node's heartbeat was last seen, and what may be concluded from it. A node unseen for the
// timeout is gone, unless the watcher itself was deaf meanwhile: when NATS fails, every node's
// heartbeats stop together, and each watcher that comes back first would take all the others for
// dead. So a watcher also watches for its own heartbeat. Unseen for DEAF_FRACTION of the timeout,
// it is deaf and concludes nothing; once it hears itself again, every node counts as seen at that
// moment, and gets a whole timeout to beat again. (Two gateways once swept each other's claims right
// after a NATS outage, leaving two live streams of one account: docs/RELIABILITY.md.)

/** Own heartbeat unseen this share of the timeout (two beats, at a beat every third): deaf. */
const DEAF_FRACTION = 2 / 3;

export class Sightings {
  private readonly lastSeen = new Map<string, number>();
  private readonly startedAt: number;
  private readonly timeoutMs: number;
  private readonly deafAfterMs: number;
  private readonly self: string | undefined;
  /** When this watcher last heard itself again after being deaf: nobody's silence before counts. */
  private heardAgainAt = 0;

  /** `self`: this watcher's own node id, when it beats (without it, it is taken to hear always). */
  constructor(timeoutMs: number, self: string | undefined, now: number) {
    this.timeoutMs = timeoutMs;
    this.deafAfterMs = Math.round(timeoutMs * DEAF_FRACTION);
    this.self = self;
    this.startedAt = now;
  }

  seen(node: string, now: number): void {
    if (node === this.self && !this.hearing(now)) this.heardAgainAt = now;
    this.lastSeen.set(node, now);
  }

  /** Unknown nodes count as alive until this watcher has watched for a full timeout. */
  isAlive(node: string, now: number): boolean {
    const seen = Math.max(this.lastSeen.get(node) ?? this.startedAt, this.heardAgainAt);
    return now - seen < this.timeoutMs;
  }

  /** Whether this watcher hears the mesh: its own heartbeat seen lately. */
  hearing(now: number): boolean {
    if (this.self === undefined) return true;
    return now - (this.lastSeen.get(this.self) ?? this.startedAt) <= this.deafAfterMs;
  }

  lastBeat(node: string): number | undefined {
    return this.lastSeen.get(node);
  }
}
