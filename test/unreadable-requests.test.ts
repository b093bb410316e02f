// Requests Node's HTTP parser cannot read never reach a route, but they are refusals all the same:
// each gets a status and the relay's {"error", "message"} body (not fastify's shape, not a bare
// status line), is counted in relay_refusals_total, and the connection is closed.

import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdmin, type AdminFixture } from './helpers/admin.js';
import { readMetrics } from './helpers/metrics.js';
import { rawRequest } from './helpers/raw-http.js';
import { RelayFixture } from './helpers/relay.js';

let relay: RelayFixture;
let admin: AdminFixture;

beforeAll(async () => {
  relay = await RelayFixture.start({ env: { BODY_TIMEOUT: '500ms' } });
  admin = await startAdmin(relay.nats, ['ana']);
}, 60_000);
afterAll(async () => {
  await admin?.close();
  await relay?.close();
});

const CASES: Array<[string, string, number, string]> = [
  ['a control character in a header value', 'GET / HTTP/1.1\r\nHost: x\r\nUser-Agent: mod/1\x01x\r\n\r\n', 400, 'bad_request'],
  ['a control character in a POST header', 'POST /irc HTTP/1.1\r\nHost: x\r\nX-IRC-Multiplayer-Server: a\x7fb\r\nContent-Length: 0\r\n\r\n', 400, 'bad_request'],
  ['a request line that is not HTTP', 'HELLO THERE\r\n\r\n', 400, 'bad_request'],
  ['a header name with a space', 'GET / HTTP/1.1\r\nHost: x\r\nBad Name: y\r\n\r\n', 400, 'bad_request'],
  ['headers past 16 KiB', `GET / HTTP/1.1\r\nHost: x\r\nX-Padding: ${'a'.repeat(20_000)}\r\n\r\n`, 431, 'headers_too_large'],
];

describe('a request the HTTP parser cannot read', () => {
  it.each(CASES)('%s: answered %s in the relay’s shape, counted, and the connection closed', async (_name, text, status, code) => {
    const before = (await readMetrics(relay.url)).get(`relay_refusals_total{code="${code}"}`) ?? 0;
    const answer = await rawRequest(relay.server.port, text);
    expect(answer.status).toBe(status);
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(answer.body)).toEqual({ error: code, message: expect.any(String) });
    expect((await readMetrics(relay.url)).get(`relay_refusals_total{code="${code}"}`)).toBe(before + 1);
  });

  it('headers that never finish are answered 408 request_timeout in the relay’s shape at BODY_TIMEOUT', async () => {
    // Written and left open (no end: an end is a malformed request of its own) until the server closes it.
    const socket = connect(relay.server.port, '127.0.0.1', () => socket.write('GET / HTTP/1.1\r\nHost: x\r\nX-Slow: '));
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    await new Promise((resolve) => socket.on('close', resolve));
    const [head = '', body = ''] = Buffer.concat(chunks).toString('utf8').split('\r\n\r\n', 2);
    expect([Number(head.split(' ')[1]), JSON.parse(body)]).toEqual([408, { error: 'request_timeout', message: expect.stringMatching(/headers did not arrive in time/) }]);
  });
});

describe('a request target the router cannot read', () => {
  // Guards: a broken percent escape was answered in fastify's shape, {"error":"Bad Request",
  // "code":"FST_ERR_BAD_URL","message":"'/%zz' is not a valid url component","statusCode":400}.
  it.each([
    ['GET', 'GET /%zz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'],
    ['POST', 'POST /irc%E0%A4%A HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}'],
  ])('%s with a broken escape: 400 bad_request in the relay’s shape, counted', async (_method, text) => {
    const before = (await readMetrics(relay.url)).get('relay_refusals_total{code="bad_request"}') ?? 0;
    const answer = await rawRequest(relay.server.port, text);
    expect(answer.status).toBe(400);
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(answer.body)).toEqual({ error: 'bad_request', message: expect.any(String) });
    expect((await readMetrics(relay.url)).get('relay_refusals_total{code="bad_request"}')).toBe(before + 1);
  });
});

describe('a request the admin service’s parser cannot read', () => {
  it.each(CASES)('%s: answered %s in the admin service’s shape, and the connection closed', async (_name, text, status, code) => {
    const answer = await rawRequest(admin.server.port, text);
    expect(answer.status).toBe(status);
    expect(JSON.parse(answer.body)).toEqual({ error: code, message: expect.any(String) });
  });
});
