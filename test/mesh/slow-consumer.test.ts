// A client that stops reading slows nobody else: its frames wait in a bounded queue where newer
// presence snapshots replace older ones, and past the bound its stream is closed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Mesh } from '../helpers/mesh.js';

let mesh: Mesh;

beforeAll(async () => {
  mesh = await Mesh.start({ gateways: 2, ingresses: 1, env: { STREAM_QUEUE_MAX_BYTES: '2MiB' } });
});
afterAll(async () => {
  await mesh?.close();
});

const big = (i: number): Record<string, unknown> => ({ type: 'chat', message: `${i}:${'x'.repeat(30_000)}` });
const presence = (health: number): Record<string, unknown> => ({
  type: 'presence',
  inventory: [],
  attributes: { absorption: 0, health, hunger: 20, oxygen: 300, saturation: 5 },
});

describe('slow consumers', () => {
  it('a stalled client does not hold back the others; past the bound it is closed', async () => {
    const key = await mesh.createKey();
    const ch = 'slow.example.net';
    const stalled = await mesh.connect(mesh.gateways[0]!, mesh.headers(mesh.player(), key, ch));
    stalled.pause();
    const readers = await Promise.all([0, 0, 1].map((g) => mesh.connect(mesh.gateways[g]!, mesh.headers(mesh.player(), key, ch))));
    const sender = mesh.player();
    const N = 600; // ~18 MB: more than the kernel buffers and the 2 MiB queue
    for (let b = 0; b < N / 30; b++) {
      const res = await mesh.post(mesh.ingresses[0]!, Array.from({ length: 30 }, (_, i) => big(b * 30 + i)), mesh.headers(sender, key, ch));
      expect(res.status).toBe(200);
    }
    // Every other client has everything while the stalled one still has not read.
    for (const r of readers) {
      const got = await r.pairsUntil((p) => String(p.data.message).startsWith(`${N - 1}:`), 60_000);
      expect(got.map((p) => Number(String(p.data.message).split(':')[0]))).toEqual(Array.from({ length: N }, (_, i) => i));
    }
    // The stalled stream was closed by its gateway; reading again, the client sees it end.
    stalled.resume();
    await stalled.waitClosed(30_000);
    const metrics = await (await fetch(`${mesh.gateways[0]!.url}/metrics`)).text();
    expect(metrics).toMatch(/relay_streams_closed_total\{reason="slow_consumer",node="[^"]+"\} 1/);
  });

  it('while a client lags, newer presence snapshots of a sender replace the older ones it has not read', async () => {
    const key = await mesh.createKey();
    const ch = 'coalesce.example.net';
    // A gateway with room to queue: the client lags but is not closed.
    const roomy = await mesh.addGateway({ STREAM_QUEUE_MAX_BYTES: '64MiB' });
    const lagging = await mesh.connect(roomy, mesh.headers(mesh.player(), key, ch));
    lagging.pause();
    const sender = mesh.player();
    // Fill what the kernel buffers take, so what follows waits in the relay's queue.
    for (let b = 0; b < 10; b++) await mesh.post(mesh.ingresses[0]!, Array.from({ length: 30 }, (_, i) => big(b * 30 + i)), mesh.headers(sender, key, ch));
    for (let h = 1; h <= 50; h++) await mesh.post(mesh.ingresses[0]!, presence(h), mesh.headers(sender, key, ch));
    await mesh.post(mesh.ingresses[0]!, { type: 'chat', message: 'done' }, mesh.headers(sender, key, ch));
    lagging.resume();
    const got = await lagging.pairsUntil((p) => p.data.message === 'done', 60_000);
    const chats = got.filter((p) => p.data.type === 'chat').map((p) => String(p.data.message).split(':')[0]);
    const snapshots = got.filter((p) => p.data.type === 'presence').map((p) => (p.data['attributes'] as { health: number }).health);
    // Every chat, in order; fewer snapshots than sent, rising, ending with the newest.
    expect(chats).toEqual([...Array.from({ length: 300 }, (_, i) => String(i)), 'done']);
    expect(snapshots.length).toBeLessThan(50);
    expect(snapshots.at(-1)).toBe(50);
    expect(snapshots).toEqual([...snapshots].sort((a, b) => a - b));
    expect(lagging.isClosed).toBe(false);
  });
});
