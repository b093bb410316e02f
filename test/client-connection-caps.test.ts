// Holding the client port (streams and POSTs) with sockets that never finish a request, against a
// real relay and nats-server: one address keeps MAX_CONNECTIONS_PER_ADDRESS of them and no more, a
// socket that sends nothing is reset at the first-byte deadline, and the proxy named in
// TRUSTED_PROXIES, through which every player arrives, is never capped. Strangers come from
// 127.0.0.x addresses of their own; players from others.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIRST_BYTE_TIMEOUT_MS } from '../services/core/connection-gate.js';
import type { CreatedKey } from '../services/core/keys.js';
import { waitUntil } from '../tools/poll.js';
import { askAlone, flood, hold } from './helpers/held-sockets.js';
import { parseMetrics } from './helpers/metrics.js';
import { RelayFixture } from './helpers/relay.js';

const CAP = 16;
const PROXY = '127.0.0.5';
const CHANNEL = 'caps.example.net';
let relay: RelayFixture;
let key: CreatedKey;

beforeAll(async () => {
  relay = await RelayFixture.start({ env: { MAX_CONNECTIONS_PER_ADDRESS: String(CAP), TRUSTED_PROXIES: PROXY } });
  key = await relay.createKey();
}, 60_000);

afterAll(async () => {
  await relay?.close();
});

async function refusals(): Promise<Record<string, number | undefined>> {
  const m = parseMetrics((await askAlone(relay.server.port, '/metrics')).body);
  const of = (reason: string): number | undefined => m.get(`relay_connections_refused_total{reason="${reason}"}`);
  return { per_address: of('per_address'), first_byte_timeout: of('first_byte_timeout') };
}

describe('the client port under half-open sockets', () => {
  it('a player opens a stream while one address holds 2,000 half-open sockets, of which it keeps its cap', async () => {
    const before = await refusals();
    const attack = await flood(relay.server.port, '127.0.0.2', 2000);
    try {
      const stream = await relay.open(relay.headers(relay.player(), key, CHANNEL), { localAddress: '127.0.0.3' });
      expect(stream.status).toBe(200);
      // Counted from zero: each reason had its series before anything was refused.
      expect(before).toEqual({ per_address: 0, first_byte_timeout: 0 });
      await waitUntil(async () => (await refusals()).per_address === 2000 - CAP, 'the refusals beyond the cap to be counted');
      expect(attack.filter((h) => h.answer() !== '')).toEqual([]);
      await waitUntil(() => attack.filter((h) => !h.socket.destroyed).length === CAP || undefined, 'the client side to see the resets');
    } finally {
      for (const h of attack) h.socket.destroy();
    }
  }, 60_000);

  it('the proxy named in TRUSTED_PROXIES is not capped: a player opens a stream through it past the cap', async () => {
    const through = await flood(relay.server.port, PROXY, 2 * CAP);
    try {
      const stream = await relay.open(relay.headers(relay.player(), key, CHANNEL), { localAddress: PROXY });
      expect(stream.status).toBe(200);
      expect(through.filter((h) => h.socket.destroyed)).toEqual([]);
    } finally {
      for (const h of through) h.socket.destroy();
    }
  }, 60_000);

  it('a socket that sends nothing is reset at the first-byte deadline, without waiting for the headers deadline or answering', async () => {
    const before = await refusals();
    const silent = await hold(relay.server.port, '127.0.0.6');
    await silent.closed;
    const waited = performance.now() - silent.connectedAt;
    expect(silent.answer()).toBe('');
    expect(waited).toBeGreaterThanOrEqual(FIRST_BYTE_TIMEOUT_MS);
    expect(waited).toBeLessThan(relay.server.config.bodyTimeoutMs);
    expect((await refusals()).first_byte_timeout).toBe((before.first_byte_timeout ?? 0) + 1);
  }, 30_000);
});
