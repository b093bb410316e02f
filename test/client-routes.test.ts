// The client port's route table: every route the relay server registers (fastify's, and the streams
// served before fastify), every spelling of its path (each character percent-encoded, double slashes,
// dot segments, absolute form, case, trailing slash), its method, HEAD and OPTIONS, with no or bad
// credentials. Only /healthz, /readyz and /metrics may answer; nothing may be stored. Guards: GET
// /%69rc was 404 while POST /%69rc reached the ingress (the router decodes, the stream path did not).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STREAM_NAME } from '../services/core/subjects.js';
import { RawHttp } from './helpers/raw-http.js';
import { RelayFixture } from './helpers/relay.js';
import { probeRouteTable, spellings } from './helpers/route-table.js';

const PUBLIC = new Set(['GET /healthz', 'HEAD /healthz', 'GET /readyz', 'HEAD /readyz', 'GET /metrics', 'HEAD /metrics']);
/** What a refused spelling may answer on the client port. */
const REFUSALS = { unauthorized: 401, invalid_session: 401, not_found: 404, bad_request: 400 };

let relay: RelayFixture;
beforeAll(async () => {
  relay = await RelayFixture.start();
});
afterAll(async () => {
  await relay?.close();
});

async function stored(): Promise<number> {
  return (await relay.server.core.nats.jsm.streams.info(STREAM_NAME)).state.messages;
}

describe('the client route table', () => {
  it('every registered route, in every spelling and with no or bad credentials, is refused (401/404/405/400) and stores nothing', async () => {
    const key = await relay.createKey();
    const routes = relay.server.routes.map((r) => `${r.method} ${r.url}`);
    expect(routes).toEqual(expect.arrayContaining(['GET /', 'GET /irc', 'POST /', 'POST /irc', 'GET /healthz', 'GET /readyz', 'GET /metrics']));
    const before = await stored();
    const http = new RawHttp(relay.server.port);
    try {
      const channel = { 'x-irc-multiplayer-server': 'routes.example.net' };
      const { violations, requests } = await probeRouteTable({
        routes: relay.server.routes,
        http,
        port: relay.server.port,
        params: {},
        bodies: { '/': { type: 'chat', message: 'leak' }, '/irc': { type: 'chat', message: 'leak' } },
        token: '',
        publicRoutes: PUBLIC,
        refusals: REFUSALS,
        credentials: [
          channel,
          { ...channel, authorization: 'Bearer not-a-session' },
          { ...channel, authorization: 'Bearer not-a-session', 'client-id': key.clientId, 'client-secret': key.clientSecret },
          { ...channel, 'client-id': key.clientId, 'client-secret': key.clientSecret },
        ],
      });
      expect(violations).toEqual([]);
      expect(requests).toBeGreaterThan(500);
    } finally {
      http.close();
    }
    expect(await stored()).toBe(before);
    expect(relay.server.core.bans.list()).toEqual([]);
  }, 120_000);

  it('answers GET and POST alike on every spelling of / and /irc the specification does not name (/%69rc): never past the router', async () => {
    const http = new RawHttp(relay.server.port);
    const headers = { authorization: 'Bearer not-a-session', 'x-irc-multiplayer-server': 'routes.example.net', 'content-type': 'application/json', accept: 'text/event-stream' };
    const reached: string[] = [];
    try {
      for (const path of ['/', '/irc']) {
        for (const target of spellings(path, relay.server.port).filter((t) => ![path, `${path}?`].includes(t))) {
          for (const method of ['GET', 'POST']) {
            const answer = await http.send(method, target, headers, method === 'POST' ? JSON.stringify({ type: 'chat', message: 'x' }) : undefined);
            if (![400, 404, 405].includes(answer.status)) reached.push(`${method} ${target}: ${answer.status}`);
          }
        }
      }
      const post = await http.send('POST', '/%69rc', headers, JSON.stringify({ type: 'chat', message: 'x' }));
      expect(JSON.parse(post.body)).toEqual({ error: 'not_found', message: expect.any(String) });
    } finally {
      http.close();
    }
    expect(reached).toEqual([]);
  });
});
