// The owner census at its own level, over a real nats-server: an opening stream's gateway asks the
// others how many streams its owner holds (the stream caps), and hears each answer once, within a
// bounded wait; what does not answer in time is counted as nothing, and what another NATS client
// sends on the answer subject counts only as a well-formed, timely answer to a question asked.

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '@nats-io/transport-node';
import type { Msg, NatsConnection } from '@nats-io/nats-core';
import { OwnerCensus, type OwnerCensusOptions } from '../services/gateway/ownership/owner-census.js';
import { OWNER_CENSUS_ANSWER_PREFIX, OWNER_CENSUS_ASK } from '../services/core/subjects.js';
import { createLogger } from '../services/core/logger.js';
import { startTestNats, type TestNats } from './helpers/nats.js';

const quiet = createLogger({ level: 'silent', pretty: false });

let nats: TestNats;
const connections: NatsConnection[] = [];
const censuses: OwnerCensus[] = [];

beforeAll(async () => {
  nats = await startTestNats();
}, 60_000);

afterEach(async () => {
  for (const c of censuses.splice(0)) c.close();
  await Promise.all(connections.splice(0).map((nc) => nc.close()));
});

afterAll(async () => {
  await nats?.stop();
});

async function conn(): Promise<NatsConnection> {
  const nc = await connect({ servers: nats.url });
  connections.push(nc);
  return nc;
}

type Streams = Record<string, Array<{ channel: string | null }>>;

/** A gateway's census over its own connection, answering from `streams` (owner -> its streams here). */
async function gateway(nodeId: string, streams: Streams, o: Partial<OwnerCensusOptions> = {}): Promise<OwnerCensus> {
  const nc = await conn();
  const census = new OwnerCensus({ nc, nodeId, peers: () => [], local: (owner) => streams[owner] ?? [], logger: quiet, ...o });
  census.listen();
  await nc.flush();
  censuses.push(census);
  return census;
}

/** A NATS client that hears every question: it plays gateways of its own. */
async function listener(onQuestion: (q: { id: string; from: string }, nc: NatsConnection) => void): Promise<void> {
  const nc = await conn();
  // A lone question (as in most tests here) travels in the one-question form: census-messages.ts.
  nc.subscribe(OWNER_CENSUS_ASK, { callback: (_err, m: Msg) => onQuestion(m.json<{ id: string; from: string }>(), nc) });
  await nc.flush();
}

describe('the owner census', () => {
  it('counts the owner’s streams on every other gateway, and says whether one of them holds the opening stream’s channel', async () => {
    await gateway('b', { acct: [{ channel: 'one.example.net' }, { channel: 'two.example.net' }], other: [{ channel: 'x' }] });
    await gateway('c', { acct: [{ channel: 'three.example.net' }] });
    const a = await gateway('a', { acct: [{ channel: 'mine.example.net' }] }, { peers: () => ['a', 'b', 'c'] });
    expect(await a.remote('acct', 'two.example.net')).toEqual({ count: 3, holdsKey: true });
    expect(await a.remote('acct', 'four.example.net')).toEqual({ count: 3, holdsKey: false });
    // A stream without a session has a key of its own: nobody holds it, whatever its channel.
    expect(await a.remote('acct', null)).toEqual({ count: 3, holdsKey: false });
    expect(await a.remote('nobody', 'one.example.net')).toEqual({ count: 0, holdsKey: false });
  });

  it('a question whose answering throws costs that question only: the gateway answers the next one', async () => {
    let fail = true;
    const thrown: string[] = [];
    await gateway('b', {}, {
      local: () => {
        if (fail) throw new Error('registry read failed');
        return [{ channel: 'c' }];
      },
      logger: { warn: (_fields: object, message: string) => void thrown.push(message) } as unknown as OwnerCensusOptions['logger'],
    });
    const a = await gateway('a', {}, { peers: () => ['b'], waitMs: 300 });
    // Unanswered: counted as holding nothing.
    expect((await a.remote('acct', 'c')).count).toBe(0);
    fail = false;
    // Asked by a gateway that has not taken b for silent: b's connection still hears and answers.
    const c = await gateway('c', {}, { peers: () => ['b'] });
    expect(await c.remote('acct', 'c')).toEqual({ count: 1, holdsKey: true });
    expect(thrown).toEqual(['the owner census failed on a message; the subscription goes on']);
  });

  it('answers from what each gateway holds at the moment it is asked', async () => {
    const held: Streams = { acct: [] };
    await gateway('b', held);
    const a = await gateway('a', {}, { peers: () => ['b'] });
    expect((await a.remote('acct', 'c')).count).toBe(0);
    held['acct']!.push({ channel: 'c' });
    expect(await a.remote('acct', 'c')).toEqual({ count: 1, holdsKey: true });
    held['acct'] = [];
    expect((await a.remote('acct', 'c')).count).toBe(0);
  });

  it('a lone gateway asks nobody: it answers at once and publishes nothing', async () => {
    const asked: string[] = [];
    await listener((q) => asked.push(q.from));
    const a = await gateway('a', {}, { peers: () => ['a'] });
    expect(await a.remote('acct', 'c')).toEqual({ count: 0, holdsKey: false });
    // A question of another gateway, sent after: heard alone.
    const b = await gateway('b', {}, { peers: () => ['a'] });
    await b.remote('acct', 'c');
    // The listener hears on its own connection: b's answer can come before the listener's copy.
    await expect.poll(() => asked).toEqual(['b']);
  });

  it('a gateway that does not answer within the wait is counted as holding nothing, and the miss is told', async () => {
    const missed: string[] = [];
    await gateway('b', { acct: [{ channel: 'c' }] });
    const a = await gateway('a', {}, { peers: () => ['b', 'silent'], waitMs: 300, unanswered: (n) => missed.push(n) });
    const started = Date.now();
    expect(await a.remote('acct', 'd')).toEqual({ count: 1, holdsKey: false });
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(missed).toEqual(['silent']);
  });

  it('a peer that missed a question is not waited for again until it answers one, then counts again', async () => {
    const missed: string[] = [];
    await gateway('b', { acct: [{ channel: 'c' }] });
    const a = await gateway('a', {}, { peers: () => ['b', 'late'], waitMs: 400, unanswered: (n) => missed.push(n) });
    const first = Date.now();
    expect((await a.remote('acct', 'd')).count).toBe(1);
    expect(Date.now() - first).toBeGreaterThanOrEqual(390);
    // Not waited for now: the question ends with b's answer.
    const second = Date.now();
    expect((await a.remote('acct', 'd')).count).toBe(1);
    expect(Date.now() - second).toBeLessThan(390);
    expect(missed).toEqual(['late']);
    // It starts answering: the question it hears makes it waited for again, and its streams count.
    await gateway('late', { acct: [{ channel: 'e' }, { channel: 'f' }] });
    await a.remote('acct', 'd');
    await expect.poll(async () => (await a.remote('acct', 'd')).count, { timeout: 5000 }).toBe(3);
    expect(missed).toEqual(['late']);
  });

  it('a burst of one account’s opens on three gateways at once is never admitted past the cap', async () => {
    const cap = 8;
    const nodes = ['a', 'b', 'c'];
    const registries = new Map(nodes.map((n) => [n, [] as Array<{ channel: string | null }>]));
    const mesh = await Promise.all(nodes.map((n) => gateway(n, {}, { peers: () => nodes, local: (owner) => (owner === 'acct' ? registries.get(n)! : []) })));
    const admitted = (): number => [...registries.values()].reduce((sum, r) => sum + r.length, 0);
    // As the gateway opens a stream: the census awaited, then the count and the registration in one turn.
    const open = async (node: number, channel: string): Promise<boolean> => {
      const remote = await mesh[node]!.remote('acct', channel);
      const local = registries.get(nodes[node]!)!;
      if (remote.count + local.length >= cap) return false;
      local.push({ channel });
      return true;
    };
    await Promise.all(nodes.flatMap((_, node) => Array.from({ length: cap }, (_x, i) => open(node, `ch-${node}-${i}`))));
    expect(admitted()).toBeLessThanOrEqual(cap);
    // The burst over, its opens no longer count as asking: the places left are there, one open at a time.
    while (admitted() < cap) expect(await open(admitted() % 3, `after-${admitted()}`)).toBe(true);
    expect(await open(0, 'one-too-many')).toBe(false);
  });

  it('counts a node it did not wait for when that node answers in time (taken for dead, only paused)', async () => {
    await gateway('paused', { acct: [{ channel: 'c' }] });
    await gateway('b', { acct: [{ channel: 'd' }] });
    const missed: string[] = [];
    // Waits for b and a silent peer, so the paused node's answer arrives while it still listens.
    const a = await gateway('a', {}, { peers: () => ['b', 'silent'], waitMs: 500, unanswered: (n) => missed.push(n) });
    expect(await a.remote('acct', 'c')).toEqual({ count: 2, holdsKey: true });
    expect(missed).toEqual(['silent']);
  });

  it('counts one answer per node, and ignores answers that do not parse, answer nothing asked, or name the asker', async () => {
    await listener((q, nc) => {
      const to = OWNER_CENSUS_ANSWER_PREFIX + q.from;
      const send = (v: unknown): void => nc.publish(to, typeof v === 'string' ? v : JSON.stringify(v));
      for (const bad of ['{not json', '[]', 'null', { id: q.id, node: 'b', count: -1, holdsKey: true }, { id: q.id, node: 'b', count: 1.5, holdsKey: true }, { id: q.id, node: 'b', count: '9', holdsKey: false }, { id: q.id, node: 'b', count: 9 }]) send(bad);
      // A question of another process (an earlier life of this node id), and this process's next one.
      send({ id: 'a.999', node: 'b', count: 50, holdsKey: true });
      send({ id: q.id.replace(/\d+$/, (n) => String(Number(n) + 1)), node: 'b', count: 60, holdsKey: true });
      send({ id: q.id, node: q.from, count: 40, holdsKey: true });
      send({ id: q.id, node: 'b', count: 2, holdsKey: false });
      send({ id: q.id, node: 'b', count: 30, holdsKey: true });
      send({ id: q.id, node: 'c', count: 1, holdsKey: false });
    });
    const a = await gateway('a', {}, { peers: () => ['b', 'c'], waitMs: 5000 });
    expect(await a.remote('acct', 'c')).toEqual({ count: 3, holdsKey: false });
  });

  it('questions that do not parse, or that name no node, get no answer and break nothing', async () => {
    const answers: string[] = [];
    await gateway('b', { acct: [{ channel: 'c' }] });
    const nc = await conn();
    nc.subscribe(`${OWNER_CENSUS_ANSWER_PREFIX}>`, { callback: (_e, m) => void answers.push(m.subject) });
    for (const bad of ['{', '"x"', JSON.stringify({ id: 'x.1', owner: 'acct', channel: 'c' }), JSON.stringify({ id: 'x.1', from: 'a.b', owner: 'acct', channel: 'c' }), JSON.stringify({ id: 'x.1', from: 'x', owner: 'acct', channel: 5 })]) {
      nc.publish(OWNER_CENSUS_ASK, bad);
    }
    // Then a good question: the only one answered.
    nc.publish(OWNER_CENSUS_ASK, JSON.stringify({ id: 'x.2', from: 'x', owner: 'acct', channel: 'c' }));
    await expect.poll(() => answers, { timeout: 5000 }).toEqual([`${OWNER_CENSUS_ANSWER_PREFIX}x`]);
  });

  it('the questions of one turn travel together, a message of at most 256, and each is answered', async () => {
    const messages: number[] = [];
    await listener((m) => messages.push('questions' in m ? (m as { questions: unknown[] }).questions.length : 1));
    const holdings: Streams = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`acct-${i}`, Array.from({ length: i % 4 }, (_x, j) => ({ channel: `c${j}` }))]));
    await gateway('b', holdings);
    const a = await gateway('a', {}, { peers: () => ['b'] });
    // Until b has answered once (saying it reads several a message), questions go one by one.
    expect(await a.remote('acct-3', 'c2')).toEqual({ count: 3, holdsKey: true });
    const answers = await Promise.all(Array.from({ length: 300 }, (_, i) => a.remote(`acct-${i}`, 'c1')));
    expect(answers).toEqual(Array.from({ length: 300 }, (_, i) => ({ count: i % 4, holdsKey: i % 4 >= 2 })));
    await expect.poll(() => messages).toEqual([1, 256, 44]);
  });

  it('counts, and is counted by, a gateway that reads only one question a message (an earlier version, in a rolling upgrade)', async () => {
    // The earlier version: one question a message, answered alone; anything else does not parse for it.
    await listener((m, nc) => {
      const v = m as { id?: string; from: string; owner?: string };
      if (v.id === undefined || v.owner === undefined) return;
      nc.publish(OWNER_CENSUS_ANSWER_PREFIX + v.from, JSON.stringify({ id: v.id, node: 'old', count: v.owner === 'acct' ? 2 : 0, holdsKey: false }));
    });
    await gateway('b', { acct: [{ channel: 'x' }] });
    const a = await gateway('a', {}, { peers: () => ['old', 'b'], waitMs: 5000 });
    expect(await a.remote('acct', 'c')).toEqual({ count: 3, holdsKey: false });
    // Several opens in one turn, as in any busy minute: still asked one by one, and counted.
    expect(await Promise.all([a.remote('acct', 'c'), a.remote('acct', 'd'), a.remote('other', 'c')])).toEqual([
      { count: 3, holdsKey: false },
      { count: 3, holdsKey: false },
      { count: 0, holdsKey: false },
    ]);
    // Its questions are answered in its form.
    await gateway('c', { acct: [{ channel: 'c' }] });
    const nc = await conn();
    const heard: unknown[] = [];
    nc.subscribe(`${OWNER_CENSUS_ANSWER_PREFIX}old`, { callback: (_e, msg) => void heard.push(msg.json()) });
    await nc.flush();
    nc.publish(OWNER_CENSUS_ASK, JSON.stringify({ id: 'old.7', from: 'old', owner: 'acct', channel: 'c' }));
    await expect.poll(() => heard).toContainEqual({ id: 'old.7', node: 'c', count: 1, holdsKey: true, batches: true });
  });

  it('a question still waiting when the census closes resolves with what it heard, and a closed census asks nobody', async () => {
    const asked: string[] = [];
    await listener((q) => asked.push(q.from));
    const a = await gateway('a', {}, { peers: () => ['silent'], waitMs: 60_000 });
    const waiting = a.remote('acct', 'c');
    await expect.poll(() => asked).toEqual(['a']);
    a.close();
    expect(await waiting).toEqual({ count: 0, holdsKey: false });
    expect(await a.remote('acct', 'c')).toEqual({ count: 0, holdsKey: false });
    // Another gateway's question, sent after: the only other one heard.
    const b = await gateway('b', {}, { peers: () => ['a'], waitMs: 200 });
    await b.remote('acct', 'c');
    expect(asked).toEqual(['a', 'b']);
  });
});
