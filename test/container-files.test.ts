// The container files are for people with an engine (none runs here), so they are linted instead.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const run = (cmd: string, args: string[]): string => execFileSync('npx', ['--no-install', cmd, ...args], { encoding: 'utf8', stdio: 'pipe' });

describe('container files', () => {
  it('the Dockerfile passes dockerfile-utils lint and runs the service chosen by argument as a non-root user', () => {
    expect(() => run('dockerfile-utils', ['lint', 'Dockerfile'])).not.toThrow();
    const text = readFileSync('Dockerfile', 'utf8');
    expect(text).toMatch(/^FROM node:\$\{NODE_VERSION\}-bookworm-slim AS build$/m);
    expect(text).toMatch(/^FROM node:\$\{NODE_VERSION\}-bookworm-slim$/m);
    expect(text).toMatch(/^ENV NODE_ENV=production /m);
    expect(text).toMatch(/^USER node$/m);
    expect(text).toMatch(/^ENTRYPOINT \["node", "dist\/services\/cli\/main\.js"\]$/m);
  });

  it('the image runs Node 24 LTS and only what production needs: the compiled dist/ and runtime dependencies', () => {
    const text = readFileSync('Dockerfile', 'utf8');
    expect(text).toMatch(/^ARG NODE_VERSION=24$/m);
    // The build stage drops devDependencies (tsx, pino-pretty, the compiler) before the runtime stage copies node_modules.
    expect(text).toMatch(/npm prune --omit=dev/);
    const runtime = text.slice(text.lastIndexOf('\nFROM '));
    expect(runtime.match(/^COPY .*$/gm)).toEqual([
      'COPY --from=build /app/package.json ./',
      'COPY --from=build /app/node_modules ./node_modules',
      'COPY --from=build /app/dist ./dist',
    ]);
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { dependencies: Record<string, string> };
    expect(Object.keys(pkg.dependencies)).not.toContain('tsx');
    expect(Object.keys(pkg.dependencies)).not.toContain('pino-pretty');
  });

  it('infra/compose.yaml passes dclint and names three NATS nodes, two gateways, two ingresses and nginx', () => {
    expect(() => run('dclint', ['infra/compose.yaml'])).not.toThrow();
    const text = readFileSync('infra/compose.yaml', 'utf8');
    for (const service of ['nats-1', 'nats-2', 'nats-3', 'gateway-1', 'gateway-2', 'ingress-1', 'ingress-2', 'nginx']) {
      expect(text).toMatch(new RegExp(`^  ${service}:$`, 'm'));
    }
    expect(text).toContain('./proxy/nginx.conf:/etc/nginx/nginx.conf:ro');
  });

  // Found by an attack pass: the compose mesh ran NATS with no users, so any compromised container
  // had every JetStream power, the operator's included.
  it('infra/compose.yaml signs every relay service in as its own NATS role, and its NATS nodes load the permissions and guard their routes', () => {
    const text = readFileSync('infra/compose.yaml', 'utf8');
    const roles: Record<string, string> = { setup: 'cli', admin: 'admin', 'gateway-1': 'gateway', 'gateway-2': 'gateway', 'ingress-1': 'ingress', 'ingress-2': 'ingress' };
    for (const [service, role] of Object.entries(roles)) {
      const block = text.slice(text.indexOf(`\n  ${service}:\n`) + 1).split(/\n  [a-z0-9-]+:\n/)[0] ?? '';
      expect(block, service).toMatch(new RegExp(`NATS_USER: ${role}, NATS_PASSWORD: "\\$\\{RELAY_NATS_${role.toUpperCase()}_PASSWORD\\}"`));
    }
    expect(text.match(/"-c", "\/etc\/nats\/relay\.conf"/g)?.length).toBe(3);
    expect(text.match(/nats:\/\/route:\$\{RELAY_NATS_ROUTE_PASSWORD\}@/g)?.length).toBe(6);
    const node = readFileSync('infra/nats/compose.conf', 'utf8');
    expect(node).toMatch(/^include "permissions\.conf"$/m);
    expect(node).toMatch(/authorization \{ user: route, password: \$RELAY_NATS_ROUTE_PASSWORD \}/);
    expect(node).toMatch(/^http: "127\.0\.0\.1:8222"$/m);
  });

  // Found by an attack pass: the admin service inherited TRUSTED_PROXIES=uniquelocal, and Docker's port
  // forwarding brings every host client from the bridge's gateway (uniquelocal), so none was capped
  // per address or given the first-byte deadline: 8,192 silent sockets from one local user locked
  // the operator out (findings/admin-trusted-forwarder-lockout.ts).
  it('infra/compose.yaml trusts no proxy on the admin service, which no proxy fronts', () => {
    const text = readFileSync('infra/compose.yaml', 'utf8');
    const block = text.slice(text.indexOf('\n  admin:\n') + 1).split(/\n  [a-z0-9-]+:\n/)[0] ?? '';
    expect(block).toMatch(/<<: \*relay-env/);
    expect(block).toMatch(/TRUSTED_PROXIES: ""/);
  });
});
