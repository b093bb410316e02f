// A mesh of three regions on loopback (docs/REGIONS.md), each with its ingress and its gateway, every
// process with its region's role credentials (`relay nats-permissions --region`), as deployed: a
// payload posted in any region reaches the streams of its channel in every region, each sender's in
// the order posted; ids name a stream's position in every region's log, so a client resumes in
// another region missing nothing and repeating nothing; and a region cut off keeps delivering its
// own players' payloads and opening streams, every stream getting what the others stored meanwhile
// once the link is back, though nothing is posted after it; one stream per (account, channel)
// holds across regions, and a duplicate opened while cut is resolved once the link returns.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseEventId } from '../../schemas/event-id.js';
import type { CreatedKey } from '../../services/core/keys.js';
import { ALL_SCOPES } from '../../services/core/scopes.js';
import { startRelayServer, type RelayServer } from '../../services/server.js';
import type { SuperCluster } from '../../tools/nats-super-cluster.js';
import { runCli, runCliJson } from '../helpers/cli.js';
import { clientHeaders, newPlayer, postTo, type Player } from '../helpers/clients.js';
import { startProfileApi, type FakeProfileApi } from '../helpers/profile-api.js';
import { startRolesMesh, type Role, type RolesMesh } from '../helpers/region-roles.js';
import { openStream, type Pair, type SseStream } from '../helpers/sse-client.js';
import { within } from '../helpers/within.js';

const REGIONS = ['a', 'b', 'c'] as const;
type RegionName = (typeof REGIONS)[number];
const MESH = { REGIONS: REGIONS.join(','), REGION_HOME: 'a' };
const CHANNEL = 'play.example.net';

const as = (role: Role, region: RegionName): Record<string, string> => roles.as(role, region);

let dir: string;
let roles: RolesMesh;
let sc: SuperCluster;
let profile: FakeProfileApi;
let key: CreatedKey;
const ingresses = new Map<RegionName, RelayServer>();
const gateways = new Map<RegionName, RelayServer>();
const opened: SseStream[] = [];

function service(kind: 'ingress' | 'gateway', region: RegionName): Promise<RelayServer> {
  return startRelayServer({
    service: kind,
    env: {
      ...MESH,
      REGION: region,
      ...as(kind, region),
      PROFILE_API_URL: profile.url,
      PROFILE_API_RATE_PER_ADDRESS: '0',
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: process.env['DEBUG_LOG_LEVEL'] ?? 'silent',
      NODE_ENV: 'test',
      RELAY_NODE_ID: `${kind}-${region}`,
    },
  });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'relay-regions-delivery-'));
  roles = await startRolesMesh(dir, REGIONS, MESH, 'c');
  sc = roles.sc;
  profile = await startProfileApi();
  for (const r of REGIONS) {
    ingresses.set(r, await service('ingress', r));
    gateways.set(r, await service('gateway', r));
  }
  const scopes = ALL_SCOPES.filter((s) => s !== 'irc.connection.unauthenticated').join(',');
  key = await runCliJson<CreatedKey>(['keys', 'create', '--scopes', scopes, '--json'], { ...MESH, ...as('cli', 'a') });
}, 240_000);

afterAll(async () => {
  for (const s of opened) s.close();
  for (const s of [...gateways.values(), ...ingresses.values()]) await s.close();
  await sc?.stop();
  await profile?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function post(region: RegionName, player: Player, message: string): Promise<void> {
  const res = await within(30_000, `a POST of "${message}" in region ${region}`, postTo(ingresses.get(region)!.url, { type: 'chat', message }, clientHeaders(player, key, CHANNEL)));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

async function listen(region: RegionName, player: Player, lastEventId?: string): Promise<SseStream> {
  const headers = { ...clientHeaders(player, key, CHANNEL), ...(lastEventId !== undefined ? { 'last-event-id': lastEventId } : {}) };
  const s = await within(30_000, `an open in region ${region}${lastEventId === undefined ? '' : ` from ${lastEventId}`}`, openStream(gateways.get(region)!.url, { headers }));
  opened.push(s);
  expect(s.status).toBe(200);
  await s.ready(30_000);
  return s;
}

/** Pairs until every message in `expected` has arrived (failing on a repeat), in arrival order. */
async function receive(s: SseStream, expected: readonly string[], timeoutMs = 30_000): Promise<Pair[]> {
  const want = new Set(expected);
  const got: Pair[] = [];
  const deadline = Date.now() + timeoutMs;
  while (want.size > 0) {
    const left = deadline - Date.now();
    if (left <= 0) throw new Error(`still waiting for ${[...want].join(', ')} after ${got.map((g) => `${String(g.data['message'])} (${g.rawId ?? ''})`).join(', ')}`);
    const p = await s.nextPair({ timeoutMs: left }).catch((e: unknown) => {
      throw new Error(`still waiting for ${[...want].join(', ')} after ${got.map((g) => `${String(g.data['message'])} (${g.rawId ?? ''})`).join(', ')}`, { cause: e });
    });
    const message = String(p.data['message']);
    expect(got.map((g) => g.data['message']), `${message} twice`).not.toContain(message);
    got.push(p);
    want.delete(message);
  }
  return got;
}

const messages = (pairs: Pair[], prefix: string): string[] => pairs.map((p) => String(p.data['message'])).filter((m) => m.startsWith(prefix));

describe('a mesh of three regions', () => {
  it('delivers a payload posted in any region to every region, each sender in order, with ids naming every region', async () => {
    const listeners = await Promise.all(REGIONS.map((r) => listen(r, newPlayer(profile))));
    const senders = REGIONS.map((r) => ({ region: r, player: newPlayer(profile) }));
    const expected: string[] = [];
    for (let i = 1; i <= 3; i++) {
      for (const s of senders) {
        await post(s.region, s.player, `everyone ${s.region}${i}`);
        expected.push(`everyone ${s.region}${i}`);
      }
    }
    for (const [i, l] of listeners.entries()) {
      const got = await receive(l, expected);
      for (const r of REGIONS) expect(messages(got, `everyone ${r}`), `${REGIONS[i]} hears ${r} in order`).toEqual([1, 2, 3].map((n) => `everyone ${r}${n}`));
      // Each id is a position in every region's log that only moves forward.
      let previous = new Map<string, number>();
      for (const p of got) {
        const position = parseEventId(p.rawId ?? '');
        expect(position?.kind, p.rawId ?? 'no id').toBe('regions');
        const seqs = position!.kind === 'regions' ? position!.seqs : new Map<string, number>();
        for (const [region, seq] of previous) expect(seqs.get(region) ?? 0).toBeGreaterThanOrEqual(seq);
        previous = new Map(seqs);
      }
      expect([...previous.keys()].sort()).toEqual([...REGIONS]);
    }
  }, 120_000);

  it('resumes a client in another region from its id: what was posted meanwhile in every region, nothing twice', async () => {
    const listener = newPlayer(profile);
    const first = await listen('a', listener);
    const senders = REGIONS.map((r) => ({ region: r, player: newPlayer(profile) }));
    for (const s of senders) await post(s.region, s.player, `before ${s.region}`);
    const heard = await receive(first, senders.map((s) => `before ${s.region}`));
    const lastId = heard[heard.length - 1]!.rawId!;
    first.close();
    const missed: string[] = [];
    for (let i = 1; i <= 2; i++) {
      for (const s of senders) {
        await post(s.region, s.player, `meanwhile ${s.region}${i}`);
        missed.push(`meanwhile ${s.region}${i}`);
      }
    }
    const resumed = await listen('c', listener, lastId);
    expect((await resumed.ready()).resumedAfterId).toBe(lastId);
    const got = await receive(resumed, missed);
    expect(messages(got, 'before')).toEqual([]);
    for (const r of REGIONS) expect(messages(got, `meanwhile ${r}`)).toEqual([`meanwhile ${r}1`, `meanwhile ${r}2`]);
  }, 120_000);

  it.each([
    ['a sequence of the log before regions', '1042'],
    ['not an id', 'a:1.a:2'],
    ['a position in a region this mesh does not have', 'a:3.zz:1'],
    // Sixteen regions of another mesh: with one of this mesh's, no id could name the stream's position.
    ['sixteen regions of another mesh', Array.from({ length: 16 }, (_, i) => `z${String.fromCharCode(97 + i)}:1`).join('.')],
  ])('refuses a Last-Event-ID that is %s (%s) with 400 invalid_last_event_id and a sentence', async (_what, id) => {
    const s = await openStream(gateways.get('b')!.url, { headers: { ...clientHeaders(newPlayer(profile), key, CHANNEL), 'last-event-id': id } });
    opened.push(s);
    const r = await s.refusal();
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('invalid_last_event_id');
    expect(r.body.message).toMatch(/^Last-Event-ID .+\.$/);
  });

  it('clamps an id past what a region holds to its newest, so that region’s later payloads still reach the client', async () => {
    const listener = newPlayer(profile);
    const first = await listen('b', listener);
    const senders = REGIONS.map((r) => ({ region: r, player: newPlayer(profile) }));
    for (const s of senders) await post(s.region, s.player, `clamp before ${s.region}`);
    const heard = await receive(first, senders.map((s) => `clamp before ${s.region}`));
    first.close();
    // Region a's part of the id made up far past its log (an id of a log since recreated).
    const position = parseEventId(heard[heard.length - 1]!.rawId!);
    const seqs = new Map(position?.kind === 'regions' ? position.seqs : []);
    seqs.set('a', 999_999_999);
    const madeUp = REGIONS.map((r) => `${r}:${seqs.get(r)!}`).join('.');
    // With a's link to c slowed, a's next frame is stored in a before c's gateway checks the id
    // against a's log, and reaches c's group only later: the frame posted after the open must still
    // come (a CI run's stream, clamped to a's newest, never got it).
    sc.setLink('a', 'c', { kind: 'slow', delayMs: 150 });
    try {
      const resumed = await listen('c', listener, madeUp);
      for (const s of senders) await post(s.region, s.player, `clamp after ${s.region}`);
      const got = await receive(resumed, senders.map((s) => `clamp after ${s.region}`));
      expect(messages(got, 'clamp before')).toEqual([]);
    } finally {
      sc.heal();
    }
  }, 120_000);

  it('evicts a stream when its account opens the channel again in another region, the newer staying', async () => {
    const erin = newPlayer(profile);
    const first = await listen('a', erin);
    const second = await listen('c', erin);
    await first.waitForComment(/^evicted: this account opened another stream on this channel/, 15_000);
    await post('b', newPlayer(profile), 'after the move');
    expect(messages(await receive(second, ['after the move']), 'after')).toEqual(['after the move']);
    expect(second.comments.some((c) => c.startsWith('evicted'))).toBe(false);
    // The operator sees the stream where it lives, reading every region's claims.
    const listed = await runCliJson<Array<{ uuid: string | null; node: string; region: string }>>(['streams', '--json', '--channel', CHANNEL], { ...MESH, ...as('cli', 'b') });
    expect(listed.filter((c) => c.uuid === erin.uuid).map(({ node, region }) => ({ node, region }))).toContainEqual({ node: 'gateway-c', region: 'c' });
  }, 60_000);

  it('keeps a region cut off opening streams and delivering its own players; once the link returns every stream has what was stored meanwhile, with nothing posted after, and of an account opened on both sides the newer stream stays', async () => {
    const inB = await listen('b', newPlayer(profile));
    const inC = await listen('c', newPlayer(profile));
    const bob = newPlayer(profile);
    const carol = newPlayer(profile);
    const dana = newPlayer(profile);
    const danaInA = await listen('a', dana);
    // Both senders have posted once, so their ingresses know the key and the profiles.
    await post('b', bob, 'cut b0');
    await post('c', carol, 'cut c0');
    await receive(inB, ['cut b0', 'cut c0']);
    await receive(inC, ['cut b0', 'cut c0']);
    sc.isolate('b');
    let danaInB: SseStream;
    try {
      // What opening a stream needs lives in the region: a newcomer in b is served while it is cut off,
      // and so is Dana, whose older stream in a cannot be told yet.
      const newcomer = await listen('b', newPlayer(profile));
      danaInB = await listen('b', dana);
      await post('b', bob, 'cut b1');
      await post('c', carol, 'cut c1');
      // Region b hears its own player while cut off; c's payload cannot reach it yet.
      expect(messages(await receive(inB, ['cut b1']), 'cut')).toEqual(['cut b1']);
      expect(messages(await receive(newcomer, ['cut b1']), 'cut')).toEqual(['cut b1']);
      expect(messages(await receive(inC, ['cut c1']), 'cut')).toEqual(['cut c1']);
      // The operator outside b still sees the regions it reaches, and is told which one it does not.
      // Right after the cut JetStream's meta group may still be moving its leader out of b, and then no
      // region can be read: the operator runs the command again, and so does this test.
      await vi.waitFor(
        async () => {
          const listed = await runCli(['streams', '--json', '--channel', CHANNEL], { ...MESH, ...as('cli', 'c') });
          expect(listed.code).toBe(1);
          expect(listed.stderr).toMatch(/the streams of region b could not be read/);
          const shown = JSON.parse(listed.stdout) as Array<{ uuid: string | null; region: string }>;
          expect(shown.filter((c) => c.uuid === dana.uuid).map((c) => c.region)).toEqual(['a']);
        },
        { timeout: 60_000, interval: 500 },
      );
    } finally {
      sc.heal();
    }
    await sc.connected(60_000);
    // Nothing is posted after the heal: each side reads what the other stored from its copy.
    expect(messages(await receive(inB, ['cut c1'], 60_000), 'cut')).toEqual(['cut c1']);
    expect(messages(await receive(inC, ['cut b1'], 60_000), 'cut')).toEqual(['cut b1']);
    // The duplicate made while cut is resolved once the regions hear each other: the newer, in b, stays.
    await danaInA.waitForComment(/^evicted/, 60_000);
    expect(danaInB.comments.some((c) => c.startsWith('evicted'))).toBe(false);
  }, 180_000);

  // Last: it takes region c down and brings it back.
  it('keeps the other regions serving when one region is lost whole, resumes its clients elsewhere, and takes it back without a hand', async () => {
    const inA = await listen('a', newPlayer(profile));
    const inB = await listen('b', newPlayer(profile));
    const carolsListener = newPlayer(profile);
    const inC = await listen('c', carolsListener);
    const [alice, bob, carol] = [newPlayer(profile), newPlayer(profile), newPlayer(profile)];
    await post('a', alice, 'lost a0');
    await post('c', carol, 'lost c0');
    const heardInC = await receive(inC, ['lost a0', 'lost c0']);
    await receive(inA, ['lost a0', 'lost c0']);
    await receive(inB, ['lost a0', 'lost c0']);
    // Region c's servers and relays die together.
    await sc.kill('c');
    for (const services of [gateways, ingresses]) {
      await services.get('c')!.close();
      services.delete('c');
    }
    // The others store and deliver with nothing refused.
    await post('a', alice, 'lost a1');
    await post('b', bob, 'lost b1');
    await receive(inA, ['lost a1', 'lost b1']);
    await receive(inB, ['lost a1', 'lost b1']);
    // c's listener comes back in b with its last id: what it missed, once.
    const moved = await listen('b', carolsListener, heardInC[heardInC.length - 1]!.rawId!);
    expect(messages(await receive(moved, ['lost a1', 'lost b1']), 'lost')).toEqual(['lost a1', 'lost b1']);
    // c returns: its servers rejoin by themselves, its relays start again, and everyone hears it.
    await sc.restart('c');
    await sc.connected(60_000);
    ingresses.set('c', await service('ingress', 'c'));
    gateways.set('c', await service('gateway', 'c'));
    const backInC = await listen('c', newPlayer(profile));
    await post('c', carol, 'lost c2');
    await post('a', alice, 'lost a2');
    for (const s of [inA, inB, moved, backInC]) await receive(s, ['lost c2', 'lost a2'], 60_000);
  }, 240_000);
});
