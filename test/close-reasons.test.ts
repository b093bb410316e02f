// Close reasons a program can read: before the relay ends a stream it sends `event: close` with
// {reason, message, reconnect, retryAfterMs}, from the one catalogue in schemas/close.ts, and keeps
// the comment line for people. Clients that only listen to `meta` and unnamed events are unaffected.
import { EventSource } from 'eventsource';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLOSE_REASONS } from '../schemas/close.js';
import type { CreatedKey } from '../services/core/keys.js';
import { RelayFixture } from './helpers/relay.js';

let relay: RelayFixture;
let key: CreatedKey;
let n = 0;
const channel = (): string => `close-reasons-${++n}.example.net`;

beforeAll(async () => {
  relay = await RelayFixture.start({ env: { RETRY_MIN: '1500ms', RETRY_MAX: '2500ms' } });
  key = await relay.createKey();
});
afterAll(async () => {
  await relay?.close();
});

describe('the close event', () => {
  it('an evicted stream is told evicted, not to reconnect, and the comment stays', async () => {
    const p = relay.player();
    const ch = channel();
    const first = await relay.connect(relay.headers(p, key, ch));
    await relay.connect(relay.headers(p, key, ch));
    expect(await first.closeEvent()).toEqual({ reason: 'evicted', message: CLOSE_REASONS.evicted.message, reconnect: false });
    await first.waitForComment(/^evicted: /);
    await first.waitClosed();
  });

  it('a banned account is told banned, not to reconnect', async () => {
    const p = relay.player();
    const s = await relay.connect(relay.headers(p, key, channel()));
    await relay.server.core.bans.ban(p.uuid, { reason: 'test', by: 'test' });
    expect(await s.closeEvent()).toMatchObject({ reason: 'banned', reconnect: false });
    await s.waitClosed();
  });

  it('a draining gateway says draining, reconnect, with the same jittered wait as its retry: field', async () => {
    const own = await RelayFixture.start({ nats: relay.nats, profile: relay.profile, env: { RETRY_MIN: '1500ms', RETRY_MAX: '2500ms', RELAY_NODE_ID: 'draining-gw' } });
    const k = await own.createKey();
    const s = await own.connect(own.headers(own.player(), k, channel()));
    // The server alone (the fixture's close would first drop its clients' sockets).
    await own.server.close();
    const event = await s.closeEvent();
    expect(event).toMatchObject({ reason: 'draining', reconnect: true });
    expect(event.retryAfterMs).toBeGreaterThanOrEqual(1500);
    expect(event.retryAfterMs).toBeLessThanOrEqual(2500);
    expect(s.retries.at(-1)).toBe(event.retryAfterMs);
    await own.close();
  });
});

describe('an EventSource client (the eventsource package, as real clients use)', () => {
  it('hears every pair through meta and unnamed events, and the close event only if it asks', async () => {
    const p = relay.player();
    const ch = channel();
    const headers = relay.headers(p, key, ch);
    const es = new EventSource(new URL('/', relay.url), {
      fetch: (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), ...headers } }),
    });
    const metas: string[] = [];
    const messages: string[] = [];
    const closes: string[] = [];
    es.addEventListener('meta', (e) => metas.push(String(e.data)));
    es.addEventListener('message', (e) => messages.push(String(e.data)));
    es.addEventListener('close', (e) => closes.push(String(e.data)));
    try {
      await new Promise<void>((resolve, reject) => {
        es.onopen = () => resolve();
        es.onerror = (e) => reject(new Error(`EventSource error: ${e.message ?? ''}`));
      });
      const sender = relay.player();
      await relay.post({ type: 'chat', message: 'heard' }, relay.headers(sender, key, ch));
      // The same account opening again evicts this stream: its close event and end follow the pair.
      const closed = new Promise<void>((resolve) => (es.onerror = () => resolve()));
      await relay.connect(relay.headers(p, key, ch));
      await closed;
      expect(messages.map((m) => JSON.parse(m) as { message?: string }).filter((m) => m.message === 'heard')).toHaveLength(1);
      expect(metas.length).toBe(messages.length);
      expect(closes.map((c) => (JSON.parse(c) as { reason: string }).reason)).toEqual(['evicted']);
      // Nothing of the close reached the handlers of a client that does not ask for it.
      expect(messages.every((m) => (JSON.parse(m) as { type?: string }).type !== undefined)).toBe(true);
    } finally {
      es.close();
    }
  });
});
