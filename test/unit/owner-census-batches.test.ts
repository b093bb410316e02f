// The owner census's rule for sending a turn's questions together, at its own level: a connection
// that records what is published and a turn ended by hand. Together only to a mesh whose every peer
// has said it reads them (an earlier version would drop them, and the caps with them); within the
// server's max_payload; and a message NATS refuses is told, not swallowed.
import { describe, expect, it } from 'vitest';
import type { NatsConnection } from '@nats-io/nats-core';
import { OwnerCensus } from '../../services/gateway/ownership/owner-census.js';
import { OWNER_CENSUS_ANSWER_PREFIX } from '../../services/core/subjects.js';
import type { Timers } from '../../services/core/timers.js';

type Callback = (err: Error | null, msg: { string(): string }) => void;

function rig(o: { peers: string[]; maxPayload?: number; closed?: boolean }) {
  // o.peers may change between calls: the gateways taken for alive at each moment.
  const callbacks = new Map<string, Callback>();
  const published: string[] = [];
  const maxPayload = o.maxPayload ?? 1024 * 1024;
  const nc = {
    info: { max_payload: maxPayload },
    isClosed: () => o.closed === true,
    isDraining: () => false,
    subscribe: (subject: string, opts: { callback: Callback }) => (callbacks.set(subject, opts.callback), { unsubscribe: () => undefined }),
    publish: (_subject: string, data: string) => {
      // As nats.js does: a message over the server's max_payload is refused with a throw.
      if (Buffer.byteLength(data) > maxPayload) throw new Error('max_payload size exceeded');
      published.push(data);
    },
  } as unknown as NatsConnection;
  const turns: Array<() => void> = [];
  const waits: Array<() => void> = [];
  const timers: Timers = { after: (_ms, fire) => (waits.push(fire), () => void waits.splice(waits.indexOf(fire) >>> 0, 1)), afterTurn: (fire) => void turns.push(fire) };
  const warnings: string[] = [];
  const census = new OwnerCensus({ nc, nodeId: 'a', peers: () => [...o.peers], local: () => [], logger: { warn: (_f: object, m: string) => void warnings.push(m) } as never, timers });
  census.listen();
  const endTurn = (): void => {
    for (const fire of turns.splice(0)) fire();
  };
  /** Every question published since the last call, as the number in each message. */
  const sent = (): number[] => published.splice(0).map((t) => (JSON.parse(t) as { questions?: unknown[] }).questions?.length ?? 1);
  const answer = (text: object): void => callbacks.get(OWNER_CENSUS_ANSWER_PREFIX + 'a')!(null, { string: () => JSON.stringify(text) });
  /** `node` answers this process's question `id` as a gateway of this version does, or as an earlier one. */
  const answerAs = (node: string, id: string, version: 'now' | 'earlier'): void => answer({ id, node, count: 0, holdsKey: false, ...(version === 'now' ? { batches: true } : {}) });
  /** `n` opens in this turn; what they hear is not the point here. */
  const ask = (n: number): void => {
    for (let i = 0; i < n; i++) void census.remote(`acct-${i}`, `c${i}.example.net`);
  };
  return { census, endTurn, sent, published, answer, answerAs, ask, waits, warnings };
}

/** The id of the one question just published. */
const idOf = (text: string): string => (JSON.parse(text) as { id: string }).id;

describe('the owner census sends a turn’s questions together', () => {
  it('one by one until every peer has said it reads several a message, then together', () => {
    const r = rig({ peers: ['b', 'c'] });
    r.ask(3);
    r.endTurn();
    expect(r.published.map((t) => JSON.parse(t) as object).every((m) => !('questions' in m))).toBe(true);
    const first = r.published.map(idOf);
    expect(r.sent()).toEqual([1, 1, 1]);
    r.answerAs('b', first[0]!, 'now');
    r.ask(3);
    r.endTurn();
    expect(r.sent()).toEqual([1, 1, 1]);
    r.answerAs('c', first[0]!, 'now');
    r.ask(3);
    r.endTurn();
    expect(r.sent()).toEqual([3]);
  });

  it('goes back to one by one while a peer of an earlier version answers, whatever the others say', () => {
    const r = rig({ peers: ['b', 'old'] });
    r.ask(1);
    r.endTurn();
    const id = idOf(r.published[0]!);
    r.sent();
    r.answerAs('b', id, 'now');
    r.answerAs('old', id, 'now');
    r.ask(2);
    r.endTurn();
    expect(r.sent()).toEqual([2]);
    // A restart of `old` as the earlier version: its next answer carries no word on batches.
    r.ask(1);
    r.endTurn();
    r.answerAs('old', idOf(r.published[0]!), 'earlier');
    r.sent();
    r.ask(2);
    r.endTurn();
    expect(r.sent()).toEqual([1, 1]);
  });

  it('a peer that misses a question is asked one question a message until it answers again', () => {
    const r = rig({ peers: ['b'] });
    r.ask(1);
    r.endTurn();
    r.answerAs('b', idOf(r.published[0]!), 'now');
    r.sent();
    r.ask(2);
    r.endTurn();
    expect(r.sent()).toEqual([2]);
    // Nobody answers those two: the wait ends them, b is silent, and may be back as anything.
    for (const fire of r.waits.splice(0)) fire();
    r.ask(2);
    r.endTurn();
    expect(r.sent()).toEqual([1, 1]);
  });

  it('asks one by one a turn whose questions were asked of a peer not known to read more, though it left before the turn ended', () => {
    const o = { peers: ['b', 'old'] };
    const r = rig(o);
    r.ask(1);
    r.endTurn();
    r.answerAs('b', idOf(r.published[0]!), 'now');
    r.sent();
    r.ask(2);
    o.peers = ['b'];
    r.endTurn();
    expect(r.sent()).toEqual([1, 1]);
    r.ask(2);
    r.endTurn();
    expect(r.sent()).toEqual([2]);
  });

  it('forgets a node gone from the mesh: back under the same id, it is asked one by one until it says again', () => {
    const o = { peers: ['b', 'c'] };
    const r = rig(o);
    r.ask(1);
    r.endTurn();
    const id = idOf(r.published[0]!);
    r.answerAs('b', id, 'now');
    r.answerAs('c', id, 'now');
    r.sent();
    o.peers = ['c'];
    r.ask(2);
    r.endTurn();
    expect(r.sent()).toEqual([2]);
    o.peers = ['b', 'c'];
    r.ask(2);
    r.endTurn();
    expect(r.sent()).toEqual([1, 1]);
  });

  it('takes no word on batches from an answer to no question of this process', () => {
    const r = rig({ peers: ['b'] });
    r.answer({ node: 'b', answers: [{ id: 'another-process.1', count: 0, holdsKey: false }, { id: 'another-process.2', count: 0, holdsKey: false }] });
    r.ask(2);
    r.endTurn();
    expect(r.sent()).toEqual([1, 1]);
  });

  it('fits the server’s max_payload: every question of a turn sent, none refused, nothing told', () => {
    const r = rig({ peers: ['b'], maxPayload: 4096 });
    r.ask(1);
    r.endTurn();
    r.answerAs('b', idOf(r.published[0]!), 'now');
    r.sent();
    r.ask(256);
    r.endTurn();
    const counts = r.sent();
    expect(counts.length).toBeGreaterThan(1);
    expect(counts.reduce((s, n) => s + n, 0)).toBe(256);
    expect(r.warnings).toEqual([]);
  });

  it('a message the server refuses is told once, and not while the connection closes', () => {
    const r = rig({ peers: ['b'], maxPayload: 40 });
    // Two questions, each alone (b has not said it reads more) and each refused: one warning.
    r.ask(2);
    r.endTurn();
    expect(r.published).toEqual([]);
    expect(r.warnings).toEqual(['an owner census message could not be sent: the gateways it was for count as not answering']);
    const closing = rig({ peers: ['b'], maxPayload: 40, closed: true });
    closing.ask(2);
    closing.endTurn();
    expect(closing.warnings).toEqual([]);
  });
});
