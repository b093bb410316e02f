// A nats-server loaded with infra/nats/permissions.conf, one user per role, and the operator's
// `relay setup` done as the `cli` user: what a production mesh looks like to each service. Optional
// mutual TLS (test/nats-permissions.test.ts); the enumeration of every role x verb x stream uses it
// in plain text.

import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/nats-core';
import { inboxPrefix } from '../../services/core/subjects.js';
import { startNatsNode, type NatsNode } from '../../tools/nats-launcher.js';
import { makeTestCertificates, type TestCertificates } from './certificates.js';
import type { TestNats } from './nats.js';
import { setUpNats } from './nats-setup.js';

export const ROLES = ['ingress', 'gateway', 'admin', 'cli'] as const;
export type Role = (typeof ROLES)[number];

export interface RoleNats extends TestNats {
  node: NatsNode;
  dir: string;
  certs: TestCertificates | null;
  /** The environment of a service or CLI signing in as `role`. */
  env(role: Role): Record<string, string>;
  /** A connection as `role`, with the role's inbox prefix (closed by stop()). */
  connect(role: Role): Promise<NatsConnection>;
  /** The server's log lines that report a refused subject. */
  violations(): string[];
}

export async function startRoleNats(options: { tls?: boolean } = {}): Promise<RoleNats> {
  const dir = mkdtempSync(join(tmpdir(), 'relay-nats-roles-'));
  const certs = options.tls === true ? makeTestCertificates(dir) : null;
  // A letter first: nats-server reads a substituted value that starts with a digit as a number.
  const passwords = Object.fromEntries(ROLES.map((r) => [r, `p${randomBytes(18).toString('hex')}`])) as Record<Role, string>;
  const node = await startNatsNode({
    storeDir: join(dir, 'nats'),
    extraConfig: [
      certs !== null ? `tls { cert_file: "${certs.serverCert}", key_file: "${certs.serverKey}", ca_file: "${certs.ca}", verify: true }` : '',
      readFileSync(new URL('../../infra/nats/permissions.conf', import.meta.url), 'utf8'),
    ].join('\n'),
    env: { ...process.env, ...Object.fromEntries(ROLES.map((r) => [`RELAY_NATS_${r.toUpperCase()}_PASSWORD`, passwords[r]])) },
  });
  const tlsEnv: Record<string, string> = certs !== null ? { NATS_TLS_CA: certs.ca, NATS_TLS_CERT: certs.clientCert, NATS_TLS_KEY: certs.clientKey } : {};
  const env = (role: Role): Record<string, string> => ({ NATS_URL: node.url, NATS_USER: role, NATS_PASSWORD: passwords[role], ...tlsEnv });
  const opened: NatsConnection[] = [];
  await setUpNats(node.url, env('cli'));
  return {
    url: node.url,
    via: 'local-binary',
    node,
    dir,
    certs,
    env,
    async connect(role) {
      const nc = await connect({
        servers: node.url,
        user: role,
        pass: passwords[role],
        inboxPrefix: inboxPrefix(role),
        ...(certs !== null ? { tls: { caFile: certs.ca, certFile: certs.clientCert, keyFile: certs.clientKey } } : {}),
      });
      opened.push(nc);
      return nc;
    },
    violations: () => readFileSync(node.options.logFile, 'utf8').split('\n').filter((l) => l.includes('Permissions Violation')),
    async stop() {
      for (const nc of opened) await nc.close().catch(() => undefined);
      await node.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
