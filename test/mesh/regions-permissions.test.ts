// Least privilege in a mesh with regions, proven by enumeration as test/nats-role-permissions.test.ts
// proves it for one log: each region's servers load what `relay nats-permissions --region R` prints,
// the operator's `relay setup` runs as the `cli` user, and then, in every region, each role tries every
// JetStream verb on every stream and bucket of every region, every plain subject and subscription,
// and exactly its table gets through. A region's ingress may write only to its own region's log and
// Idempotency-Key records: a stolen one cannot fill another region's log or forge its records.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../services/core/config.js';
import { natsLayout } from '../../services/core/nats-layout.js';
import { inboxPrefix } from '../../services/core/subjects.js';
import { heartbeatKey } from '../../services/core/node-heartbeat.js';
import { startSuperCluster, type SuperCluster } from '../../tools/nats-super-cluster.js';
import { runCli, setupComplaints } from '../helpers/cli.js';
import { allProbes, kvFeedNames, kvReadNames, kvWatchNames, permitted, streamReadNames, walkNames } from '../helpers/nats-probes.js';

const REGIONS = ['a', 'b', 'c'] as const;
const MESH = { REGIONS: REGIONS.join(','), REGION_HOME: 'a' };
const ROLES = ['ingress', 'gateway', 'admin', 'cli'] as const;
const UUID = '00000000-0000-4000-8000-000000000000';
const layout = natsLayout(loadConfig('all', MESH));
const up = (r: string): string => r.toUpperCase();

const EVERY_STREAM = [
  ...REGIONS.map((r) => `RELAY_REGION_${up(r)}`),
  ...REGIONS.flatMap((o) => REGIONS.filter((at) => at !== o).map((at) => `RELAY_REGION_${up(o)}_AT_${up(at)}`)),
  ...REGIONS.flatMap((r) => [`KV_relay-idempotency-${r}`, `RELAY_CLAIM_INDEX_${up(r)}`, `KV_relay-streams-${r}`, `KV_relay-nodes-${r}`]),
  'RELAY_AUDIT', 'KV_relay-keys',
  ...REGIONS.map((r) => `KV_relay-bans-${r}`),
  ...REGIONS.filter((at) => at !== 'a').map((at) => `RELAY_COPY_relay-keys_AT_${up(at)}`),
  ...REGIONS.flatMap((o) => REGIONS.filter((at) => at !== o).map((at) => `RELAY_COPY_relay-bans-${o}_AT_${up(at)}`)),
];

/** The stream of region `at` that holds `bucket` (kept in `origin`) or its copy, and a subject of it to probe. */
function localOf(bucket: string, origin: string, at: string): [string, string] {
  return origin === at ? [`KV_${bucket}`, `$KV.${bucket}.probe`] : [`RELAY_COPY_${bucket}_AT_${up(at)}`, 'probe'];
}

/**
 * The keys (kept in the home region, a) and every region's bans, each read by direct gets from the
 * stream of region `at` that holds it or its copy and heard on its change feed; a key unknown there
 * is read from the keys bucket's leader.
 */
function credentialReads(at: string): string[] {
  return [
    ...walkNames(...localOf('relay-keys', 'a', at)), 'pub $JS.API.STREAM.MSG.GET.KV_relay-keys', ...kvFeedNames('relay-keys').filter((n) => n.startsWith('sub ')),
    ...REGIONS.flatMap((o) => [...walkNames(...localOf(`relay-bans-${o}`, o, at)), `sub relay.kv.relay-bans-${o}.>`]),
  ];
}

/** Every region's log as the home region (a) holds it: where the operator's tools read the log. */
const HOME_LOGS = ['RELAY_REGION_A', 'RELAY_REGION_B_AT_A', 'RELAY_REGION_C_AT_A'];
const homeLogReads = (): string[] => HOME_LOGS.flatMap((s) => streamReadNames(s, s === 'RELAY_REGION_A' ? 'region.a.channel.probe' : 'probe'));

/** What the operator's tools (the CLI, the admin service) may do wherever they connect: read and write as the home region. */
function operatorReads(): string[] {
  return [
    'pub $JS.API.INFO',
    ...homeLogReads(),
    ...streamReadNames('RELAY_AUDIT', 'audit.probe'),
    // Keys and bans as the home region holds them: what is kept there from its leaders (a nearer copy
    // may answer a direct get of it), the others' bans from its copies; a lift reads and deletes in every region's bans.
    ...kvFeedNames('relay-keys'), ...kvFeedNames('relay-bans-a'),
    ...REGIONS.filter((o) => o !== 'a').flatMap((o) => [...walkNames(...localOf(`relay-bans-${o}`, o, 'a')), `sub relay.kv.relay-bans-${o}.>`]),
    ...REGIONS.flatMap((o) => [...kvWatchNames(`relay-streams-${o}`), ...kvFeedNames(`relay-nodes-${o}`), ...walkNames(...localOf(`relay-nodes-${o}`, o, o))]),
    'pub audit.probe', 'pub $KV.relay-keys.probe',
    ...REGIONS.flatMap((o) => [
      `pub $JS.API.STREAM.MSG.GET.KV_relay-bans-${o}`, `pub $KV.relay-bans-${o}.probe`,
      ...['ingress', 'gateway', 'all'].map((s) => `pub $KV.relay-bans-${o}.auto.${s}.${UUID}`), `pub $KV.relay-bans-${o}.${UUID}`,
    ]),
  ];
}

/** What each role may do on region r's servers. */
function allowed(role: (typeof ROLES)[number], r: string): string[] {
  // Its region's log and its copies of the others' read from their leaders, each other region's log
  // asked for its newest sequence (region-links.ts), every region heard live; no consumer of any kind.
  if (role === 'gateway') {
    const reads = [`RELAY_REGION_${up(r)}`, ...REGIONS.filter((o) => o !== r).map((o) => `RELAY_REGION_${up(o)}_AT_${up(r)}`)];
    return [
      'pub $JS.API.INFO',
      // ...and by direct gets, which a region cut off answers when it refuses leader gets.
      ...reads.flatMap((s) => [`pub $JS.API.STREAM.INFO.${s}`, `pub $JS.API.STREAM.MSG.GET.${s}`, `pub $JS.API.DIRECT.GET.${s}`, `pub $JS.API.DIRECT.GET.${s}.${s.includes('_AT_') ? 'probe' : `region.${r}.channel.probe`}`]),
      ...REGIONS.filter((o) => o !== r).map((o) => `pub $JS.API.STREAM.MSG.GET.RELAY_REGION_${up(o)}`),
      // What opening a stream needs, its region's own; claims told to the other regions, its own heard.
      `pub $JS.API.STREAM.INFO.RELAY_CLAIM_INDEX_${up(r)}`, `pub $JS.API.STREAM.MSG.GET.RELAY_CLAIM_INDEX_${up(r)}`, `pub relay.claim-index.${r}.probe`,
      // Keys and bans read in its region, and the bans it issues written there.
      ...credentialReads(r), `pub $KV.relay-bans-${r}.auto.gateway.${UUID}`,
      ...kvReadNames(`relay-streams-${r}`), `pub $JS.API.STREAM.MSG.GET.KV_relay-streams-${r}`, `pub $KV.relay-streams-${r}.probe`,
      ...kvFeedNames(`relay-nodes-${r}`), ...walkNames(...localOf(`relay-nodes-${r}`, r, r)), `pub $KV.relay-nodes-${r}.${heartbeatKey('gateway', 'probe')}`,
      // Claims told to each other region as this one only; heard from any.
      ...REGIONS.filter((o) => o !== r).map((o) => `pub relay.region-claims.${o}.${r}`),
      `sub relay.region-claims.${r}.*`, ...REGIONS.map((o) => `sub relay.region-claims.${r}.${o}`),
      'pub relay.claim-notice.probe', 'pub relay.owner-census.ask', 'pub relay.owner-census.answer.probe',
      'sub live.region.*.channel.>', ...REGIONS.map((o) => `sub live.region.${o}.channel.>`), 'sub relay.claim-notice.>', 'sub relay.owner-census.ask', 'sub relay.owner-census.answer.*', 'sub _INBOX.gateway.>',
    ];
  }
  if (role === 'ingress') {
    return [
      'pub $JS.API.INFO',
      `pub $JS.API.STREAM.INFO.RELAY_REGION_${up(r)}`, `pub region.${r}.channel.probe`,
      ...credentialReads(r), `pub $KV.relay-bans-${r}.auto.ingress.${UUID}`,
      `pub $JS.API.STREAM.INFO.KV_relay-nodes-${r}`, `pub $KV.relay-nodes-${r}.${heartbeatKey('ingress', 'probe')}`,
      ...kvReadNames(`relay-idempotency-${r}`), `pub $KV.relay-idempotency-${r}.probe`,
      'sub _INBOX.ingress.>',
    ];
  }
  if (role === 'cli') {
    return [
      ...operatorReads(),
      ...['INFO', 'CREATE', 'UPDATE'].flatMap((verb) => EVERY_STREAM.map((s) => `pub $JS.API.STREAM.${verb}.${s}`)),
      // relay trace: one entry from a log's leader.
      ...HOME_LOGS.map((s) => `pub $JS.API.STREAM.MSG.GET.${s}`),
      'sub _INBOX.cli.>',
    ];
  }
  if (role === 'admin') {
    return [
      ...operatorReads(),
      // What it checks at start, as the home region.
      ...['RELAY_AUDIT', 'KV_relay-keys', 'KV_relay-bans-a', 'RELAY_COPY_relay-bans-b_AT_A', 'RELAY_COPY_relay-bans-c_AT_A'].map((s) => `pub $JS.API.STREAM.INFO.${s}`),
      // Every region's claims, watched (mesh-parts.ts).
      ...REGIONS.map((o) => `pub $JS.API.STREAM.INFO.KV_relay-streams-${o}`),
      // Every region's payloads heard live (channel-activity.ts); no consumer of any log but the home region's.
      'sub live.region.*.channel.>', ...REGIONS.map((o) => `sub live.region.${o}.channel.>`),
      'sub _INBOX.admin.>',
    ];
  }
  return [];
}

let dir: string;
let sc: SuperCluster;
// Each region's users get passwords of their own: a credential is then good in its region only.
const passwords = Object.fromEntries(REGIONS.map((r) => [r, Object.fromEntries(ROLES.map((role) => [role, `p${randomBytes(12).toString('hex')}`]))])) as Record<string, Record<string, string>>;
const opened: NatsConnection[] = [];

async function connectAs(role: string, region: string, password = passwords[region]![role]!): Promise<NatsConnection> {
  const nc = await connect({ servers: sc.region(region).url, user: role, pass: password, inboxPrefix: inboxPrefix(role as 'cli'), maxReconnectAttempts: 0 });
  opened.push(nc);
  return nc;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'relay-regions-permissions-'));
  const files: Record<string, string> = {};
  for (const r of REGIONS) {
    const printed = await runCli(['nats-permissions', '--region', r], { ...MESH, NATS_URL: 'nats://127.0.0.1:1' });
    expect(printed.code).toBe(0);
    files[r] = printed.stdout;
  }
  sc = await startSuperCluster(dir, REGIONS, {
    serverConfig: (r) => ({
      extraConfig: files[r]!,
      env: { ...process.env, ...Object.fromEntries(ROLES.map((role) => [`RELAY_NATS_${role.toUpperCase()}_PASSWORD`, passwords[r]![role]!])) },
    }),
  });
  const setup = await runCli(['setup'], { ...MESH, NATS_URL: sc.region('b').url, NATS_USER: 'cli', NATS_PASSWORD: passwords['b']!['cli']! }, 120_000);
  expect(setupComplaints(setup.stderr)).toEqual([]);
  expect(setup.code).toBe(0);
}, 240_000);

afterAll(async () => {
  for (const nc of opened) await nc.close().catch(() => undefined);
  await sc?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("each region's NATS users may use exactly the subjects of their table", () => {
  const probes = allProbes(layout, REGIONS);
  const cases = REGIONS.flatMap((r) => ROLES.map((role) => [role, r] as const));

  it.each(cases)('%s in region %s: every verb on every stream and bucket of every region, every plain subject and subscription, and only its table gets through', async (role, r) => {
    const nc = await connectAs(role, r);
    const through: string[] = [];
    for (const probe of probes) if (await permitted(nc, probe)) through.push(probe.name);
    const expected = [...new Set(allowed(role, r))];
    expect({ 'allowed but not in the table': through.filter((p) => !expected.includes(p)), 'in the table but refused': expected.filter((p) => !through.includes(p)) }).toEqual({
      'allowed but not in the table': [],
      'in the table but refused': [],
    });
    const probed = new Set(probes.map((p) => p.name));
    expect(expected.filter((p) => !probed.has(p))).toEqual([]);
  }, 180_000);

  it.each(REGIONS)("region %s's servers know no other region's passwords", async (r) => {
    const other = REGIONS.find((x) => x !== r)!;
    await expect(connectAs('ingress', r, passwords[other]!['ingress'])).rejects.toThrow(/Authorization Violation/i);
  });
});
