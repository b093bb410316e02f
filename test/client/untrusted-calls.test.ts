// The library's calls against a hostile relay and against mistakes that would leak credentials
// (issue 19, the client attack report): nothing is posted after close(), a relay that answers 401 to
// everything gets one token refresh, a credential no header can carry is refused before any request
// and never quoted, cleartext is refused off this machine, and sendAs and send answers are checked.
import { describe, expect, it } from 'vitest';
import { RelayClient, type PresencePayload, type RelayClientOptions } from '../../clients/typescript/src/index.js';
import { hostileRelays, type Handler } from '../helpers/hostile-relay.js';
import { CLIENT_AGENT, Recorder } from '../helpers/relay-client.js';

const { server, clients } = hostileRelays();

const SECRET = 'hostile-test-secret';
const base = (url: string): RelayClientOptions => ({ url, clientId: 'hostile-test-id', clientSecret: SECRET, userAgent: CLIENT_AGENT, backoff: { baseMs: 50, capMs: 100 } });

function client(options: RelayClientOptions): RelayClient {
  const c = new RelayClient(options);
  clients.push(c);
  return c;
}

const json = (status: number, body: object, headers: Record<string, string> = {}): Handler => (_req, res) => void res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
const presence: PresencePayload = { type: 'presence', inventory: [], attributes: { absorption: 0, health: 20, hunger: 20, oxygen: 300, saturation: 5 } };
const code = (p: Promise<unknown>): Promise<unknown> => p.then(() => 'resolved', (e: { code?: unknown }) => e.code);

describe('after close() (t4)', () => {
  it('t4: a resend waiting stops, and send(), presence and sendAs reject with client_closed without a POST', async () => {
    const relay = await server(json(503, { error: 'unavailable', message: 'down' }, { 'retry-after': '0' }));
    const c = client({ ...base(relay.url), server: 'play.example.net', token: () => 'tok', sendAttempts: 5 });
    const first = code(c.send({ type: 'chat', message: 'before close' }));
    await relay.arrived(1, 'the first POST');
    c.close();
    c.close();
    expect(await first).toBe('client_closed');
    expect(await code(c.send({ type: 'chat', message: 'after close' }))).toBe('client_closed');
    expect(await code(c.send(presence))).toBe('client_closed');
    expect(await code(c.sendAs({ user: '3f1e8d2a-6b7c-4d5e-9f10-112233445566', agent: 'a', host: 'x', message: { type: 'chat', message: 'x' } }))).toBe('client_closed');
    expect(relay.requests).toHaveLength(1);
  });
});

describe('a relay that answers 401 to everything (t10)', () => {
  it('t10: token() is asked once more, shared by concurrent sends; later sends fail at once with invalid_session and post nothing', async () => {
    const relay = await server(json(401, { error: 'invalid_session', message: 'no' }));
    let asked = 0;
    const c = client({ ...base(relay.url), server: 'play.example.net', token: () => `token-${++asked}` });
    const wave = await Promise.all([1, 2, 3, 4, 5].map((i) => code(c.send({ type: 'chat', message: `wave ${i}` }))));
    expect(wave).toEqual(Array(5).fill('invalid_session'));
    const posted = relay.requests.length;
    for (let i = 0; i < 5; i++) expect(await code(c.send(presence))).toBe('invalid_session');
    expect(asked).toBe(2);
    // Each send of the wave posts at most twice (its token, then the one refreshed token).
    expect(posted).toBeLessThanOrEqual(10);
    expect(relay.requests).toHaveLength(posted);
  });
});

describe('credentials no header can carry (t5)', () => {
  it('t5: a client secret with CR/LF is misconfigured at construction, and the message does not quote it', () => {
    expect(() => client({ ...base('http://127.0.0.1:1'), clientSecret: 'sekrit\r\nX-Evil: 1' })).toThrow(expect.objectContaining({ code: 'misconfigured', message: expect.not.stringContaining('sekrit') }));
  });

  it.each(['plаy.example.net', 'ünïcode.net', 'play example.net'])('t5: server %j (not a channel the relay accepts) is misconfigured at construction', (server) => {
    expect(() => client({ ...base('http://127.0.0.1:1'), server, token: () => 't' })).toThrow(expect.objectContaining({ code: 'misconfigured' }));
  });

  it('t5: a token() with a line break closes the stream with misconfigured, never retried nor quoted, and nothing reaches the relay', async () => {
    const relay = await server();
    const c = client({ ...base(relay.url), server: 'play.example.net', token: () => 'tok\nsekrit' });
    const rec = new Recorder(c);
    await expect(c.connect()).rejects.toMatchObject({ code: 'misconfigured' });
    const closed = rec.closed()!;
    expect(closed.reason).toBe('misconfigured');
    expect(closed.message).not.toContain('sekrit');
    await expect(c.send({ type: 'chat', message: 'x' })).rejects.toMatchObject({ code: 'misconfigured', message: expect.not.stringContaining('sekrit') });
    expect(relay.requests).toHaveLength(0);
  });
});

describe('cleartext (t9)', () => {
  // Guards issue 26: the relay refuses such an agent on every request (400 invalid_user_agent), so it is refused at construction.
  it.each([['a one-byte CSI (C1)', 'mod/1.0\u009b2J'], ['a NEL (C1)', 'mod\u0085/1.0'], ['an ESC', 'mod\u001b[2J/1.0']])('t5: a userAgent holding %s is misconfigured at construction, naming the character', (_what, userAgent) => {
    expect(() => client({ ...base('http://127.0.0.1:1'), userAgent })).toThrow(expect.objectContaining({ code: 'misconfigured', message: expect.stringMatching(/^userAgent holds U\+00(9B|85|1B) at character [48]/) }));
  });

  // Guards issue 26: an envelope agent the relay would refuse fails its whole batch there; here nothing is posted.
  it('t5: sendAs with an agent holding a bidi override is misconfigured, and nothing reaches the relay', async () => {
    const relay = await server(json(200, { accepted: 1, dropped: 0 }));
    const c = client(base(relay.url));
    const envelope = { user: '3f1e8d2a-6b7c-4d5e-9f10-112233445566', host: 'play.example.net', message: { type: 'chat' as const, message: 'x' } };
    await expect(c.sendAs({ ...envelope, agent: 'bridge\u202e/1' })).rejects.toMatchObject({ code: 'misconfigured', message: expect.stringContaining('envelope 0: agent holds U+202E at character 7') });
    expect(relay.requests).toHaveLength(0);
    await c.sendAs({ ...envelope, agent: 'Brücke \u200f👩\u200d💻' });
    expect(relay.requests).toHaveLength(1);
  });

  it('t9: http:// to another host is misconfigured unless allowInsecureHttp; loopback needs no option', () => {
    expect(() => client(base('http://relay.example.net'))).toThrow(expect.objectContaining({ code: 'misconfigured' }));
    expect(() => client({ ...base('http://relay.example.net'), allowInsecureHttp: true })).not.toThrow();
    for (const url of ['http://localhost:8080', 'http://127.0.0.1:8080', 'http://[::1]:8080', 'https://relay.example.net']) expect(() => client(base(url)), url).not.toThrow();
  });
});

describe('checked calls and answers (t9, t11)', () => {
  it('t9: sendAs with host: null or a null entry returns a rejected promise, never throws, and posts nothing', async () => {
    const relay = await server(json(200, { accepted: 1, dropped: 0 }));
    const c = client(base(relay.url));
    for (const bad of [{ user: 'u', agent: 'a', host: null, message: { type: 'chat', message: 'x' } }, null, [null]]) {
      let p: Promise<unknown> | undefined;
      expect(() => (p = c.sendAs(bad as never))).not.toThrow();
      expect(await code(p!)).toBe('misconfigured');
    }
    expect(relay.requests).toHaveLength(0);
  });

  it.each([{ accepted: -7 }, { accepted: 2 }, { accepted: 0.5 }, { accepted: 1, dropped: 'x' }])('t11: a send answered %j (not a count of the one entry sent) is invalid_response', async (answer) => {
    const relay = await server(json(200, answer));
    const c = client(base(relay.url));
    expect(await code(c.send({ type: 'chat', message: 'x' }))).toBe('invalid_response');
  });
});
