// What a stranger (or a runaway script with a token) found to wear the admin service down, against
// a real relay and nats-server: half-sent requests held for ever, a tail that stops reading kept with
// its buffer, text that reorders what operators read, and answers that forget what was just done.

import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleDir } from '../services/admin/console-assets.js';
import { buildConsole } from '../tools/console-build.js';
import { waitUntil } from '../tools/poll.js';
import { startAdmin, type AdminFixture } from './helpers/admin.js';
import { RelayFixture } from './helpers/relay.js';

let relay: RelayFixture;
let admin: AdminFixture;

beforeAll(async () => {
  if (consoleDir() === null) await buildConsole();
  // Bytes enough to overrun a tail's buffer from one account in a few POSTs.
  relay = await RelayFixture.start({ env: { RATE_LIMIT_BYTES_PER_SECOND: '0' } });
  admin = await startAdmin(relay.nats);
}, 60_000);

afterAll(async () => {
  await admin?.close();
  await relay?.close();
});

type Json = Record<string, unknown>;

const connections = (): Promise<number> =>
  new Promise((resolve, reject) => admin.server.app.server.getConnections((err, n) => (err ? reject(err) : resolve(n))));

function rawSocket(): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(admin.server.port, '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
  });
}

describe('connections a client never finishes', () => {
  // Guards: thousands of connections sending "GET / HTTP/1.1\r\n" and nothing more were held for
  // ever and took every file descriptor of the process (the relay's too, in one-process mode).
  it('half-sent headers are answered 408 and the connection closed, not held', async () => {
    const socket = await rawSocket();
    let answer = '';
    socket.on('data', (d: Buffer) => (answer += d.toString('latin1')));
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.write('GET /api/keys HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    await closed;
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 408 Request Timeout');
  }, 30_000);
});

describe('a live tail that stops reading', () => {
  // Guards: past its 4 MiB buffer the tail freed its place but ended the answer politely, which
  // waits for a reader that never comes: socket and buffer stayed, 16 at a time per token, for ever.
  it('is cut off: its connection is closed, its place freed and nothing of it kept', async () => {
    const channel = 'tail-stall.example.net';
    const before = await connections();
    const socket = await rawSocket();
    let head = '';
    const headers = new Promise<void>((resolve) =>
      socket.on('data', (d: Buffer) => {
        head += d.toString('latin1');
        if (head.includes('\r\n\r\n')) {
          socket.pause(); // from here on the client reads nothing
          resolve();
        }
      }),
    );
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.write(`GET /api/channels/${channel}/tail HTTP/1.1\r\nHost: 127.0.0.1:${admin.server.port}\r\nAuthorization: Bearer ${admin.tokens['alice']}\r\n\r\n`);
    await headers;
    expect(head.split('\r\n')[0]).toBe('HTTP/1.1 200 OK');
    expect(admin.server.tails.size).toBe(1);

    const key = await relay.createKey();
    const player = relay.player();
    const big = { type: 'chat', message: 'x'.repeat(30_000) };
    // About 1 MiB a POST, until the admin service has given up on the reader.
    for (let i = 0; i < 40 && admin.server.tails.size > 0; i++) {
      const res = await fetch(relay.url, { method: 'POST', headers: { ...relay.headers(player, key, channel), 'content-type': 'application/json' }, body: JSON.stringify(Array(30).fill(big)) });
      expect(res.status).toBe(200);
    }
    await waitUntil(async () => (await connections()) === before, 'the stalled tail’s connection to be closed by the server');
    expect(admin.server.tails.size).toBe(0);
    socket.destroy();
    await closed;
  }, 60_000);
});

describe('text operators read', () => {
  // Guards: a label or reason holding NUL, a line break or a right-to-left override was stored and
  // shown to every operator, where an override makes it read as something else.
  it.each([
    ['a NUL', 'a\u0000b'],
    ['a line break', 'line\nbreak'],
    ['a right-to-left override', 'evil\u202egnp.exe'],
    ['a line separator', 'a\u2028b'],
    ['a C1 control (CSI)', 'a\u009bb'],
  ])('a key label or ban reason holding %s is refused 400 and nothing is stored', async (_what, text) => {
    const keys = (await admin.call('/api/keys')).body;
    const bans = (await admin.call('/api/bans')).body;
    const key = await admin.call('/api/keys', { method: 'POST', body: { scopes: ['irc.messages.receive'], label: text } });
    expect([key.status, (key.body as Json)['error']]).toEqual([400, 'bad_request']);
    const ban = await admin.call('/api/bans', { method: 'POST', body: { uuid: '5b0b5c3e-1f5e-4a7e-9a38-2d9b1d0c7e12', reason: text } });
    expect([ban.status, (ban.body as Json)['error']]).toEqual([400, 'bad_request']);
    expect((await admin.call('/api/keys')).body).toEqual(keys);
    expect((await admin.call('/api/bans')).body).toEqual(bans);
  });

  it('plain text in any script is kept as written', async () => {
    const label = 'Мод «Север» 北 — v2';
    const key = await admin.call('/api/keys', { method: 'POST', body: { scopes: ['irc.messages.receive'], label } });
    expect([key.status, (key.body as Json)['label']]).toEqual([201, label]);
  });
});

describe('what was just done', () => {
  // Guards: the list is read from the watch, which can trail the write: a key created a moment ago
  // was missing from the list the console fetches right after.
  it('a key created is in the very next listing, and revoked in the one after its revoke', async () => {
    for (let i = 0; i < 5; i++) {
      const made = (await admin.call('/api/keys', { method: 'POST', body: { scopes: ['irc.messages.receive'] } })).body as Json;
      const listed = (await admin.call('/api/keys')).body as Json[];
      expect(listed.map((k) => k['clientId'])).toContain(made['clientId']);
      await admin.call(`/api/keys/${String(made['clientId'])}/revoke`, { method: 'POST', body: {} });
      const after = ((await admin.call('/api/keys')).body as Json[]).find((k) => k['clientId'] === made['clientId']);
      expect(after?.['status']).toBe('revoked');
    }
  });

  // Guards: each retry of a revoke wrote another key.revoke record, so the trail said it happened
  // three times.
  it('revoking a key twice answers the same and writes one audit record', async () => {
    const made = (await admin.call('/api/keys', { method: 'POST', body: { scopes: ['irc.messages.receive'] } })).body as Json;
    const id = String(made['clientId']);
    const first = await admin.call(`/api/keys/${id}/revoke`, { method: 'POST', body: {} });
    const second = await admin.call(`/api/keys/${id}/revoke`, { method: 'POST', body: {} });
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(second.body).toEqual(first.body);
    const audit = (await admin.call('/api/audit?limit=1000')).body as Json[];
    expect(audit.filter((r) => r['action'] === 'key.revoke' && r['target'] === id)).toHaveLength(1);
  });
});
