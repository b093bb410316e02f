// Runs the committed proxy configurations (infra/proxy/) for real, pointed at loopback services.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { commandPath } from '../../tools/apt.js';
import { endChild, exitOf, running } from '../../tools/child.js';
import { httpStatus, waitUntil } from '../../tools/poll.js';
import { freePort } from '../../tools/ports.js';

export interface RunningProxy {
  url: string;
  stop(): Promise<void>;
}

const INFRA = new URL('../../infra/proxy/', import.meta.url);

export function proxyAvailable(kind: 'nginx' | 'haproxy'): boolean {
  return commandPath(kind, [`/usr/sbin/${kind}`]) !== null;
}

function binary(kind: 'nginx' | 'haproxy'): string {
  return commandPath(kind, [`/usr/sbin/${kind}`]) ?? `/usr/sbin/${kind}`;
}

async function run(command: string, args: string[], dir: string, port: number, logFile: string): Promise<RunningProxy> {
  const child = spawn(command, args, { stdio: 'ignore' });
  const exited = exitOf(child);
  const log = (): string => {
    try {
      return readFileSync(logFile, 'utf8');
    } catch {
      return '';
    }
  };
  // Any answer, a 404 included, means it listens.
  await waitUntil(async () => (await httpStatus(`http://127.0.0.1:${port}/nothing-here`)) !== 0, `the proxy to listen on ${port}`, {
    giveUp: () => (running(child) ? undefined : `proxy exited: ${log()}`),
    detail: log,
  });
  return {
    url: `http://127.0.0.1:${port}`,
    async stop() {
      await endChild(child, exited);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** infra/proxy/nginx.conf with its upstream servers and listener replaced by loopback ports. */
export async function startNginx(gateways: number[], ingresses: number[]): Promise<RunningProxy> {
  const dir = mkdtempSync(join(tmpdir(), 'relay-nginx-'));
  const port = await freePort();
  let conf = readFileSync(new URL('nginx.conf', INFRA), 'utf8');
  conf = conf
    .replace(/^worker_processes .*$/m, `worker_processes 1;\npid ${dir}/nginx.pid;`)
    .replace(/^(\s*)error_log .*$/m, `$1error_log ${dir}/error.log warn;\n$1client_body_temp_path ${dir}/body;\n$1proxy_temp_path ${dir}/proxy;`)
    .replace(/^(\s*)worker_connections \d+;/m, '$1worker_connections 1024;')
    .replace(/upstream relay_gateways \{[^}]*\}/, `upstream relay_gateways {\n${gateways.map((p) => `    server 127.0.0.1:${p};`).join('\n')}\n    keepalive 8;\n  }`)
    .replace(/upstream relay_ingresses \{[^}]*\}/, `upstream relay_ingresses {\n${ingresses.map((p) => `    server 127.0.0.1:${p};`).join('\n')}\n    keepalive 8;\n  }`)
    .replace(/listen 8080;/, `listen 127.0.0.1:${port};`);
  writeFileSync(join(dir, 'nginx.conf'), conf);
  return run(binary('nginx'), ['-p', dir, '-c', join(dir, 'nginx.conf'), '-g', 'daemon off;'], dir, port, join(dir, 'error.log'));
}

/** infra/proxy/haproxy.cfg likewise. */
export async function startHaproxy(gateways: number[], ingresses: number[]): Promise<RunningProxy> {
  const dir = mkdtempSync(join(tmpdir(), 'relay-haproxy-'));
  const port = await freePort();
  let conf = readFileSync(new URL('haproxy.cfg', INFRA), 'utf8');
  const servers = (name: string, ports: number[]): string => ports.map((p, i) => `  server ${name}-${i + 1} 127.0.0.1:${p}`).join('\n');
  conf = conf
    .replace(/^\s*maxconn \d+$/m, '  maxconn 2000')
    .replace(/(backend relay_gateways\n(?:\s+balance .*\n))(?:\s+server .*\n?)+/, `$1${servers('gateway', gateways)}\n\n`)
    .replace(/(backend relay_ingresses\n(?:\s+balance .*\n))(?:\s+server .*\n?)+/, `$1${servers('ingress', ingresses)}\n`)
    .replace(/bind :8080/, `bind 127.0.0.1:${port}`);
  writeFileSync(join(dir, 'haproxy.cfg'), conf);
  return run(binary('haproxy'), ['-db', '-f', join(dir, 'haproxy.cfg')], dir, port, join(dir, 'haproxy.cfg'));
}
