// A relay service as its own OS process (`relay serve ...`), as it runs in production: used by the
// mesh script and the multi-process tests. Its output goes to a log file.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { endChild, exitOf, running } from './child.js';
import { httpOk, waitUntil } from './poll.js';
import { freePort } from './ports.js';

const BIN = fileURLToPath(new URL('../bin/relay.js', import.meta.url));
const DEFAULT_LOG_DIR = join(tmpdir(), 'relay-processes');

export interface RelayProcess {
  kind: string;
  nodeId: string;
  port: number;
  url: string;
  child: ChildProcess;
  logFile: string;
  exited: Promise<number | null>;
  log(): string;
  /** SIGTERM: graceful drain. Resolves with the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL: a crash. */
  kill(): Promise<void>;
}

export async function startRelayProcess(
  kind: 'ingress' | 'gateway' | 'all' | 'admin',
  env: Record<string, string>,
  options: { command?: string[]; waitReady?: boolean; logDir?: string; detached?: boolean; appendLog?: boolean } = {},
): Promise<RelayProcess> {
  const logDir = options.logDir ?? DEFAULT_LOG_DIR;
  mkdirSync(logDir, { recursive: true });
  // The admin service listens on ADMIN_PORT, never the client port.
  const portVariable = kind === 'admin' ? 'ADMIN_PORT' : 'PORT';
  const port = env[portVariable] !== undefined ? Number(env[portVariable]) : await freePort();
  const nodeId = env['RELAY_NODE_ID'] ?? `${kind}-${port}`;
  const logFile = join(logDir, `${nodeId}.log`);
  // A restarted process may add to the log of the one before it (the fault campaign reads both).
  const fd = openSync(logFile, options.appendLog === true ? 'a' : 'w');
  const args = options.command ?? [BIN, 'serve', kind];
  const child = spawn(process.execPath, args, {
    env: { ...process.env, HOST: '127.0.0.1', ADMIN_HOST: '127.0.0.1', LOG_LEVEL: 'info', LOG_PRETTY: 'false', NODE_ENV: 'test', ...env, [portVariable]: String(port), RELAY_NODE_ID: nodeId },
    stdio: ['ignore', fd, fd],
    detached: options.detached === true,
  });
  closeSync(fd);
  const exited = exitOf(child);
  const url = `http://127.0.0.1:${port}`;
  const proc: RelayProcess = {
    kind,
    nodeId,
    port,
    url,
    child,
    logFile,
    exited,
    log: () => readFileSync(logFile, 'utf8'),
    stop: () => endChild(child, exited),
    async kill() {
      await endChild(child, exited, { signal: 'SIGKILL' });
    },
  };
  if (options.waitReady !== false) {
    try {
      await waitReady(proc);
    } catch (e) {
      // Not left running behind the caller, who has only the error.
      await proc.kill();
      throw e;
    }
  }
  return proc;
}

export async function waitReady(proc: RelayProcess, timeoutMs = 30_000): Promise<void> {
  await waitUntil(() => httpOk(`${proc.url}/readyz`), `${proc.nodeId} to be ready`, {
    timeoutMs,
    intervalMs: 50,
    giveUp: () => (running(proc.child) ? undefined : `${proc.nodeId} exited with ${proc.child.exitCode}:\n${proc.log()}`),
    detail: () => proc.log(),
  });
}
