// A NATS node (the JetStream meta leader) killed and restarted mid-traffic: ingresses keep
// answering (503 with Retry-After only while they cannot store), gateways reconnect by themselves,
// and every acknowledged payload reaches live streams and a resuming client, exactly once, in order.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Mesh } from '../helpers/mesh.js';
import type { Pair } from '../helpers/sse-client.js';

let mesh: Mesh;

beforeAll(async () => {
  mesh = await Mesh.start({ gateways: 2, ingresses: 2 });
});
afterAll(async () => {
  await mesh?.close();
});

async function metaLeader(): Promise<number> {
  for (const [i, node] of mesh.cluster.nodes.entries()) {
    const jsz = (await (await fetch(`http://127.0.0.1:${node.monitorPort}/jsz`)).json()) as { meta_cluster?: { leader?: string }; server_name?: string };
    if (jsz.meta_cluster?.leader !== undefined) return mesh.cluster.nodes.findIndex((n) => n.serverName === jsz.meta_cluster!.leader) ?? i;
  }
  throw new Error('no JetStream meta leader');
}

/** The node that holds the connection of a relay process (its connection is named after it). */
async function nodeServing(nodeId: string): Promise<number> {
  for (const [i, node] of mesh.cluster.nodes.entries()) {
    const connz = (await (await fetch(`http://127.0.0.1:${node.monitorPort}/connz?limit=1000`)).json()) as { connections?: Array<{ name?: string }> };
    if ((connz.connections ?? []).some((c) => c.name?.endsWith(`:${nodeId}`))) return i;
  }
  throw new Error(`no node serves ${nodeId}`);
}

describe('a NATS node dies mid-traffic', () => {
  it('the JetStream meta leader: nothing acknowledged is lost, sent = acknowledged = received', async () => {
    await scenario('meta leader', metaLeader, 300);
  });

  it('the node gateway 1 is connected to: the gateway reconnects, resubscribes and catches up by itself', async () => {
    await scenario('gateway 1’s node', () => nodeServing(mesh.gateways[0]!.nodeId), 150);
  });
});

async function scenario(what: string, pickVictim: () => Promise<number>, N: number): Promise<void> {
  const key = await mesh.createKey();
  const ch = `faults-${N}.example.net`;
  const sender = mesh.player();
  const resumer = mesh.player();
  const live = await Promise.all(mesh.gateways.map((g) => mesh.connect(g, mesh.headers(mesh.player(), key, ch))));

  // The resuming client reads one frame, then goes away for the whole fault.
  const before = await mesh.connect(mesh.gateways[0]!, mesh.headers(resumer, key, ch));
  expect((await mesh.post(mesh.ingresses[0]!, { type: 'chat', message: 'start' }, mesh.headers(sender, key, ch))).status).toBe(200);
  const lastSeen = (await before.nextPair()).id!;
  before.close();
  for (const s of live) expect((await s.nextPair()).data.message).toBe('start');

  const refusals: Array<{ status: number; code: string; retryAfter: string | null }> = [];
  let attempts = 0;
  let acknowledged = 0;
  const leader = await pickVictim();
  let restarted: Promise<unknown> = Promise.resolve();
  for (let n = 0; n < N; n++) {
    if (n === Math.floor(N / 3)) await mesh.cluster.nodes[leader]!.kill();
    if (n === Math.floor((2 * N) / 3)) restarted = mesh.cluster.restart(leader);
    const ingress = mesh.ingresses[n % 2]!;
    const body = { type: 'chat', message: `m${n}` };
    // A client that gets a 503 retries with the same Idempotency-Key, as it should.
    const deadline = Date.now() + 60_000;
    for (;;) {
      attempts++;
      const res = await mesh.post(ingress, body, mesh.headers(sender, key, ch, { 'idempotency-key': `fault-${N}-${n}` }));
      if (res.status === 200) {
        expect(res.body).toEqual({ accepted: 1, dropped: 0 });
        acknowledged++;
        break;
      }
      refusals.push({ status: res.status, code: String(res.body['error']), retryAfter: res.headers.get('retry-after') });
      if (Date.now() > deadline) throw new Error(`m${n} never acknowledged; last ${JSON.stringify(res.body)}\n${mesh.logs()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  await restarted;
  expect(acknowledged).toBe(N);
  // Refused only with 503 and a Retry-After while a store was impossible; never another error.
  for (const r of refusals) {
    expect(r.status).toBe(503);
    expect(Number(r.retryAfter)).toBeGreaterThan(0);
    expect(['publish_failed', 'unavailable']).toContain(r.code);
  }

  const expected = Array.from({ length: N }, (_, n) => `m${n}`);
  const check = (pairs: Pair[], who: string): void => {
    expect(pairs.map((p) => p.data.message), who).toEqual(expected);
    const ids = pairs.map((p) => p.id!);
    expect(new Set(ids).size, who).toBe(N);
    expect(ids, who).toEqual([...ids].sort((a, b) => a - b));
  };
  // Live streams on both gateways saw everything (gaps filled from the log where needed).
  for (const [i, s] of live.entries()) check(await s.pairsUntil((p) => p.data.message === `m${N - 1}`, 60_000), `live stream on gateway ${i + 1}\n${mesh.logs()}`);
  // And so does the client that resumes now, on the other gateway.
  const resumed = await mesh.open(mesh.gateways[1]!, { ...mesh.headers(resumer, key, ch), 'last-event-id': String(lastSeen) });
  check(await resumed.pairsUntil((p) => p.data.message === `m${N - 1}`, 60_000), 'resuming client');
  process.stdout.write(`nats fault (${what}): ${N} sent, ${acknowledged} acknowledged after ${attempts} attempts (${refusals.length} refused with 503), ${N} received by each client\n`);
}
