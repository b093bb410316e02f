// What `relay` loads before it answers. Operators run it by hand all day and scripts call it in
// loops, so help and argument errors load no NATS client, web server, validator or schema library:
// each command loads its own code when it runs. (How fast that is, is `npm run bench -- cli`'s.)
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../bin/relay.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'cli-startup-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Packages whose loading means the command's own code was loaded before it was asked for. */
const HEAVY = /node_modules\/(@nats-io|fastify|@fastify|ajv|@sinclair\/typebox|pino|prom-client|@opentelemetry)\//;

/** Runs `relay args` and lists every module it loaded (a resolve hook writes each URL down). */
async function loaded(args: string[]): Promise<{ code: number; stdout: string; modules: string[] }> {
  const log = join(dir, `loaded-${args.join('-').replace(/\W/g, '')}.txt`);
  const hooks = join(dir, 'hooks.mjs');
  writeFileSync(hooks, `import { appendFileSync } from 'node:fs';\nexport async function resolve(s, c, next) { const r = await next(s, c); appendFileSync(${JSON.stringify(log)}, r.url + '\\n'); return r; }\n`);
  const register = join(dir, 'register.mjs');
  writeFileSync(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
  writeFileSync(log, '');
  const { code, stdout } = await new Promise<{ code: number; stdout: string }>((resolve) => {
    execFile(process.execPath, ['--import', register, BIN, ...args], { env: { ...process.env, NATS_URL: 'nats://127.0.0.1:1' } }, (err, out) => {
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : -1, stdout: out });
    });
  });
  return { code, stdout, modules: readFileSync(log, 'utf8').split('\n').filter((l) => l !== '') };
}

describe('relay loads what a command needs when it runs', () => {
  it('relay --help lists every command and loads none of their code', async () => {
    const r = await loaded(['--help']);
    expect(r.code).toBe(0);
    for (const command of ['setup', 'keys', 'bans', 'audit', 'streams', 'stats', 'replay', 'tail', 'trace', 'nats-permissions', 'serve', 'dev', 'config']) {
      expect(r.stdout).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
    }
    // The resolve hook saw the CLI itself: the check below is not empty by accident.
    expect(r.modules.some((m) => m.includes('/cli/program.js'))).toBe(true);
    expect(r.modules.filter((m) => HEAVY.test(m))).toEqual([]);
  });

  it('a mistyped command (relay keys create without --scopes) is refused, exit 2, before anything is loaded', async () => {
    const r = await loaded(['keys', 'create']);
    expect(r.code).toBe(2);
    expect(r.modules.filter((m) => HEAVY.test(m))).toEqual([]);
  });

  it('a command that runs loads its code then (relay keys list reaches for NATS)', async () => {
    const r = await loaded(['keys', 'list']);
    expect(r.code).toBe(1);
    expect(r.modules.some((m) => m.includes('node_modules/@nats-io/'))).toBe(true);
  });
});
