// The published proxy client's meta shape, as an operator's option (DESIGN.md section 6): with
// META_AUTHORITATIVE_SENDER=true every meta frame also carries {userAgent, authoritativeSender:
// {id, username}} beside the spec's {uuid, agent, channel}; off (the default) the frame is the spec's,
// byte for byte. Read here as that client reads it: the eventsource package, a `meta` listener that
// takes the sender from authoritativeSender and pairs it with the next unnamed event.
import { EventSource } from 'eventsource';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_SCOPES } from '../services/core/scopes.js';
import { RelayFixture } from './helpers/relay.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let on: RelayFixture;
let off: RelayFixture;
beforeAll(async () => {
  on = await RelayFixture.start({ env: { META_AUTHORITATIVE_SENDER: 'true' } });
  off = await RelayFixture.start({ nats: on.nats, profile: on.profile });
});
afterAll(async () => {
  await off?.close();
  await on?.close();
});

interface Heard {
  sender: { id: string; username: string | null } | null;
  meta: Record<string, unknown>;
  raw: string;
  data: Record<string, unknown>;
}

/** A listener shaped like the published client's: the sender comes from authoritativeSender. */
function readAsPublishedClient(relay: RelayFixture, headers: Record<string, string>): { heard: Heard[]; opened: Promise<void>; next: (n: number) => Promise<void>; close: () => void } {
  const es = new EventSource(new URL('/irc', relay.url), {
    fetch: (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), ...headers } }),
  });
  const heard: Heard[] = [];
  let pending: { raw: string; meta: Record<string, unknown> } | null = null;
  const waiters: { n: number; resolve: () => void }[] = [];
  es.addEventListener('meta', (e) => {
    const raw = String(e.data);
    pending = { raw, meta: JSON.parse(raw) as Record<string, unknown> };
  });
  es.addEventListener('message', (e) => {
    if (pending === null) return;
    const { raw, meta } = pending;
    pending = null;
    const data = JSON.parse(String(e.data)) as Record<string, unknown>;
    if (data['type'] === 'keepalive') return;
    // The client's own check: an object with a uuid id and a username, else no sender.
    const s = meta['authoritativeSender'];
    const sender =
      typeof s === 'object' && s !== null && typeof (s as Record<string, unknown>)['id'] === 'string' && UUID.test(String((s as Record<string, unknown>)['id']))
        ? { id: String((s as Record<string, unknown>)['id']), username: ((s as Record<string, unknown>)['username'] as string | null) ?? null }
        : null;
    heard.push({ sender, meta, raw, data });
    for (const w of waiters.filter((x) => heard.length >= x.n)) w.resolve();
  });
  const opened = new Promise<void>((resolve, reject) => {
    es.onopen = () => resolve();
    es.onerror = (e) => reject(new Error(`EventSource error: ${e.message ?? ''}`));
  });
  const next = (n: number): Promise<void> => (heard.length >= n ? Promise.resolve() : new Promise((resolve) => waiters.push({ n, resolve })));
  return { heard, opened, next, close: () => es.close() };
}

describe('META_AUTHORITATIVE_SENDER=true', () => {
  it("a player's chat names its sender by id and profile name, and the spec's fields are unchanged", async () => {
    const key = await on.createKey();
    const ch = 'stasis-compat.example.net';
    const alice = on.player('Alice');
    const bob = on.player('Bob');
    const reader = readAsPublishedClient(on, { ...on.headers(alice, key, ch), 'user-agent': 'stasisproxy/1.1.4' });
    try {
      await reader.opened;
      const posted = await on.post({ type: 'chat', message: '!where' }, { ...on.headers(bob, key, ch), 'user-agent': 'examplemod/2.1+abc' });
      expect(posted.status).toBe(200);
      await reader.next(1);
      const [chat] = reader.heard;
      expect(chat?.sender).toEqual({ id: bob.uuid, username: 'Bob' });
      expect(chat?.meta).toEqual({
        uuid: bob.uuid,
        agent: 'examplemod/2.1+abc',
        channel: ch,
        userAgent: 'examplemod/2.1+abc',
        authoritativeSender: { id: bob.uuid, username: 'Bob' },
      });
      expect(chat?.data).toEqual({ type: 'chat', message: '!where' });
    } finally {
      reader.close();
    }
  });

  it("a bridge's envelope names its user by id, with no username (the relay knows none)", async () => {
    const player = await on.createKey();
    const bridge = await on.createKey([...ALL_SCOPES]);
    const ch = 'stasis-bridge.example.net';
    const carol = on.player('Carol');
    const reader = readAsPublishedClient(on, on.headers(carol, player, ch));
    try {
      await reader.opened;
      const user = on.player('Dave').uuid;
      const posted = await on.post([{ user, agent: 'discord-bridge/1.0', host: ch, message: { type: 'chat', message: 'from discord' } }], on.headers(null, bridge, ch));
      expect(posted.status).toBe(200);
      await reader.next(1);
      expect(reader.heard[0]?.sender).toEqual({ id: user, username: null });
      expect(reader.heard[0]?.meta['uuid']).toBe(user);
    } finally {
      reader.close();
    }
  });
});

describe('META_AUTHORITATIVE_SENDER unset (the default)', () => {
  it("the meta frame is the spec's {uuid, agent, channel}, byte for byte, with nothing added", async () => {
    const key = await off.createKey();
    const ch = 'spec-meta.example.net';
    const bob = off.player('Bob');
    const reader = readAsPublishedClient(off, off.headers(off.player('Erin'), key, ch));
    try {
      await reader.opened;
      expect((await off.post({ type: 'chat', message: 'plain' }, { ...off.headers(bob, key, ch), 'user-agent': 'examplemod/2.1' })).status).toBe(200);
      await reader.next(1);
      expect(reader.heard[0]?.raw).toBe(JSON.stringify({ uuid: bob.uuid, agent: 'examplemod/2.1', channel: ch }));
      expect(reader.heard[0]?.sender).toBeNull();
    } finally {
      reader.close();
    }
  });
});
