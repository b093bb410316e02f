// /healthz, /readyz and /metrics: what an orchestrator and Prometheus see.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Scope } from '../services/core/scopes.js';
import { startNatsNode, type NatsNode } from '../tools/nats-launcher.js';
import { waitUntil as eventually } from '../tools/poll.js';
import { readMetrics } from './helpers/metrics.js';
import { RelayFixture } from './helpers/relay.js';

/** Prometheus text to { 'name{labels}': value }. */
async function metrics(relay: RelayFixture): Promise<Map<string, number>> {
  const res = await fetch(new URL('/metrics', relay.url));
  expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
  return readMetrics(relay.url);
}

describe('/healthz and /readyz', () => {
  let relay: RelayFixture;
  beforeAll(async () => {
    relay = await RelayFixture.start();
  });
  afterAll(async () => {
    await relay?.close();
  });

  it('healthz answers while the process lives; readyz is ready with NATS, stream and buckets in place', async () => {
    expect(await (await fetch(new URL('/healthz', relay.url))).json()).toEqual({ status: 'ok' });
    const ready = await fetch(new URL('/readyz', relay.url));
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready' });
  });

  it('readyz turns false while the relay drains, and says why', async () => {
    const draining = await RelayFixture.start({ nats: relay.nats, profile: relay.profile });
    try {
      await draining.server.gateway!.drain();
      const res = await fetch(new URL('/readyz', draining.url));
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({ status: 'not_ready', failing: ['draining'] });
    } finally {
      await draining.close();
    }
  });

  it('readyz turns false when NATS is down, and true again when it is back', async () => {
    const own = await RelayFixture.start();
    const node = own.nats.node!;
    let restarted: NatsNode | null = null;
    try {
      await node.stop();
      const down = await eventually(async () => {
        const r = await fetch(new URL('/readyz', own.url));
        return r.status === 503 && ((await r.json()) as { failing: string[] });
      }, 'readyz to report NATS down');
      expect(down.failing).toContain('nats');
      expect((await fetch(new URL('/healthz', own.url))).status).toBe(200);
      restarted = await startNatsNode(node.options);
      await eventually(async () => (await fetch(new URL('/readyz', own.url))).status === 200, 'readyz to recover', 20_000);
    } finally {
      await own.close();
      await restarted?.stop();
    }
  });
});

describe('/metrics', () => {
  let relay: RelayFixture;
  beforeAll(async () => {
    relay = await RelayFixture.start();
  });
  afterAll(async () => {
    await relay?.close();
  });

  it('moves with traffic: streams, deliveries, POST outcomes, publish latency, delivery lag, profile calls, evictions, bans', async () => {
    const before = await metrics(relay);
    expect(before.get('relay_nats_connected')).toBe(1);
    expect(before.get('relay_streams_open')).toBe(0);
    const key = await relay.createKey();
    const ch = 'metrics.example.net';
    const me = relay.player();
    const s = await relay.connect(relay.headers(me, key, ch));
    await relay.post({ type: 'chat', message: 'counted' }, relay.headers(relay.player(), key, ch));
    await s.nextPair();
    const evicted = await relay.connect(relay.headers(me, key, ch));
    await s.waitClosed();
    await relay.post({ type: 'chat', message: 'x' }, relay.headers(relay.player(), null, ch));
    await relay.post({ type: 'nope' }, relay.headers(relay.player(), key, ch));
    const after = await metrics(relay);
    expect(after.get('relay_streams_open')).toBe(1);
    expect(after.get('relay_streams_opened_total')).toBe(2);
    expect(after.get('relay_frames_delivered_total')).toBeGreaterThanOrEqual(1);
    expect(after.get('relay_posts_total{outcome="200"}')).toBe(1);
    expect(after.get('relay_posts_total{outcome="403"}')).toBe(1);
    expect(after.get('relay_posts_total{outcome="400"}')).toBe(1);
    expect(after.get('relay_entries_published_total{type="chat"}')).toBe(1);
    expect(after.get('relay_publish_duration_seconds_count')).toBe(1);
    expect(after.get('relay_delivery_lag_seconds_count')).toBeGreaterThanOrEqual(1);
    expect(after.get('relay_evictions_total')).toBe(1);
    expect(after.get('relay_streams_closed_total{reason="evicted"}')).toBe(1);
    expect(after.get('relay_bans_issued_total')).toBe(1);
    expect(after.get('relay_profile_api_calls_total{outcome="valid"}')).toBeGreaterThanOrEqual(3);
    expect(after.get('relay_profile_api_duration_seconds_count{outcome="valid"}')).toBeGreaterThanOrEqual(3);
    expect(after.get('relay_channel_subscriptions')).toBe(1);
    expect(after.has('process_resident_memory_bytes')).toBe(true);
    evicted.close();
  });

  it('counts frames a stream did not take: coalesced presence snapshots and slow consumers', async () => {
    const slow = await RelayFixture.start({ nats: relay.nats, profile: relay.profile, env: { STREAM_QUEUE_MAX_BYTES: '64KiB', RATE_LIMIT_PER_SECOND: '0', RATE_LIMIT_BYTES_PER_SECOND: '0' } });
    try {
      const key = await slow.createKey([Scope.Establish, Scope.Send, Scope.Receive]);
      const ch = 'slow-metrics.example.net';
      const s = await slow.connect(slow.headers(slow.player(), key, ch));
      s.pause();
      const sender = slow.player();
      const presence = { type: 'presence', inventory: [{ slot: 0, item: { id: 'minecraft:stone', count: 64, nbt: { pad: 'x'.repeat(30_000) } } }], attributes: { absorption: 0, health: 20, hunger: 20, oxygen: 300, saturation: 5 } };
      const chat = { type: 'chat', message: 'y'.repeat(30_000) };
      // More than the kernel's socket buffers hold, so the relay's own queue fills: presence
      // snapshots of one sender replace each other in it, chats pile up until the bound.
      // Two snapshots per chat: entries now reach the gateway one by one, so coalescing needs two
      // snapshots close together wherever the socket fills up.
      const batch = Array.from({ length: 30 }, (_, i) => (i % 3 === 2 ? chat : presence));
      const closedAsSlow = async (): Promise<boolean> => (await metrics(slow)).get('relay_streams_closed_total{reason="slow_consumer"}') === 1;
      for (let i = 0; i < 60 && !(await closedAsSlow()); i++) await slow.post(batch, slow.headers(sender, key, ch));
      // The client sees the end once it reads again: what was on the wire, then the close.
      s.resume();
      await s.waitClosed(15_000);
      const m = await metrics(slow);
      expect(m.get('relay_streams_closed_total{reason="slow_consumer"}')).toBe(1);
      expect(m.get('relay_frames_dropped_total{reason="coalesced"}')).toBeGreaterThan(0);
    } finally {
      await slow.close();
    }
  });
});

describe('a burst to a client that reads', () => {
  it('is delivered whole, however far it exceeds the slow-consumer bound', async () => {
    const relay = await RelayFixture.start({ env: { STREAM_QUEUE_MAX_BYTES: '64KiB' } });
    try {
      const key = await relay.createKey();
      const ch = 'burst.example.net';
      const s = await relay.connect(relay.headers(relay.player(), key, ch));
      const batch = Array.from({ length: 30 }, (_, i) => ({ type: 'chat', message: `${i}:${'z'.repeat(30_000)}` }));
      expect((await relay.post(batch, relay.headers(relay.player(), key, ch))).status).toBe(200);
      for (let i = 0; i < 30; i++) expect(String((await s.nextPair()).data.message).startsWith(`${i}:`)).toBe(true);
      expect(s.isClosed).toBe(false);
    } finally {
      await relay.close();
    }
  });
});
