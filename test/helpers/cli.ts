// Runs the `relay` CLI as a child process, the way operators and scripts do.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin/relay.js', import.meta.url));

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** `onStderr`: told what the command has written to stderr so far, each time it writes (a follow's "Listening" line). */
export function runCli(args: string[], env: Record<string, string>, timeoutMs = 30_000, onStderr?: (soFar: string) => void): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { ...process.env, LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      onStderr?.(stderr);
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`relay ${args.join(' ')} did not finish within ${timeoutMs} ms\n${stderr}`));
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr });
    });
  });
}

/** Runs the CLI and parses its stdout as JSON, failing loudly when it exits non-zero. */
export async function runCliJson<T>(args: string[], env: Record<string, string>): Promise<T> {
  const r = await runCli(args, env);
  if (r.code !== 0) throw new Error(`relay ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}

/** Runs the CLI and parses each line of its stdout as JSON (relay replay --json prints an entry a line). */
export async function runCliJsonLines<T>(args: string[], env: Record<string, string>): Promise<T[]> {
  const r = await runCli(args, env);
  if (r.code !== 0) throw new Error(`relay ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return r.stdout.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as T);
}

/**
 * What `relay setup` wrote to stderr besides saying it waits for a region's servers to come online to
 * JetStream, which a super-cluster just started may still have offline (services/core/nats-setup.ts).
 */
export function setupComplaints(stderr: string): string[] {
  return stderr.split('\n').filter((line) => line !== '' && !/waits for region \w+: JetStream sees its servers offline/.test(line));
}
