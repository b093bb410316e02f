// One public address: the committed nginx and HAProxy configurations, run for real in front of a
// real gateway and a real ingress, carry a chat from POST to stream without buffering it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { proxyAvailable, startHaproxy, startNginx, type RunningProxy } from './helpers/proxy.js';
import { RelayFixture } from './helpers/relay.js';
import { openStream } from './helpers/sse-client.js';

let gateway: RelayFixture;
let ingress: RelayFixture;

beforeAll(async () => {
  gateway = await RelayFixture.start({ service: 'gateway' });
  ingress = await RelayFixture.start({ service: 'ingress', nats: gateway.nats, profile: gateway.profile });
});
afterAll(async () => {
  await ingress?.close();
  await gateway?.close();
});

const proxies = [
  ['nginx', startNginx],
  ['haproxy', startHaproxy],
] as const;

describe.each(proxies)('behind %s (infra/proxy)', (kind, start) => {
  let proxy: RunningProxy;
  beforeAll(async () => {
    if (!proxyAvailable(kind)) throw new Error(`${kind} is not installed: apt-get install -y ${kind === 'nginx' ? 'nginx-light' : 'haproxy'} (.ci/run does this)`);
    proxy = await start([gateway.server.port], [ingress.server.port]);
  });
  afterAll(async () => {
    await proxy?.stop();
  });

  it('a stream opened and a chat posted through the one address meet, on both paths', async () => {
    const key = await gateway.createKey();
    const ch = `${kind}.example.net`;
    for (const path of ['/', '/irc']) {
      const s = await openStream(proxy.url, { path, headers: gateway.headers(gateway.player(), key, ch) });
      expect(s.status).toBe(200);
      expect(s.headers['content-type']).toMatch(/^text\/event-stream/);
      // The greeting is a few bytes: it only arrives if the proxy does not buffer.
      await s.waitForComment(/^connected/);
      const res = await fetch(new URL(path, proxy.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...gateway.headers(gateway.player(), key, ch) },
        body: JSON.stringify({ type: 'chat', message: `through ${kind}${path}` }),
      });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ accepted: 1, dropped: 0 });
      expect((await s.nextPair()).data.message).toBe(`through ${kind}${path}`);
      s.close();
    }
  });

  it('refusals keep their status and JSON body through the proxy', async () => {
    const s = await openStream(proxy.url, { headers: { 'x-irc-multiplayer-server': 'x.example.net' } });
    const r = await s.refusal();
    expect(r.status).toBe(401);
    expect(r.body.error).toBe('unauthorized');
    const other = await fetch(new URL('/metrics-or-anything', proxy.url));
    expect(other.status).toBe(404);
    expect(await other.json()).toMatchObject({ error: 'not_found' });
  });
});
