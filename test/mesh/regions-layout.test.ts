// A mesh with regions, as far as the relay runs in them today (docs/REGIONS.md, "Built so far, and
// next"): `relay setup` lays out every region's log, its copies, its Idempotency-Key records and what
// opening a stream needs (claims, heartbeats, claim index), each in its region, and an ingress writes only to its own region's log, so a region cut off from the
// others keeps acknowledging its players, and every region holds what it stored once the link returns.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager, type JetStreamManager, type StreamInfo } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_SCOPES } from '../../services/core/scopes.js';
import { regionChannelSubject } from '../../services/core/subjects.js';
import { startRelayServer, type RelayServer } from '../../services/server.js';
import { startSuperCluster, type SuperCluster } from '../../tools/nats-super-cluster.js';
import { waitUntil } from '../../tools/poll.js';
import { runCli, setupComplaints } from '../helpers/cli.js';
import { clientHeaders, newPlayer, postTo } from '../helpers/clients.js';
import { startProfileApi, type FakeProfileApi } from '../helpers/profile-api.js';

const REGIONS = ['a', 'b', 'c'] as const;
const MESH = { REGIONS: REGIONS.join(','), REGION_HOME: 'a' };

let dir: string;
let sc: SuperCluster;
let profile: FakeProfileApi;
let nc: NatsConnection;
let jsm: JetStreamManager;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'relay-regions-layout-'));
  sc = await startSuperCluster(dir, REGIONS);
  profile = await startProfileApi();
  nc = await connect({ servers: sc.region('c').url, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
  // Asked of region c, which the tests never cut off: it answers for the whole super-cluster.
  jsm = await jetstreamManager(nc, { checkAPI: false });
}, 180_000);

afterAll(async () => {
  await nc?.close();
  await sc?.stop();
  await profile?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function streams(): Promise<Map<string, StreamInfo>> {
  const found = new Map<string, StreamInfo>();
  for await (const info of jsm.streams.list()) found.set(info.config.name, info);
  return found;
}

describe('relay setup on a super-cluster', () => {
  it('places each region log in its region, a copy of it in every other region and each region its own Idempotency-Key records; a second run changes nothing', async () => {
    const first = await runCli(['setup', '--json'], { NATS_URL: sc.region('b').url, ...MESH }, 120_000);
    expect(setupComplaints(first.stderr)).toEqual([]);
    expect(first.code).toBe(0);
    const found = await streams();
    for (const r of REGIONS) {
      const log = found.get(`RELAY_REGION_${r.toUpperCase()}`);
      expect(log?.cluster?.name, `region ${r}'s log`).toBe(r);
      expect(log?.config.subjects).toEqual([`region.${r}.channel.>`]);
      expect(log?.config.republish).toMatchObject({ src: `region.${r}.channel.>`, dest: `live.region.${r}.channel.>` });
      // What opening a stream needs, so a region cut off still opens streams.
      for (const name of [`KV_relay-idempotency-${r}`, `KV_relay-streams-${r}`, `KV_relay-nodes-${r}`, `RELAY_CLAIM_INDEX_${r.toUpperCase()}`]) {
        expect(found.get(name)?.cluster?.name, name).toBe(r);
      }
      expect(found.get(`KV_relay-nodes-${r}`)?.config.republish).toMatchObject({ dest: `relay.kv.relay-nodes-${r}.>` });
      for (const at of REGIONS.filter((x) => x !== r)) {
        const copy = found.get(`RELAY_REGION_${r.toUpperCase()}_AT_${at.toUpperCase()}`);
        expect(copy?.cluster?.name, `the copy of ${r} at ${at}`).toBe(at);
        expect(copy?.config.mirror?.name).toBe(`RELAY_REGION_${r.toUpperCase()}`);
        expect(copy?.config.allow_direct).toBe(true);
      }
    }
    // What is written once for the whole mesh is in the home region; the one-log layout is not made.
    for (const name of ['RELAY_AUDIT', 'KV_relay-keys']) {
      expect(found.get(name)?.cluster?.name, name).toBe('a');
    }
    // Each region's bans in it, and in every region a copy of the keys and of each other region's bans.
    for (const r of REGIONS) {
      expect(found.get(`KV_relay-bans-${r}`)?.cluster?.name).toBe(r);
      expect(found.get(`KV_relay-bans-${r}`)?.config.republish).toMatchObject({ dest: `relay.kv.relay-bans-${r}.>` });
      for (const at of REGIONS.filter((x) => x !== r)) {
        const copy = found.get(`RELAY_COPY_relay-bans-${r}_AT_${at.toUpperCase()}`);
        expect(copy?.cluster?.name).toBe(at);
        expect(copy?.config).toMatchObject({ mirror: { name: `KV_relay-bans-${r}` }, allow_direct: true });
      }
      if (r !== 'a') expect(found.get(`RELAY_COPY_relay-keys_AT_${r.toUpperCase()}`)?.config.mirror?.name).toBe('KV_relay-keys');
    }
    for (const name of ['RELAY', 'RELAY_CLAIM_INDEX', 'KV_relay-idempotency', 'KV_relay-streams', 'KV_relay-nodes', 'KV_relay-bans']) expect(found.has(name), name).toBe(false);
    expect(found.size).toBe(3 + 6 + 2 + 3 * 5 + 2 + 6);

    const second = await runCli(['setup', '--json'], { NATS_URL: sc.region('c').url, ...MESH }, 120_000);
    expect(second.code).toBe(0);
    const outcomes = (JSON.parse(second.stdout) as { streams: Array<{ stream: string; action: string }> }).streams;
    expect(outcomes.filter((o) => o.action !== 'unchanged')).toEqual([]);
    expect(outcomes).toHaveLength(found.size);
  }, 240_000);

  it('names the region whose NATS cluster it cannot find', async () => {
    const r = await runCli(['setup'], { NATS_URL: sc.region('c').url, ...MESH, REGIONS: 'a,b,c,nowhere' }, 120_000);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('cannot be placed in region nowhere');
    expect(r.stderr).toContain('NATS cluster named "nowhere"');
  }, 180_000);
});

describe('an ingress in a region', () => {
  let ingress: RelayServer;

  beforeAll(async () => {
    // As a deployment does before its services start (a second run changes nothing).
    const setup = await runCli(['setup'], { NATS_URL: sc.region('b').url, ...MESH }, 120_000);
    expect(setup.code, setup.stderr).toBe(0);
    ingress = await startRelayServer({
      service: 'ingress',
      env: {
        ...MESH,
        REGION: 'b',
        NATS_URL: sc.region('b').url,
        PROFILE_API_URL: profile.url,
        PROFILE_API_RATE_PER_ADDRESS: '0',
        HOST: '127.0.0.1',
        PORT: '0',
        LOG_LEVEL: 'silent',
        NODE_ENV: 'test',
        RELAY_NODE_ID: 'ingress-b',
      },
    });
  }, 120_000);

  afterAll(async () => {
    await ingress?.close();
  });

  it('keeps acknowledging its players and stays ready while its region is cut off, even once the region has lost the meta group, and every other region then holds each payload once, in the order posted', async () => {
    const key = await ingress.core.keys.create({ scopes: ALL_SCOPES.filter((s) => s !== 'irc.connection.unauthenticated') });
    const alice = newPlayer(profile, 'Alice');
    const headers = clientHeaders(alice, key, 'play.example.net');
    const post = async (n: number, extra: Record<string, string> = {}): Promise<void> => {
      const res = await postTo(ingress.url, { type: 'chat', message: `message ${n}` }, { ...headers, ...extra });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    };
    const ready = async (): Promise<number> => (await fetch(new URL('/readyz', ingress.url))).status;
    for (let n = 1; n <= 3; n++) await post(n);
    // Both copies hold the first three before the cut, so the cut is seen holding exactly those.
    for (const at of ['A', 'C']) await waitUntil(async () => (await jsm.streams.info(`RELAY_REGION_B_AT_${at}`)).state.last_seq === 3, `the copy of b at ${at} to hold three`, 60_000);
    const inB = await connect({ servers: sc.region('b').url });
    sc.isolate('b');
    try {
      await post(4);
      // Then once region b has lost JetStream's meta group (a majority of regions), which creating a
      // stream or a consumer needs: storing in b's own log and the ingress's readiness do not.
      const bJsm = await jetstreamManager(inB, { checkAPI: false, timeout: 1000 });
      await waitUntil(() => bJsm.getAccountInfo().then(() => false, () => true), 'region b to lose the meta group', 60_000);
      await post(5);
      // A keyed POST and its resend: the key's record is in b's own bucket, so it is stored once.
      await post(6, { 'idempotency-key': 'resent-while-cut-off' });
      await post(6, { 'idempotency-key': 'resent-while-cut-off' });
      expect(await ready()).toBe(200);
      // The cut held: the other regions' copies have not heard what b stored meanwhile.
      for (const at of ['a', 'c']) expect((await jsm.streams.info(`RELAY_REGION_B_AT_${at.toUpperCase()}`)).state.last_seq).toBe(3);
    } finally {
      sc.heal();
      await inB.close();
    }
    const local = await jetstreamManager(nc, { checkAPI: false });
    const expected = Array.from({ length: 6 }, (_, i) => `message ${i + 1}`);
    // Stored once in b's log: six payloads, the resend of the keyed one not among them.
    const origin = await waitUntil(() => local.streams.info('RELAY_REGION_B').then((i) => i.state, () => undefined), "b's log to answer after the heal", 60_000);
    expect([origin.messages, origin.last_seq]).toEqual([6, 6]);
    for (const at of ['a', 'c']) {
      const copy = `RELAY_REGION_B_AT_${at.toUpperCase()}`;
      await waitUntil(async () => (await local.streams.info(copy)).state.last_seq === 6, `the copy of b at ${at} to catch up`, 60_000);
      expect((await local.streams.info(copy)).state.messages).toBe(6);
      const held: Array<{ seq: number; subject: string; message: string }> = [];
      for (let seq = 1; seq <= 6; seq++) {
        const m = await local.direct.getMessage(copy, { seq });
        held.push({ seq: m!.seq, subject: m!.subject, message: (m!.json<{ message: string }>()).message });
      }
      expect(held.map((h) => h.message)).toEqual(expected);
      expect(held.map((h) => h.seq)).toEqual([1, 2, 3, 4, 5, 6]);
      expect(new Set(held.map((h) => h.subject))).toEqual(new Set([regionChannelSubject('b', 'play.example.net')]));
    }
  }, 180_000);
});
