// What an operator writes to run a mesh in regions (REGIONS, REGION, REGION_HOME), and the streams
// the layout then asks of NATS: every mistake refused with a sentence that names it, and every
// stream named once, in its region.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, type ServiceKind } from '../../services/core/config.js';
import { natsLayout, plansFor } from '../../services/core/nats-layout.js';
import { startRelayServer } from '../../services/server.js';
import { runCli } from '../helpers/cli.js';

function problemsOf(service: ServiceKind, env: Record<string, string>): string[] {
  try {
    loadConfig(service, { ADMIN_TOKEN: 'a'.repeat(32), ...env });
    return [];
  } catch (e) {
    if (e instanceof ConfigError) return e.problems;
    throw e;
  }
}

describe('region settings', () => {
  it('are read as the regions in order, this process in one, and the home region (the first unless named)', () => {
    expect(loadConfig('ingress', { REGIONS: ' eu , us,ap-south ', REGION: 'us' }).regions).toEqual({ here: 'us', all: ['eu', 'us', 'ap-south'], home: 'eu' });
    expect(loadConfig('ingress', { REGIONS: 'eu,us,ap', REGION: 'ap', REGION_HOME: 'us' }).regions).toEqual({ here: 'ap', all: ['eu', 'us', 'ap'], home: 'us' });
    expect(loadConfig('ingress', {}).regions).toBeNull();
    // The operator's CLI (relay setup) serves no region.
    expect(loadConfig('all', { REGIONS: 'eu,us,ap' }).regions).toEqual({ here: null, all: ['eu', 'us', 'ap'], home: 'eu' });
  });

  it.each([
    ['a region without the list', { REGION: 'eu' }, 'REGION is set, but REGIONS is not'],
    ['a home without the list', { REGION_HOME: 'eu' }, 'REGION_HOME is set, but REGIONS is not'],
    ['two regions', { REGIONS: 'eu,us', REGION: 'eu' }, 'from 3 to 16 regions (got 2)'],
    ['seventeen regions', { REGIONS: Array.from({ length: 17 }, (_, i) => `r${i}`).join(','), REGION: 'r0' }, 'from 3 to 16 regions (got 17)'],
    ['an upper-case name', { REGIONS: 'EU,us,ap', REGION: 'us' }, 'REGIONS has "EU"'],
    ['a name with "_" (it joins names in stream names)', { REGIONS: 'eu_west,us,ap', REGION: 'us' }, 'REGIONS has "eu_west"'],
    ['a name with a dot (it would split a subject)', { REGIONS: 'eu.west,us,ap', REGION: 'us' }, 'REGIONS has "eu.west"'],
    ['a name too long', { REGIONS: `${'e'.repeat(17)},us,ap`, REGION: 'us' }, `REGIONS has "${'e'.repeat(17)}"`],
    ['a region named twice', { REGIONS: 'eu,us,eu', REGION: 'us' }, 'REGIONS names "eu" more than once'],
    ['an empty item', { REGIONS: 'eu,,us,ap', REGION: 'us' }, 'REGIONS has an empty item'],
    ['commas alone (not a mesh without regions)', { REGIONS: ' , ', REGION: 'us' }, 'REGIONS has an empty item'],
    ['a trailing comma', { REGIONS: 'eu,us,ap,', REGION: 'us' }, 'REGIONS has an empty item'],
    ['a service outside every region', { REGIONS: 'eu,us,ap', REGION: 'mars' }, 'REGION is "mars", which is not one of REGIONS (eu, us, ap)'],
    ['a service in no region', { REGIONS: 'eu,us,ap' }, "REGION must name this process's region"],
    ['a home outside every region', { REGIONS: 'eu,us,ap', REGION: 'eu', REGION_HOME: 'mars' }, 'REGION_HOME is "mars"'],
  ])('refuse %s, naming it', (_, env, sentence) => {
    const problems = problemsOf('ingress', env);
    expect(problems.join('\n')).toContain(sentence);
  });

  it('print at most five bad names, quoted', () => {
    const problems = problemsOf('ingress', { REGIONS: Array.from({ length: 50 }, (_, i) => `Bad\u001b[31m${i}`).join(','), REGION: 'x' });
    expect(problems.join('\n')).toContain('and 45 more');
    expect(problems.join('\n')).not.toContain('\u001b');
  });

  it('accept the ingress and the gateway in a region, and the admin service and the CLI with or without one (they act as the home region)', () => {
    const mesh = { REGIONS: 'eu,us,ap', REGION: 'eu' };
    for (const service of ['gateway', 'ingress', 'admin', 'all'] as const) expect(problemsOf(service, mesh)).toEqual([]);
    expect(problemsOf('admin', { REGIONS: 'eu,us,ap' })).toEqual([]);
    expect(problemsOf('gateway', { REGIONS: 'eu,us,ap' })).toEqual([expect.stringContaining("REGION must name this process's region")]);
  });

  it('stop the all-in-one (npm start) before it connects: one NATS server has no regions', async () => {
    await expect(startRelayServer({ service: 'all', env: { REGIONS: 'eu,us,ap', NATS_URL: 'nats://127.0.0.1:1' } })).rejects.toThrow(/runs on one NATS server, which has no regions/);
  });

  it.each([
    [['replay', 'play.example.net', '--from-seq', '5'], /--from-seq names a sequence in each region's log/],
    [['tail', '--from-seq', 'mars:5'], /--from-seq names "mars", not a region of this mesh/],
    [['trace', 'eu:0.us'], /<seq> must be a whole number of at least 1, digits only, or <region>:<seq>/],
  ])('refuse the CLI log reader %j a position it cannot read, before connecting', async (args, sentence) => {
    // Port 1: nothing listens there; the refusal comes before any connection is tried.
    const r = await runCli(args, { REGIONS: 'eu,us,ap', NATS_URL: 'nats://127.0.0.1:1' });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(sentence);
  });
});

describe('the layout of a mesh with regions', () => {
  const layout = natsLayout(loadConfig('all', { REGIONS: 'eu,us,ap', REGION_HOME: 'us' }));
  const byName = new Map(layout.map((p) => [p.stream, p]));

  it('names every stream once, and none the one-log layout uses for its log', () => {
    expect(byName.size).toBe(layout.length);
    expect(byName.has('RELAY')).toBe(false);
    expect(byName.has('KV_relay-idempotency')).toBe(false);
  });

  it('gives each region its log, a copy of every other region log, its own Idempotency-Key records and its own claims, placed in it', () => {
    for (const r of ['eu', 'us', 'ap']) {
      const log = byName.get(`RELAY_REGION_${r.toUpperCase()}`);
      for (const own of [`KV_relay-streams-${r}`, `KV_relay-nodes-${r}`, `RELAY_CLAIM_INDEX_${r.toUpperCase()}`]) {
        expect(byName.get(own)?.shape.placement?.cluster, own).toBe(r);
      }
      expect(log?.shape).toMatchObject({ subjects: [`region.${r}.channel.>`], placement: { cluster: r }, allow_direct: true });
      expect(log?.shape.mirror).toBeUndefined();
      expect(byName.get(`KV_relay-idempotency-${r}`)?.shape.placement?.cluster).toBe(r);
      for (const origin of ['eu', 'us', 'ap'].filter((o) => o !== r)) {
        const copy = byName.get(`RELAY_REGION_${origin.toUpperCase()}_AT_${r.toUpperCase()}`);
        expect(copy?.shape).toMatchObject({ subjects: [], mirror: { name: `RELAY_REGION_${origin.toUpperCase()}` }, placement: { cluster: r } });
      }
    }
    // What the whole mesh writes once lives in the home region.
    for (const name of ['RELAY_AUDIT', 'KV_relay-keys']) {
      expect(byName.get(name)?.shape.placement?.cluster, name).toBe('us');
    }
    expect(byName.has('KV_relay-bans')).toBe(false);
  });

  it("keeps each region's bans in it, and in every region a copy of the keys and of every other region's bans", () => {
    for (const r of ['eu', 'us', 'ap']) {
      expect(byName.get(`KV_relay-bans-${r}`)?.shape).toMatchObject({ placement: { cluster: r }, republish: { dest: `relay.kv.relay-bans-${r}.>` } });
      for (const at of ['eu', 'us', 'ap'].filter((o) => o !== r)) {
        const copy = byName.get(`RELAY_COPY_relay-bans-${r}_AT_${at.toUpperCase()}`);
        expect(copy?.shape).toMatchObject({ subjects: [], mirror: { name: `KV_relay-bans-${r}` }, placement: { cluster: at }, allow_direct: true });
        expect(copy?.shape.republish).toBeUndefined();
        expect(copy?.limits.max_msgs_per_subject).toBe(byName.get(`KV_relay-bans-${r}`)?.limits.max_msgs_per_subject);
      }
    }
    expect(byName.has('RELAY_COPY_relay-keys_AT_US')).toBe(false);
    for (const at of ['EU', 'AP']) expect(byName.get(`RELAY_COPY_relay-keys_AT_${at}`)?.shape.mirror?.name).toBe('KV_relay-keys');
    // Claims live where their streams are: no region-less claims bucket is left to be a single point.
    for (const name of ['RELAY_CLAIM_INDEX', 'KV_relay-streams', 'KV_relay-nodes']) expect(byName.has(name), name).toBe(false);
  });

  it("has an ingress check only its own region's log, records and bans, and its region's copies of the keys and the others' bans", () => {
    const names = plansFor(layout, 'ingress', 'ap').map((p) => p.stream).sort();
    expect(names).toEqual([
      'KV_relay-bans-ap',
      'KV_relay-idempotency-ap',
      'KV_relay-nodes-ap',
      'RELAY_COPY_relay-bans-eu_AT_AP',
      'RELAY_COPY_relay-bans-us_AT_AP',
      'RELAY_COPY_relay-keys_AT_AP',
      'RELAY_REGION_AP',
    ]);
  });
});
