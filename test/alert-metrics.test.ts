// The metrics the alerting rules (infra/prometheus/relay-rules.yml) need beyond the traffic counters:
// readiness as a series, claim renewals falling behind, and resumes from beyond retention.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../services/core/config.js';
import { ALL_SCOPES } from '../services/core/scopes.js';
import { STREAM_NAME } from '../services/core/subjects.js';
import { createLogger } from '../services/core/logger.js';
import { setUpFromConfig } from '../services/core/nats-setup.js';
import { startRelayServer } from '../services/server.js';
import { waitUntil as eventually } from '../tools/poll.js';
import { readMetrics } from './helpers/metrics.js';
import { clientHeaders, newPlayer } from './helpers/clients.js';
import { startTestNats } from './helpers/nats.js';
import { LogCapture, RelayFixture } from './helpers/relay.js';
import { openStream, type SseStream } from './helpers/sse-client.js';

let relay: RelayFixture;
beforeAll(async () => {
  relay = await RelayFixture.start();
});
afterAll(async () => {
  await relay?.close();
});

describe('metrics for alerts', () => {
  it('relay_ready is 1 while the relay is ready and 0 once it drains, so "no ready gateway" can be alerted on', async () => {
    expect((await readMetrics(relay.url)).get('relay_ready{service="all"}')).toBe(1);
    const draining = await RelayFixture.start({ nats: relay.nats, profile: relay.profile });
    try {
      expect((await readMetrics(draining.url)).get('relay_ready{service="all"}')).toBe(1);
      await draining.server.gateway!.drain();
      expect((await readMetrics(draining.url)).get('relay_ready{service="all"}')).toBe(0);
    } finally {
      await draining.close();
    }
  });

  it('a resume asking for frames the log no longer keeps counts in relay_replays_beyond_retention_total; one within retention does not', async () => {
    const key = await relay.createKey();
    const ch = 'alert-retention.example.net';
    const me = relay.player();
    const other = relay.player();
    const count = async (): Promise<number | undefined> => (await readMetrics(relay.url)).get('relay_replays_beyond_retention_total');
    expect(await count()).toBe(0);
    const s = await relay.connect(relay.headers(me, key, ch));
    await relay.post({ type: 'chat', message: 'seen' }, relay.headers(other, key, ch));
    const seen = await s.nextPair();
    s.close();
    await s.ended;
    await relay.post({ type: 'chat', message: 'missed' }, relay.headers(other, key, ch));
    const within = await relay.connect({ ...relay.headers(me, key, ch), 'last-event-id': String(seen.id) });
    expect((await within.nextPair()).data.message).toBe('missed');
    within.close();
    await within.ended;
    expect(await count()).toBe(0);

    await relay.post({ type: 'chat', message: 'kept' }, relay.headers(other, key, ch));
    const jsm = relay.server.core.nats.jsm;
    await jsm.streams.purge(STREAM_NAME, { seq: (await jsm.streams.info(STREAM_NAME)).state.last_seq });
    const beyond = await relay.open({ ...relay.headers(me, key, ch), 'last-event-id': String(seen.id) });
    await beyond.waitForComment(/no longer kept/);
    expect(await count()).toBe(1);
  });

  it('relay_ownership_renewal_overdue_seconds rises while NATS does not answer claim renewals, and falls back to 0 when it does', async () => {
    // A 4 s claim TTL (below what the settings allow, so given as built configuration): claims are
    // renewed every 2 s, and a stalled NATS shows within seconds instead of after half an hour.
    const nats = await startTestNats();
    const env = { NATS_URL: nats.url, PROFILE_API_URL: relay.profile.url, HOST: '127.0.0.1', PORT: '0', NODE_ENV: 'test' };
    const config = { ...loadConfig('all', env), claimTtlMs: 4000 };
    // Claims live as long as the bucket keeps them: relay setup gives the bucket that 4 s.
    await setUpFromConfig(config, createLogger({ level: 'warn', pretty: false }));
    const own = await startRelayServer({ service: 'all', config, logDestination: new LogCapture() });
    const overdue = async (): Promise<number> => (await readMetrics(own.url)).get('relay_ownership_renewal_overdue_seconds') ?? -1;
    const stalled = nats.node!.process;
    let stream: SseStream | undefined;
    try {
      const key = await own.core.keys.create({ scopes: ALL_SCOPES.filter((s) => s !== 'irc.connection.unauthenticated') });
      stream = await openStream(own.url, { headers: clientHeaders(newPlayer(relay.profile), key, 'alert-renewals.example.net') });
      await stream.waitForComment(/^connected/);
      expect(await overdue()).toBe(0);
      stalled.kill('SIGSTOP');
      await eventually(async () => (await overdue()) > 0, 'renewals to fall behind', 20_000);
      stalled.kill('SIGCONT');
      await eventually(async () => (await overdue()) === 0, 'renewals to catch up', 20_000);
    } finally {
      stalled.kill('SIGCONT');
      stream?.close();
      await own.close();
      await nats.stop();
    }
  });
});
