// Retention limits are configuration: a restart with new limits applies them to the existing event
// log without losing what it holds.
import { millis } from '@nats-io/nats-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STREAM_NAME } from '../services/core/subjects.js';
import { runCli } from './helpers/cli.js';
import { startProfileApi, type FakeProfileApi } from './helpers/profile-api.js';
import { setUpNats } from './helpers/nats-setup.js';
import { RelayFixture } from './helpers/relay.js';
import { startTestNats, type TestNats } from './helpers/nats.js';

let nats: TestNats;
let profile: FakeProfileApi;

beforeAll(async () => {
  nats = await startTestNats();
  profile = await startProfileApi();
});
afterAll(async () => {
  await profile?.close();
  await nats?.stop();
});

describe('retention', () => {
  it('relay setup applies new limits and the stored payloads survive the change', async () => {
    const first = await RelayFixture.start({ nats, profile, env: { STREAM_MAX_AGE: '24h', STREAM_MAX_BYTES: '1GiB' } });
    const key = await first.createKey();
    const p = first.player();
    for (let i = 0; i < 5; i++) await first.post({ type: 'chat', message: `kept ${i}` }, first.headers(p, key, 'retention.example.net'));
    const before = await first.server.core.nats.jsm.streams.info(STREAM_NAME);
    await first.close();

    const outcomes = await setUpNats(nats.url, { STREAM_MAX_AGE: '7d', STREAM_MAX_BYTES: '512MiB', STREAM_DUPLICATE_WINDOW: '10m', STREAM_STORAGE: 'memory' });
    // Storage cannot change in place: kept, and said so.
    expect(outcomes.find((o) => o.stream === STREAM_NAME)?.notes).toEqual([expect.stringMatching(/storage file -> memory \(STREAM_STORAGE\) cannot be applied in place; kept file/)]);
    const second = await RelayFixture.start({ nats, profile, setup: false });
    try {
      const after = await second.server.core.nats.jsm.streams.info(STREAM_NAME);
      expect(millis(after.config.max_age)).toBe(7 * 86_400_000);
      expect(after.config.max_bytes).toBe(512 * 1024 ** 2);
      expect(millis(after.config.duplicate_window)).toBe(600_000);
      expect(after.config.storage).toBe('file');
      expect(after.state.messages).toBe(before.state.messages);
      expect(after.state.last_seq).toBe(before.state.last_seq);
      // And a client resuming from the start gets them all.
      const s = await second.open({ ...second.headers(second.player(), await second.createKey(), 'retention.example.net'), 'last-event-id': '0' });
      const got = await s.pairsUntil((x) => x.data.message === 'kept 4');
      expect(got.map((x) => x.data.message)).toEqual(['kept 0', 'kept 1', 'kept 2', 'kept 3', 'kept 4']);
    } finally {
      await second.close();
    }
  });

  it('the CLI\'s other commands, run with their own environment, never rewrite the limits relay setup applied', async () => {
    const relay = await RelayFixture.start({ nats, profile, env: { STREAM_MAX_AGE: '3d', STREAM_MAX_BYTES: '3GiB' } });
    try {
      for (const args of [['keys', 'list'], ['stats'], ['streams']]) {
        const r = await runCli(args, { NATS_URL: nats.url, STREAM_MAX_AGE: '1h', STREAM_MAX_BYTES: '1MiB' });
        expect(r.code, r.stderr).toBe(0);
      }
      const info = await relay.server.core.nats.jsm.streams.info(STREAM_NAME);
      expect(millis(info.config.max_age)).toBe(3 * 86_400_000);
      expect(info.config.max_bytes).toBe(3 * 1024 ** 3);
    } finally {
      await relay.close();
    }
  });
});
