// The operator's tools in a mesh of three regions on loopback (docs/REGIONS.md, "The operator's
// tools"), every process with its region's credentials: the admin service, run in a region that is
// not the home region, and `relay replay`, `tail`, `stats` and `trace` read every region's log as the
// home region holds it; the console lists every region's processes and streams and counts every
// region's payloads; a ban through the admin API refuses the account in every region, and its lift
// frees it; and the admin service starts while a region is cut off, showing the others.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { AdminServer } from '../../services/admin/admin-server.js';
import type { CreatedKey } from '../../services/core/keys.js';
import { ALL_SCOPES } from '../../services/core/scopes.js';
import type { RelayServer } from '../../services/server.js';
import type { SuperCluster } from '../../tools/nats-super-cluster.js';
import { runCli, runCliJson, runCliJsonLines } from '../helpers/cli.js';
import { clientHeaders, newPlayer, postTo, type Player } from '../helpers/clients.js';
import { startProfileApi, type FakeProfileApi } from '../helpers/profile-api.js';
import { regionAdmin, regionService, startRolesMesh, type Role, type RolesMesh } from '../helpers/region-roles.js';
import { openStream, type SseStream } from '../helpers/sse-client.js';

const REGIONS = ['a', 'b', 'c'] as const;
type RegionName = (typeof REGIONS)[number];
const MESH = { REGIONS: REGIONS.join(','), REGION_HOME: 'a' };
const CHANNEL = 'ops.example.net';
/** A generous bound for what crosses regions with the links up (copies catch up within a link delay). */
const CROSSED_MS = 30_000;

const as = (role: Role, region: RegionName): Record<string, string> => roles.as(role, region);
const scopes = ALL_SCOPES.filter((s) => s !== 'irc.connection.unauthenticated').join(',');
const TOKEN = randomBytes(24).toString('hex');

let dir: string;
let roles: RolesMesh;
let sc: SuperCluster;
let profile: FakeProfileApi;
let key: CreatedKey;
let admin: AdminServer;
const services = new Map<string, RelayServer>();
const opened: SseStream[] = [];

const service = (kind: 'ingress' | 'gateway', region: RegionName): Promise<RelayServer> => regionService(roles, MESH, kind, region, { PROFILE_API_URL: profile.url });
/** The admin service in a region that is not the home region: it reads and writes as a, the home. */
const adminIn = (region: RegionName): Promise<AdminServer> => regionAdmin(roles, MESH, region, TOKEN);

async function api<T>(path: string, init: { method?: string; body?: unknown } = {}, server: AdminServer = admin): Promise<{ status: number; body: T }> {
  const res = await fetch(server.url + path, {
    method: init.method ?? 'GET',
    headers: { authorization: `Bearer ${TOKEN}`, ...(init.body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  const text = await res.text();
  return { status: res.status, body: (text === '' ? null : JSON.parse(text)) as T };
}

const ingress = (r: RegionName): RelayServer => services.get(`ingress-${r}`)!;
async function post(region: RegionName, player: Player, message: string, channel = CHANNEL): Promise<void> {
  const res = await postTo(ingress(region).url, { type: 'chat', message }, clientHeaders(player, key, channel));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'relay-regions-operators-'));
  roles = await startRolesMesh(dir, REGIONS, MESH, 'b');
  sc = roles.sc;
  profile = await startProfileApi();
  for (const r of REGIONS) services.set(`ingress-${r}`, await service('ingress', r));
  for (const r of ['a', 'c'] as const) services.set(`gateway-${r}`, await service('gateway', r));
  admin = await adminIn('b');
  key = await runCliJson<CreatedKey>(['keys', 'create', '--scopes', scopes, '--json'], { ...MESH, ...as('cli', 'c') });
}, 240_000);

afterAll(async () => {
  for (const s of opened) s.close();
  await admin?.close();
  for (const s of services.values()) await s.close();
  await sc?.stop();
  await profile?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Entry {
  region?: string;
  seq: number;
  time: string;
  data: { type: string; message?: string };
}
interface Page {
  entries: Entry[];
  more: boolean;
  nextSeq: number | null;
  nextFrom: string | null;
}

describe("the operator's tools in a mesh of regions", () => {
  let player: Player;
  // Posted one after another, going round the regions: the order every reader must give them in.
  const sent = Array.from({ length: 9 }, (_, i) => ({ region: REGIONS[i % 3]!, message: `m${i}` }));

  beforeAll(async () => {
    player = newPlayer(profile);
    for (const s of sent) await post(s.region, player, s.message);
  }, 60_000);

  it("replays a channel through the admin API from every region's log, oldest first, each entry naming its region, and pages through it with nextFrom, none lost or repeated", async () => {
    const whole = await vi.waitFor(
      async () => {
        const page = await api<Page>(`/api/channels/${CHANNEL}/replay`);
        expect(page.status).toBe(200);
        expect(page.body.entries.map((e) => e.data.message)).toEqual(sent.map((s) => s.message));
        return page.body;
      },
      { timeout: CROSSED_MS, interval: 250 },
    );
    expect(whole.entries.map((e) => e.region)).toEqual(sent.map((s) => s.region));
    expect(whole).toMatchObject({ more: false, nextSeq: null, nextFrom: null });
    const paged: Entry[] = [];
    let from: string | null = null;
    do {
      const page: { status: number; body: Page } = await api<Page>(`/api/channels/${CHANNEL}/replay?limit=4${from === null ? '' : `&fromSeq=${encodeURIComponent(from)}`}`);
      expect(page.status).toBe(200);
      // With regions one number cannot say where the next page starts.
      expect(page.body.nextSeq).toBeNull();
      paged.push(...page.body.entries);
      from = page.body.nextFrom;
      expect(page.body.more).toBe(from !== null);
    } while (from !== null);
    expect(paged).toEqual(whole.entries);
    // A bare sequence names no region's log.
    const bare = await api<{ error: string; message: string }>(`/api/channels/${CHANNEL}/replay?fromSeq=3`);
    expect(bare).toEqual({ status: 400, body: { error: 'bad_request', message: expect.stringMatching(/fromSeq names a sequence in each region's log/) } });
  });

  it("tails a channel live through the admin API, hearing what is posted in every region, each entry's id naming its region", async () => {
    const tail = await openStream(admin.url, { path: `/api/channels/${CHANNEL}/tail`, headers: { authorization: `Bearer ${TOKEN}` } });
    opened.push(tail);
    expect(tail.status).toBe(200);
    await tail.waitForComment(/^tail of /);
    await post('c', player, 'live from c');
    await post('a', player, 'live from a');
    const heard = new Map<string, string>();
    while (heard.size < 2) {
      const e = await tail.nextEvent(CROSSED_MS);
      const entry = JSON.parse(e.data) as Entry;
      expect(e.id).toBe(`${entry.region}:${entry.seq}`);
      heard.set(entry.data.message!, entry.region!);
    }
    expect(Object.fromEntries(heard)).toEqual({ 'live from c': 'c', 'live from a': 'a' });
    tail.close();
  });

  it("lists every region's processes and streams, and counts every region's payloads", async () => {
    const watchers = [newPlayer(profile), newPlayer(profile)];
    for (const [w, r] of [[watchers[0]!, 'a'], [watchers[1]!, 'c']] as const) {
      const s = await openStream(services.get(`gateway-${r}`)!.url, { headers: clientHeaders(w, key, CHANNEL) });
      opened.push(s);
      expect(s.status).toBe(200);
      await s.ready(30_000);
    }
    await vi.waitFor(
      async () => {
        const streams = await api<Array<{ uuid: string; region?: string }>>(`/api/channels/${CHANNEL}/streams`);
        expect(streams.body.map((s) => [s.uuid, s.region]).sort()).toEqual([[watchers[0]!.uuid, 'a'], [watchers[1]!.uuid, 'c']].sort());
        const nodes = await api<Array<{ node: string; region?: string; alive: boolean }>>('/api/nodes');
        expect(nodes.body.filter((n) => n.alive).map((n) => `${n.node}@${n.region}`).sort()).toEqual(['gateway-a@a', 'gateway-c@c', 'ingress-a@a', 'ingress-b@b', 'ingress-c@c']);
      },
      { timeout: CROSSED_MS, interval: 500 },
    );
    // Counted as they are stored: what this test posts now, in every region.
    for (const r of REGIONS) await post(r, player, `counted in ${r}`);
    await vi.waitFor(
      async () => {
        const channels = await api<Array<{ channel: string; framesInLastMinute: number }>>('/api/channels');
        expect(channels.body.find((c) => c.channel === CHANNEL)?.framesInLastMinute ?? 0).toBeGreaterThanOrEqual(3);
      },
      { timeout: CROSSED_MS, interval: 250 },
    );
  });

  it('bans an account through the admin API in every region, and lifts it everywhere', async () => {
    const mallory = newPlayer(profile);
    const verdicts = async (): Promise<Record<string, number>> =>
      Object.fromEntries(await Promise.all(REGIONS.map(async (r) => [r, (await postTo(ingress(r).url, { type: 'chat', message: 'hi' }, clientHeaders(mallory, key, CHANNEL))).status] as const)));
    expect((await api('/api/bans', { method: 'POST', body: { uuid: mallory.uuid, reason: 'spam' } })).status).toBe(201);
    await vi.waitFor(async () => expect(await verdicts()).toEqual({ a: 403, b: 403, c: 403 }), { timeout: CROSSED_MS, interval: 250 });
    expect((await api(`/api/bans/${mallory.uuid}`, { method: 'DELETE' })).status).toBe(204);
    await vi.waitFor(async () => expect(await verdicts()).toEqual({ a: 200, b: 200, c: 200 }), { timeout: CROSSED_MS, interval: 250 });
    const audit = await api<Array<{ action: string; target: string }>>('/api/audit');
    expect(audit.body.filter((r) => r.target === mallory.uuid).map((r) => r.action).sort()).toEqual(['ban.add', 'ban.remove']);
  });

  it('relay replay, tail, stats and trace read every region, run against any region', async () => {
    const cli = { ...MESH, ...as('cli', 'c') };
    const replayed = await runCliJsonLines<Entry>(['replay', CHANNEL, '--json', '--limit', '9'], cli);
    expect(replayed.map((e) => [e.region, e.data.message])).toEqual(sent.map((s) => [s.region, s.message]));
    // From where the fourth entry is, per region: the fourth and after, in order.
    const fourth = replayed[3]!;
    const fromSeq = REGIONS.map((r) => `${r}:${replayed.find((e, i) => i >= 3 && e.region === r)!.seq}`).join('.');
    const rest = await runCliJsonLines<Entry>(['replay', CHANNEL, '--json', '--limit', '6', '--from-seq', fromSeq], cli);
    expect(rest.map((e) => e.data.message)).toEqual(sent.slice(3).map((s) => s.message));
    const stats = await runCliJson<{ regions: Array<{ region: string; stream: string; channels: Array<{ channel: string; messages: number }> }> }>(['stats', '--json'], cli);
    expect(stats.regions.map((s) => [s.region, s.stream])).toEqual([['a', 'RELAY_REGION_A'], ['b', 'RELAY_REGION_B_AT_A'], ['c', 'RELAY_REGION_C_AT_A']]);
    for (const s of stats.regions) expect(s.channels.find((c) => c.channel === CHANNEL)?.messages ?? 0).toBeGreaterThanOrEqual(3);
    const traced = await runCliJson<{ region: string; seq: number; channel: string }>(['trace', `${fourth.region}:${fourth.seq}`, '--json'], cli);
    expect(traced).toMatchObject({ region: fourth.region, seq: fourth.seq, channel: CHANNEL });
    // Followed live from now, posted in another region than the command's.
    let listening!: () => void;
    const heard = new Promise<void>((resolve) => (listening = resolve));
    const following = runCli(['tail', '--limit', '1'], cli, 60_000, (soFar) => soFar.includes('Listening') && listening());
    await heard;
    await post('a', player, 'followed live');
    const tailed = await following;
    expect(tailed.code, tailed.stderr).toBe(0);
    expect(tailed.stdout).toMatch(/^\S+ {2}#a:\d+ {2}ops\.example\.net .*followed live\n$/);
    const unknown = await runCli(['trace', 'mars:1'], cli);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/the region one of a, b, c/);
  });

  it('starts the admin service while a region is cut off, showing the others, a lift saying it cannot reach that region, and that region once its link returns', async () => {
    const oscar = newPlayer(profile);
    expect((await api('/api/bans', { method: 'POST', body: { uuid: oscar.uuid, reason: 'spam' } })).status).toBe(201);
    sc.isolate('c');
    let second: AdminServer | undefined;
    try {
      second = await adminIn('b');
      const nodes = await api<Array<{ node: string; alive: boolean }>>('/api/nodes', {}, second);
      expect(nodes.status).toBe(200);
      expect(nodes.body.map((n) => n.node)).not.toContain('ingress-c');
      expect(nodes.body.map((n) => n.node)).toContain('ingress-b');
      // Lifted in the home region's bucket; c's could not be read, so whatever c banned stands.
      const lift = await api<{ error: string; message: string }>(`/api/bans/${oscar.uuid}`, { method: 'DELETE' }, second);
      expect(lift).toEqual({ status: 503, body: { error: 'unavailable', message: expect.stringMatching(/^Its bans were lifted where they could be read, but the bans of relay-bans-c .*could not be read/) } });
    } finally {
      sc.heal();
    }
    try {
      await vi.waitFor(
        async () => {
          const nodes = await api<Array<{ node: string; alive: boolean }>>('/api/nodes', {}, second);
          expect(nodes.body.filter((n) => n.alive).map((n) => n.node)).toContain('ingress-c');
        },
        { timeout: 90_000, interval: 1000 },
      );
    } finally {
      await second?.close();
    }
  }, 180_000);
});
