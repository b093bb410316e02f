// Notices at the rules' own level: a node that replaces or sweeps another node's claim tells that
// node on its own subject, and the rules act on what it says (claim-rules.ts `noticed`): a
// replacement ends the stream at once; a sweep is read, and the claim written back unless another
// stream claimed the key since. A notice of a claim the node holds no longer, or older than what it
// wrote since, does nothing. Nothing else tells the nodes here, as in a gateway: notices, renewals
// and verify() are all there is.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../services/core/logger.js';
import type { ClaimNotice, NoticeListener } from '../../services/gateway/ownership/claim-notices.js';
import { ClaimIndex } from '../../services/gateway/ownership/claim-index.js';
import { claimKey, claimRecord, type ClaimedStream } from '../../services/gateway/ownership/claim-keys.js';
import { ClaimRules } from '../../services/gateway/ownership/claim-rules.js';
import { MemoryClaimStore, MemoryNotices, MemoryIndexLog } from '../helpers/memory-claim-store.js';

const quiet = createLogger({ level: 'silent', pretty: false });
const ACCOUNT = '11111111-2222-3333-4444-555555555555';
const CHANNEL = 'play.example.net';
const KEY = claimKey(ACCOUNT, CHANNEL);

interface Node {
  rules: ClaimRules;
  notices: MemoryNotices;
  /** Its sweeps (claim-index.ts), over the same index log as every node's. */
  index: ClaimIndex;
  evicted: string[];
}

let store: MemoryClaimStore;
let log: MemoryIndexLog;
let listeners: Map<string, NoticeListener>;
let nodes: Node[];
let n = 0;

function node(id: string): Node {
  const notices = new MemoryNotices(listeners);
  const evicted: string[] = [];
  const liveness = { isAlive: () => true, hearing: () => true, mirror: { values: () => [] } };
  const index = new ClaimIndex({ log, store, nodeId: id, liveness, logger: quiet, notices });
  const rules = new ClaimRules({ store, notices, nodeId: id, evict: (s) => evicted.push(s), index });
  // 60 s claims: a renewal period of 30 ticks.
  rules.start(60_000);
  listeners.set(id, rules);
  const made = { rules, notices, index, evicted };
  nodes.push(made);
  return made;
}

function stream(): ClaimedStream {
  return { id: `conn-${++n}`, account: ACCOUNT, clientId: 'relay_key', channel: CHANNEL, openedAt: 0 };
}

/** Lets every pending promise chain (and the index's turn) run. */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
}

/** One whole renewal period: every claim of the node is rewritten (or found changed). */
async function renewAll(x: Node): Promise<void> {
  for (let i = 0; i < 30; i++) await x.rules.renewals.onTick();
  await settle();
}

beforeEach(() => {
  store = new MemoryClaimStore(60_000);
  log = new MemoryIndexLog();
  listeners = new Map();
  nodes = [];
});
afterEach(() => {
  for (const x of nodes) x.rules.stop();
});

describe('a sweep tells the node it swept', () => {
  it('the holder (only paused, not dead) writes its claim back on the notice alone, and keeps its stream', async () => {
    const [a, b] = [node('a'), node('b')];
    const s = stream();
    await a.rules.claim(s);
    const claimed = store.peek(KEY)!.revision;
    expect(await b.index.sweepNode('a')).toBe(1);
    expect(b.notices.told).toEqual([{ node: 'a', notice: { kind: 'swept', key: KEY, conn: s.id, revision: claimed + 1 } }]);
    await settle();
    expect(store.peek(KEY)?.claim).toMatchObject({ node: 'a', conn: s.id });
    expect(store.peek(KEY)!.revision).toBe(claimed + 2);
    expect(a.evicted).toEqual([]);
    expect(a.rules.holds(s.id)).toBe(true);
  });

  it('the holder closes its stream when another stream claimed the key between the sweep and its notice (an open over a marker tells nobody)', async () => {
    const [a, b, c] = [node('a'), node('b'), node('c')];
    const s = stream();
    await a.rules.claim(s);
    b.notices.holdNotices = true;
    await b.index.sweepNode('a');
    const newer = stream();
    await c.rules.claim(newer);
    expect(c.notices.told).toEqual([]);
    await settle();
    expect(a.evicted).toEqual([]);
    b.notices.deliverHeld();
    await settle();
    expect(a.evicted).toEqual([s.id]);
    expect(c.evicted).toEqual([]);
    expect(store.peek(KEY)?.claim?.conn).toBe(newer.id);
  });

  it('the notice races a new open elsewhere: the holder writes back or reads the newer claim, and the newer stream alone survives', async () => {
    const [a, b, c] = [node('a'), node('b'), node('c')];
    const s = stream();
    await a.rules.claim(s);
    b.notices.holdNotices = true;
    await b.index.sweepNode('a');
    const newer = stream();
    b.notices.deliverHeld();
    await Promise.all([c.rules.claim(newer), settle()]);
    await settle();
    expect(a.evicted).toEqual([s.id]);
    expect(c.evicted).toEqual([]);
    expect(store.peek(KEY)?.claim?.conn).toBe(newer.id);
  });

  it('a node sweeping what its previous life left (at its start) tells nobody', async () => {
    const before = node('a');
    await before.rules.claim(stream());
    listeners.delete('a');
    const restarted = node('a');
    expect(await restarted.index.sweepNode('a')).toBe(1);
    expect(restarted.notices.told).toEqual([]);
  });
});

describe('a notice of a claim held no longer, or older than the claim, does nothing', () => {
  it.each(['replaced', 'swept'] as const)('a %s notice of a stream that has ended: nothing read, written or evicted', async (kind) => {
    const a = node('a');
    const s = stream();
    await a.rules.claim(s);
    a.rules.release(s.id);
    await a.rules.settled();
    const [reads, now] = [store.reads, store.peek(KEY)];
    a.rules.noticed({ kind, key: KEY, conn: s.id, revision: now!.revision + 1 });
    await settle();
    expect(store.reads).toBe(reads);
    expect(store.peek(KEY)).toEqual(now);
    expect(a.evicted).toEqual([]);
  });

  it.each(['replaced', 'swept'] as const)('a %s notice naming a live stream but another key does nothing', async (kind) => {
    const a = node('a');
    const s = stream();
    await a.rules.claim(s);
    const reads = store.reads;
    a.rules.noticed({ kind, key: claimKey(ACCOUNT, 'elsewhere.example.net'), conn: s.id, revision: 1000 });
    await settle();
    expect(store.reads).toBe(reads);
    expect(a.evicted).toEqual([]);
  });

  it.each([
    ['its renewal (refused at its stale revision)', (x: Node) => renewAll(x)],
    ['verify(), after a time it could not hear', (x: Node) => x.rules.verify()],
  ] as const)('a sweep’s notice arriving after %s wrote the claim back reads nothing and changes nothing', async (_by, recover) => {
    const [a, b] = [node('a'), node('b')];
    const s = stream();
    await a.rules.claim(s);
    b.notices.holdNotices = true;
    await b.index.sweepNode('a');
    await recover(a);
    const now = store.peek(KEY);
    expect(now?.claim?.conn).toBe(s.id);
    const reads = store.reads;
    b.notices.deliverHeld();
    await settle();
    expect(store.reads).toBe(reads);
    expect(store.peek(KEY)).toEqual(now);
    expect(a.evicted).toEqual([]);
  });

  it('a replacement’s notice naming the claim’s own revision, or an older one, does not evict', async () => {
    const a = node('a');
    const s = stream();
    await a.rules.claim(s);
    const revision = store.peek(KEY)!.revision;
    for (const r of [revision, revision - 1]) a.rules.noticed({ kind: 'replaced', key: KEY, conn: s.id, revision: r });
    await settle();
    expect(a.evicted).toEqual([]);
    expect(a.rules.holds(s.id)).toBe(true);
  });
});

describe('a notice that arrives while the claim is still being written is weighed once its write is answered', () => {
  /** Node a's open of `s`, its write applied and its answer held (wrapped: an async function would wait for it). */
  async function writing(a: Node, s: ClaimedStream): Promise<{ claiming: Promise<void> }> {
    store.holdAnswers = true;
    const claiming = a.rules.claim(s);
    await settle();
    expect(store.peek(KEY)?.claim?.conn).toBe(s.id);
    return { claiming };
  }

  it('a sweep’s: the key is read then, and the claim written back', async () => {
    const [a, b] = [node('a'), node('b')];
    const s = stream();
    const { claiming } = await writing(a, s);
    expect(await b.index.sweepNode('a')).toBe(1);
    await settle();
    expect(store.peek(KEY)?.claim).toBeNull();
    store.hearAnswers();
    await claiming;
    await settle();
    expect(store.peek(KEY)?.claim).toMatchObject({ node: 'a', conn: s.id });
    expect(a.evicted).toEqual([]);
  });

  it('a replacement’s: the stream is evicted then', async () => {
    const a = node('a');
    const s = stream();
    const { claiming } = await writing(a, s);
    const newer = stream();
    const revision = store.writeNow(KEY, claimRecord('c', newer), store.peek(KEY)!.revision);
    const notice: ClaimNotice = { kind: 'replaced', key: KEY, conn: s.id, revision };
    a.rules.noticed(notice);
    await settle();
    expect(a.evicted).toEqual([]);
    store.hearAnswers();
    await claiming;
    await settle();
    expect(a.evicted).toEqual([s.id]);
    expect(store.peek(KEY)?.claim?.conn).toBe(newer.id);
  });
});
