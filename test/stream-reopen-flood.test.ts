// One account reopening its stream in a loop with Last-Event-ID: 0 (reopen.mjs): each reopen replaced
// the previous stream (so MAX_STREAMS_PER_ACCOUNT never applied), replayed the whole retained history
// and created a JetStream consumer; 30 reopens in 9.4 s pulled 278 MB. Real relay, real sockets.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Scope } from '../services/core/scopes.js';
import { RelayFixture } from './helpers/relay.js';

let relay: RelayFixture;
beforeAll(async () => {
  relay = await RelayFixture.start({ env: { STREAM_OPEN_RATE: '0.001', STREAM_OPEN_BURST: '3' } });
});
afterAll(async () => {
  await relay?.close();
});

describe('an account reopening its stream in a loop (reopen.mjs)', () => {
  // Guards: reopening was free: the stream cap never applied and every open replayed from 0.
  it('gets its burst of opens, then 429 too_many_opens with Retry-After, never a ban; another account opens at once', async () => {
    const key = await relay.createKey();
    const player = relay.player();
    const headers = relay.headers(player, key, 'reopen.example.net', { 'last-event-id': '0' });
    for (let i = 0; i < 3; i++) {
      const s = await relay.connect(headers);
      s.close();
    }
    const refused = await relay.open(headers);
    const r = await refused.refusal();
    expect(r.status).toBe(429);
    expect(r.body).toEqual({ error: 'too_many_opens', message: expect.any(String) });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(relay.server.core.bans.list()).toEqual([]);
    const other = await relay.connect(relay.headers(relay.player(), key, 'reopen.example.net', { 'last-event-id': '0' }));
    other.close();
  });

  // Guards: a bridge without a session must not escape the limit (it is counted by its key).
  it('counts a bridge without a session by its key', async () => {
    const bridge = await relay.createKey([Scope.Unauthenticated, Scope.Establish, Scope.Receive]);
    const headers = relay.headers(null, bridge, 'reopen-bridge.example.net');
    for (let i = 0; i < 3; i++) {
      const s = await relay.connect(headers);
      s.close();
    }
    const r = await (await relay.open(headers)).refusal();
    expect(r.status).toBe(429);
    expect(r.body.error).toBe('too_many_opens');
  });
});
