// A lost claim ends its stream, and the end comes back into the ownership rules (the gateway's
// `evict` closes the stream, whose end calls `release`). These tests hold the rules to handling a
// loss once, after the step that found it (claim-losses.ts), never inside a notice, a release or a
// forget still on the stack. The gateway's evict is played by a callback that releases at once, as
// gateway.ts does.
import { beforeEach, describe, expect, it } from 'vitest';
import type { ClaimHints, ClaimNotice, HintListener } from '../../services/gateway/ownership/claim-hints.js';
import { claimKey, claimRecord, type ClaimedStream } from '../../services/gateway/ownership/claim-keys.js';
import { ClaimRules as Ownership } from '../../services/gateway/ownership/claim-rules.js';
import { MemoryClaimStore } from '../helpers/memory-claim-store.js';

const ACCOUNT = '11111111-2222-3333-4444-555555555555';

/** Notices held by the subscription and handed over as it is closed (as a draining subscription would). */
class DrainingHints implements ClaimHints {
  readonly held: ClaimNotice[] = [];
  watched = 0;
  /** unwatchAccount calls on the stack now, and the most there were at once. */
  private depth = 0;
  maxDepth = 0;
  private listener: HintListener | undefined;

  listen(listener: HintListener): void {
    this.listener = listener;
  }
  watchAccount(): void {
    this.watched++;
  }
  unwatchAccount(): void {
    this.maxDepth = Math.max(this.maxDepth, ++this.depth);
    for (const n of this.held.splice(0)) this.listener?.noticed(n);
    this.watched--;
    this.depth--;
  }
  tell(): void {
    // Nobody else in these tests.
  }
  close(): void {
    this.held.length = 0;
  }
}

let store: MemoryClaimStore;
let hints: DrainingHints;
let ownership: Ownership;
/** What happened, in order: evictions, and what the test did. */
let log: string[];
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
  hints = new DrainingHints();
  log = [];
  ownership = new Ownership({
    store,
    hints,
    nodeId: 'a',
    evict: (id) => {
      log.push(`evict ${id}`);
      ownership.release(id);
    },
  });
  hints.listen(ownership);
});

describe('a loss is handled once, after the step that found it', () => {
  it('a notice that replaces a claim evicts its stream once noticed() has returned, not inside it', async () => {
    const s = stream('one.example.net');
    await ownership.claim(s);
    const notice = await replaced(s);
    ownership.noticed(notice);
    log.push('noticed returned');
    await afterStep();
    expect(log).toEqual(['noticed returned', `evict ${s.id}`]);
    expect(ownership.holds(s.id)).toBe(false);
  });

  it('a loss found while a release forgets its claim is evicted after the release, and the subscription is never re-entered', async () => {
    const [leaving, replacedStream] = [stream('one.example.net'), stream('two.example.net')];
    await ownership.claim(leaving);
    await ownership.claim(replacedStream);
    hints.held.push(await replaced(replacedStream));
    ownership.release(leaving.id);
    log.push(`released ${leaving.id}`);
    await afterStep();
    expect(log).toEqual([`released ${leaving.id}`, `evict ${replacedStream.id}`]);
    expect(hints.maxDepth).toBe(1);
    expect(hints.watched).toBe(0);
    await ownership.settled();
    // The lost claim's end deletes nothing: the key is the other node's.
    expect(store.peek(claimKey(ACCOUNT, 'two.example.net'))?.claim?.node).toBe('b');
  });

  it('a claim found lost twice in one step (a notice told twice) evicts its stream once', async () => {
    const s = stream('one.example.net');
    await ownership.claim(s);
    const notice = await replaced(s);
    ownership.noticed(notice);
    ownership.noticed(notice);
    await afterStep();
    expect(log).toEqual([`evict ${s.id}`]);
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
