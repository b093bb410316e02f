// The session cache against a real HTTP server playing the profile API: what junk tokens may fill.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExpiringCache } from '../services/core/expiring-cache.js';
import { createLogger } from '../services/core/logger.js';
import { HttpProfileClient } from '../services/core/profile.js';
import { startProfileApi, type FakeProfileApi } from './helpers/profile-api.js';

let api: FakeProfileApi;
beforeAll(async () => {
  api = await startProfileApi();
});
afterAll(async () => {
  await api?.close();
});

describe('the session cache', () => {
  // Guards: valid sessions and refused tokens shared one cache, so a stream of distinct junk tokens
  // pushed real players' sessions out and each of them cost a new look-up.
  it("junk tokens never push a real player's session out of the cache", async () => {
    const client = new HttpProfileClient({
      url: api.url,
      timeoutMs: 5000,
      cacheTtlMs: 60_000,
      negativeCacheTtlMs: 60_000,
      concurrency: 16,
      maxQueue: 1000,
      perAddress: 1000,
      // Off: this test looks up thousands of tokens from one (unknown) address on purpose.
      ratePerAddress: 0,
      rateBurst: 1,
      ipv6Prefix: 64,
      maxEntries: 20,
      logger: createLogger({ level: 'silent', pretty: false, nodeId: 't', service: 'all', clientHeaderPrefixes: [] }),
    });
    api.addSession('real-player', 'Real');
    await client.resolve('real-player', { address: '127.0.0.3' });
    const junk = Array.from({ length: 100 }, (_, i) => client.resolve(`junk-${i}`, { address: '127.0.0.2' }).catch((e: unknown) => e));
    for (const e of await Promise.all(junk)) expect(e).toMatchObject({ code: 'invalid_session' });
    await client.resolve('real-player', { address: '127.0.0.3' });
    expect(api.calls.filter((t) => t === 'real-player')).toHaveLength(1);
  });

  it('holds at most its bound, dropping the oldest', () => {
    const cache = new ExpiringCache<number>(3);
    for (let i = 0; i < 10; i++) cache.set(`k${i}`, i, 60_000);
    expect(cache.size).toBe(3);
    expect(cache.get('k6')).toBeUndefined();
    expect(cache.get('k9')).toBe(9);
    expect(cache.get('k9', Date.now() + 60_001)).toBeUndefined();
    expect(cache.size).toBe(2);
  });
});
