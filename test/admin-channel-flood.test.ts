// The console's channel list under a flood of made-up channel names (issue 19): anyone with a key
// can post to any channel name; the admin service counts a bounded number of channels, and a flood
// of junk names must never hide a real, active channel from `/api/channels`.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_COUNTED_CHANNELS } from '../services/admin/channel-activity.js';
import type { CreatedKey } from '../services/core/keys.js';
import { Scope } from '../services/core/scopes.js';
import { waitUntil } from '../tools/poll.js';
import { startAdmin, type AdminFixture } from './helpers/admin.js';
import { RelayFixture } from './helpers/relay.js';

const REAL = 'play.example.net';
const BATCH = 256;
let relay: RelayFixture;
let admin: AdminFixture;
let bridge: CreatedKey;
let mod: CreatedKey;
let junk = 0;

beforeAll(async () => {
  // The rate limit is not what is under test: the flood is posted as fast as the relay stores it.
  relay = await RelayFixture.start({ env: { RATE_LIMIT_PER_SECOND: '0', RATE_LIMIT_BYTES_PER_SECOND: '0', LOG_LEVEL: 'warn' } });
  admin = await startAdmin(relay.nats);
  bridge = await relay.createKey([Scope.Unauthenticated, Scope.Send]);
  mod = await relay.createKey();
});

afterAll(async () => {
  await admin?.close();
  await relay?.close();
});

interface ChannelRow {
  channel: string;
  lastActivity: string | null;
}

const channels = async (): Promise<ChannelRow[]> => (await admin.call('/api/channels')).body as ChannelRow[];

/** Posts `n` payloads, each to a channel name never used before, through a bridge key's envelopes. */
async function flood(n: number, between?: () => Promise<void>): Promise<void> {
  const user = relay.player().uuid;
  for (let done = 0; done < n; done += BATCH) {
    const body = Array.from({ length: Math.min(BATCH, n - done) }, () => ({ user, agent: 'junk', host: `junk-${++junk}.example.net`, message: { type: 'chat', message: 'x' } }));
    const res = await relay.post(body, relay.headers(null, bridge, REAL));
    expect(res.status).toBe(200);
    await between?.();
  }
}

const postReal = async (): Promise<void> => {
  const res = await relay.post({ type: 'chat', message: 'hello' }, relay.headers(relay.player(), mod, REAL));
  expect(res.status).toBe(200);
};

describe('a flood of junk channel names', () => {
  it('does not hide a real channel first seen after the counter is full, nor one active during the flood', async () => {
    await flood(MAX_COUNTED_CHANNELS);
    // The live feed reaches the admin service in the order the log stored it: after all the junk.
    await postReal();
    const seen = await waitUntil(async () => (await channels()).find((c) => c.channel === REAL), 'the real channel listed');
    expect(seen.lastActivity).not.toBeNull();

    // A second flood as large as the counter, the real channel posting between its batches.
    await flood(MAX_COUNTED_CHANNELS, postReal);
    const marker = `junk-${junk}.example.net`;
    const list = await waitUntil(async () => {
      const l = await channels();
      return l.some((c) => c.channel === marker) ? l : undefined;
    }, 'the last junk name counted');
    expect(list.length).toBeLessThanOrEqual(MAX_COUNTED_CHANNELS);
    expect(list.find((c) => c.channel === REAL)?.lastActivity).not.toBeNull();
  });
});
