// Several logs read as one (core/merged-log.ts), at its own level: a bounded read oldest stored
// first whose position says exactly where each log stands when the reader stops (a page's cursor),
// and a live read that a quiet log does not hold back.
import { describe, expect, it } from 'vitest';
import { inArrivalOrder, MergedLog, type MergeSource, type Stored } from '../../services/core/merged-log.js';

interface Msg extends Stored {
  log: string;
}

/** A log whose messages are at these (sequence, store time) pairs; closing it ends a read waiting on it. */
function source(region: string, stored: Array<[number, number]>, options: { startSeq?: number; forever?: boolean; failAfter?: number } = {}): MergeSource<Msg> & { closed: boolean } {
  const state: { closed: boolean; release: (() => void) | null } = { closed: false, release: null };
  const messages = (async function* () {
    let given = 0;
    for (const [seq, time] of stored) {
      if (options.failAfter !== undefined && given === options.failAfter) throw new Error(`log ${region} failed`);
      yield { log: region, seq, info: { timestampNanos: time } };
      given++;
    }
    if (options.forever === true && !state.closed) await new Promise<void>((resolve) => (state.release = resolve));
  })();
  return {
    region,
    startSeq: options.startSeq ?? 1,
    messages,
    get closed() {
      return state.closed;
    },
    async close() {
      state.closed = true;
      state.release?.();
    },
  };
}

async function take<T>(it: AsyncIterable<T>, n = Infinity): Promise<T[]> {
  const out: T[] = [];
  if (n <= 0) return out;
  for await (const x of it) {
    out.push(x);
    if (out.length >= n) break;
  }
  return out;
}

describe('a bounded read of several logs', () => {
  it('hands entries on oldest stored first, a tie going to the earlier log of the order', async () => {
    const merged = new MergedLog([source('eu', [[1, 10], [2, 30], [5, 50]]), source('us', [[7, 10], [8, 20], [9, 60]]), source('ap', [])]);
    const read = (await take(merged)).map((f) => `${f.region}:${f.message.seq}`);
    expect(read).toEqual(['eu:1', 'us:7', 'us:8', 'eu:2', 'eu:5', 'us:9']);
  });

  it('stopped anywhere, says per log the first sequence not handed on, and a read from there hands on the rest, none twice', async () => {
    const eu: Array<[number, number]> = [[1, 10], [3, 25], [4, 40]];
    const us: Array<[number, number]> = [[2, 20], [6, 30], [9, 50]];
    const all = (await take(new MergedLog([source('eu', eu), source('us', us)]))).map((f) => `${f.region}:${f.message.seq}`);
    for (let stop = 0; stop <= all.length; stop++) {
      const first = new MergedLog([source('eu', eu, { startSeq: 1 }), source('us', us, { startSeq: 1 })]);
      const head = (await take(first, stop)).map((f) => `${f.region}:${f.message.seq}`);
      const at = first.position();
      const from = (log: Array<[number, number]>, seq: number): Array<[number, number]> => log.filter(([s]) => s >= seq);
      const rest = new MergedLog([source('eu', from(eu, at.get('eu')!), { startSeq: at.get('eu')! }), source('us', from(us, at.get('us')!), { startSeq: at.get('us')! })]);
      const tail = (await take(rest)).map((f) => `${f.region}:${f.message.seq}`);
      expect([...head, ...tail]).toEqual(all);
    }
  });

  it('says where a log that gave nothing stands: where its read began', async () => {
    const merged = new MergedLog([source('eu', [[4, 10]]), source('us', [], { startSeq: 12 })]);
    await take(merged);
    expect(merged.position()).toEqual(new Map([['eu', 5], ['us', 12]]));
  });

  it("throws a log's failure, and closes every log", async () => {
    const logs = [source('eu', [[1, 10], [2, 20]], { failAfter: 1 }), source('us', [[1, 15], [2, 25]])];
    await expect(take(new MergedLog(logs))).rejects.toThrow('log eu failed');
    expect(logs.map((l) => l.closed)).toEqual([true, true]);
  });

  it('closes every log when the reader stops early', async () => {
    const logs = [source('eu', [[1, 10], [2, 20]]), source('us', [[1, 15]])];
    await take(new MergedLog(logs), 1);
    expect(logs.map((l) => l.closed)).toEqual([true, true]);
  });
});

describe('a live read of several logs', () => {
  it('hands on what each log gives while another stays quiet, and ends once closed', async () => {
    const quiet = source('us', [], { forever: true });
    const busy = source('eu', [[1, 10], [2, 20], [3, 30]], { forever: true });
    const got = await take(inArrivalOrder([quiet, busy]), 3);
    expect(got.map((f) => `${f.region}:${f.message.seq}`)).toEqual(['eu:1', 'eu:2', 'eu:3']);
    expect([quiet.closed, busy.closed]).toEqual([true, true]);
  });

  it('stopped while logs hold messages no one has taken yet, closes every log and lets none wait', async () => {
    const busy = [source('eu', Array.from({ length: 50 }, (_, i): [number, number] => [i + 1, i]), { forever: true }), source('us', Array.from({ length: 50 }, (_, i): [number, number] => [i + 1, i]), { forever: true })];
    const got = await take(inArrivalOrder(busy), 5);
    expect(got).toHaveLength(5);
    expect(busy.map((l) => l.closed)).toEqual([true, true]);
  });

  it('ends when every log has ended, each log in its own order', async () => {
    const got = await take(inArrivalOrder([source('eu', [[1, 1], [2, 2]]), source('us', [[5, 1], [6, 2]])]));
    expect(got.filter((f) => f.region === 'eu').map((f) => f.message.seq)).toEqual([1, 2]);
    expect(got.filter((f) => f.region === 'us').map((f) => f.message.seq)).toEqual([5, 6]);
  });

  it("throws a log's failure after what came before it, and closes the others", async () => {
    const other = source('us', [], { forever: true });
    const failing = source('eu', [[1, 1], [2, 2]], { failAfter: 1 });
    const seen: number[] = [];
    await expect(
      (async () => {
        for await (const f of inArrivalOrder([failing, other])) seen.push(f.message.seq);
      })(),
    ).rejects.toThrow('log eu failed');
    expect(seen).toEqual([1]);
    expect(other.closed).toBe(true);
  });
});
