// Limits on POST bodies (DESIGN.md "POST"): size, batch length, media type, JSON, rate.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedKey } from '../services/core/keys.js';
import { RelayFixture } from './helpers/relay.js';

let relay: RelayFixture;
let key: CreatedKey;
const CH = 'limits.example.net';

beforeAll(async () => {
  relay = await RelayFixture.start({ env: { BODY_LIMIT: '64KiB', BATCH_MAX_ENTRIES: '10', RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_BURST: '20' } });
  key = await relay.createKey();
});
afterAll(async () => {
  await relay?.close();
});

function expectRefusal(res: { status: number; body: Record<string, unknown> }, status: number, code: string): void {
  expect(res.status).toBe(status);
  expect(res.body['error']).toBe(code);
  expect(typeof res.body['message']).toBe('string');
}

describe('limits', () => {
  it('a body over BODY_LIMIT is refused with 413 payload_too_large', async () => {
    const res = await relay.post({ type: 'chat', message: 'x'.repeat(70 * 1024) }, relay.headers(relay.player(), key, CH));
    expectRefusal(res, 413, 'payload_too_large');
  });

  it('a batch of BATCH_MAX_ENTRIES is accepted; one more is refused with 413 batch_too_large', async () => {
    const p = relay.player();
    const ok = await relay.post(Array.from({ length: 10 }, () => ({ type: 'keepalive' })), relay.headers(p, key, CH));
    expect(ok.body).toEqual({ accepted: 10, dropped: 0 });
    const res = await relay.post(Array.from({ length: 11 }, () => ({ type: 'keepalive' })), relay.headers(relay.player(), key, CH));
    expectRefusal(res, 413, 'batch_too_large');
    expect(String(res.body['message'])).toMatch(/at most 10 entries; this one has 11/);
  });

  it.each(['text/plain', 'application/x-www-form-urlencoded', 'text/html'])('Content-Type %s is refused with 415', async (type) => {
    const res = await fetch(new URL('/', relay.url), {
      method: 'POST',
      headers: { ...relay.headers(relay.player(), key, CH), 'content-type': type },
      body: '{"type":"chat","message":"x"}',
    });
    expect(res.status).toBe(415);
    expect(await res.json()).toMatchObject({ error: 'unsupported_media_type', message: expect.stringMatching(/application\/json/) });
  });

  it('a body that is not JSON is refused with 400 invalid_json', async () => {
    const res = await relay.post('{"type": "chat", ', relay.headers(relay.player(), key, CH));
    expectRefusal(res, 400, 'invalid_json');
  });

  it('an account over its rate gets 429 with Retry-After; another account is not affected', async () => {
    const greedy = relay.player();
    const ok = await relay.post(Array.from({ length: 10 }, () => ({ type: 'keepalive' })), relay.headers(greedy, key, CH));
    expect(ok.status).toBe(200);
    const ok2 = await relay.post(Array.from({ length: 10 }, () => ({ type: 'keepalive' })), relay.headers(greedy, key, CH));
    expect(ok2.status).toBe(200);
    const res = await relay.post({ type: 'keepalive' }, relay.headers(greedy, key, CH));
    expectRefusal(res, 429, 'rate_limited');
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const polite = await relay.post({ type: 'keepalive' }, relay.headers(relay.player(), key, CH));
    expect(polite.status).toBe(200);
  });

  it('paths other than / and /irc answer 404 with a JSON body', async () => {
    const res = await relay.post({ type: 'chat', message: 'x' }, relay.headers(relay.player(), key, CH), '/chat');
    expectRefusal(res, 404, 'not_found');
  });
});
