// The claim rules at their own level: several nodes' Ownership over one in-memory bucket with
// JetStream's revision semantics (test/helpers/memory-claim-store.ts). Write, renew, lose, reclaim,
// lost answers, takeover of a dead node's claim, release; the mesh tests cover the same over NATS.
// A node hears only notices (ownership-notices.test.ts); what no notice tells, its renewal finds.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { NoticeListener } from '../../services/gateway/ownership/claim-notices.js';
import { claimKey, type ClaimedStream } from '../../services/gateway/ownership/claim-keys.js';
import { ClaimRules as Ownership } from '../../services/gateway/ownership/claim-rules.js';
import { MemoryClaimStore, MemoryNotices } from '../helpers/memory-claim-store.js';

const ACCOUNT = '11111111-2222-3333-4444-555555555555';
const CHANNEL = 'play.example.net';
const KEY = claimKey(ACCOUNT, CHANNEL);

interface Node {
  ownership: Ownership;
  notices: MemoryNotices;
  evicted: string[];
}

let store: MemoryClaimStore;
let listeners: Map<string, NoticeListener>;
let nodes: Map<string, Node>;
let n = 0;

function node(id: string): Node {
  const notices = new MemoryNotices(listeners);
  const evicted: string[] = [];
  const ownership = new Ownership({ store, notices, nodeId: id, evict: (s) => evicted.push(s) });
  ownership.start(60_000);
  const made = { ownership, notices, evicted };
  listeners.set(id, ownership);
  nodes.set(id, made);
  return made;
}

function stream(account: string | null = ACCOUNT, channel: string | null = CHANNEL): ClaimedStream {
  return { id: `conn-${++n}`, account, clientId: 'relay_key', channel, openedAt: 0 };
}

/** Lets every pending promise chain run. */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
}

/** One whole renewal period (60 s / 2 / 1 s = 30 ticks): every claim of the node is rewritten, or found changed. */
async function renewAll(x: Node): Promise<void> {
  for (let i = 0; i < 30; i++) await x.ownership.renewals.onTick();
  await settle();
}

beforeEach(() => {
  store = new MemoryClaimStore(60_000);
  listeners = new Map();
  nodes = new Map();
});
afterEach(() => {
  for (const x of nodes.values()) x.ownership.stop();
  vi.useRealTimers();
});

describe('claim rules', () => {
  it('write: an open on a free key claims it, and its release deletes it', async () => {
    const a = node('a');
    const s = stream();
    await a.ownership.claim(s);
    expect(store.peek(KEY)?.claim).toMatchObject({ node: 'a', conn: s.id, uuid: ACCOUNT, channel: CHANNEL });
    a.ownership.release(s.id);
    await a.ownership.settled();
    expect(store.peek(KEY)?.claim).toBeNull();
  });

  it.each([
    { how: 'a notice from the new holder, at once', drop: false },
    { how: 'its renewal, the notice lost', drop: true },
  ])('lose: a later open on another node replaces the claim; the first hears it through $how', async ({ drop }) => {
    const [a, b] = [node('a'), node('b')];
    const first = stream();
    await a.ownership.claim(first);
    a.notices.dropNotices = b.notices.dropNotices = drop;
    const second = stream();
    await b.ownership.claim(second);
    await settle();
    expect(b.notices.told).toEqual([{ node: 'a', notice: { kind: 'replaced', key: KEY, conn: first.id, revision: store.peek(KEY)!.revision } }]);
    if (drop) {
      expect(a.evicted).toEqual([]);
      await renewAll(a);
    }
    expect(a.evicted).toEqual([first.id]);
    expect(b.evicted).toEqual([]);
    expect(store.peek(KEY)?.claim?.conn).toBe(second.id);
    // The loser's end deletes nothing: the key is the winner's.
    a.ownership.release(first.id);
    await a.ownership.settled();
    expect(store.peek(KEY)?.claim?.conn).toBe(second.id);
  });

  it('simultaneous opens on two nodes: exactly one survivor, the one the key names, every time', async () => {
    for (let round = 0; round < 20; round++) {
      const [a, b] = [node(`a${round}`), node(`b${round}`)];
      const [sa, sb] = [stream(), stream()];
      await Promise.all([a.ownership.claim(sa), b.ownership.claim(sb)]);
      await settle();
      const survivor = store.peek(KEY)!.claim!.conn;
      const evicted = [...a.evicted, ...b.evicted];
      expect(evicted, `round ${round}`).toHaveLength(1);
      expect(evicted[0]).toBe(survivor === sa.id ? sb.id : sa.id);
      a.ownership.release(sa.id);
      b.ownership.release(sb.id);
      await Promise.all([a.ownership.settled(), b.ownership.settled()]);
    }
  });

  it('renew: a live claim is rewritten at its tick and outlives the bucket’s max age', async () => {
    const a = node('a');
    const s = stream();
    await a.ownership.claim(s);
    const first = store.peek(KEY)!.revision;
    store.now = 40_000;
    for (let i = 0; i < 30; i++) await a.ownership.renewals.onTick();
    expect(store.peek(KEY)!.revision).toBeGreaterThan(first);
    store.now = 70_000; // past the first write's max age, not the renewal's
    expect(store.peek(KEY)?.claim?.conn).toBe(s.id);
  });

  it('renew: a renewal is one write, and reads nothing', async () => {
    const a = node('a');
    await a.ownership.claim(stream());
    await settle();
    const reads = store.reads;
    store.now = 40_000;
    await renewAll(a);
    expect(store.peek(KEY)!.revision).toBeGreaterThan(1);
    expect(store.reads).toBe(reads);
  });

  it('reclaim: a claim swept from under a live stream (a sweep that took its node for dead), its notice lost, is written again by the renewal', async () => {
    const a = node('a');
    const s = stream();
    await a.ownership.claim(s);
    await store.remove(KEY, store.peek(KEY)!.revision, { by: 'sweep', conn: s.id });
    await settle();
    expect(store.peek(KEY)?.claim).toBeNull();
    await renewAll(a);
    expect(store.peek(KEY)?.claim?.conn).toBe(s.id);
    expect(a.evicted).toEqual([]);
  });

  // Guards (issue 27, found by test/unit/ownership-interleavings.test.ts): a stream replaced by
  // another node's open, which then closed before its notice arrived, took the delete of the newer
  // claim for a sweep, wrote its own claim back and outlived the open that should have evicted it.
  it('lose: a claim replaced and then released (a release’s marker), the notice lost, ends the stream at its renewal rather than being written back', async () => {
    const [a, b] = [node('a'), node('b')];
    const first = stream();
    await a.ownership.claim(first);
    b.notices.dropNotices = true;
    const second = stream();
    await b.ownership.claim(second);
    b.ownership.release(second.id);
    await b.ownership.settled();
    await renewAll(a);
    expect(a.evicted).toEqual([first.id]);
    expect(store.peek(KEY)?.claim).toBeNull();
  });

  it('lose: a claim replaced by a stream whose node then crashed and was swept, the notice lost, ends the stream at its renewal rather than being written back', async () => {
    const [a, b] = [node('a'), node('b')];
    const first = stream();
    await a.ownership.claim(first);
    b.notices.dropNotices = true;
    const second = stream();
    await b.ownership.claim(second);
    listeners.delete('b');
    await store.remove(KEY, store.peek(KEY)!.revision, { by: 'sweep', conn: second.id });
    await renewAll(a);
    expect(a.evicted).toEqual([first.id]);
  });

  // Nobody tells of a write by hand: the renewal, refused at its stale revision, finds it (within CLAIM_TTL/2).
  it('reclaim: a key deleted by hand (`nats kv del`: a marker that says nothing, no notice) is written back at the next renewal, the stream kept', async () => {
    const a = node('a');
    const s = stream();
    await a.ownership.claim(s);
    store.removeNow(KEY, store.peek(KEY)!.revision);
    await settle();
    expect(store.peek(KEY)?.claim).toBeNull();
    await renewAll(a);
    expect(store.peek(KEY)?.claim?.conn).toBe(s.id);
    expect(a.evicted).toEqual([]);
  });

  it('reclaim: a claim aged out of the bucket is written again at the next renewal', async () => {
    const a = node('a');
    const s = stream();
    await a.ownership.claim(s);
    store.now = 61_000;
    expect(store.peek(KEY)).toBeUndefined();
    await renewAll(a);
    expect(store.peek(KEY)?.claim?.conn).toBe(s.id);
  });

  it('takeover: an open finds the key held by a crashed node and simply replaces it', async () => {
    const dead = node('dead');
    await dead.ownership.claim(stream());
    listeners.delete('dead'); // crashed: nobody hears its notices
    const b = node('b');
    const s = stream();
    await b.ownership.claim(s);
    expect(store.peek(KEY)?.claim).toMatchObject({ node: 'b', conn: s.id });
  });

  it('lost answer on an open: the stream is refused, and the claim it may have written is taken back', async () => {
    vi.useFakeTimers();
    const a = node('a');
    const s = stream();
    store.loseNextAnswer = true;
    await expect(a.ownership.claim(s)).rejects.toThrow(/lost/);
    expect(store.peek(KEY)?.claim?.conn).toBe(s.id);
    await vi.advanceTimersByTimeAsync(5000);
    await a.ownership.settled();
    expect(store.peek(KEY)?.claim).toBeNull();
  });

  it('lost answer on a renewal: the next renewal finds the claim still ours at the later revision, and the delete names it', async () => {
    const a = node('a');
    const s = stream();
    await a.ownership.claim(s);
    store.loseNextAnswer = true;
    for (let i = 0; i < 30; i++) await a.ownership.renewals.onTick();
    const applied = store.peek(KEY)!.revision;
    for (let i = 0; i < 30; i++) await a.ownership.renewals.onTick();
    await settle();
    expect(store.peek(KEY)!.revision).toBeGreaterThanOrEqual(applied);
    expect(a.evicted).toEqual([]);
    a.ownership.release(s.id);
    await a.ownership.settled();
    expect(store.peek(KEY)?.claim).toBeNull();
  });

  it('release during the write: the claim is deleted as soon as it lands', async () => {
    const a = node('a');
    const s = stream();
    const claiming = a.ownership.claim(s);
    // The write has begun (its read of the key is out) when the client leaves.
    while (store.reads === 0) await Promise.resolve();
    a.ownership.release(s.id);
    await claiming;
    await a.ownership.settled();
    expect(store.peek(KEY)?.claim).toBeNull();
  });

  it('release before the write (the client left while its key was being noted): nothing is written', async () => {
    const a = node('a');
    const s = stream();
    const claiming = a.ownership.claim(s);
    a.ownership.release(s.id);
    await claiming;
    await a.ownership.settled();
    expect(store.peek(KEY)).toBeUndefined();
    expect(store.reads).toBe(0);
  });

  it('the same account reopening on the same node replaces its own stream there', async () => {
    const a = node('a');
    const [first, second] = [stream(), stream()];
    await a.ownership.claim(first);
    await a.ownership.claim(second);
    await settle();
    expect(a.evicted).toEqual([first.id]);
  });

  it('streams without a channel each have a key of their own and evict nothing', async () => {
    const a = node('a');
    const [x, y] = [stream(null, null), stream(ACCOUNT, null)];
    await a.ownership.claim(x);
    await a.ownership.claim(y);
    expect(store.peek(`solo.${x.id}`)?.claim?.conn).toBe(x.id);
    expect(store.peek(`solo.${y.id}`)?.claim?.conn).toBe(y.id);
    expect(a.evicted).toEqual([]);
    expect(a.notices.told).toEqual([]);
  });
});
