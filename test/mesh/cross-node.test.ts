// Cross-node delivery: a POST to any ingress reaches every matching stream on every gateway, in
// order per channel, exactly once per stream.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Mesh } from '../helpers/mesh.js';

let mesh: Mesh;

beforeAll(async () => {
  mesh = await Mesh.start({ gateways: 2, ingresses: 2 });
});
afterAll(async () => {
  await mesh?.close();
});

describe('cross-node delivery', () => {
  it('every stream on every gateway hears every POST from every ingress, once, in the log’s order', async () => {
    const key = await mesh.createKey();
    const ch = 'cross.example.net';
    const listeners = await Promise.all(
      [0, 0, 1, 1].map((g) => mesh.connect(mesh.gateways[g]!, mesh.headers(mesh.player(), key, ch))),
    );
    const senders = [mesh.player(), mesh.player()];
    const N = 100;
    // Two senders post concurrently, each through its own ingress, each in its own order.
    await Promise.all(
      senders.map(async (sender, i) => {
        for (let n = 0; n < N; n++) {
          const res = await mesh.post(mesh.ingresses[i]!, { type: 'chat', message: `${i}:${n}` }, mesh.headers(sender, key, ch));
          expect(res.status).toBe(200);
        }
      }),
    );
    const received = await Promise.all(
      listeners.map(async (s) => {
        const pairs = [];
        for (let n = 0; n < 2 * N; n++) pairs.push(await s.nextPair({ timeoutMs: 15_000 }));
        return pairs;
      }),
    );
    const reference = received[0]!.map((p) => `${p.id}|${String(p.data['message'])}`);
    for (const r of received) {
      const seen = r.map((p) => `${p.id}|${String(p.data['message'])}`);
      // The same frames, in the same order, on every stream of both gateways.
      expect(seen).toEqual(reference);
      const ids = r.map((p) => p.id!);
      expect(new Set(ids).size).toBe(2 * N);
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
      // Each sender's own order is kept.
      for (const i of [0, 1]) {
        const mine = r.map((p) => String(p.data['message'])).filter((m) => m.startsWith(`${i}:`));
        expect(mine).toEqual(Array.from({ length: N }, (_, n) => `${i}:${n}`));
      }
    }
  });

  it('a new key works on every gateway and ingress at once', async () => {
    const key = await mesh.createKey();
    const ch = 'fresh-key.example.net';
    const s1 = await mesh.connect(mesh.gateways[0]!, mesh.headers(mesh.player(), key, ch));
    const s2 = await mesh.connect(mesh.gateways[1]!, mesh.headers(mesh.player(), key, ch));
    const res = await mesh.post(mesh.ingresses[1]!, { type: 'chat', message: 'fresh' }, mesh.headers(mesh.player(), key, ch));
    expect(res.status).toBe(200);
    expect((await s1.nextPair()).data.message).toBe('fresh');
    expect((await s2.nextPair()).data.message).toBe('fresh');
  });
});
