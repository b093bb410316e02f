// Graceful drain (SIGTERM): a gateway hands its clients to the rest of the mesh without loss; an
// ingress finishes what it accepted and refuses the rest with 503.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logEntry } from '../../services/core/log-entry.js';
import { fromSequence, readRange } from '../../services/core/log-reader.js';
import { channelSubject } from '../../services/core/subjects.js';
import { waitUntil as eventually } from '../../tools/poll.js';
import { Mesh } from '../helpers/mesh.js';
import { readMetrics } from '../helpers/metrics.js';

let mesh: Mesh;

beforeAll(async () => {
  mesh = await Mesh.start({ gateways: 2, ingresses: 1, env: { RETRY_MIN: '1s', RETRY_MAX: '2s' } });
});
afterAll(async () => {
  await mesh?.close();
});

describe('graceful drain', () => {
  it('SIGTERM on a gateway: each stream gets a jittered retry and a closing comment, claims are released, clients resume elsewhere without loss', async () => {
    const draining = await mesh.addGateway();
    const key = await mesh.createKey();
    const ch = 'drain.example.net';
    const players = [mesh.player(), mesh.player(), mesh.player()];
    const streams = await Promise.all(players.map((p) => mesh.connect(draining, mesh.headers(p, key, ch))));
    const sender = mesh.player();
    let published = 0;
    let stop = false;
    const publisher = (async () => {
      while (!stop) {
        const res = await mesh.post(mesh.ingresses[0]!, { type: 'chat', message: `n${published}` }, mesh.headers(sender, key, ch));
        expect(res.status).toBe(200);
        published++;
      }
    })();
    // Let some traffic through, then drain.
    await streams[0]!.nextPair();
    const exit = draining.stop();
    const lastIds: number[] = [];
    for (const s of streams) {
      await s.waitForComment(/restarting; reconnect with Last-Event-ID/);
      await s.waitClosed();
      const retry = s.retries.at(-1)!;
      expect(retry).toBeGreaterThanOrEqual(1000);
      expect(retry).toBeLessThanOrEqual(2000);
      const seenIds = s.events.filter((e) => e.id !== null).map((e) => Number(e.id));
      lastIds.push(seenIds.length > 0 ? Math.max(...seenIds) : 0);
    }
    expect(await exit).toBe(0);
    // Its claims are gone from the bucket.
    for (const p of players) {
      const keys = await mesh.nats.buckets.streams.keys(`${p.uuid}.>`);
      const left: string[] = [];
      for await (const k of keys) left.push(k);
      expect(left).toEqual([]);
    }
    // Everyone comes back on the other gateway and misses nothing.
    const resumed = await Promise.all(players.map((p, i) => mesh.open(mesh.gateways[0]!, { ...mesh.headers(p, key, ch), 'last-event-id': String(lastIds[i]) })));
    stop = true;
    await publisher;
    // A few more once they are back: replay and live join without a seam.
    for (let k = 0; k < 5; k++) {
      expect((await mesh.post(mesh.ingresses[0]!, { type: 'chat', message: `n${published}` }, mesh.headers(sender, key, ch))).status).toBe(200);
      published++;
    }
    const last = `n${published - 1}`;
    for (const [i, s] of resumed.entries()) {
      const got = await s.pairsUntil((p) => p.data.message === last, 30_000);
      const first = Number(String(got[0]!.data.message).slice(1));
      expect(got.map((p) => p.data.message), `client ${i}`).toEqual(Array.from({ length: published - first }, (_, k) => `n${first + k}`));
      expect(got[0]!.id).toBe(lastIds[i]! + 1);
    }
  });

  it('SIGTERM on an ingress: POSTs already arriving finish and are stored; later ones are refused; it exits 0', async () => {
    const ingress = await mesh.addIngress();
    const key = await mesh.createKey();
    const ch = 'drain-ingress.example.net';
    const sender = mesh.player();
    const bodies = Array.from({ length: 10 }, (_, i) => JSON.stringify(Array.from({ length: 20 }, (_, k) => ({ type: 'chat', message: `b${i}-${k}` }))));
    // Ten POSTs whose bodies are half sent when the drain starts.
    const sockets = await Promise.all(bodies.map(async (body) => {
      const socket = connect({ host: '127.0.0.1', port: ingress.port });
      await new Promise((r) => socket.once('connect', r));
      const head = Object.entries({ ...mesh.headers(sender, key, ch), 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) })
        .map(([k, v]) => `${k}: ${v}`)
        .join('\r\n');
      socket.write(`POST / HTTP/1.1\r\nhost: x\r\n${head}\r\n\r\n${body.slice(0, 100)}`);
      let response = '';
      socket.on('data', (d: Buffer) => (response += d.toString()));
      const ended = new Promise<string>((r) => socket.once('close', () => r(response)));
      return { socket, body, ended };
    }));
    // The ingress has begun all ten (their heads are read) before it is told to stop.
    await eventually(async () => (await readMetrics(ingress.url)).get('relay_posts_in_flight') === 10, 'the ingress to count ten POSTs in flight');
    const exit = ingress.stop();
    // Still listening (it waits for the ten), and saying so.
    await eventually(async () => (await fetch(`${ingress.url}/readyz`).then((r) => r.status, () => 0)) === 503, 'the ingress to report draining');
    const late = await fetch(ingress.url, { method: 'POST', headers: { 'content-type': 'application/json', ...mesh.headers(sender, key, ch) }, body: '[]' }).then(
      async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }),
      () => ({ status: 0, body: {} }),
    );
    for (const s of sockets) s.socket.write(s.body.slice(100));
    const responses = await Promise.all(sockets.map((s) => s.ended));
    expect(await exit).toBe(0);
    for (const r of responses) expect(r).toMatch(/^HTTP\/1\.1 200 /);
    // A POST that began after the drain started was refused, while the ten were still arriving.
    expect(late).toMatchObject({ status: 503, body: { error: 'draining' } });
    const stored = new Set<string>();
    await readRange(mesh.nats.js, { filter: channelSubject(ch), start: fromSequence(1) }, (m) => {
      stored.add(String(logEntry(m.headers, m.data, m.seq, m.time)!.data['message']));
    });
    expect(stored.size).toBe(200);
  });
});
