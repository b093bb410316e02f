// The campaign's writers: each a player posting chat to its channel through @channel-relay/client,
// one operation at a time (the next once the previous is answered), sometimes a small batch. The
// library resends a POST under one Idempotency-Key until the relay answers 2xx or refuses for good;
// its fetch goes to the next ingress at every attempt, as a load balancer would, and every attempt
// lands in the history. An operation still unanswered when the run ends is unknown, never lost.

import { RelayClient, isRelayError, type FetchInit, type Payload } from '../../clients/typescript/src/index.js';
import type { History } from './history.js';
import type { Random } from './random.js';
import type { WriteOp } from './records.js';

export const CAMPAIGN_AGENT = 'chaos-campaign/1.0.0+0000000000000000000000000000000000c4a05';

export interface WriterOptions {
  name: string;
  channel: string;
  key: { clientId: string; clientSecret: string };
  /** The ingresses' base URLs, as they are now. */
  ingresses: () => readonly string[];
  history: History;
  random: Random;
  /** Pause between one answer and the next operation (ms). */
  pace: [number, number];
  /**
   * Where an operation's attempt `n` (1: its first) goes, instead of the next ingress in turn: a
   * region's writer that fails over (region-workload.ts). Each attempt's origin is then kept in the
   * operation's `origins`.
   */
  route?: (attempt: number) => string;
}

/** The same origin-relative path on another relay process. */
export function onOrigin(url: string, origin: string): string {
  const u = new URL(url);
  const o = new URL(origin);
  u.protocol = o.protocol;
  u.host = o.host;
  return u.toString();
}

export class Writer {
  readonly ops: WriteOp[] = [];
  private readonly o: WriterOptions;
  private readonly client: RelayClient;
  private current: WriteOp | null = null;
  private turn: number;
  private stopping = false;
  private running: Promise<void> | null = null;

  constructor(o: WriterOptions) {
    this.o = o;
    this.turn = o.random.int(0, 1000);
    this.client = new RelayClient({
      url: o.ingresses()[0]!,
      server: o.channel,
      clientId: o.key.clientId,
      clientSecret: o.key.clientSecret,
      userAgent: CAMPAIGN_AGENT,
      token: () => `offline:${o.name}`,
      // Until answered: the run's end, not a count of attempts, gives up on a POST.
      sendAttempts: 1_000_000,
      backoff: { baseMs: 100, capMs: 2000 },
      watchdogMs: 8000,
      fetch: (url, init) => this.fetch(url, init),
    });
  }

  private async fetch(url: string, init: FetchInit): Promise<Response> {
    const ingresses = this.o.ingresses();
    const op = this.current;
    const origin = this.o.route !== undefined && op !== null ? this.o.route(op.attempts + 1) : ingresses[this.turn++ % ingresses.length]!;
    if (op !== null) {
      op.attempts++;
      if (this.o.route !== undefined) (op.origins ??= []).push(origin);
    }
    const where = new URL(origin).port;
    try {
      const res = await fetch(onOrigin(url, origin), init);
      if (op !== null && res.status >= 300) {
        const body = await res.clone().text().catch(() => '');
        const code = /"error":"([a-z_]+)"/.exec(body)?.[1] ?? '';
        op.refusal = `${res.status} ${code}`.trim();
        this.o.history.record('op', op.id, `attempt ${op.attempts} to :${where} refused ${op.refusal}`);
      }
      return res;
    } catch (e) {
      if (op !== null) this.o.history.record('op', op.id, `attempt ${op.attempts} to :${where} failed: ${e instanceof Error ? e.message : String(e)}`);
      throw e;
    }
  }

  start(): void {
    this.running = this.loop();
  }

  private async loop(): Promise<void> {
    for (let n = 1; !this.stopping; n++) {
      await this.one(n);
      await new Promise((r) => setTimeout(r, this.o.random.int(this.o.pace[0], this.o.pace[1])));
    }
  }

  private async one(n: number): Promise<void> {
    const { history, random } = this.o;
    const id = `${this.o.name}:${n}`;
    const size = random.chance(0.25) ? random.int(2, 4) : 1;
    const entries = Array.from({ length: size }, (_, i) => `${id}:${i}`);
    const op: WriteOp = { id, writer: this.o.name, channel: this.o.channel, entries, invokedAt: history.now(), completedAt: null, outcome: 'pending', refusal: null, attempts: 0 };
    this.ops.push(op);
    this.current = op;
    history.record('op', id, `invoke ${size === 1 ? 'chat' : `batch of ${size}`} on ${this.o.channel}`);
    const payloads: Payload[] = entries.map((message) => ({ type: 'chat', message }));
    try {
      await this.client.send(size === 1 ? payloads[0]! : payloads);
      op.outcome = 'ok';
      op.completedAt = history.now();
      if (op.attempts > 1) history.record('op', id, `ok after ${op.attempts} attempts`);
    } catch (e) {
      const status = isRelayError(e) ? e.status : 0;
      // Refused for good: a 4xx other than a timeout or throttling. Anything else is unknown.
      if (status >= 400 && status < 500 && status !== 408 && status !== 429) {
        op.outcome = 'failed';
        op.completedAt = history.now();
        op.refusal = `${status} ${isRelayError(e) ? e.code : ''}`;
      } else op.outcome = 'unknown';
      history.record('op', id, `${op.outcome}: ${e instanceof Error ? e.message : String(e)}`);
    } finally {
      this.current = null;
    }
  }

  /** No new operation after the one in flight. */
  stop(): void {
    this.stopping = true;
  }

  /** Resolves once the operation in flight is answered, or after `ms` (it then stays pending). */
  async settle(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.running, new Promise((r) => (timer = setTimeout(r, ms)))]);
    clearTimeout(timer);
  }

  /** Gives up on what is still unanswered: it is unknown. */
  abandon(): void {
    this.client.close();
    for (const op of this.ops) if (op.outcome === 'pending') op.outcome = 'unknown';
  }
}
