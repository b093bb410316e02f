// The NATS permission files are written from the layout (services/core/nats-permissions.ts), so a
// stream's name is written once: the committed files must be what the generator writes, and
// `relay nats-permissions` prints them for the operator's own regions. What each user may really do
// is proven against nats-servers: test/nats-role-permissions.test.ts (one log) and
// test/mesh/regions-permissions.test.ts (regions).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { permissionFiles } from '../../scripts/nats-permissions.js';
import { runCli } from '../helpers/cli.js';

const root = new URL('../../', import.meta.url);

describe('the committed NATS permission files', () => {
  it.each(Object.entries(permissionFiles()))('%s is what npm run nats-permissions writes', (path, text) => {
    expect(readFileSync(new URL(path, root), 'utf8'), 'stale: run npm run nats-permissions').toBe(text);
  });
});

describe('relay nats-permissions', () => {
  // Port 1: nothing listens there; the command never connects.
  const env = { NATS_URL: 'nats://127.0.0.1:1' };

  it('prints infra/nats/permissions.conf for a mesh without regions', async () => {
    const r = await runCli(['nats-permissions'], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(permissionFiles()['infra/nats/permissions.conf']);
  });

  it('prints the file of one region of the operator\'s own regions, by --region or by REGION', async () => {
    const byFlag = await runCli(['nats-permissions', '--region', 'mars-2'], { ...env, REGIONS: 'moon,mars-2,venus' });
    expect(byFlag.code).toBe(0);
    expect(byFlag.stdout).toContain('"region.mars-2.channel.>"');
    expect(byFlag.stdout).toContain('"$KV.relay-idempotency-mars-2.>"');
    expect(byFlag.stdout).not.toContain('"region.moon.channel.>"');
    expect(byFlag.stdout).toContain('"$JS.API.STREAM.CREATE.RELAY_REGION_MOON_AT_VENUS"');
    const byRegion = await runCli(['nats-permissions'], { ...env, REGIONS: 'moon,mars-2,venus', REGION: 'mars-2' });
    expect(byRegion.stdout).toBe(byFlag.stdout);
    // The example's files are this command's output for eu, us and ap.
    const eu = await runCli(['nats-permissions', '--region', 'eu'], { ...env, REGIONS: 'eu,us,ap' });
    expect(eu.stdout).toBe(permissionFiles()['infra/nats/regions/eu/permissions.conf']);
  });

  it.each([
    [{ REGIONS: 'eu,us,ap' }, [], 'name the region with --region (one of eu, us, ap), or set REGION'],
    [{ REGIONS: 'eu,us,ap' }, ['--region', 'mars\u001b[31m'], '--region is "mars\\u001b[31m", which is not one of REGIONS (eu, us, ap)'],
    [{}, ['--region', 'eu'], '--region is for a mesh with regions, and REGIONS is not set'],
    [{ REGIONS: 'eu,us' }, ['--region', 'eu'], 'REGIONS must name from 3 to 16 regions'],
  ])('refuses %j %j with exit 2 and a sentence, printing no file', async (vars, args, sentence) => {
    const r = await runCli(['nats-permissions', ...args], { ...env, ...vars });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(sentence);
  });
});
