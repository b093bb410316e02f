// A client resumes anywhere and misses nothing, repeats nothing (docs/REGIONS.md): the rule of
// log-position.ts checked over a model of regions and gateways. Each region's log holds the channel's
// frames in its own order; each gateway hears every region's frames in that region's order, in an
// interleaving of its own, and may start hearing late; a resume reads what the client lacks from the
// gateway's copies of the logs, which may lag its live feed (it then waits for them, as a gateway
// holds a stream's live frames); a client is sent frames with its position as `id:`, leaves at any
// moment and comes back at any gateway with the last id it kept. Small cases are enumerated whole;
// larger ones are drawn from fixed seeds.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseEventId } from '../../schemas/event-id.js';
import { LogPosition, ONE_LOG } from '../../services/gateway/stream/log-position.js';

interface Frame {
  region: string;
  seq: number;
}
type Logs = ReadonlyMap<string, readonly number[]>;

/** A gateway's group: its position, its copies of the logs, and the streams it sends to. */
class ModelGateway {
  readonly group: LogPosition;
  private readonly streams = new Set<ModelClient>();
  /** Streams whose resume waits for a copy to hold what they lack. */
  private readonly waiting = new Set<ModelClient>();
  private readonly logs: Logs;
  private readonly order: readonly string[];
  /** How many frames of each region's log this gateway's copy holds. */
  private readonly copies: Map<string, number>;

  /** `copies`: how much of each log the local copy holds at first (whole when not given). */
  constructor(logs: Logs, order: readonly string[], start: LogPosition, copies?: ReadonlyMap<string, number>) {
    this.logs = logs;
    this.order = order;
    this.group = start.copy();
    this.copies = new Map([...logs].map(([r, seqs]) => [r, copies?.get(r) ?? seqs.length]));
  }

  hear(frame: Frame): void {
    // A region's frames reach a group in that region's order: anything else is the model's own bug.
    if (!this.group.advance(frame.region, frame.seq)) throw new Error(`gateway heard ${frame.region}:${frame.seq} twice or out of order`);
    for (const s of this.streams) s.offer(frame, this.order);
  }

  /** The copy of `region`'s log takes in `frames` more. */
  copyCatchesUp(region: string, frames: number): void {
    this.copies.set(region, Math.min(this.logs.get(region)!.length, this.copies.get(region)! + frames));
    this.resumeWaiting();
  }

  /** A stream opens: with a Last-Event-ID it is first sent what it lacks of this group, from the copies. */
  join(client: ModelClient, lastId: string | null): void {
    const parsed = lastId === null ? null : parseEventId(lastId);
    if (lastId !== null && parsed === null) throw new Error(`the client kept an id the gateway refuses: ${lastId}`);
    client.attach(parsed === null ? this.group : LogPosition.of(parsed));
    this.waiting.add(client);
    this.resumeWaiting();
  }

  get waits(): boolean {
    return this.waiting.size > 0;
  }

  private resumeWaiting(): void {
    for (const client of this.waiting) {
      const ranges = client.at.lacks(this.group, this.order);
      const copied = (region: string): number => this.logs.get(region)!.slice(0, this.copies.get(region)).at(-1) ?? 0;
      if (ranges.some((r) => copied(r.region) < r.until)) continue;
      for (const range of ranges) {
        for (const seq of this.logs.get(range.region)!) {
          if (seq <= range.after || seq > range.until) continue;
          // Everything a resume sends is new to the client: a replay that starts too early is a fault
          // even where the client would have dropped what it had.
          if (!client.offer({ region: range.region, seq }, this.order)) throw new Error(`replayed ${range.region}:${seq}, which the client had`);
        }
      }
      this.waiting.delete(client);
      this.streams.add(client);
    }
  }

  leave(client: ModelClient): void {
    this.streams.delete(client);
    this.waiting.delete(client);
  }
}

class ModelClient {
  readonly received: Frame[] = [];
  lastId: string | null = null;
  start: LogPosition | null = null;
  private position = new LogPosition();

  attach(from: LogPosition): void {
    this.position = from.copy();
    // Without an id (it was sent no frame yet) a client starts anew where it lands: the promise
    // counts from the position of its first id.
    if (this.lastId === null) this.start = from.copy();
  }

  get at(): LogPosition {
    return this.position;
  }

  /** Whether the frame was new to the stream (and so sent). */
  offer(frame: Frame, order: readonly string[]): boolean {
    if (!this.position.advance(frame.region, frame.seq)) return false;
    this.received.push(frame);
    this.lastId = this.position.id(order);
    return true;
  }
}

/** Every frame each region logged after the client's first position, each once, in its region's order. */
function expectWhole(client: ModelClient, logs: Logs, heardAll: LogPosition): void {
  for (const [region, seqs] of logs) {
    const got = client.received.filter((f) => f.region === region).map((f) => f.seq);
    const due = seqs.filter((s) => s > client.start!.get(region) && s <= heardAll.get(region));
    expect(got, `region ${region}`).toEqual(due);
  }
}

/** The frames of every region, merged in the interleaving `pick` chooses (a region's own order kept). */
function interleave(logs: Logs, picks: readonly number[]): Frame[] {
  const next = new Map([...logs.keys()].map((r) => [r, 0]));
  const out: Frame[] = [];
  for (let i = 0; ; i++) {
    const open = [...logs.keys()].filter((r) => next.get(r)! < logs.get(r)!.length);
    if (open.length === 0) return out;
    const region = open[(picks[i] ?? 0) % open.length]!;
    out.push({ region, seq: logs.get(region)![next.get(region)!]! });
    next.set(region, next.get(region)! + 1);
  }
}

function allInterleavings(logs: Logs): Frame[][] {
  const total = [...logs.values()].reduce((n, s) => n + s.length, 0);
  const seen = new Map<string, Frame[]>();
  const walk = (picks: number[]): void => {
    if (picks.length === total) {
      const frames = interleave(logs, picks);
      seen.set(frames.map((f) => `${f.region}${f.seq}`).join(' '), frames);
      return;
    }
    for (let p = 0; p < logs.size; p++) walk([...picks, p]);
  };
  walk([]);
  return [...seen.values()];
}

describe('a client resumes at any gateway of any region with the id it kept', () => {
  it('misses nothing and repeats nothing, at every interleaving of two regions, every moment of leaving and every gateway and moment of coming back', () => {
    const logs: Logs = new Map([
      ['eu', [1, 4]],
      ['us', [2, 3]],
    ]);
    const order = ['eu', 'us'];
    const orders = allInterleavings(logs);
    expect(orders).toHaveLength(6);
    const end = new LogPosition([...logs].map(([r, s]) => [r, s.at(-1)!] as const));
    let cases = 0;
    for (const first of orders) {
      for (const second of orders) {
        for (let joinedAt = 0; joinedAt <= 4; joinedAt++) {
          for (let leftAt = joinedAt; leftAt <= 4; leftAt++) {
            for (const backAtSecond of [false, true]) {
              for (let backAt = 0; backAt <= 4; backAt++) {
                const x = new ModelGateway(logs, order, new LogPosition());
                const y = backAtSecond ? new ModelGateway(logs, order, new LogPosition()) : x;
                const client = new ModelClient();
                const feeds = new Map([[x, first], ...(y === x ? [] : [[y, second] as const])]);
                const heard = new Map([...feeds.keys()].map((g) => [g, 0]));
                const run = (g: ModelGateway, upTo: number): void => {
                  while (heard.get(g)! < upTo) g.hear(feeds.get(g)![heard.set(g, heard.get(g)! + 1).get(g)! - 1]!);
                };
                run(x, joinedAt);
                x.join(client, null);
                run(x, leftAt);
                x.leave(client);
                // The gateway it comes back to is anywhere in its own feed, behind or ahead of the client.
                run(y, backAt);
                y.join(client, client.lastId);
                for (const g of feeds.keys()) run(g, 4);
                expectWhole(client, logs, end);
                cases++;
              }
            }
          }
        }
      }
    }
    expect(cases).toBe(6 * 6 * 15 * 2 * 5);
  });

  it('over three regions, gateways that start hearing late, copies of the logs that lag, and clients that come back many times (seeded)', () => {
    const regionNames = ['eu', 'us', 'ap'];
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 1, maxLength: 8 }), { minLength: 3, maxLength: 3 }),
        fc.array(fc.array(fc.nat(), { minLength: 30, maxLength: 30 }), { minLength: 3, maxLength: 3 }),
        fc.array(fc.nat({ max: 2 }), { minLength: 3, maxLength: 3 }),
        fc.array(fc.tuple(fc.nat({ max: 2 }), fc.nat({ max: 20 })), { minLength: 1, maxLength: 12 }),
        fc.array(fc.array(fc.nat({ max: 8 }), { minLength: 3, maxLength: 3 }), { minLength: 3, maxLength: 3 }),
        (steps, picks, lateBy, moves, copied) => {
          // Each region's sequences for the channel grow with gaps (other channels share its log).
          const logs: Logs = new Map(regionNames.map((r, i) => [r, steps[i]!.reduce<number[]>((acc, d) => [...acc, (acc.at(-1) ?? 0) + d], [])]));
          const end = new LogPosition([...logs].map(([r, s]) => [r, s.at(-1)!] as const));
          const feeds = picks.map((p) => interleave(logs, p));
          // Gateway i first hears frame lateBy[i] of its feed: its group starts where its reads of the logs put it.
          const gateways = feeds.map((feed, i) => {
            const start = new LogPosition();
            for (const f of feed.slice(0, lateBy[i])) start.advance(f.region, f.seq);
            // Its copies of the logs hold a few frames of each, behind or ahead of what it hears live.
            const copies = new Map(regionNames.map((r, j) => [r, copied[i]![j]!]));
            return { gateway: new ModelGateway(logs, regionNames, start, copies), feed, heard: lateBy[i]! };
          });
          const client = new ModelClient();
          let at = gateways[0]!;
          at.gateway.join(client, null);
          for (const [to, frames] of moves) {
            for (let n = 0; n < frames && at.heard < at.feed.length; n++) at.gateway.hear(at.feed[at.heard++]!);
            at.gateway.leave(client);
            // The others move on meanwhile, each at its own pace, and one copy of each gateway catches up a little.
            for (const g of gateways) if (g !== at && g.heard < g.feed.length && frames % 2 === 0) g.gateway.hear(g.feed[g.heard++]!);
            for (const g of gateways) g.gateway.copyCatchesUp(regionNames[frames % 3]!, frames % 4);
            at = gateways[to]!;
            at.gateway.join(client, client.lastId);
          }
          // In the end every copy catches up: a resume waiting for one goes on.
          for (const r of regionNames) at.gateway.copyCatchesUp(r, Infinity);
          expect(at.gateway.waits).toBe(false);
          while (at.heard < at.feed.length) at.gateway.hear(at.feed[at.heard++]!);
          expectWhole(client, logs, end);
          if (client.lastId !== null) expect(parseEventId(client.lastId)).not.toBeNull();
        },
      ),
      { seed: 20261205, numRuns: 2000 },
    );
  });
});

describe('without regions, the one log', () => {
  it('is named by the bare sequence, as ids have always been', () => {
    const p = new LogPosition([[ONE_LOG, 1042]]);
    expect(p.id()).toBe('1042');
    expect(LogPosition.of(parseEventId('1042')!).get(ONE_LOG)).toBe(1042);
    expect(p.lacks(new LogPosition([[ONE_LOG, 1050]]))).toEqual([{ region: ONE_LOG, after: 1042, until: 1050 }]);
  });
});

describe("a stream's position", () => {
  it('does not step back when a frame it already holds arrives (it came from a gateway ahead of this one)', () => {
    const p = new LogPosition([['eu', 10]]);
    expect(p.advance('eu', 9)).toBe(false);
    expect(p.advance('eu', 10)).toBe(false);
    expect(p.advance('eu', 11)).toBe(true);
    expect(p.id(['eu'])).toBe('eu:11');
  });
});
