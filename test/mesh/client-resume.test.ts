// The client library in a mesh, behind the committed nginx configuration (one public address, two
// gateways, an ingress): kill -9 of the gateway holding its stream, and the library resumes on the
// other gateway with Last-Event-ID. Every acknowledged frame arrives exactly once, in order.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RelayClient } from '../../clients/typescript/src/index.js';
import { Mesh } from '../helpers/mesh.js';
import { readMetrics } from '../helpers/metrics.js';
import { proxyAvailable, startNginx, type RunningProxy } from '../helpers/proxy.js';
import { CLIENT_AGENT, Recorder, TestTransport } from '../helpers/relay-client.js';

let mesh: Mesh;
let proxy: RunningProxy;
const clients: RelayClient[] = [];

beforeAll(async () => {
  if (!proxyAvailable('nginx')) throw new Error('nginx is not installed: apt-get install -y nginx-light');
  mesh = await Mesh.start({ gateways: 2, ingresses: 1 });
  proxy = await startNginx(
    mesh.gateways.map((g) => g.port),
    mesh.ingresses.map((i) => i.port),
  );
});
afterAll(async () => {
  for (const c of clients) c.close();
  await proxy?.stop();
  await mesh?.close();
});

describe('RelayClient across kill -9 of its gateway', () => {
  it('resumes on the other gateway through the one address: 25 acknowledged frames, each exactly once, in order', async () => {
    const key = await mesh.createKey();
    const ch = 'client-failover.example.net';
    const me = mesh.player();
    const other = mesh.player();
    const transport = new TestTransport();
    const options = { url: proxy.url, server: ch, clientId: key.clientId, clientSecret: key.clientSecret, userAgent: CLIENT_AGENT };
    const consumer = new RelayClient({ ...options, token: () => me.token, fetch: transport.fetch, backoff: { baseMs: 100, capMs: 2000, random: () => 0.99 } });
    const sender = new RelayClient({ ...options, token: () => other.token, backoff: { baseMs: 50, capMs: 300 }, sendAttempts: 50 });
    clients.push(consumer, sender);
    const rec = new Recorder(consumer);
    await consumer.connect();

    // Which gateway nginx gave the stream to.
    const holding = await Promise.all(mesh.gateways.map(async (g) => (await readMetrics(g.url)).get('relay_streams_open') ?? 0));
    const victim = mesh.gateways[holding.indexOf(1)]!;
    expect(holding.filter((h) => h === 1)).toHaveLength(1);

    const sent: string[] = [];
    const post = async (i: number): Promise<void> => {
      const message = `frame ${i}`;
      expect(await sender.send({ type: 'chat', message })).toEqual({ accepted: 1, dropped: 0 });
      sent.push(message);
    };
    for (let i = 0; i < 10; i++) await post(i);
    // Seen before the kill, so the resume must start right after frame 9 (an acknowledged post may
    // still be on its way to the stream when the process dies).
    await rec.until(() => rec.chats().includes('frame 9'), 'frame 9 at the consumer before the kill');
    const away = rec.states.length;
    await victim.kill();
    // Posted while the consumer is away (its back-off is pinned near the 2 s cap): only a resume
    // with Last-Event-ID brings these back.
    for (let i = 10; i < 20; i++) await post(i);
    await rec.state('open', 'the consumer back on the other gateway', 15_000, away);
    // And live ones after the resume.
    for (let i = 20; i < 25; i++) await post(i);
    await rec.until(() => rec.chats().includes('frame 24'), 'frame 24 at the consumer', 30_000);
    expect(rec.chats()).toEqual(sent);
    const ids = rec.frames.filter((f) => f.payload.type === 'chat').map((f) => Number(f.id));
    expect(new Set(ids).size).toBe(25);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    // The stream ended without a close event (the process died), and the client came back with the
    // last id it had seen, frame 9's.
    expect(rec.states.find((s) => s.state === 'reconnecting')).toMatchObject({ reason: expect.stringMatching(/^(network_error|stream_ended)$/) });
    const resumed = transport.gets.filter((g) => g.headers['last-event-id'] !== undefined);
    expect(resumed.length).toBeGreaterThanOrEqual(1);
    expect(resumed[0]!.headers['last-event-id']).toBe(String(ids[9]));
    expect(rec.states.at(-1)).toMatchObject({ state: 'open', resumedFrom: expect.stringMatching(/^\d+$/) });
  });
});
