// Keys, bans and revocations in a mesh of three regions on loopback (docs/REGIONS.md), every process
// with its region's role credentials: an operator's ban refuses the account in every region and
// closes its stream in another; a cracked client found in a region cut off is banned there at once
// (its region's bans bucket is its own, so the ban waits for no other region) and everywhere once
// the link returns, and the operator lifts it from another region; a region cut off keeps enforcing
// what it last knew (a ban lifted and a key revoked meanwhile), and learns both once its link returns.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { bucketCopyStream, inboxPrefix } from '../../services/core/subjects.js';
import type { CreatedKey } from '../../services/core/keys.js';
import { ALL_SCOPES } from '../../services/core/scopes.js';
import { startRelayServer, type RelayServer } from '../../services/server.js';
import type { SuperCluster } from '../../tools/nats-super-cluster.js';
import { runCli, runCliJson } from '../helpers/cli.js';
import { clientHeaders, newPlayer, postTo, type Player } from '../helpers/clients.js';
import { startProfileApi, type FakeProfileApi } from '../helpers/profile-api.js';
import { startRolesMesh, type Role, type RolesMesh } from '../helpers/region-roles.js';
import { openStream, type SseStream } from '../helpers/sse-client.js';
import { within } from '../helpers/within.js';

const REGIONS = ['a', 'b', 'c'] as const;
type RegionName = (typeof REGIONS)[number];
const MESH = { REGIONS: REGIONS.join(','), REGION_HOME: 'a' };
const CHANNEL = 'play.example.net';
/** How long a region's services may take to apply what another region wrote, the link up (a generous bound: the stated time is one link delay). */
const APPLIED_MS = 30_000;

const as = (role: Role, region: RegionName): Record<string, string> => roles.as(role, region);
const scopes = ALL_SCOPES.filter((s) => s !== 'irc.connection.unauthenticated').join(',');

let dir: string;
let roles: RolesMesh;
let sc: SuperCluster;
let profile: FakeProfileApi;
let key: CreatedKey;
const ingresses = new Map<RegionName, RelayServer>();
let gatewayB: RelayServer;
const opened: SseStream[] = [];

function service(kind: 'ingress' | 'gateway', region: RegionName): Promise<RelayServer> {
  return startRelayServer({
    service: kind,
    env: { ...MESH, REGION: region, ...as(kind, region), PROFILE_API_URL: profile.url, PROFILE_API_RATE_PER_ADDRESS: '0', HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: process.env['DEBUG_LOG_LEVEL'] ?? 'silent', NODE_ENV: 'test', RELAY_NODE_ID: `${kind}-${region}` },
  });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'relay-regions-credentials-'));
  roles = await startRolesMesh(dir, REGIONS, MESH, 'b');
  sc = roles.sc;
  profile = await startProfileApi();
  for (const r of REGIONS) ingresses.set(r, await service('ingress', r));
  gatewayB = await service('gateway', 'b');
  key = await createKey();
}, 240_000);

afterAll(async () => {
  for (const s of opened) s.close();
  for (const s of [gatewayB, ...ingresses.values()]) await s?.close();
  await sc?.stop();
  await profile?.close();
  rmSync(dir, { recursive: true, force: true });
});

function createKey(): Promise<CreatedKey> {
  return runCliJson<CreatedKey>(['keys', 'create', '--scopes', scopes, '--json'], { ...MESH, ...as('cli', 'a') });
}

/** What the region's ingress answers the player's post: 200, or the refusal's error code. */
async function verdict(region: RegionName, player: Player, withKey: CreatedKey = key): Promise<string> {
  const res = await postTo(ingresses.get(region)!.url, { type: 'chat', message: 'hello' }, clientHeaders(player, withKey, CHANNEL));
  return res.status === 200 ? '200' : `${res.status} ${String(res.body['error'])}`;
}

/** Waits until every listed region answers the player's post with `expected`. */
async function everywhere(regions: readonly RegionName[], player: Player, expected: string, withKey: CreatedKey = key): Promise<void> {
  await vi.waitFor(async () => expect(Object.fromEntries(await Promise.all(regions.map(async (r) => [r, await verdict(r, player, withKey)] as const)))).toEqual(Object.fromEntries(regions.map((r) => [r, expected]))), {
    timeout: APPLIED_MS,
    interval: 200,
  });
}

/** Whether region `at`'s copy of `bucket` holds a live entry under `key`, read as its ingress reads it. */
async function copyHolds(at: RegionName, bucket: string, key: string): Promise<boolean> {
  const creds = as('ingress', at);
  const nc = await connect({ servers: creds['NATS_URL']!, user: creds['NATS_USER']!, pass: creds['NATS_PASSWORD']!, inboxPrefix: inboxPrefix('ingress') });
  try {
    const jsm = await jetstreamManager(nc, { checkAPI: false });
    const m = await jsm.direct.getMessage(bucketCopyStream(bucket, at), { last_by_subj: `$KV.${bucket}.${key}` });
    return m !== null && (m.header?.get('KV-Operation') ?? '') === '';
  } finally {
    await nc.close();
  }
}

async function cutOff<T>(region: RegionName, body: () => Promise<T>): Promise<T> {
  sc.isolate(region);
  try {
    return await body();
  } finally {
    sc.heal();
  }
}

describe('keys and bans across regions', () => {
  // First, on a super-cluster fresh from its set-up, as it is run alone.
  it('starts an ingress and a gateway in a region cut off from the others, enforcing the bans and keys its copies hold, and serving its players', async () => {
    const oscar = newPlayer(profile);
    const peggy = newPlayer(profile);
    await runCli(['bans', 'add', oscar.uuid], { ...MESH, ...as('cli', 'a') });
    await everywhere(REGIONS, oscar, '403 banned');
    await everywhere(REGIONS, peggy, '200');
    // The running services heard the ban and the key on the buckets' change feeds; a service starting
    // cut off reads c's copies, which mirrors fill a moment later: the cut waits for both (a copy
    // lagging at the cut is the next test's subject; a key c's copy lacks is refused with 503 there).
    await vi.waitFor(
      async () => expect({ ban: await copyHolds('c', 'relay-bans-a', oscar.uuid), key: await copyHolds('c', 'relay-keys', key.clientId) }).toEqual({ ban: true, key: true }),
      { timeout: APPLIED_MS, interval: 200 },
    );
    await within(30_000, "closing c's ingress", ingresses.get('c')!.close());
    await cutOff('c', async () => {
      // Each waits out 15 s of the meta group's silence (services/core/cut-off-start.ts), side by side.
      const started = await Promise.allSettled([within(60_000, "starting c's ingress cut off", service('ingress', 'c')), within(60_000, "starting c's gateway cut off", service('gateway', 'c'))]);
      const [ingress, gateway] = started.map((s) => (s.status === 'fulfilled' ? s.value : null));
      if (ingress) ingresses.set('c', ingress);
      if (!ingress || !gateway) {
        await gateway?.close();
        throw started.find((s) => s.status === 'rejected')?.reason;
      }
      try {
        expect(await within(10_000, "c's ingress answering a banned player", verdict('c', oscar))).toBe('403 banned');
        const stream = await openStream(gateway.url, { headers: clientHeaders(peggy, key, CHANNEL) });
        opened.push(stream);
        expect(stream.status).toBe(200);
        await stream.ready(30_000);
        expect(await within(10_000, "c's ingress answering a player", verdict('c', peggy))).toBe('200');
        // Ready there too: an orchestrator keeps it in rotation for the region's players.
        expect((await fetch(new URL('/readyz', gateway.url))).status).toBe(200);
        const first = await stream.nextPair({ timeoutMs: 30_000 });
        stream.close();
        // A resume there reads c's own log, though its leader reads are refused once the meta group is gone.
        const missed = await postTo(ingresses.get('c')!.url, { type: 'chat', message: 'while away' }, clientHeaders(peggy, key, CHANNEL));
        expect(missed.status).toBe(200);
        const resumed = await openStream(gateway.url, { headers: { ...clientHeaders(peggy, key, CHANNEL), 'last-event-id': first.rawId! } });
        opened.push(resumed);
        expect(resumed.status).toBe(200);
        expect((await resumed.nextPair({ timeoutMs: 60_000 })).data['message']).toBe('while away');
      } finally {
        await within(30_000, "closing c's gateway", gateway.close());
      }
    });
    await sc.connected(60_000);
    await everywhere(REGIONS, peggy, '200');
  }, 240_000);

  it("an operator's ban, written in the home region, refuses the account in every region and closes its stream in another; its lift lets it back everywhere", async () => {
    const eve = newPlayer(profile);
    await everywhere(REGIONS, eve, '200');
    const stream = await openStream(gatewayB.url, { headers: clientHeaders(eve, key, CHANNEL) });
    opened.push(stream);
    await stream.ready(30_000);
    const added = await runCli(['bans', 'add', eve.uuid, '--reason', 'spam'], { ...MESH, ...as('cli', 'c') });
    expect(added.code, added.stderr).toBe(0);
    expect((await stream.closeEvent(APPLIED_MS)).reason).toBe('banned');
    await everywhere(REGIONS, eve, '403 banned');
    const lifted = await runCli(['bans', 'remove', eve.uuid], { ...MESH, ...as('cli', 'b') });
    expect(lifted.code, lifted.stderr).toBe(0);
    await everywhere(REGIONS, eve, '200');
  }, 120_000);

  it('bans a cracked client found in a region cut off there at once, everywhere once the link returns, and the operator lifts it from another region', async () => {
    const mallory = newPlayer(profile);
    await everywhere(REGIONS, mallory, '200');
    const wrongSecret = { ...key, clientSecret: randomBytes(32).toString('base64url') };
    await cutOff('c', async () => {
      // Written to c's own bans bucket: a 403 ban, not a 503 waiting for the home region.
      expect(await verdict('c', mallory, wrongSecret)).toBe('403 banned');
      expect(await verdict('c', mallory)).toBe('403 banned');
      // A lift from another region cannot reach c's ban: it says so, rather than "not banned".
      const early = await runCli(['bans', 'remove', mallory.uuid], { ...MESH, ...as('cli', 'a') });
      expect(early.code).toBe(1);
      expect(early.stderr).toMatch(/relay-bans-c \(.*\) could not be read or lifted/);
    });
    await sc.connected(60_000);
    await everywhere(REGIONS, mallory, '403 banned');
    const listed = await runCliJson<Array<{ uuid: string; by: string }>>(['bans', 'list', '--json'], { ...MESH, ...as('cli', 'a') });
    expect(listed.filter((b) => b.uuid === mallory.uuid).map((b) => b.by)).toEqual(['relay']);
    const lifted = await runCli(['bans', 'remove', mallory.uuid], { ...MESH, ...as('cli', 'a') });
    expect(lifted.code, lifted.stderr).toBe(0);
    await everywhere(REGIONS, mallory, '200');
  }, 180_000);

  it('keeps a region cut off enforcing what it last knew, a ban lifted and a key revoked meanwhile, and applies both once its link returns', async () => {
    const trudy = newPlayer(profile);
    const bridge = newPlayer(profile);
    const second = await createKey();
    await runCli(['bans', 'add', trudy.uuid], { ...MESH, ...as('cli', 'a') });
    await everywhere(REGIONS, trudy, '403 banned');
    await everywhere(REGIONS, bridge, '200', second);
    await cutOff('c', async () => {
      // Lifted in the home region; c's bucket cannot be read to know whether c banned trudy too.
      const lifted = await runCli(['bans', 'remove', trudy.uuid], { ...MESH, ...as('cli', 'a') });
      expect(lifted.code, lifted.stderr).toBe(1);
      expect(lifted.stderr).toMatch(/Lifted the ban on .* where it could be; the bans in relay-bans-c \(.*\) could not be read or lifted/);
      const revoked = await runCli(['keys', 'revoke', second.clientId], { ...MESH, ...as('cli', 'a') });
      expect(revoked.code, revoked.stderr).toBe(0);
      await everywhere(['a', 'b'], trudy, '200');
      await everywhere(['a', 'b'], bridge, '403 key_revoked', second);
      // What c last knew stands while it cannot hear: the ban, and the key.
      expect(await verdict('c', trudy)).toBe('403 banned');
      expect(await verdict('c', bridge, second)).toBe('200');
    });
    await sc.connected(60_000);
    await everywhere(['c'], trudy, '200');
    await everywhere(['c'], bridge, '403 key_revoked', second);
  }, 180_000);
});
