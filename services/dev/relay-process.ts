// A relay service as its own OS process (`relay serve ...`), as it runs in production: used by the
// mesh script and the multi-process tests. Its output goes to a log file.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './nats-process.js';

const BIN = fileURLToPath(new URL('../../bin/relay.js', import.meta.url));
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
  kind: 'ingress' | 'gateway' | 'all',
  env: Record<string, string>,
  options: { command?: string[]; waitReady?: boolean; logDir?: string; detached?: boolean } = {},
): Promise<RelayProcess> {
  const logDir = options.logDir ?? DEFAULT_LOG_DIR;
  mkdirSync(logDir, { recursive: true });
  const port = env['PORT'] !== undefined ? Number(env['PORT']) : await freePort();
  const nodeId = env['RELAY_NODE_ID'] ?? `${kind}-${port}`;
  const logFile = join(logDir, `${nodeId}.log`);
  const fd = openSync(logFile, 'w');
  const args = options.command ?? [BIN, 'serve', kind];
  const child = spawn(process.execPath, args, {
    env: { ...process.env, HOST: '127.0.0.1', LOG_LEVEL: 'info', LOG_PRETTY: 'false', NODE_ENV: 'test', ...env, PORT: String(port), RELAY_NODE_ID: nodeId },
    stdio: ['ignore', fd, fd],
    detached: options.detached === true,
  });
  closeSync(fd);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
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
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
  if (options.waitReady !== false) await waitReady(proc);
  return proc;
}

export async function waitReady(proc: RelayProcess, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (proc.child.exitCode !== null) throw new Error(`${proc.nodeId} exited with ${proc.child.exitCode}:\n${proc.log()}`);
    const ok = await fetch(`${proc.url}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`${proc.nodeId} not ready after ${timeoutMs} ms:\n${proc.log()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
