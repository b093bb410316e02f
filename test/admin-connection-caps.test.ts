// Holding the admin port shut without a token (issue 26), against a real admin service and
// nats-server: sockets that never finish their headers, sockets that send nothing, connections left
// idle after an answer, from one address or a few. Strangers come from 127.0.0.x addresses of their
// own (any 127.x.y.z is a source address on loopback); the operator from 127.0.0.1.

import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleDir } from '../services/admin/console-assets.js';
import { FIRST_BYTE_TIMEOUT_MS } from '../services/core/connection-gate.js';
import { buildConsole } from '../tools/console-build.js';
import { waitUntil } from '../tools/poll.js';
import { startAdmin, type AdminFixture } from './helpers/admin.js';
import { parseMetrics } from './helpers/metrics.js';
import { askAlone, flood, HALF_SENT, hold, inOrder, type Held } from './helpers/held-sockets.js';
import { startTestNats, type TestNats } from './helpers/nats.js';

let nats: TestNats;
let admin: AdminFixture;

beforeAll(async () => {
  // The console's files are the large answers a client that never reads asks for.
  if (consoleDir() === null) await buildConsole();
  nats = await startTestNats();
  admin = await startAdmin(nats, ['alice']);
}, 60_000);

afterAll(async () => {
  await admin?.close();
  await nats?.stop();
});

type Json = Record<string, unknown>;

const connections = (fixture: AdminFixture): Promise<number> =>
  new Promise((resolve, reject) => fixture.server.app.server.getConnections((err, n) => (err ? reject(err) : resolve(n))));

const ask = (fixture: AdminFixture, target: string, token?: string): ReturnType<typeof askAlone> =>
  askAlone(fixture.server.port, target, token === undefined ? {} : { authorization: `Bearer ${token}` });

async function refusals(fixture: AdminFixture): Promise<Record<string, number | undefined>> {
  const m = parseMetrics((await ask(fixture, '/metrics')).body);
  const of = (reason: string): number | undefined => m.get(`relay_admin_connections_refused_total{reason="${reason}"}`);
  return { per_address: of('per_address'), total: of('total'), first_byte_timeout: of('first_byte_timeout') };
}

describe('one address holding half-open sockets', () => {
  it('an operator signs in while one address holds 2,000 half-open sockets', async () => {
    const cap = admin.server.config.admin.maxConnectionsPerAddress;
    const before = await refusals(admin).catch(() => undefined);
    const attack = await flood(admin.server.port, '127.0.0.2', 2000);
    try {
      const session = await ask(admin, '/api/session', admin.tokens['alice']);
      expect(session.status).toBe(200);
      expect((JSON.parse(session.body) as Json)['name']).toBe('alice');
      // Counted from zero: each reason had its series before anything was refused.
      expect(before).toEqual({ per_address: 0, total: 0, first_byte_timeout: 0 });
      // The address kept its share, half-open; every socket beyond it was reset before a byte was read.
      await waitUntil(async () => (await refusals(admin)).per_address === 2000 - cap, 'the refusals beyond the cap to be counted');
      expect(attack.filter((h) => h.answer() !== '')).toEqual([]);
      const held = await waitUntil(() => {
        const open = attack.filter((h) => !h.socket.destroyed).length;
        return open === cap ? open : undefined;
      }, 'the client side to see the resets');
      expect(held).toBe(cap);
    } finally {
      for (const h of attack) h.socket.destroy();
    }
  }, 60_000);

  it('a socket that sends nothing is reset at the first-byte deadline, without waiting for the headers deadline or answering', async () => {
    const before = await refusals(admin);
    const silent = await hold(admin.server.port, '127.0.0.3');
    await silent.closed;
    const waited = performance.now() - silent.connectedAt;
    expect(silent.answer()).toBe('');
    expect(waited).toBeGreaterThanOrEqual(FIRST_BYTE_TIMEOUT_MS);
    expect(waited).toBeLessThan(admin.server.app.server.headersTimeout);
    expect((await refusals(admin)).first_byte_timeout).toBe((before.first_byte_timeout ?? 0) + 1);
  }, 30_000);

  it('a connection left idle after its answer is closed within seconds, not held for a minute', async () => {
    const idle = await hold(admin.server.port, '127.0.0.4', 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    const verdict = await Promise.race([
      idle.closed.then(() => 'closed'),
      new Promise<string>((resolve) => setTimeout(() => resolve('still open'), 20_000).unref()),
    ]);
    idle.socket.destroy();
    expect(verdict).toBe('closed');
    expect(idle.answer()).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*keep-alive: timeout=5\r\n/i);
  }, 30_000);

  // Guards: no request deadline covers an answer, so a client asking for 300 copies of the console's
  // script and reading none held its connection for as long as it liked. Node gives a write still
  // pending one more idle period, so this takes about twice the admin service's idle timeout.
  it('a client that pipelines requests and reads no answer is cut off once nothing moves, and its place freed', async () => {
    // Its own service: the count of its connections is then this client's alone.
    const own = await startAdmin(nats, ['alice']);
    const page = await hold(own.server.port, '127.0.0.1', 'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    await page.closed;
    const script = /\/main-[A-Za-z0-9]+\.js/.exec(page.answer())?.[0];
    expect(script).toBeDefined();
    const stalled = await hold(own.server.port, '127.0.0.8', `GET ${script} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`.repeat(300));
    stalled.socket.pause();
    try {
      await waitUntil(async () => (await connections(own)) === 1, 'the stalled client to be the only connection');
      await waitUntil(async () => (await connections(own)) === 0, 'the stalled client to be cut off', { timeoutMs: 90_000, intervalMs: 500 });
    } finally {
      stalled.socket.destroy();
      await own.close();
    }
  }, 120_000);
});

describe('a small cap, a proxy and a dual-stack listener', () => {
  it('the proxy named in TRUSTED_PROXIES is not capped and keeps a silent connection; another address is, on an IPv6 listener too', async () => {
    for (const host of ['127.0.0.1', '::']) {
      const small = await startAdmin(nats, ['alice'], { ADMIN_HOST: host, ADMIN_MAX_CONNECTIONS_PER_ADDRESS: '4', TRUSTED_PROXIES: '127.0.0.5' });
      const sockets: Held[] = [];
      try {
        const port = small.server.port;
        // On '::' an IPv4 peer arrives as ::ffff:127.0.0.6, and is still one address.
        const proxySilent = await hold(port, '127.0.0.5');
        sockets.push(proxySilent, ...(await flood(port, '127.0.0.5', 10)));
        const stranger = await inOrder(port, '127.0.0.6', 6);
        sockets.push(...stranger);
        // At its cap, each newcomer takes the place of the address's oldest connection without a token.
        await Promise.all(stranger.slice(0, 2).map((h) => h.closed));
        expect(stranger.slice(2).every((h) => !h.socket.destroyed)).toBe(true);
        // A stranger's silent socket meets the first-byte deadline; the proxy's, opened before it, does not.
        const strangerSilent = await hold(port, '127.0.0.7');
        sockets.push(strangerSilent);
        await strangerSilent.closed;
        proxySilent.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
        await proxySilent.closed;
        expect(proxySilent.answer()).toMatch(/^HTTP\/1\.1 200 OK/);
        expect(await refusals(small)).toEqual({ per_address: 2, total: 0, first_byte_timeout: 1 });
      } finally {
        for (const h of sockets) h.socket.destroy();
        await small.close();
      }
    }
  }, 60_000);

  // Guards: the operator shares its address with every local user (ADMIN_HOST=127.0.0.1, ssh -L):
  // one of them holding the cap with keep-alive /healthz requests reset every sign-in for as long
  // as it kept going (findings/admin-same-address-lockout.ts).
  it('at its cap, an address\'s newcomer takes the place of its oldest connection without a token: the operator gets in from the address a stranger fills, and a connection that carried a token is never let go', async () => {
    const small = await startAdmin(nats, ['alice'], { ADMIN_MAX_CONNECTIONS_PER_ADDRESS: '4' });
    const sockets: Held[] = [];
    const ping = 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';
    try {
      const port = small.server.port;
      const token = small.tokens['alice']!;
      const stranger = await inOrder(port, '127.0.0.1', 4, ping);
      sockets.push(...stranger);
      await waitUntil(() => (stranger.every((h) => h.answer().includes('200 OK')) ? true : undefined), 'the stranger’s answers');
      const session = await ask(small, '/api/session', token);
      expect(session.status).toBe(200);
      // The stranger's oldest was let go for it.
      await stranger[0]!.closed;
      expect(stranger.slice(1).every((h) => !h.socket.destroyed)).toBe(true);
      // Four keep-alive connections that carried the token: a newcomer without one is refused, none of them let go.
      for (const h of stranger) h.socket.destroy();
      await waitUntil(async () => ((await connections(small)) === 0 ? true : undefined), 'the stranger’s connections to be gone');
      const signed = `GET /api/session HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\n\r\n`;
      const operator = await inOrder(port, '127.0.0.1', 4, signed);
      sockets.push(...operator);
      await waitUntil(() => (operator.every((h) => h.answer().includes('200 OK')) ? true : undefined), 'the operator’s answers');
      // Reset at once, maybe before its connect completes: what came back before the close.
      const late = await new Promise<string>((resolve) => {
        let answer = '';
        const socket = connect({ port, host: '127.0.0.1', localAddress: '127.0.0.1' }, () => socket.write(ping));
        socket.on('data', (d: Buffer) => (answer += d.toString('latin1')));
        socket.on('error', () => undefined);
        socket.on('close', () => resolve(answer));
      });
      expect(late).toBe('');
      expect(operator.every((h) => !h.socket.destroyed)).toBe(true);
    } finally {
      for (const h of sockets) h.socket.destroy();
      await small.close();
    }
  }, 60_000);

  it('four addresses at their cap fill the service (what the cap does not protect against): the next connection, an operator too, is refused and counted as total', async () => {
    const small = await startAdmin(nats, ['alice'], { ADMIN_MAX_CONNECTIONS: '16', ADMIN_MAX_CONNECTIONS_PER_ADDRESS: '4' });
    const sockets: Held[] = [];
    try {
      const port = small.server.port;
      for (const from of ['127.0.1.1', '127.0.1.2', '127.0.1.3', '127.0.1.4']) sockets.push(...(await inOrder(port, from, 4)));
      const late = await hold(port, '127.0.1.5', HALF_SENT);
      await late.closed;
      expect(late.answer()).toBe('');
      await expect(ask(small, '/api/session', small.tokens['alice'])).rejects.toThrow(/without an answer/);
      expect(sockets.every((h) => !h.socket.destroyed)).toBe(true);
      for (const h of sockets) h.socket.destroy();
      await waitUntil(async () => (await connections(small)) === 0, 'the strangers’ connections to be gone');
      expect(await refusals(small)).toEqual({ per_address: 0, total: 2, first_byte_timeout: 0 });
    } finally {
      for (const h of sockets) h.socket.destroy();
      await small.close();
    }
  }, 60_000);
});
