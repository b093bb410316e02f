// Issue 9: hostile and careless clients never cost an innocent ban, and what they send never leaks
// into a log line. Each test names what a user would notice; the comment above it, what it guards.
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { request } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BanRecord } from '../schemas/records.js';
import { startNatsNode, type NatsNode } from '../tools/nats-launcher.js';
import { createLogger } from '../services/core/logger.js';
import { runCliJson } from './helpers/cli.js';
import { waitUntil as eventually } from '../tools/poll.js';
import { LogCapture, RelayFixture } from './helpers/relay.js';
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

describe('deleted keys and failed look-ups (issue 9, item 14)', () => {
  // Guards: deleting a key (nats kv del relay-keys <id>) refuses its users as revoked and never bans them.
  it('a key deleted while its stream is open closes the stream as revoked; reconnecting gets 403 key_revoked and nobody is banned', async () => {
    const key = await relay.createKey();
    const p = relay.player();
    const ch = channel();
    const s = await relay.connect(relay.headers(p, key, ch));
    await relay.server.core.nats.buckets.keys.delete(key.clientId);
    await s.waitForComment(/key was revoked/);
    await s.waitClosed();

    const again = await relay.open(relay.headers(p, key, ch));
    expect(await again.refusal()).toMatchObject({ status: 403, body: { error: 'key_revoked' } });
    expect((await relay.post({ type: 'chat', message: 'x' }, relay.headers(p, key, ch))).body['error']).toBe('key_revoked');
    // A wrong secret for a deleted id: refused as revoked too (no node can be sure it is wrong).
    const guesser = relay.player();
    const guessed = await relay.post({ type: 'chat', message: 'x' }, { ...relay.headers(guesser, key, ch), 'client-secret': 'a-guess' });
    expect(guessed).toMatchObject({ status: 403, body: { error: 'key_revoked' } });

    const bans = await runCliJson<BanRecord[]>(['bans', 'list', '--json'], { NATS_URL: relay.nats.url });
    expect(bans.map((b) => b.uuid)).not.toContain(p.uuid);
    expect(bans.map((b) => b.uuid)).not.toContain(guesser.uuid);
    expect(await banOf(relay, p.uuid)).toBeNull();
  });

  // Guards: a node that starts after the delete learns the tombstone from the bucket's delete marker.
  it('a relay started after a key was deleted refuses it with 403 key_revoked, not a ban', async () => {
    const key = await relay.createKey();
    await relay.server.core.nats.buckets.keys.delete(key.clientId);
    const later = await RelayFixture.start({ nats: relay.nats, profile: relay.profile });
    try {
      const p = later.player();
      const r = await later.post({ type: 'chat', message: 'x' }, later.headers(p, key, channel()));
      expect(r).toMatchObject({ status: 403, body: { error: 'key_revoked' } });
      expect(await banOf(later, p.uuid)).toBeNull();
    } finally {
      await later.close();
    }
  });

  // Guards: a purge would erase the key's history, delete marker included (a roll-up); the buckets refuse roll-ups
  // (issue 26), so the marker that makes every node refuse the key as revoked cannot be rolled away.
  it('a key cannot be purged: the bucket refuses the roll-up and the key stays refused as revoked', async () => {
    const key = await relay.createKey();
    const keys = relay.server.core.nats.buckets.keys;
    await keys.delete(key.clientId);
    await expect(keys.purge(key.clientId)).rejects.toThrow(/rollup not permitted/);
    const p = relay.player();
    const r = await relay.post({ type: 'chat', message: 'x' }, relay.headers(p, key, channel()));
    expect(r).toMatchObject({ status: 403, body: { error: 'key_revoked' } });
    expect(await banOf(relay, p.uuid)).toBeNull();
  });

  // Guards: a key look-up that cannot reach NATS is an outage (503), not proof of a cracked client.
  it('a key look-up that fails because NATS is unreachable answers 503 unavailable with Retry-After, and bans nobody', async () => {
    const own = await RelayFixture.start();
    const node = own.nats.node!;
    let restarted: NatsNode | null = null;
    try {
      const p = own.player();
      // An id this node's mirror has not seen: only the bucket can say whether it exists.
      const unseen = { clientId: `relay_${randomBytes(12).toString('hex')}`, clientSecret: 'x', scopes: [] };
      await node.stop();
      const s = await own.open(own.headers(p, unseen, channel()));
      const refused = await s.refusal(15_000);
      expect(refused).toMatchObject({ status: 503, body: { error: 'unavailable', message: expect.stringMatching(/API keys/) } });
      expect(Number(s.headers['retry-after'])).toBeGreaterThan(0);
      restarted = await startNatsNode(node.options);
      await eventually(async () => (await fetch(new URL('/readyz', own.url))).status === 200, 'the relay to reconnect', 20_000);
      expect(await banOf(own, p.uuid)).toBeNull();
    } finally {
      await own.close();
      await restarted?.stop();
    }
  }, 60_000);
});

describe('secrets in logs (issue 9, item 18)', () => {
  // Guards: a secret under a prefix the operator never configured, or any secret-shaped header, stays out of the log.
  it('secret-shaped headers under any prefix are redacted in every refusal logged, POST and GET', async () => {
    const key = await relay.createKey();
    const p = relay.player();
    const secrets = {
      'X-Hackware-Client-Secret': `hw-${randomBytes(16).toString('hex')}`,
      'X-Api-Key': `ak-${randomBytes(16).toString('hex')}`,
      'X-Session-Token': `st-${randomBytes(16).toString('hex')}`,
      'Proxy-Authorization': `Basic ${randomBytes(16).toString('hex')}`,
      'Idempotency-Key': `ik-${randomBytes(16).toString('hex')}`,
      'X-Auth-Password': `pw-${randomBytes(16).toString('hex')}`,
    };
    const headers = relay.headers(p, key, channel(), { 'X-Hackware-Client-ID': key.clientId, ...secrets });
    expect((await relay.post({ type: 'nope' }, headers)).status).toBe(400);
    const s = await relay.open({ ...headers, 'Last-Event-ID': 'not-a-number' });
    expect((await s.refusal()).status).toBe(400);

    const refused = relay.logs.lines
      .map((l) => JSON.parse(l) as { msg: string; headers?: Record<string, string> })
      .filter((l) => l.msg === 'refused' && l.headers?.['x-hackware-client-id'] === key.clientId);
    expect(refused).toHaveLength(2);
    for (const line of refused) {
      for (const name of Object.keys(secrets)) expect(line.headers?.[name.toLowerCase()]).toBe('[redacted]');
      expect(line.headers).toMatchObject({ authorization: '[redacted]', 'client-secret': '[redacted]', 'user-agent': headers['user-agent'] });
    }
    for (const secret of [...Object.values(secrets), key.clientSecret, p.token]) expect(relay.logs.text).not.toContain(secret);
  });

  // Guards: a token put in the query string (browser EventSource clients cannot send headers) stays out of the log.
  it('a secret in the query string is redacted in the logged url, the channel kept', async () => {
    const token = `qt-${randomBytes(16).toString('hex')}`;
    const s = await relay.open({ 'user-agent': 'browser' }, { path: `/?host=query.example.net&access_token=${token}` });
    expect((await s.refusal()).status).toBe(401);
    expect(relay.logs.text).not.toContain(token);
    expect(relay.logs.text).toContain('/?host=query.example.net&access_token=***');
  });

  // Guards: a call site added later that logs headers or a request is redacted without extending any list.
  it('any log line carrying headers, a req or a request has its secret-shaped headers redacted', () => {
    const out = new LogCapture();
    const logger = createLogger({ level: 'info', pretty: false, destination: out });
    const headers = { 'x-whatever-client-secret': 's1', 'x-api-key': 's2', cookie: 's3', 'x-irc-multiplayer-server': 'kept.example.net' };
    logger.info({ headers }, 'headers');
    logger.child({ reqId: 'r' }).warn({ req: { method: 'GET', url: '/?token=s4', headers } }, 'req');
    logger.error({ request: { method: 'POST', url: '/', headers } }, 'request');
    const lines = out.lines.map((l) => JSON.parse(l) as Record<string, { headers?: Record<string, string> } & Record<string, string>>);
    expect(lines).toHaveLength(3);
    for (const h of [lines[0]!['headers'], lines[1]!['req']!.headers, lines[2]!['request']!.headers]) {
      expect(h).toEqual({ 'x-whatever-client-secret': '[redacted]', 'x-api-key': '[redacted]', cookie: '[redacted]', 'x-irc-multiplayer-server': 'kept.example.net' });
    }
    for (const secret of ['s1', 's2', 's3', 's4']) expect(out.text).not.toMatch(new RegExp(`"${secret}"|=${secret}\\b`));
  });
});
