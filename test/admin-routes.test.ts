// The admin service's route table: every route it registers, every spelling of its path (each
// character percent-encoded, double slashes, dot segments, absolute form, case, trailing slash),
// its method, HEAD and OPTIONS, with every bad credential. Only the declared public routes may
// answer; nothing may change. And the table catches a route planted outside the API plugin.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleDir } from '../services/admin/console-assets.js';
import { buildConsole } from '../tools/console-build.js';
import { startAdmin, type AdminFixture } from './helpers/admin.js';
import { RawHttp } from './helpers/raw-http.js';
import { RelayFixture } from './helpers/relay.js';
import { probeRouteTable } from './helpers/route-table.js';

const UUID = '069a79f4-44e9-4726-a5be-fca90e38aaf5';
let relay: RelayFixture;
let admin: AdminFixture;
let clientId: string;

beforeAll(async () => {
  // The console's files are routes too (a wildcard); build them unless another test did.
  if (consoleDir() === null) await buildConsole();
  relay = await RelayFixture.start();
  admin = await startAdmin(relay.nats, ['alice']);
  // Real targets: a leak through any spelling would revoke this key or lift this ban.
  clientId = (await relay.createKey(undefined, { label: 'route table' })).clientId;
  expect((await admin.call('/api/bans', { method: 'POST', body: { uuid: UUID, reason: 'route table' } })).status).toBe(201);
}, 60_000);

afterAll(async () => {
  await admin?.close();
  await relay?.close();
});

/** What an unauthorised request could change: keys, bans, the audit trail. */
async function state(fixture: AdminFixture): Promise<unknown[]> {
  return Promise.all(['/api/keys', '/api/bans', '/api/audit?limit=1000'].map(async (p) => (await fixture.call(p)).body));
}

async function probe(fixture: AdminFixture): Promise<{ violations: string[]; requests: number }> {
  const http = new RawHttp(fixture.server.port);
  try {
    return await probeRouteTable({
      routes: fixture.server.routes,
      http,
      port: fixture.server.port,
      params: { channel: 'play.example.net', clientId, uuid: UUID, '*': 'index.html' },
      bodies: { '/api/keys': { scopes: ['irc.connection.unauthenticated'] }, '/api/bans': { uuid: '0f2e0c2a-8f3c-4a43-9f43-6b1d6f4c1a10', reason: 'leak' } },
      token: fixture.tokens['alice'] ?? '',
    });
  } finally {
    http.close();
  }
}

describe('the admin route table', () => {
  it('every registered route, in every spelling of its path and with every bad credential, is refused (401/403/404/405, 400 for an absolute-form target) and changes nothing', async () => {
    const routes = admin.server.routes.map((r) => `${r.method} ${r.url}`);
    // The table is the server's own: the API's routes and the console's files are all in it.
    expect(routes).toEqual(expect.arrayContaining(['POST /api/keys', 'POST /api/keys/:clientId/revoke', 'DELETE /api/bans/:uuid', 'HEAD /api/keys', 'GET /healthz']));
    const before = await state(admin);
    const { violations, requests } = await probe(admin);
    expect(violations).toEqual([]);
    expect(requests).toBeGreaterThan(5000);
    expect(await state(admin)).toEqual(before);
  }, 120_000);

  it('fails for a route planted outside the API plugin that answers without a token, and a planted route that declares nothing is refused (default deny)', async () => {
    const planted = await startAdmin(relay.nats, ['alice'], {}, (app) => {
      app.get('/planted/undeclared', async () => ({ keys: 'every key' }));
      app.get('/planted/public', { config: { access: 'public' } }, async () => ({ keys: 'every key' }));
    });
    try {
      expect(planted.server.routes.map((r) => `${r.method} ${r.url}`)).toEqual(expect.arrayContaining(['GET /planted/undeclared', 'GET /planted/public']));
      const { violations } = await probe(planted);
      expect(violations.length).toBeGreaterThan(0);
      expect(violations.every((v) => v.includes('route GET /planted/public') || v.includes('route HEAD /planted/public'))).toBe(true);
      expect(violations.filter((v) => v.includes('/planted/undeclared'))).toEqual([]);
      expect((await planted.call('/planted/undeclared', { token: null })).status).toBe(401);
    } finally {
      await planted.close();
    }
  }, 120_000);
});
