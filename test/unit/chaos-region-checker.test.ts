// The region campaign's checker over histories written by hand: frames whose ids are positions in
// every region's log (`a:2.b:1`), checked per region (tools/chaos/check-region-readers.ts), and the
// write checker over the logs of several regions, whose sequences overlap and have no order between them.
import { describe, expect, it } from 'vitest';
import { checkRegionCopies } from '../../tools/chaos/check-region-copies.js';
import { checkRegionReaders, reached } from '../../tools/chaos/check-region-readers.js';
import { checkRegionRefusals } from '../../tools/chaos/check-region-refusals.js';
import { checkStreams } from '../../tools/chaos/check-streams.js';
import { checkWrites } from '../../tools/chaos/check-writes.js';
import type { HistoryEvent } from '../../tools/chaos/history.js';
import type { ClientRecord, LogEntry, WriteOp } from '../../tools/chaos/records.js';

const CH = 'play.example.net';

/** a:1 a-1, b:1 b-1, a:2 a-2, b:2 b-2, a:3 a-3 (each region's log numbered on its own). */
const LOG: LogEntry[] = [
  { region: 'a', seq: 1, channel: CH, message: 'a-1' },
  { region: 'a', seq: 2, channel: CH, message: 'a-2' },
  { region: 'a', seq: 3, channel: CH, message: 'a-3' },
  { region: 'b', seq: 1, channel: CH, message: 'b-1' },
  { region: 'b', seq: 2, channel: CH, message: 'b-2' },
];

function client(frames: Array<[string, string]>, startId: string | null = null, extra: Partial<ClientRecord<string>> = {}): ClientRecord<string> {
  return { id: 'r1#1', reader: 'r1', account: 'r1', channel: CH, startId, frames: frames.map(([id, message], t) => ({ t, id, message })), opens: [{ t: 0, gateway: 'gateway-a' }], closed: null, ...extra };
}

const classes = (r: { anomalies: Array<{ class: string }> }): string[] => r.anomalies.map((a) => a.class);

describe('the region reader checker', () => {
  it('takes frames of two regions in any interleaving, each region in its order, as caught up', () => {
    const r = checkRegionReaders([client([['a:1', 'a-1'], ['a:1.b:1', 'b-1'], ['a:1.b:2', 'b-2'], ['a:2.b:2', 'a-2'], ['a:3.b:2', 'a-3']])], LOG);
    expect(r.anomalies).toEqual([]);
    expect(r.counts).toEqual({ clients: 1, frames: 5, caughtUp: 1 });
  });

  it('starts a fresh client at its first frame in its region and where that id says in the others', () => {
    // Its first frame names b:1: b-1 came before the stream, a-1 is its first frame.
    const r = checkRegionReaders([client([['a:1.b:1', 'a-1'], ['a:2.b:1', 'a-2'], ['a:2.b:2', 'b-2'], ['a:3.b:2', 'a-3']])], LOG);
    expect(r.anomalies).toEqual([]);
  });

  it('resumes from a Last-Event-ID of another region: what follows it in each region, nothing it names', () => {
    const good = checkRegionReaders([client([['a:3.b:1', 'a-3'], ['a:3.b:2', 'b-2']], 'a:2.b:1')], LOG);
    expect(good.anomalies).toEqual([]);
    const repeated = checkRegionReaders([client([['a:2.b:1', 'a-2'], ['a:3.b:1', 'a-3'], ['a:3.b:2', 'b-2']], 'a:2.b:1')], LOG);
    expect(classes(repeated)).toEqual(['duplicate-frame']);
    expect(repeated.anomalies[0]!.text).toMatch(/Last-Event-ID a:2\.b:1 names it/);
  });

  it('finds a gap in one region while the other is whole', () => {
    const r = checkRegionReaders([client([['a:1', 'a-1'], ['a:1.b:1', 'b-1'], ['a:3.b:1', 'a-3'], ['a:3.b:2', 'b-2']])], LOG);
    expect(classes(r)).toEqual(['gap']);
    expect(r.anomalies[0]!.text).toMatch(/without the 1 before it on play\.example\.net: a:2/);
  });

  it('finds a frame sent twice and one of its region out of order', () => {
    const twice = checkRegionReaders([client([['a:1', 'a-1'], ['a:2', 'a-2'], ['a:2', 'a-2'], ['a:3', 'a-3'], ['a:3.b:1', 'b-1'], ['a:3.b:2', 'b-2']])], LOG);
    expect(classes(twice)).toEqual(['duplicate-frame']);
    const late = checkRegionReaders([client([['a:1', 'a-1'], ['a:3', 'a-3'], ['a:2', 'a-2'], ['a:3.b:1', 'b-1'], ['a:3.b:2', 'b-2']])], LOG);
    expect(classes(late).sort()).toEqual(['gap', 'reorder']);
  });

  it('finds an id that does not name its frame, or moves a region without a frame', () => {
    const r = checkRegionReaders([client([['a:1', 'a-1'], ['a:3', 'a-2'], ['a:3.b:1', 'a-3'], ['a:3.b:2', 'b-1'], ['a:3.b:2', 'b-2']])], LOG);
    expect(classes(r)).toEqual(['wrong-id', 'wrong-id', 'wrong-id']);
    expect(classes(checkRegionReaders([client([['7', 'a-1']])], LOG))).toEqual(['wrong-frame']);
    expect(classes(checkRegionReaders([client([['a:1', 'nobody sent this']])], LOG))).toEqual(['wrong-frame']);
  });

  it('calls a running client behind in any region not caught up, naming the region', () => {
    const r = checkRegionReaders([client([['a:1', 'a-1'], ['a:2', 'a-2'], ['a:3', 'a-3'], ['a:3.b:1', 'b-1']])], LOG);
    expect(classes(r)).toEqual(['not-caught-up']);
    expect(r.anomalies[0]!.text).toMatch(/b 1 behind \(log to b:2\)/);
    // Evicted by its account's newer stream: it need not reach the end; closed for another reason, it is an anomaly.
    expect(checkRegionReaders([client([['a:1', 'a-1']], null, { closed: { t: 9, reason: 'evicted' } })], LOG).anomalies).toEqual([]);
    expect(classes(checkRegionReaders([client([['a:1', 'a-1']], null, { closed: { t: 9, reason: 'banned' } })], LOG))).toEqual(['closed-for-good']);
  });

  it('says a position has reached every region only when each region is at its newest', () => {
    const newest = new Map([['a', 3], ['b', 2]]);
    expect(reached('a:3.b:2', newest)).toBe(true);
    expect(reached('a:4.b:2.c:1', newest)).toBe(true);
    expect(reached('a:3', newest)).toBe(false);
    expect(reached(null, newest)).toBe(false);
  });
});

describe('the write checker over the logs of several regions', () => {
  const op = (id: string, invokedAt: number, outcome: WriteOp['outcome'] = 'ok'): WriteOp => ({ id, writer: id.split(':')[0]!, channel: CH, entries: [`${id}:0`], invokedAt, completedAt: invokedAt + 5, outcome, refusal: null, attempts: 1 });

  it('takes equal sequences in two regions for two places, with no order between the regions', () => {
    const log: LogEntry[] = [
      { region: 'a', seq: 1, channel: CH, message: 'wa:1:0' },
      { region: 'b', seq: 1, channel: CH, message: 'wb:1:0' },
      { region: 'a', seq: 2, channel: CH, message: 'wa:2:0' },
      // A writer that failed over from a to b: no order between its payloads in the two regions.
      { region: 'b', seq: 2, channel: CH, message: 'wa:3:0' },
    ];
    const r = checkWrites([op('wa:1', 0), op('wa:2', 10), op('wa:3', 20), op('wb:1', 0)], log);
    expect(r.anomalies).toEqual([]);
    expect(r.counts).toMatchObject({ acknowledged: 4, present: 4 });
  });

  it('finds a writer out of order within its region, and a payload stored in two regions', () => {
    const log: LogEntry[] = [
      { region: 'a', seq: 1, channel: CH, message: 'wa:2:0' },
      { region: 'a', seq: 2, channel: CH, message: 'wa:1:0' },
      { region: 'a', seq: 3, channel: CH, message: 'wa:3:0' },
      { region: 'c', seq: 1, channel: CH, message: 'wa:3:0' },
    ];
    const r = checkWrites([op('wa:1', 0), op('wa:2', 10), op('wa:3', 20)], log);
    expect(classes(r).sort()).toEqual(['duplicated', 'write-order']);
    expect(r.anomalies.find((a) => a.class === 'duplicated')!.text).toMatch(/stored 2 times, at a:3, c:1/);
    expect(r.anomalies.find((a) => a.class === 'write-order')!.text).toMatch(/stored at a:1, before it \(a:2\)/);
  });
});

describe('the stream checker with region ids', () => {
  it('finds an older stream sent frames long after the newer opened in another region, the grace given', () => {
    const older = client([['a:1', 'a-1'], ['a:2', 'a-2'], ['a:3', 'a-3']]);
    older.frames = older.frames.map((f, i) => ({ ...f, t: i * 20_000 }));
    const newer: ClientRecord<string> = { ...client([], 'a:1'), id: 'r1#2', opens: [{ t: 10_000, gateway: 'gateway-b' }] };
    expect(checkStreams([older, newer], [], 32_000).anomalies).toEqual([]);
    const r = checkStreams([older, newer], [], 1000);
    expect(classes(r)).toEqual(['double-stream']);
    expect(r.anomalies[0]!.text).toMatch(/ids a:2\.\.a:3/);
  });
});

describe('the copies of each region\'s log', () => {
  const copyOf = (origin: string, at: string, entries: LogEntry[]): { at: string; origin: string; entries: LogEntry[] } => ({ at, origin, entries });

  it('takes a copy holding its origin\'s log exactly, and names one that lacks, adds or changes a sequence', () => {
    const ofA = LOG.filter((e) => e.region === 'a');
    expect(checkRegionCopies(LOG, [copyOf('a', 'b', ofA)], 0)).toEqual([]);
    const bad = checkRegionCopies(LOG, [copyOf('a', 'b', [ofA[0]!, { ...ofA[1]!, message: 'other' }, { ...ofA[2]!, seq: 9 }])], 0);
    expect(classes({ anomalies: bad })).toEqual(['replica-divergence']);
    expect(bad[0]!.text).toBe("region b's copy of a's log lacks 1 (3); holds 1 its origin has not (9); holds another message at 1 (2)");
  });
});

/** One event of a writer's attempt ('op') or a reader's stream ('stream'), at `t`. */
const ev = (t: number, kind: 'op' | 'stream', subject: string, text: string): HistoryEvent => ({ t, kind, subject, text });

describe('the refusals of a region that is up', () => {
  it('excuses an attempt that failed while its region was killed, and names one refused while it was up', () => {
    // An attempt is the region of the ingress it was sent to: port 4000 is c's, 4001 a's.
    const regionOf = (e: HistoryEvent): string | null => ({ '4000': 'c', '4001': 'a' })[/:(\d+) /.exec(e.text)?.[1] ?? ''] ?? null;
    const events = [
      { t: 1000, kind: 'op' as const, subject: 'w1c_1:5', text: 'attempt 1 to :4000 failed: fetch failed' },
      { t: 1200, kind: 'op' as const, subject: 'w1a_1:9', text: 'attempt 1 to :4001 refused 503 unavailable' },
      { t: 1300, kind: 'op' as const, subject: 'w1a_1:9', text: 'ok after 2 attempts' },
    ];
    const r = checkRegionRefusals(events, regionOf, [{ region: 'c', start: 900, end: 5000 }]);
    expect(r.attempts).toBe(2);
    expect(classes(r)).toEqual(['refused-while-up']);
    expect(r.anomalies[0]!.text).toBe('w1a_1:9 in region a, which was up: attempt 1 to :4001 refused 503 unavailable');
  });
});

describe('the refusals while a region\'s relays restart cut off', () => {
  // Region c cut off at 1000, its relays killed at 3000 and ready again at 21000, the cut healed at 27000.
  // Attempts by the ingress's port (4000 c's, 4001 a's), streams by the client's region.
  const regionOf = (e: HistoryEvent): string | null =>
    e.kind === 'op' ? (({ '4000': 'c', '4001': 'a' })[/:(\d+) /.exec(e.text)?.[1] ?? ''] ?? null) : e.subject.startsWith('r1c_') ? 'c' : e.subject.startsWith('r1a_') ? 'a' : null;
  const down = [{ region: 'c', start: 3000, end: 21_000 }];

  it("excuses the restarted region's own writers and readers from the kill to both relays ready", () => {
    const r = checkRegionRefusals(
      [
        ev(3100, 'op', 'w1c_1:40', 'attempt 1 to :4000 failed: fetch failed'),
        ev(3050, 'stream', 'r1c_1#1', 'reconnecting in 250 ms: network'),
        ev(20_500, 'stream', 'r1c_1#1', 'reconnecting in 3000 ms: unavailable'),
        ev(21_400, 'op', 'w1c_1:40', 'attempt 9 to :4000 refused 503 unavailable'),
        // Not refusals: an open, an eviction, an answer.
        ev(22_000, 'stream', 'r1c_1#1', 'open on gateway-c resuming after c:40'),
        ev(23_000, 'stream', 'r1c_1#1', 'closed for good on gateway-c: evicted'),
        ev(22_000, 'op', 'w1c_1:40', 'ok after 10 attempts'),
      ],
      regionOf,
      down,
    );
    expect(r).toEqual({ attempts: 2, reconnects: 2, anomalies: [] });
  });

  it('names a refusal in another region during the restart, and one in the cut region before the kill or after its relays were ready', () => {
    const r = checkRegionRefusals(
      [
        ev(10_000, 'op', 'w1a_1:7', 'attempt 1 to :4001 refused 503 unavailable'),
        ev(12_000, 'stream', 'r1a_2#3', 'reconnecting in 250 ms: network'),
        // Cut off but serving: its clients may not be refused before the kill...
        ev(1500, 'stream', 'r1c_1#1', 'reconnecting in 250 ms: stream_ended'),
        // ...nor once both relays are ready, the cut still held.
        ev(24_000, 'op', 'w1c_1:51', 'attempt 1 to :4000 refused 503 unavailable'),
        // A writer of c failing over to a during the restart: c's refusal is excused, a's is not.
        ev(9000, 'op', 'w1c_2:30', 'attempt 1 to :4000 failed: fetch failed'),
        ev(9300, 'op', 'w1c_2:30', 'attempt 2 to :4001 refused 503 unavailable'),
      ],
      regionOf,
      down,
    );
    expect(r.anomalies.map((a) => a.subjects[0])).toEqual(['w1a_1:7', 'r1a_2#3', 'r1c_1#1', 'w1c_1:51', 'w1c_2:30']);
    expect(r.anomalies[4]!.text).toBe('w1c_2:30 in region a, which was up: attempt 2 to :4001 refused 503 unavailable');
    expect(r.anomalies.every((a) => a.class === 'refused-while-up')).toBe(true);
    expect(r.anomalies[1]!.text).toBe('r1a_2#3 in region a, which was up: reconnecting in 250 ms: network');
  });
});

describe("the refusals while a region's ingress is paused", () => {
  // c's ingress paused from 5000 to 16000; its gateway runs throughout.
  const regionOf = (): string => 'c';
  const down = [{ region: 'c', start: 5000, end: 16_000, writesOnly: true }];

  it("excuses its writers' unanswered attempts, and not a reader's stream on its gateway, which was never paused", () => {
    const r = checkRegionRefusals(
      [
        ev(13_100, 'op', 'w1c_3:12', 'attempt 1 to :4000 failed: the relay did not answer within 8000 ms'),
        ev(9000, 'stream', 'r1c_1#1', 'reconnecting in 250 ms: network'),
        ev(18_000, 'op', 'w1c_3:13', 'attempt 1 to :4000 refused 503 unavailable'),
      ],
      regionOf,
      down,
    );
    expect(r.anomalies.map((a) => a.subjects[0])).toEqual(['r1c_1#1', 'w1c_3:13']);
  });
});
