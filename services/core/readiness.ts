// Whether this process can do its work now, for /readyz, the relay_ready gauge and the node's
// heartbeat (one evaluation, three readers). Connected to NATS is not enough: the fault campaign
// (docs/RELIABILITY.md) saw every relay answer 200 for seconds while the event log had no leader
// (nothing could be stored) and while JetStream had no meta leader (no consumer could be made, so
// no resume or gap fill from the log). So each check asks what the work needs:
//   nats      the connection is up;
//   log       the event log has a leader (a member of a leaderless stream still answers stream
//             info, with an empty leader, so an answer alone proves nothing);
//   buckets   the buckets this service writes on its path have leaders (ingress: Idempotency-Key
//             records; gateway: stream claims);
//   jetstream (gateway, without regions) JetStream answers its account information (the gateway
//             reads the log by leader gets, and makes no consumer);
//   draining  the process is not shutting down.

import type { JetStreamManager } from '@nats-io/jetstream';
import { kvStream } from './kv-internals.js';
import { claimsBucket, idempotencyBucket, writtenLog } from './subjects.js';

/** A check that has not answered by then counts as failing: readiness must answer promptly. */
const CHECK_TIMEOUT_MS = 2000;
/** Probes this close together share one evaluation (a poller every 50 ms is not 60 JetStream requests a second). */
const REUSE_MS = 500;

export interface ReadinessCheck {
  name: string;
  check(): boolean | Promise<boolean>;
  /** A local fact (draining, connected), read at every probe; the others (NATS requests) are shared. */
  local?: boolean;
}

export class Readiness {
  private readonly checks: ReadinessCheck[];
  private last: readonly string[] = [];
  private lastRemote: readonly string[] = [];
  private lastAt = -Infinity;
  private running: Promise<readonly string[]> | null = null;
  private timer: NodeJS.Timeout | undefined;

  constructor(checks: ReadinessCheck[]) {
    this.checks = checks;
  }

  /**
   * The names of the checks failing now (none: ready). Local checks are read at every call; the
   * requests to NATS are shared with the evaluation under way or one made within REUSE_MS.
   */
  async evaluate(): Promise<string[]> {
    const remote = await this.remote();
    const failing = this.checks.filter((c) => (c.local === true ? !readLocal(c) : remote.includes(c.name))).map((c) => c.name);
    this.last = failing;
    return failing;
  }

  private remote(): Promise<readonly string[]> {
    if (this.running !== null) return this.running;
    if (performance.now() - this.lastAt < REUSE_MS) return Promise.resolve(this.lastRemote);
    this.running = this.run().finally(() => {
      this.running = null;
      this.lastAt = performance.now();
    });
    return this.running;
  }

  private async run(): Promise<readonly string[]> {
    const results = await Promise.all(
      this.checks
        .filter((c) => c.local !== true)
        .map(async (r) => {
          let timer: NodeJS.Timeout | undefined;
          const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), CHECK_TIMEOUT_MS)));
          const ok = await Promise.race([Promise.resolve().then(() => r.check()).catch(() => false), timeout]);
          clearTimeout(timer);
          return [r.name, ok] as const;
        }),
    );
    this.lastRemote = results.filter(([, ok]) => !ok).map(([name]) => name);
    return this.lastRemote;
  }

  /** The last evaluation's verdict (what the gauge and the heartbeat report between probes). */
  get ready(): boolean {
    return this.last.length === 0;
  }

  /** Evaluates every `intervalMs`, so `ready` follows NATS without anyone probing. */
  watch(intervalMs: number): void {
    this.timer = setInterval(() => void this.evaluate(), intervalMs).unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

function readLocal(c: ReadinessCheck): boolean {
  try {
    return c.check() === true;
  } catch {
    return false;
  }
}

/** Whether a stream (the log, a bucket's) has a leader; a server outside a cluster leads its own. */
async function hasLeader(jsm: JetStreamManager, stream: string): Promise<boolean> {
  const info = await jsm.streams.info(stream);
  return info.cluster === undefined || (info.cluster.leader ?? '') !== '';
}

/** The NATS side of readiness for a process serving `ingress`, `gateway` or both, in `region` (null: none). */
export function natsChecks(jsm: JetStreamManager, connected: () => boolean, serves: { ingress: boolean; gateway: boolean }, region: string | null): ReadinessCheck[] {
  const buckets = [...(serves.ingress ? [idempotencyBucket(region)] : []), ...(serves.gateway ? [claimsBucket(region)] : [])];
  const log = writtenLog(region).stream;
  return [
    { name: 'nats', check: connected, local: true },
    { name: 'log', check: () => hasLeader(jsm, log) },
    { name: 'buckets', check: async () => (await Promise.all(buckets.map((b) => hasLeader(jsm, kvStream(b))))).every(Boolean) },
    // Answered only by the meta leader (or refused at once by a node that knows there is none). Not
    // with regions: there a gateway reads its region's streams by direct gets when the meta group
    // is gone (core/log-walk.ts), and a region cut off from the others keeps serving its players.
    ...(serves.gateway && region === null ? [{ name: 'jetstream', check: async () => (await jsm.getAccountInfo()) !== undefined }] : []),
  ];
}
