// Idempotency-Key: a client that resends a batch after a timeout does not store it twice.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RelayFixture } from './helpers/relay.js';

let relay: RelayFixture;

beforeAll(async () => {
  relay = await RelayFixture.start();
});
afterAll(async () => {
  await relay?.close();
});

describe('Idempotency-Key', () => {
  it('a batch resent with the same key is stored once; a new key stores it again', async () => {
    const key = await relay.createKey();
    const ch = 'idem.example.net';
    const s = await relay.connect(relay.headers(relay.player(), key, ch));
    const p = relay.player();
    const batch = [{ type: 'chat', message: 'one' }, { type: 'chat', message: 'two' }];
    for (let i = 0; i < 3; i++) {
      const res = await relay.post(batch, relay.headers(p, key, ch, { 'idempotency-key': 'batch-42' }));
      expect(res.body).toEqual({ accepted: 2, dropped: 0 });
    }
    await relay.post(batch, relay.headers(p, key, ch, { 'idempotency-key': 'batch-43' }));
    await relay.post({ type: 'chat', message: 'sentinel' }, relay.headers(p, key, ch));
    const got = await s.pairsUntil((x) => x.data.message === 'sentinel');
    expect(got.map((x) => x.data.message)).toEqual(['one', 'two', 'one', 'two', 'sentinel']);
  });

  it('the same key from two accounts does not collide', async () => {
    const key = await relay.createKey();
    const ch = 'idem-two.example.net';
    const s = await relay.connect(relay.headers(relay.player(), key, ch));
    const [a, b] = [relay.player(), relay.player()];
    await relay.post({ type: 'chat', message: 'from a' }, relay.headers(a, key, ch, { 'idempotency-key': 'same' }));
    await relay.post({ type: 'chat', message: 'from b' }, relay.headers(b, key, ch, { 'idempotency-key': 'same' }));
    expect((await s.nextPair()).data.message).toBe('from a');
    expect((await s.nextPair()).data.message).toBe('from b');
  });

  it('a malformed key is refused with 400', async () => {
    const key = await relay.createKey();
    const res = await relay.post({ type: 'keepalive' }, relay.headers(relay.player(), key, 'idem.example.net', { 'idempotency-key': 'has spaces in it' }));
    expect(res.status).toBe(400);
    expect(res.body['error']).toBe('bad_request');
  });
});
