// A lost claim ends its stream, and the end comes back into the ownership rules (the gateway's
// `evict` closes the stream, whose end calls `release`). These tests hold the rules to handling a
// loss once, after the step that found it (claim-losses.ts), never inside a notice, a release or an
// eviction still on the stack. The gateway's evict is played by a callback that releases at once, as
// gateway.ts does.
import { beforeEach, describe, expect, it } from 'vitest';
import type { ClaimNotice, ClaimNotices } from '../../services/gateway/ownership/claim-notices.js';
import { claimKey, claimRecord, type ClaimedStream } from '../../services/gateway/ownership/claim-keys.js';
import { ClaimRules as Ownership } from '../../services/gateway/ownership/claim-rules.js';
import { MemoryClaimStore } from '../helpers/memory-claim-store.js';

const ACCOUNT = '11111111-2222-3333-4444-555555555555';

/** Nobody else in these tests: the notices are handed to the rules by the tests themselves. */
const nobody: ClaimNotices = { listen: () => undefined, tell: () => undefined, close: () => undefined };

let store: MemoryClaimStore;
let ownership: Ownership;
/** What happened, in order: evictions, and what the test did. */
let log: string[];
/** Notices heard while the gateway's evict runs (as from another callback in the same turn), and evictions on the stack now / at most. */
let heardDuringEvict: ClaimNotice[];
let depth: number;
let maxDepth: number;
let n = 0;

function stream(channel: string): ClaimedStream {
  return { id: `conn-${++n}`, account: ACCOUNT, clientId: 'relay_key', channel, openedAt: 0 };
}

/** Another node's open replaces the stream's claim; returns the notice it would send. */
async function replaced(s: ClaimedStream): Promise<ClaimNotice> {
  const key = claimKey(ACCOUNT, s.channel!);
  const revision = await store.write(key, claimRecord('b', { ...s, id: `${s.id}-elsewhere` }), store.peek(key)!.revision);
  return { kind: 'replaced', key, conn: s.id, revision };
}

/** Lets the microtasks queued by the step run. */
async function afterStep(): Promise<void> {
  for (let i = 0; i < 5; i++) await Promise.resolve();
}

beforeEach(() => {
  store = new MemoryClaimStore();
  log = [];
  heardDuringEvict = [];
  depth = maxDepth = 0;
  ownership = new Ownership({
    store,
    notices: nobody,
    nodeId: 'a',
    evict: (id) => {
      maxDepth = Math.max(maxDepth, ++depth);
      log.push(`evict ${id}`);
      for (const n of heardDuringEvict.splice(0)) ownership.noticed(n);
      ownership.release(id);
      log.push(`released ${id}`);
      depth--;
    },
  });
});

describe('a loss is handled once, after the step that found it', () => {
  it('a notice that replaces a claim evicts its stream once noticed() has returned, not inside it', async () => {
    const s = stream('one.example.net');
    await ownership.claim(s);
    const notice = await replaced(s);
    ownership.noticed(notice);
    log.push('noticed returned');
    await afterStep();
    expect(log).toEqual(['noticed returned', `evict ${s.id}`, `released ${s.id}`]);
    expect(ownership.holds(s.id)).toBe(false);
  });

  it('a loss found while an eviction runs (its release, a notice heard meanwhile) is evicted after it, never inside it', async () => {
    const [first, second] = [stream('one.example.net'), stream('two.example.net')];
    await ownership.claim(first);
    await ownership.claim(second);
    heardDuringEvict.push(await replaced(second));
    ownership.noticed(await replaced(first));
    await afterStep();
    expect(log).toEqual([`evict ${first.id}`, `released ${first.id}`, `evict ${second.id}`, `released ${second.id}`]);
    expect(maxDepth).toBe(1);
    await ownership.settled();
    // The lost claims' ends delete nothing: the keys are the other node's.
    expect(store.peek(claimKey(ACCOUNT, 'two.example.net'))?.claim?.node).toBe('b');
  });

  it('a claim found lost twice in one step (a notice told twice) evicts its stream once', async () => {
    const s = stream('one.example.net');
    await ownership.claim(s);
    const notice = await replaced(s);
    ownership.noticed(notice);
    ownership.noticed(notice);
    await afterStep();
    expect(log).toEqual([`evict ${s.id}`, `released ${s.id}`]);
  });

  it('a lost claim whose stream ended before its eviction’s turn evicts nothing', async () => {
    const s = stream('one.example.net');
    await ownership.claim(s);
    ownership.noticed(await replaced(s));
    ownership.release(s.id);
    await afterStep();
    expect(log).toEqual([]);
  });
});
