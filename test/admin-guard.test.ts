// What the admin service refuses before any route acts, against a real relay and nats-server: an
// absolute-form request target, a Host it does not answer to (DNS rebinding), a change sent by a
// page of another site, a body that is not JSON; the framework's own refusals answered as
// themselves (never a 500, never an error-level log line); and a channel as long as any can be.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Operator } from '../services/admin/admin-tokens.js';
import { consoleDir } from '../services/admin/console-assets.js';
import { loadConfig } from '../services/core/config.js';
import { buildConsole } from '../tools/console-build.js';
import { startAdmin, type AdminFixture } from './helpers/admin.js';
import { RawHttp, rawRequest } from './helpers/raw-http.js';
import { RelayFixture } from './helpers/relay.js';

const UUID = '5b0b5c3e-1f5e-4a7e-9a38-2d9b1d0c7e11';
let relay: RelayFixture;
let admin: AdminFixture;
let http: RawHttp;
let token: string;
let host: string;

beforeAll(async () => {
  if (consoleDir() === null) await buildConsole();
  relay = await RelayFixture.start();
  admin = await startAdmin(relay.nats, ['alice', 'bob', 'carol', 'dave', 'erin']);
  http = new RawHttp(admin.server.port);
  token = admin.tokens['alice'] ?? '';
  host = `127.0.0.1:${admin.server.port}`;
}, 60_000);

afterAll(async () => {
  http?.close();
  await admin?.close();
  await relay?.close();
});

type Json = Record<string, unknown>;
const json = (body: string): Json => JSON.parse(body) as Json;
const bearer = (t = token): Record<string, string> => ({ authorization: `Bearer ${t}` });
const banned = async (uuid: string): Promise<boolean> => ((await admin.call('/api/bans')).body as Json[]).some((b) => b['uuid'] === uuid);

describe('the request line and the Host', () => {
  it('an absolute-form target (GET http://host/api/keys) is refused with 400 absolute_form_refused, token or not, and creates nothing', async () => {
    const keysBefore = (await admin.call('/api/keys')).body;
    for (const auth of ['', `Authorization: Bearer ${token}\r\n`]) {
      const get = await rawRequest(admin.server.port, `GET http://${host}/api/keys HTTP/1.1\r\nHost: ${host}\r\n${auth}Connection: close\r\n\r\n`);
      expect([get.status, json(get.body)['error'], get.headers['cache-control']]).toEqual([400, 'absolute_form_refused', 'no-store']);
      const body = '{"scopes":["irc.connection.unauthenticated"]}';
      const post = await rawRequest(admin.server.port, `POST http://${host}/%61pi/keys HTTP/1.1\r\nHost: ${host}\r\n${auth}Content-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
      expect([post.status, json(post.body)['error']]).toEqual([400, 'absolute_form_refused']);
    }
    expect((await admin.call('/api/keys')).body).toEqual(keysBefore);
  });

  it('a Host it does not answer to (a DNS-rebinding page) is refused with 421 host_not_allowed, token or not; loopback names pass; the probes answer any Host', async () => {
    for (const wrong of ['evil.example', `evil.example:${admin.server.port}`, '127.0.0.1.evil.example', 'localhost@evil.example', 'localhost:8090:1']) {
      const r = await http.send('GET', '/api/keys', { ...bearer(), host: wrong });
      expect([wrong, r.status, json(r.body)['error']]).toEqual([wrong, 421, 'host_not_allowed']);
      expect(r.headers['x-frame-options']).toBe('DENY');
    }
    for (const right of [host, `localhost:${admin.server.port}`, `[::1]:${admin.server.port}`, 'LOCALHOST']) {
      expect([right, (await http.send('GET', '/api/session', { ...bearer(), host: right })).status]).toEqual([right, 200]);
    }
    expect((await http.send('GET', '/healthz', { host: '10.1.2.3:8090' })).status).toBe(200);
  });

  it('ADMIN_ALLOWED_HOSTS adds the names operators reach it by (with a port: that port only), and a malformed entry stops start-up', async () => {
    const proxied = await startAdmin(relay.nats, ['alice'], { ADMIN_ALLOWED_HOSTS: 'admin.example.net, 10.0.0.5:8090' });
    try {
      const raw = new RawHttp(proxied.server.port);
      const auth = { authorization: `Bearer ${proxied.tokens['alice'] ?? ''}` };
      for (const [h, status] of [['admin.example.net', 200], ['Admin.Example.NET:443', 200], ['10.0.0.5:8090', 200], ['10.0.0.5:9999', 421], ['example.net', 421]] as const) {
        expect([h, (await raw.send('GET', '/api/session', { ...auth, host: h })).status]).toEqual([h, status]);
      }
      raw.close();
    } finally {
      await proxied.close();
    }
    expect(() => loadConfig('admin', { NATS_URL: relay.nats.url, ADMIN_TOKEN: 'x'.repeat(30), ADMIN_ALLOWED_HOSTS: 'https://admin.example.net/' })).toThrow(/ADMIN_ALLOWED_HOSTS item 1/);
  });
});

describe('changes from a page of another site', () => {
  it('a POST or DELETE whose Origin or Sec-Fetch-Site names another site is refused with 403 origin_not_allowed even with the token, and bans nothing', async () => {
    const body = JSON.stringify({ uuid: UUID, reason: 'cross-site' });
    const headers = { ...bearer(), 'content-type': 'application/json' };
    const crossSite: Record<string, string>[] = [{ origin: 'https://evil.example' }, { origin: 'null' }, { origin: `http://127.0.0.1:${admin.server.port + 1}` }, { 'sec-fetch-site': 'cross-site' }, { 'sec-fetch-site': 'same-site' }];
    for (const cross of crossSite) {
      const r = await http.send('POST', '/api/bans', { ...headers, ...cross }, body);
      expect([cross, r.status, json(r.body)['error']]).toEqual([cross, 403, 'origin_not_allowed']);
    }
    expect(await banned(UUID)).toBe(false);
    // The console's own page: same origin.
    const same = await http.send('POST', '/api/bans', { ...headers, origin: `http://${host}`, 'sec-fetch-site': 'same-origin' }, body);
    expect(same.status).toBe(201);
    const lift = await http.send('DELETE', `/api/bans/${UUID}`, { ...bearer(), origin: 'https://evil.example' });
    expect([lift.status, json(lift.body)['error']]).toEqual([403, 'origin_not_allowed']);
    expect(await banned(UUID)).toBe(true);
    expect((await http.send('DELETE', `/api/bans/${UUID}`, bearer())).status).toBe(204);
  });

  it("a no-cors text/plain POST (what any web page can send) revokes no key: 401 without the token, 415 unsupported_media_type for a body that is not JSON", async () => {
    const key = await relay.createKey(undefined, { label: 'no-cors target' });
    for (const path of [`/api/keys/${key.clientId}/revoke`, `/%61pi/keys/${key.clientId}/revoke`]) {
      const r = await http.send('POST', path, { 'content-type': 'text/plain;charset=UTF-8' }, '{}');
      expect([path, r.status, json(r.body)['error']]).toEqual([path, 401, 'admin_token_required']);
    }
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      const r = await http.send('POST', `/api/keys/${key.clientId}/revoke`, { ...bearer(), 'content-type': type }, 'scopes=all');
      expect([type, r.status, json(r.body)['error']]).toEqual([type, 415, 'unsupported_media_type']);
      const create = await http.send('POST', '/api/keys', { ...bearer(), 'content-type': type }, '{"scopes":["irc.messages.send"]}');
      expect([type, create.status]).toEqual([type, 415]);
    }
    const listed = ((await admin.call('/api/keys')).body as Json[]).find((k) => k['clientId'] === key.clientId);
    expect(listed?.['status']).toBe('active');
  });
});

describe("the framework's own refusals", () => {
  it('odd paths, broken escapes, bad JSON and large bodies answer 4xx as themselves, never 500, with no error-level log line', async () => {
    const from = admin.logs.lines.length;
    const cases: [string, string, Record<string, string>, string | undefined, number][] = [
      ['GET', '//', {}, undefined, 403],
      ['GET', '/%00', {}, undefined, 403],
      ['GET', '/./api/keys', {}, undefined, 403],
      ['GET', '/static/../api/keys', {}, undefined, 403],
      ['GET', '/index.html/..', {}, undefined, 403],
      ['GET', '//api/keys', {}, undefined, 403],
      ['GET', '/%zz', {}, undefined, 400],
      ['GET', '/api/channels/%zz/streams', bearer(), undefined, 400],
      ['POST', '/api/bans', { ...bearer(), 'content-type': 'application/json' }, '{"uuid":', 400],
      ['POST', '/api/bans', { ...bearer(), 'content-type': 'application/json' }, JSON.stringify({ uuid: UUID, reason: 'x'.repeat(70_000) }), 413],
      ['POST', '/api/keys/x/revoke', { ...bearer(), 'content-type': 'application/json' }, '', 400],
    ];
    for (const [method, target, headers, body, status] of cases) {
      const r = await http.send(method, target, headers, body);
      expect([method, target, r.status, r.headers['cache-control']]).toEqual([method, target, status, 'no-store']);
      expect(Object.keys(json(r.body))).toEqual(['error', 'message']);
    }
    const errors = admin.logs.lines.slice(from).filter((l) => {
      const level = json(l)['level'];
      return level === 'error' || level === 'fatal' || (typeof level === 'number' && level >= 50);
    });
    expect(errors).toEqual([]);
  });

  it('a channel of 253 characters (the longest host name) can be viewed, replayed and tailed', async () => {
    const channel = ['a'.repeat(63), 'b'.repeat(63), 'c'.repeat(63), 'd'.repeat(61)].join('.');
    expect(channel).toHaveLength(253);
    expect(await admin.call(`/api/channels/${channel}/streams`)).toMatchObject({ status: 200, body: [] });
    expect(await admin.call(`/api/channels/${channel}:25565/replay`)).toMatchObject({ status: 200, body: { entries: [] } });
    const head = await http.send('HEAD', `/api/channels/${channel}/streams`, bearer());
    expect(head.status).toBe(200);
  });
});

describe('who acted', () => {
  it('an operator always has a name: an empty one cannot be made, so the audit never records "admin-api:"', () => {
    expect(() => new Operator('')).toThrow(/no name/);
    expect(new Operator('ana').actor).toBe('admin-api:ana');
  });
});
