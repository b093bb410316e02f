// Issue 9: hostile and careless clients never cost an innocent ban, and what they send never leaks
// into a log line. Each test names what a user would notice; the comment above it, what it guards.
import { once } from 'node:events';
import { request } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BanRecord } from '../schemas/records.js';
import { RelayFixture } from './helpers/relay.js';
import { SseStream } from './helpers/sse-client.js';

type Lines = ReadonlyArray<readonly [string, string]>;

let relay: RelayFixture;
let n = 0;
const channel = (): string => `hardening-${++n}.example.net`;
const rawStreams: SseStream[] = [];

beforeAll(async () => {
  // Debug level: refusals are logged with the request's headers, which is where secrets could leak.
  relay = await RelayFixture.start({ env: { LOG_LEVEL: 'debug' } });
});
afterAll(async () => {
  for (const s of rawStreams) s.close();
  await relay?.close();
});

/** Reads the bans bucket itself, not a mirror. */
async function banOf(r: RelayFixture, uuid: string): Promise<BanRecord | null> {
  const entry = await r.server.core.nats.buckets.bans.get(uuid);
  return entry !== null && entry.operation === 'PUT' ? entry.json<BanRecord>() : null;
}

/** The header lines a real client sends, as lines, so a test can repeat one. */
function linesOf(headers: Record<string, string>): Array<[string, string]> {
  return Object.entries(headers);
}

/** POST with these exact header lines, repeated names sent as separate lines (fetch would merge them). */
function postLines(base: string, lines: Lines, body: unknown = { type: 'chat', message: 'x' }): Promise<{ status: number; body: Record<string, unknown> }> {
  const payload = JSON.stringify(body);
  const url = new URL('/', base);
  // Raw header lines: Node adds no Host of its own then.
  const raw = ['host', url.host, 'content-type', 'application/json', ...lines.flat()];
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: raw }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => {
        try {
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown> });
        } catch {
          resolve({ status: res.statusCode ?? 0, body: { raw: text } });
        }
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** GET / with these exact header lines on a raw socket. */
async function openLines(base: string, lines: Lines): Promise<SseStream> {
  const url = new URL('/', base);
  const socket = connect({ host: url.hostname, port: Number(url.port) });
  await once(socket, 'connect');
  const stream = new SseStream(socket);
  rawStreams.push(stream);
  const head = [['host', url.host], ['accept', 'text/event-stream'], ...lines].map(([k, v]) => `${k}: ${v}`);
  socket.write(`GET / HTTP/1.1\r\n${head.join('\r\n')}\r\n\r\n`);
  await stream.head;
  return stream;
}

describe('credentials sent twice (issue 9, item 13)', () => {
  // Guards: a client or proxy repeating its credential lines (Node joins them as "s, s") is not banned.
  it('correct credentials sent twice are accepted on POST and on GET, and ban nobody', async () => {
    const key = await relay.createKey();
    const p = relay.player();
    const ch = channel();
    const lines = [...linesOf(relay.headers(p, key, ch)), ['Client-Secret', key.clientSecret], ['Client-ID', key.clientId], ['X-Client-ID', key.clientId]] as const;
    expect((await postLines(relay.url, lines)).status).toBe(200);
    const s = await openLines(relay.url, lines);
    expect(s.status).toBe(200);
    await s.waitForComment(/^connected/);
    expect(await banOf(relay, p.uuid)).toBeNull();
  });

  // Guards: the id and the right secret under two accepted spellings are one credential, not "missing".
  it('the client id under one accepted spelling and the secret under another are accepted, not banned', async () => {
    const key = await relay.createKey();
    const p = relay.player();
    const headers = relay.headers(p, null, channel(), { 'Client-ID': key.clientId, 'X-Client-Secret': key.clientSecret });
    expect((await relay.post({ type: 'chat', message: 'x' }, headers)).status).toBe(200);
    expect(await banOf(relay, p.uuid)).toBeNull();
  });

  // Guards: two different ids or secrets are a malformed request, answered 400 before any ban decision.
  it.each([
    ['two Client-ID lines with different ids', (other: string): Lines => [['Client-ID', other]]],
    ['two Client-Secret lines, one of them wrong', (): Lines => [['Client-Secret', 'wrong-secret']]],
    ['Client-ID and X-Client-ID naming different keys', (other: string): Lines => [['X-Client-ID', other]]],
    ['Client-Secret and X-Service-Client-Secret disagreeing', (): Lines => [['X-Service-Client-Secret', 'wrong-secret']]],
  ] as const)('conflicting credentials (%s) are refused with 400 conflicting_credentials on POST and GET, and ban nobody', async (_case, extra) => {
    const key = await relay.createKey();
    const other = await relay.createKey();
    const p = relay.player();
    const lines: Lines = [...linesOf(relay.headers(p, key, channel())), ...extra(other.clientId)];
    const posted = await postLines(relay.url, lines);
    expect(posted).toMatchObject({ status: 400, body: { error: 'conflicting_credentials' } });
    expect(String(posted.body['message'])).not.toContain(key.clientSecret);
    const s = await openLines(relay.url, lines);
    expect(await s.refusal()).toMatchObject({ status: 400, body: { error: 'conflicting_credentials' } });
    expect(await banOf(relay, p.uuid)).toBeNull();
  });
});
