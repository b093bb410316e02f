// The owner index at its own level (the record per account that the stream caps count across the
// mesh), over an in-memory bucket with compare-and-set: what each open and close costs in round
// trips, and that a stale copy of a record never loses another node's key.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { OwnerHoldings as OwnerIndex } from '../../services/gateway/ownership/owner-holdings.js';
import { parseHoldings } from '../../services/gateway/ownership/owner-records.js';
import { MemoryOwnerRecords } from '../helpers/memory-owner-records.js';

const OWNER = '11111111-2222-3333-4444-555555555555';
const KEY_A = `${OWNER}.a_example_net`;
const KEY_B = `${OWNER}.b_example_net`;

let records: MemoryOwnerRecords;
let dead: Set<string>;
/** Which node each key's claim names, as the claims bucket would answer (null: none; unset: the node asking). */
let claims: Map<string, string | null>;
/** Runs when a node reads a claim, before the answer comes back (another node's writes may land meanwhile). */
let whileReadingClaim: (() => Promise<void>) | undefined;

function node(id: string): OwnerIndex {
  const holder = async (key: string): Promise<string | null> => {
    const answer = claims.has(key) ? claims.get(key)! : id;
    await whileReadingClaim?.();
    return answer;
  };
  return new OwnerIndex({ records, nodeId: id, isAlive: (n) => !dead.has(n), holder });
}

const held = (): Record<string, string> => Object.fromEntries(records.peek(OWNER).holdings);

beforeEach(() => {
  records = new MemoryOwnerRecords();
  dead = new Set();
  claims = new Map();
  whileReadingClaim = undefined;
});
afterEach(() => {
  vi.useRealTimers();
});

describe('owner index', () => {
  it('an open reads the record once for its caps, and adding its key is one write at that revision', async () => {
    const a = node('gw-a');
    const seen = await a.remote(OWNER, KEY_A);
    expect(seen).toMatchObject({ count: 0, holdsKey: false });
    a.add(OWNER, KEY_A, seen.record);
    await a.settled();
    expect(held()).toEqual({ [KEY_A]: 'gw-a' });
    expect({ reads: records.reads, writes: records.writes }).toEqual({ reads: 1, writes: 1 });
  });

  it('a record another node wrote after the open read it is read again, and both keys are kept', async () => {
    const [a, b] = [node('gw-a'), node('gw-b')];
    const seenByA = await a.remote(OWNER, KEY_A);
    const seenByB = await b.remote(OWNER, KEY_B);
    b.add(OWNER, KEY_B, seenByB.record);
    await b.settled();
    a.add(OWNER, KEY_A, seenByA.record);
    await a.settled();
    expect(held()).toEqual({ [KEY_A]: 'gw-a', [KEY_B]: 'gw-b' });
    // gw-a: its read at open, the write refused at the stale revision, a read, the write.
    expect(records.reads).toBe(3);
    expect(records.writes).toBe(3);
    expect(await node('gw-c').remote(OWNER, KEY_B)).toMatchObject({ count: 2, holdsKey: true });
  });

  it('the key stays while any local stream holds it, and the record is deleted with the last', async () => {
    const a = node('gw-a');
    a.add(OWNER, KEY_A);
    a.add(OWNER, KEY_A);
    await a.settled();
    a.remove(OWNER, KEY_A);
    await a.settled();
    expect(held()).toEqual({ [KEY_A]: 'gw-a' });
    a.remove(OWNER, KEY_A);
    await a.settled();
    expect(held()).toEqual({});
    expect(await a.remote(OWNER, KEY_A)).toMatchObject({ count: 0, holdsKey: false });
  });

  it('a close of an owner’s only stream is one write, at the revision this node wrote', async () => {
    const a = node('gw-a');
    a.add(OWNER, KEY_A, (await a.remote(OWNER, KEY_A)).record);
    await a.settled();
    a.remove(OWNER, KEY_A);
    await a.settled();
    expect(held()).toEqual({});
    expect({ reads: records.reads, writes: records.writes }).toEqual({ reads: 1, writes: 2 });
  });

  it('a close whose record another node has written since reads it again, and keeps that node’s key', async () => {
    const [a, b] = [node('gw-a'), node('gw-b')];
    a.add(OWNER, KEY_A);
    await a.settled();
    b.add(OWNER, KEY_B);
    await b.settled();
    a.remove(OWNER, KEY_A);
    await a.settled();
    expect(held()).toEqual({ [KEY_B]: 'gw-b' });
  });

  it('a reopen whose read of the record came before the old stream’s close still writes its key (the read is only a guess)', async () => {
    const a = node('gw-a');
    a.add(OWNER, KEY_A);
    await a.settled();
    // The second stream's open reads the record while the first still holds the key ...
    const seen = await a.remote(OWNER, KEY_A);
    // ... the first ends (the record is emptied), then the second's claim lands.
    a.remove(OWNER, KEY_A);
    await a.settled();
    a.add(OWNER, KEY_A, seen.record);
    await a.settled();
    expect(held()).toEqual({ [KEY_A]: 'gw-a' });
  });

  // Guards (issue 27, found by test/unit/ownership-interleavings.test.ts): an open on gw-a whose
  // claim gw-b replaced wrote the key as gw-a's over gw-b's entry, and gw-a's close then took the
  // key out: gw-b's live stream was counted nowhere.
  it('an open whose claim was replaced before its record write leaves the newer holder’s key alone, and its close too', async () => {
    const [a, b] = [node('gw-a'), node('gw-b')];
    const seenByA = await a.remote(OWNER, KEY_A);
    b.add(OWNER, KEY_A, (await b.remote(OWNER, KEY_A)).record);
    await b.settled();
    claims.set(KEY_A, 'gw-b');
    a.add(OWNER, KEY_A, seenByA.record);
    await a.settled();
    a.remove(OWNER, KEY_A);
    await a.settled();
    expect(held()).toEqual({ [KEY_A]: 'gw-b' });
  });

  it('a write that fails for good is tried again, with what the node holds by then', async () => {
    vi.useFakeTimers();
    const a = node('gw-a');
    records.failNextWrites = 8;
    a.add(OWNER, KEY_A);
    await vi.advanceTimersByTimeAsync(0);
    expect(held()).toEqual({});
    await vi.advanceTimersByTimeAsync(1000);
    expect(held()).toEqual({ [KEY_A]: 'gw-a' });
    vi.useRealTimers();
  });

  it('when every client leaves at once, the records are emptied 32 writes at a time, not all at once', async () => {
    const a = node('gw-a');
    const owners = Array.from({ length: 100 }, (_, i) => `owner-${i}`);
    for (const o of owners) a.add(o, `${o}.c_example_net`);
    await a.settled();
    records.maxInFlight = 0;
    for (const o of owners) a.remove(o, `${o}.c_example_net`);
    await a.settled();
    expect(records.maxInFlight).toBeLessThanOrEqual(32);
    for (const o of owners) expect(records.peek(o).holdings.size).toBe(0);
  });

  it('a stream back on its key before the key’s removal came up costs no write of the record', async () => {
    const a = node('gw-a');
    const others = Array.from({ length: 40 }, (_, i) => `owner-${i}`);
    for (const o of [...others, OWNER]) a.add(o, o === OWNER ? KEY_A : `${o}.c_example_net`);
    await a.settled();
    const writes = records.writes;
    // 40 removals ahead of it, 32 at a time: the key's own waits, and the stream comes back meanwhile.
    for (const o of others) a.remove(o, `${o}.c_example_net`);
    a.remove(OWNER, KEY_A);
    a.add(OWNER, KEY_A, (await a.remote(OWNER, KEY_A)).record);
    await a.settled();
    expect(held()).toEqual({ [KEY_A]: 'gw-a' });
    expect(records.writes - writes).toBe(40);
  });

  // Guards (issue 27, found by test/unit/ownership-interleavings.test.ts): another node's write
  // of the record dropped the keys of a node taken for dead; the node was only paused, and its
  // live stream was counted nowhere once it was back.
  it('keys of nodes taken for dead are not counted, and stay in the record: a node only paused counts again once it is back', async () => {
    const [a, b] = [node('gw-a'), node('gw-b')];
    b.add(OWNER, KEY_B);
    await b.settled();
    dead.add('gw-b');
    expect(await a.remote(OWNER, KEY_A)).toMatchObject({ count: 0, holdsKey: false });
    a.add(OWNER, KEY_A);
    await a.settled();
    expect(held()).toEqual({ [KEY_A]: 'gw-a', [KEY_B]: 'gw-b' });
    dead.delete('gw-b');
    expect(await node('gw-c').remote(OWNER, KEY_A)).toMatchObject({ count: 2, holdsKey: true });
  });

  it('a sweep’s drop takes out the key of a node whose claim is gone, and keeps one whose node wrote its claim back', async () => {
    const [s, b] = [node('gw-s'), node('gw-b')];
    b.add(OWNER, KEY_A);
    b.add(OWNER, KEY_B);
    await b.settled();
    claims.set(KEY_A, null);
    claims.set(KEY_B, 'gw-b');
    s.drop(OWNER, KEY_A, 'gw-b');
    s.drop(OWNER, KEY_B, 'gw-b');
    await s.settled();
    expect(held()).toEqual({ [KEY_B]: 'gw-b' });
  });

  // Guards (issue 27): a paused node swept, woken and writing its claim back found its key still in
  // the record and wrote nothing; the sweep's drop, computed from the same record, then took it out.
  it('a key written back after a sweep is written again, so a drop computed before it reads again and keeps it', async () => {
    const [a, s] = [node('gw-a'), node('gw-s')];
    a.add(OWNER, KEY_A);
    await a.settled();
    // The sweep's drop reads the record and the (swept) claim; meanwhile gw-a writes its claim back.
    claims.set(KEY_A, null);
    whileReadingClaim = async () => {
      whileReadingClaim = undefined;
      claims.set(KEY_A, 'gw-a');
      a.reassert(OWNER, KEY_A);
      await a.settled();
    };
    s.drop(OWNER, KEY_A, 'gw-a');
    await s.settled();
    expect(held()).toEqual({ [KEY_A]: 'gw-a' });
  });

  it('a sweep’s drop of a key another node has taken since writes nothing', async () => {
    const [a, b] = [node('gw-a'), node('gw-b')];
    b.add(OWNER, KEY_A);
    await b.settled();
    const writes = records.writes;
    a.drop(OWNER, KEY_A, 'gw-dead');
    await a.settled();
    expect(records.writes).toBe(writes);
    expect(held()).toEqual({ [KEY_A]: 'gw-b' });
  });

  it('writes queued for one owner go one at a time and end in what the node holds: a key added and removed before its turn is never written', async () => {
    const a = node('gw-a');
    a.add(OWNER, KEY_A);
    a.add(OWNER, KEY_B);
    a.remove(OWNER, KEY_A);
    await a.settled();
    expect(held()).toEqual({ [KEY_B]: 'gw-a' });
    expect(records.writes).toBe(1);
  });
});

describe('owner records', () => {
  it('are pairs of claim key and node; junk counts as empty', () => {
    expect([...parseHoldings('[["k1","gw-a"],["k2","gw-b"]]')]).toEqual([
      ['k1', 'gw-a'],
      ['k2', 'gw-b'],
    ]);
    for (const text of ['not json', '[["k1"]]', '[[1,"gw"]]', 'null', '{"k1":7}']) expect(parseHoldings(text).size).toBe(0);
  });

  it('written by an earlier version as an object of claim key to node, are read as such (a rolling upgrade keeps every key)', () => {
    expect([...parseHoldings('{"k1":"gw-a","k2":"gw-b"}')]).toEqual([
      ['k1', 'gw-a'],
      ['k2', 'gw-b'],
    ]);
  });
});
