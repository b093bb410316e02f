// Last-Event-ID: a client that reconnects gets exactly what it missed, in order, then live frames.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Scope } from '../services/core/scopes.js';
import { STREAM_NAME } from '../services/core/subjects.js';
import { RelayFixture } from './helpers/relay.js';

let relay: RelayFixture;
let n = 0;
const channel = (): string => `resume-${++n}.example.net`;

beforeAll(async () => {
  relay = await RelayFixture.start();
});
afterAll(async () => {
  await relay?.close();
});

describe('resuming with Last-Event-ID', () => {
  it('replays exactly the missed frames, then frames published during the replay, with no gap and no duplicate', async () => {
    const key = await relay.createKey();
    const ch = channel();
    const me = relay.player();
    const other = relay.player();
    const post = (message: string): Promise<unknown> => relay.post({ type: 'chat', message }, relay.headers(other, key, ch));

    const first = await relay.connect(relay.headers(me, key, ch));
    await post('a1');
    await post('a2');
    await first.nextPair();
    const last = await first.nextPair();
    first.close();
    await first.ended;

    for (let i = 1; i <= 30; i++) await post(`b${i}`);
    // Reconnect while more frames are being published.
    const live = (async () => {
      for (let i = 1; i <= 30; i++) await post(`c${i}`);
    })();
    const resumed = await relay.open({ ...relay.headers(me, key, ch), 'last-event-id': String(last.id) });
    expect(resumed.status).toBe(200);
    await live;
    const got = await resumed.pairsUntil((p) => p.data['message'] === 'c30', 10_000);
    const expected = [...Array.from({ length: 30 }, (_, i) => `b${i + 1}`), ...Array.from({ length: 30 }, (_, i) => `c${i + 1}`)];
    expect(got.map((p) => p.data['message'])).toEqual(expected);
    const ids = got.map((p) => p.id!);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(ids[0]).toBeGreaterThan(last.id!);
  });

  it('applies the stream filters to replayed frames (receive scopes, channel)', async () => {
    const chatOnly = await relay.createKey([Scope.Establish, `${Scope.Receive}.chat`]);
    const sender = await relay.createKey();
    const ch = channel();
    const me = relay.player();
    const other = relay.player();
    const s = await relay.connect(relay.headers(me, chatOnly, ch));
    await relay.post({ type: 'chat', message: 'before' }, relay.headers(other, sender, ch));
    const before = await s.nextPair();
    s.close();
    await s.ended;
    await relay.post(
      { type: 'presence', inventory: [], attributes: { absorption: 0, health: 1, hunger: 1, oxygen: 1, saturation: 0 } },
      relay.headers(other, sender, ch),
    );
    await relay.post({ type: 'chat', message: 'other channel' }, relay.headers(other, sender, channel()));
    await relay.post({ type: 'chat', message: 'missed chat' }, relay.headers(other, sender, ch));
    const resumed = await relay.connect({ ...relay.headers(me, chatOnly, ch), 'last-event-id': String(before.id) });
    const pair = await resumed.nextPair();
    expect(pair.data.message).toBe('missed chat');
  });

  it('says so in an SSE comment when the missed frames are no longer kept, and resumes from the oldest kept', async () => {
    const key = await relay.createKey();
    const ch = channel();
    const me = relay.player();
    const other = relay.player();
    const s = await relay.connect(relay.headers(me, key, ch));
    await relay.post({ type: 'chat', message: 'seen' }, relay.headers(other, key, ch));
    const seen = await s.nextPair();
    s.close();
    await s.ended;
    await relay.post({ type: 'chat', message: 'expired' }, relay.headers(other, key, ch));
    const kept = await relay.post({ type: 'chat', message: 'kept' }, relay.headers(other, key, ch));
    expect(kept.status).toBe(200);
    // Retention removes everything but the newest message (as max age or max bytes would).
    const jsm = relay.server.core.nats.jsm;
    const info = await jsm.streams.info(STREAM_NAME);
    await jsm.streams.purge(STREAM_NAME, { seq: info.state.last_seq });
    const resumed = await relay.open({ ...relay.headers(me, key, ch), 'last-event-id': String(seen.id) });
    await resumed.waitForComment(/no longer kept/);
    expect((await resumed.nextPair()).data.message).toBe('kept');
  });

  it.each([
    ['not an id', 'abc'],
    ['a sequence of 16 digits (past 2^53 a JSON number rounds)', '9007199254740992'],
    ['a sequence after a no-break space', '\u00a07'],
    // A relay of one log cannot say what a region's position means: refused, not guessed.
    ["a mesh with regions' position", 'eu:1042.us:77'],
  ])('refuses a Last-Event-ID that is %s (%s) with 400 invalid_last_event_id and a sentence', async (_what, id) => {
    const key = await relay.createKey();
    const s = await relay.open({ ...relay.headers(relay.player(), key, channel()), 'last-event-id': id });
    const r = await s.refusal();
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('invalid_last_event_id');
    expect(r.body.message).toMatch(/Last-Event-ID/);
  });
});
