// npm start as a newcomer stops it: Ctrl-C in a terminal, which signals the whole foreground process
// group. Issue 21: the nats-server the launcher started was in that group, stopped at once, and the
// relay then spent SHUTDOWN_TIMEOUT (10 s) draining into it. The launcher must stop its nats-server
// itself, after the relay has closed its connections.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';

const BIN = fileURLToPath(new URL('../bin/relay.js', import.meta.url));

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('npm start (relay dev) and Ctrl-C', () => {
  it('a Ctrl-C to the terminal’s process group stops the relay before its own nats-server: no NATS disconnect is logged, nothing is left running', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'relay-dev-stop-'));
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', ADMIN_PORT: '0', LOG_PRETTY: 'false', LOG_LEVEL: 'info', DEV_NATS: 'true' };
    delete env['NATS_URL'];
    // detached: a process group of its own, as a shell gives a foreground job.
    const child = spawn(process.execPath, [BIN, 'dev'], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    onTestFinished(() => {
      if (child.exitCode === null && alive(child.pid!)) process.kill(-child.pid!, 'SIGKILL');
      rmSync(cwd, { recursive: true, force: true });
    });
    let out = '';
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('Ctrl-C stops the relay')) resolve();
      });
      void exited.then((code) => reject(new Error(`relay dev exited with ${code} before its banner:\n${out}\n${err}`)));
    });
    // nats-server writes its pid at the start of every log line.
    const natsPid = Number(/^\[(\d+)\]/.exec(readFileSync(join(cwd, '.data', 'nats.log'), 'utf8'))?.[1]);
    expect(alive(natsPid)).toBe(true);

    process.kill(-child.pid!, 'SIGINT');
    expect(await exited).toBe(0);
    expect(out).toContain('shutting down gracefully');
    // The relay's clients closed while their server was still there: none saw it vanish.
    expect(out).not.toMatch(/NATS disconnected|NATS reconnecting|timed out/i);
    expect(alive(natsPid), 'the nats-server npm start started is stopped with it').toBe(false);
  }, 60_000);
});
