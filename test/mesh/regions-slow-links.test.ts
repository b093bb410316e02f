// A mesh of three regions on loopback whose every link is slowed (100 ms each way, as between
// continents), every process with its region's credentials: everyone still hears everyone, each
// sender in order; a client resumed in another region misses nothing and repeats nothing; a second
// open of an account's channel in another region evicts the first; an operator's ban refuses the
// account in every region. How long each takes is the bench's (`npm run bench -- regions`), not this test's.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { CreatedKey } from '../../services/core/keys.js';
import { ALL_SCOPES } from '../../services/core/scopes.js';
import type { RelayServer } from '../../services/server.js';
import { runCli, runCliJson } from '../helpers/cli.js';
import { clientHeaders, newPlayer, postTo, type Player } from '../helpers/clients.js';
import { startProfileApi, type FakeProfileApi } from '../helpers/profile-api.js';
import { regionService, startRolesMesh, type RolesMesh } from '../helpers/region-roles.js';
import { openStream, type SseStream } from '../helpers/sse-client.js';

const REGIONS = ['a', 'b', 'c'] as const;
type RegionName = (typeof REGIONS)[number];
const MESH = { REGIONS: REGIONS.join(','), REGION_HOME: 'a' };
const CHANNEL = 'slow.example.net';
const ONE_WAY_MS = 100;
/** A generous bound on what crosses a slowed link (a few round trips, a copy's catch-up). */
const CROSSED_MS = 30_000;

let dir: string;
let roles: RolesMesh;
let profile: FakeProfileApi;
let key: CreatedKey;
const services = new Map<string, RelayServer>();
const opened: SseStream[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'relay-regions-slow-'));
  roles = await startRolesMesh(dir, REGIONS, MESH, 'a');
  profile = await startProfileApi();
  for (const r of REGIONS) {
    for (const kind of ['ingress', 'gateway'] as const) services.set(`${kind}-${r}`, await regionService(roles, MESH, kind, r, { PROFILE_API_URL: profile.url }));
  }
  key = await runCliJson<CreatedKey>(['keys', 'create', '--scopes', ALL_SCOPES.filter((s) => s !== 'irc.connection.unauthenticated').join(','), '--json'], { ...MESH, ...roles.as('cli', 'a') });
  for (const [i, x] of REGIONS.entries()) for (const y of REGIONS.slice(i + 1)) roles.sc.setLink(x, y, { kind: 'slow', delayMs: ONE_WAY_MS });
}, 240_000);

afterAll(async () => {
  for (const s of opened) s.close();
  for (const s of services.values()) await s.close();
  await roles?.sc.stop();
  await profile?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function post(region: RegionName, player: Player, message: string): Promise<number> {
  return (await postTo(services.get(`ingress-${region}`)!.url, { type: 'chat', message }, clientHeaders(player, key, CHANNEL))).status;
}

async function listen(region: RegionName, player: Player, lastEventId?: string): Promise<SseStream> {
  const s = await openStream(services.get(`gateway-${region}`)!.url, { headers: { ...clientHeaders(player, key, CHANNEL), ...(lastEventId === undefined ? {} : { 'last-event-id': lastEventId }) } });
  opened.push(s);
  expect(s.status).toBe(200);
  await s.ready(CROSSED_MS);
  return s;
}

/** The messages of the next `count` frames, and the last frame's id. */
async function frames(s: SseStream, count: number): Promise<{ messages: string[]; lastId: string }> {
  const messages: string[] = [];
  let lastId = '';
  while (messages.length < count) {
    const p = await s.nextPair({ timeoutMs: CROSSED_MS });
    messages.push(String(p.data['message']));
    lastId = p.rawId ?? '';
  }
  return { messages, lastId };
}

describe('a mesh of three regions whose links are slowed', () => {
  it('delivers what each region posts to every region, each sender in order, and resumes a client elsewhere with nothing missed or repeated', async () => {
    const [ann, bo] = [newPlayer(profile), newPlayer(profile)];
    const inA = await listen('a', ann);
    const inC = await listen('c', bo);
    const sent = REGIONS.flatMap((r) => [1, 2].map((n) => ({ region: r, message: `slow ${r}${n}` })));
    for (const s of sent) expect(await post(s.region, newPlayer(profile), s.message)).toBe(200);
    let lastId = '';
    for (const l of [inA, inC]) {
      const got = await frames(l, sent.length);
      expect([...got.messages].sort()).toEqual(sent.map((s) => s.message).sort());
      for (const r of REGIONS) expect(got.messages.filter((m) => m.startsWith(`slow ${r}`))).toEqual([`slow ${r}1`, `slow ${r}2`]);
      if (l === inA) lastId = got.lastId;
    }
    // Ann leaves a's gateway; what is posted meanwhile she gets in b, once. b's gateway has no group
    // for the channel yet: the one her resume makes starts from b's copies, which may lag their
    // origins (delivery/copy-lag.ts; without it, a's frame never came).
    inA.close();
    for (const r of REGIONS) expect(await post(r, newPlayer(profile), `while away ${r}`)).toBe(200);
    const resumed = await listen('b', ann, lastId);
    const { messages } = await frames(resumed, 3);
    expect([...messages].sort()).toEqual(REGIONS.map((r) => `while away ${r}`));
    expect(await post('a', newPlayer(profile), 'after')).toBe(200);
    expect((await frames(resumed, 1)).messages).toEqual(['after']);
  }, 120_000);

  it('evicts a stream when its account opens the channel again in another region', async () => {
    const erin = newPlayer(profile);
    const first = await listen('a', erin);
    const second = await listen('c', erin);
    await first.waitForComment(/^evicted: this account opened another stream on this channel/, CROSSED_MS);
    expect(second.comments.some((c) => c.startsWith('evicted'))).toBe(false);
  }, 60_000);

  it("applies an operator's ban in every region", async () => {
    const mallory = newPlayer(profile);
    const ban = await runCli(['bans', 'add', mallory.uuid, '--reason', 'spam'], { ...MESH, ...roles.as('cli', 'a') });
    expect(ban.code, ban.stderr).toBe(0);
    await vi.waitFor(async () => expect(Object.fromEntries(await Promise.all(REGIONS.map(async (r) => [r, await post(r, mallory, 'hi')] as const)))).toEqual({ a: 403, b: 403, c: 403 }), {
      timeout: CROSSED_MS,
      interval: 250,
    });
  }, 60_000);
});
