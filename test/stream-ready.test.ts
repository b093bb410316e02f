// The `ready` event (DESIGN.md section 6): once the relay has subscribed a stream it says so with a
// named event a program reads ({channel, resumedAfter, retryMs}), before any frame; the `: connected`
// comment stays for people. A client listening only to `meta` and unnamed events is unaffected.
import { EventSource } from 'eventsource';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STREAM_TIMINGS } from '../schemas/stream-timings.js';
import { Scope } from '../services/core/scopes.js';
import { RelayFixture } from './helpers/relay.js';

let relay: RelayFixture;
let n = 0;
const channel = (): string => `ready-${++n}.example.net`;

beforeAll(async () => {
  relay = await RelayFixture.start();
});
afterAll(async () => {
  await relay?.close();
});

describe('the ready event', () => {
  it('a stream hears ready (channel, no resume, the retry advice) once subscribed, before any frame, then the connected comment', async () => {
    const key = await relay.createKey();
    const ch = channel();
    const s = await relay.open(relay.headers(relay.player(), key, ch));
    expect(await s.ready()).toEqual({ channel: ch, resumedAfter: null, retryMs: STREAM_TIMINGS.openRetryMs });
    // Subscribed when it says so: a payload posted right after it is delivered.
    await relay.post({ type: 'chat', message: 'after ready' }, relay.headers(relay.player(), key, ch));
    const pair = await s.nextPair();
    expect(pair.data.message).toBe('after ready');
    expect(s.events[0]?.event).toBe('ready');
    expect(s.comments.some((c) => c === `connected to ${ch}`)).toBe(true);
    expect(s.retries[0]).toBe(STREAM_TIMINGS.openRetryMs);
  });

  it('a resumed stream says which Last-Event-ID it resumes after, before the frames it missed', async () => {
    const key = await relay.createKey();
    const ch = channel();
    const me = relay.player();
    const other = relay.player();
    const first = await relay.connect(relay.headers(me, key, ch));
    await relay.post({ type: 'chat', message: 'seen' }, relay.headers(other, key, ch));
    const seen = await first.nextPair();
    first.close();
    await first.ended;
    await relay.post({ type: 'chat', message: 'missed' }, relay.headers(other, key, ch));
    const resumed = await relay.open({ ...relay.headers(me, key, ch), 'last-event-id': String(seen.id) });
    expect(await resumed.ready()).toEqual({ channel: ch, resumedAfter: seen.id, retryMs: STREAM_TIMINGS.openRetryMs });
    const missed = await resumed.nextPair();
    expect(missed.data.message).toBe('missed');
    expect(resumed.events.findIndex((e) => e.event === 'ready')).toBe(0);
  });

  it('a bridge stream hearing every channel reports the channel *', async () => {
    const key = await relay.createKey([Scope.Unauthenticated, Scope.Establish, Scope.Receive]);
    const s = await relay.open(relay.headers(null, key, null));
    expect(await s.ready()).toEqual({ channel: '*', resumedAfter: null, retryMs: STREAM_TIMINGS.openRetryMs });
    await s.waitForComment(/^connected to every channel$/);
  });
});

describe('an EventSource client listening only to meta and unnamed events (the eventsource package)', () => {
  it('sees exactly the pairs posted: the ready event reaches none of its handlers', async () => {
    const key = await relay.createKey();
    const ch = channel();
    const headers = relay.headers(relay.player(), key, ch);
    const es = new EventSource(new URL('/', relay.url), {
      fetch: (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), ...headers } }),
    });
    const metas: string[] = [];
    const messages: string[] = [];
    let heardLast: () => void = () => undefined;
    const last = new Promise<void>((resolve) => (heardLast = resolve));
    es.addEventListener('meta', (e) => metas.push(String(e.data)));
    es.addEventListener('message', (e) => {
      messages.push(String(e.data));
      if (String(e.data).includes('"two"')) heardLast();
    });
    try {
      await new Promise<void>((resolve, reject) => {
        es.onopen = () => resolve();
        es.onerror = (e) => reject(new Error(`EventSource error: ${e.message ?? ''}`));
      });
      // onopen may precede the subscription (the head goes out while it is made); another stream's
      // ready on this node means the channel's one subscription, which feeds both, is in place.
      await relay.connect(relay.headers(relay.player(), key, ch));
      const sender = relay.player();
      for (const message of ['one', 'two']) await relay.post({ type: 'chat', message }, relay.headers(sender, key, ch));
      await last;
      const chats = messages.map((m) => JSON.parse(m) as { type: string; message?: string }).filter((m) => m.type !== 'keepalive');
      expect(chats).toEqual([
        { type: 'chat', message: 'one' },
        { type: 'chat', message: 'two' },
      ]);
      // Every data event it saw is a payload with its meta: nothing of `ready` reached it.
      expect(metas.length).toBe(messages.length);
      expect(messages.every((m) => (JSON.parse(m) as { type?: unknown }).type !== undefined)).toBe(true);
    } finally {
      es.close();
    }
  });
});
