// @channel-relay/client as its users get it: built by its workspace build, imported by name from the
// repository root (plain Node, the exports map, no TypeScript loader), its declarations narrowing
// payloads for a TypeScript program, and working against a real relay.
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedKey } from '../../services/core/keys.js';
import { RelayFixture } from '../helpers/relay.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
let relay: RelayFixture;
let key: CreatedKey;
let dir: string;

beforeAll(async () => {
  execFileSync('npm', ['run', 'build', '-w', '@channel-relay/client'], { cwd: ROOT, stdio: 'pipe' });
  relay = await RelayFixture.start();
  key = await relay.createKey();
  dir = mkdtempSync(join(tmpdir(), 'client-consumer-'));
}, 120_000);
afterAll(async () => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  await relay?.close();
});

describe('the built package', () => {
  it('has ESM and declarations where its exports map points', () => {
    for (const f of ['index.js', 'index.d.ts', 'client.js', 'generated/wire.d.ts', 'generated/timings.js']) expect(existsSync(join(ROOT, 'clients/typescript/dist', f)), f).toBe(true);
  });

  it('imports nothing from outside itself at run time (the stream timings are generated into it, not read from schemas/)', () => {
    const dist = join(ROOT, 'clients/typescript/dist');
    const files = readdirSync(dist, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.js'));
    for (const f of files) {
      const depth = f.split(/[\\/]/).length - 1;
      for (const [, spec] of readFileSync(join(dist, f), 'utf8').matchAll(/from '(\.[^']*)'/g)) {
        // A relative import may climb no higher than dist/ itself.
        expect(spec!.split('/').filter((part) => part === '..').length, `${f} imports ${spec}`).toBeLessThanOrEqual(depth);
      }
    }
  });

  it('imports by name from the repository root in plain Node and talks to a relay', async () => {
    const player = relay.player();
    const script = `
      import { RelayClient, RelayError, PAYLOAD_TYPES } from '@channel-relay/client';
      const c = new RelayClient({ url: process.env.URL, server: 'package.example.net', clientId: process.env.ID, clientSecret: process.env.SECRET, userAgent: 'pkg/1+0', token: () => process.env.TOKEN });
      const heard = new Promise((resolve) => c.on('payload', ({ payload }) => { if (payload.type === 'chat') resolve(payload.message); }));
      await c.connect();
      const sent = await c.send({ type: 'chat', message: 'from the built package' });
      const message = await heard;
      let refused = null;
      try { new RelayClient({ url: process.env.URL, server: 'x', clientId: process.env.ID, clientSecret: '', userAgent: 'pkg/1+0', token: () => 't' }); } catch (e) { refused = e instanceof RelayError ? e.code : String(e); }
      c.close();
      console.log(JSON.stringify({ sent, message, refused, types: PAYLOAD_TYPES.length }));
    `;
    // Not spawnSync: the relay runs in this process and must keep answering.
    const r = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 20_000,
      env: { ...process.env, URL: relay.url, ID: key.clientId, SECRET: key.clientSecret, TOKEN: player.token },
    });
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual({ sent: { accepted: 1, dropped: 0 }, message: 'from the built package', refused: 'misconfigured', types: 11 });
  });

  it('gives a TypeScript program payloads that narrow on type (checked by tsc against the declarations)', () => {
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', target: 'ES2022', strict: true, noEmit: true, lib: ['ES2023', 'DOM'], types: [] }, files: ['bot.ts'] }),
    );
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
    writeFileSync(
      join(dir, 'bot.ts'),
      `import { RelayClient, type ChatComponent, type ClientState } from '@channel-relay/client';
const client = new RelayClient({ url: 'http://127.0.0.1:8080', server: 'play.example.net', clientId: 'id', clientSecret: 'secret', userAgent: 'bot/1+0', token: async () => 'token' });
client.on('payload', ({ payload, meta, id }) => {
  if (payload.type === 'chat') {
    const text: ChatComponent = payload.message;
    console.log(meta.uuid, id, text);
  }
  if (payload.type === 'presence') {
    console.log(payload.attributes.health);
    // @ts-expect-error presence has no message: the union narrowed
    console.log(payload.message);
  }
});
client.on('state', (s: ClientState) => {
  if (s.state === 'closed') console.log(s.reason, s.message);
});
export const sent: Promise<unknown> = client.send({ type: 'chat', message: 'hi' });
// @ts-expect-error an unknown type is not a payload
client.send({ type: 'teleport' });
`,
    );
    const tsc = spawnSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', dir], { encoding: 'utf8' });
    expect(tsc.stdout + tsc.stderr).toBe('');
    expect(tsc.status).toBe(0);
  });
});
