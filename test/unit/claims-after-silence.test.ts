// A gateway that could not hear the mesh for a while (paused, stalled, disconnected) re-reads every
// claim it holds before it delivers again (gateway.ts, live-hold.ts): a notice sent meanwhile may be
// lost, or queued behind the frames it should have stopped. The fault campaign found a paused
// gateway delivering 430 frames on a stream taken over while it slept (docs/RELIABILITY.md, seed 31).
import { beforeEach, describe, expect, it } from 'vitest';
import type { NoticeListener } from '../../services/gateway/ownership/claim-notices.js';
import { claimKey, type ClaimedStream } from '../../services/gateway/ownership/claim-keys.js';
import { LiveHold } from '../../services/gateway/delivery/live-hold.js';
import { ClaimRules as Ownership } from '../../services/gateway/ownership/claim-rules.js';
import { MemoryClaimStore, MemoryNotices } from '../helpers/memory-claim-store.js';

const ACCOUNT = '11111111-2222-3333-4444-555555555555';
const CHANNEL = 'play.example.net';
const KEY = claimKey(ACCOUNT, CHANNEL);

let store: MemoryClaimStore;
let listeners: Map<string, NoticeListener>;
let n = 0;

function node(id: string): { ownership: Ownership; notices: MemoryNotices; evicted: string[] } {
  const notices = new MemoryNotices(listeners);
  const evicted: string[] = [];
  const ownership = new Ownership({ store, notices, nodeId: id, evict: (s) => evicted.push(s) });
  listeners.set(id, ownership);
  return { ownership, notices, evicted };
}

function stream(): ClaimedStream {
  return { id: `conn-${++n}`, account: ACCOUNT, clientId: 'relay_key', channel: CHANNEL, openedAt: 0 };
}

beforeEach(() => {
  store = new MemoryClaimStore(60_000);
  listeners = new Map();
});

describe('claims after a time this node could not hear', () => {
  it('a claim taken over meanwhile (its notice lost) is found at once, and its stream evicted', async () => {
    const sleeper = node('sleeper');
    const awake = node('awake');
    const old = stream();
    await sleeper.ownership.claim(old);
    // The notice the takeover sends never reaches the sleeper.
    awake.notices.dropNotices = true;
    await awake.ownership.claim(stream());
    expect(sleeper.evicted).toEqual([]);
    await sleeper.ownership.verify();
    expect(sleeper.evicted).toEqual([old.id]);
  });

  it('a claim swept meanwhile (the sleeper was taken for dead) is written again, and its stream stays', async () => {
    const sleeper = node('sleeper');
    const s = stream();
    await sleeper.ownership.claim(s);
    await store.remove(KEY, store.peek(KEY)!.revision, { by: 'sweep', conn: s.id });
    await sleeper.ownership.verify();
    expect(sleeper.evicted).toEqual([]);
    expect(store.peek(KEY)?.claim).toMatchObject({ node: 'sleeper', conn: s.id });
  });

  it('claims still held are left as they are, at one read each', async () => {
    const sleeper = node('sleeper');
    for (let i = 0; i < 3; i++) await sleeper.ownership.claim({ ...stream(), channel: `c${i}.example.net` });
    const before = store.reads;
    await sleeper.ownership.verify();
    expect(sleeper.evicted).toEqual([]);
    expect(store.reads - before).toBe(3);
  });
});

describe('the held live feed', () => {
  it('dispatches nothing while held, then everything that waited, in order; a stall seen first holds the message that showed it', async () => {
    const hold = new LiveHold();
    const sent: string[] = [];
    const live = (m: string): void => {
      if (hold.held()) hold.wait(() => live(m));
      else sent.push(m);
    };
    live('a');
    let verified!: () => void;
    const verifying = new Promise<void>((resolve) => (verified = resolve));
    const held: Array<Promise<void>> = [];
    // The stall watch says so at the next message: the hold starts before that message goes out.
    hold.check = () => {
      if (held.length === 0) held.push(hold.during(() => verifying));
    };
    live('b');
    live('c');
    expect(sent).toEqual(['a']);
    hold.check = () => undefined;
    verified();
    await Promise.all(held);
    expect(sent).toEqual(['a', 'b', 'c']);
    live('d');
    expect(sent).toEqual(['a', 'b', 'c', 'd']);
  });
});
