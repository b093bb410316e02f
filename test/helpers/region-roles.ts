// A super-cluster of regions on loopback (tools/nats-super-cluster.ts) whose servers each load their
// region's NATS users (`relay nats-permissions --region R`), every role with a password of its
// region's own as a deployment gives them, laid out by `relay setup` run as one region's cli user.
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { startAdminServer, type AdminServer } from '../../services/admin/admin-server.js';
import { PERMISSION_ROLES, type PermissionRole } from '../../services/core/nats-permissions.js';
import { startRelayServer, type RelayServer } from '../../services/server.js';
import { startSuperCluster, type SuperCluster } from '../../tools/nats-super-cluster.js';
import { runCli } from './cli.js';

export const ROLES = PERMISSION_ROLES;
export type Role = PermissionRole;

export interface RolesMesh {
  sc: SuperCluster;
  /** The settings that connect as `role` to region `region`'s servers. */
  as(role: Role, region: string): Record<string, string>;
}

/** `mesh`: REGIONS and REGION_HOME; `setUpIn`: the region whose cli user runs `relay setup`. */
export async function startRolesMesh(dir: string, regions: readonly string[], mesh: Record<string, string>, setUpIn: string): Promise<RolesMesh> {
  const passwords = new Map(regions.map((r) => [r, new Map(ROLES.map((role) => [role, `p${randomBytes(12).toString('hex')}`]))]));
  const files = new Map<string, string>();
  for (const r of regions) {
    const printed = await runCli(['nats-permissions', '--region', r], { ...mesh, NATS_URL: 'nats://127.0.0.1:1' });
    expect(printed.code, printed.stderr).toBe(0);
    files.set(r, printed.stdout);
  }
  const sc = await startSuperCluster(dir, regions, {
    serverConfig: (r) => ({
      extraConfig: files.get(r)!,
      env: { ...process.env, ...Object.fromEntries(ROLES.map((role) => [`RELAY_NATS_${role.toUpperCase()}_PASSWORD`, passwords.get(r)!.get(role)!])) },
    }),
  });
  const as = (role: Role, region: string): Record<string, string> => ({ NATS_URL: sc.region(region).url, NATS_USER: role, NATS_PASSWORD: passwords.get(region)!.get(role)! });
  try {
    const setup = await runCli(['setup'], { ...mesh, ...as('cli', setUpIn) }, 120_000);
    expect(setup.code, setup.stderr).toBe(0);
  } catch (e) {
    // Not left running for the files after (a CI run's failed set-up left its servers).
    await sc.stop();
    throw e;
  }
  return { sc, as };
}

const quiet = { LOG_LEVEL: process.env['DEBUG_LOG_LEVEL'] ?? 'silent', NODE_ENV: 'test' };

/** An ingress or a gateway in `region`, with its region's credentials, named `<kind>-<region>`. */
export function regionService(roles: RolesMesh, mesh: Record<string, string>, kind: 'ingress' | 'gateway', region: string, env: Record<string, string>): Promise<RelayServer> {
  return startRelayServer({
    service: kind,
    env: { ...mesh, REGION: region, ...roles.as(kind, region), ...quiet, PROFILE_API_RATE_PER_ADDRESS: '0', HOST: '127.0.0.1', PORT: '0', RELAY_NODE_ID: `${kind}-${region}`, ...env },
  });
}

/** The admin service connected to `region`'s servers with their admin user (it acts as the home region). */
export function regionAdmin(roles: RolesMesh, mesh: Record<string, string>, region: string, token: string): Promise<AdminServer> {
  return startAdminServer({ env: { ...mesh, ...roles.as('admin', region), ...quiet, ADMIN_HOST: '127.0.0.1', ADMIN_PORT: '0', ADMIN_TOKEN: token, RELAY_NODE_ID: `admin-${region}` } });
}
