// Ingress and gateway as separate deployables, configured by the environment only, as operators
// run them: relay serve ingress|gateway|all, and the compiled entry point after npm run build.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProfileApi, type FakeProfileApi } from './helpers/profile-api.js';
import { RelayFixture } from './helpers/relay.js';
import { startRelayProcess, type RelayProcess } from '../tools/relay-process.js';
import { startTestNats, type TestNats } from './helpers/nats.js';
import { openStream } from './helpers/sse-client.js';
import { createProductionInstall, type ProductionInstall } from './helpers/production-install.js';

let nats: TestNats;
let profile: FakeProfileApi;
let admin: RelayFixture;
let env: Record<string, string>;
const procs: RelayProcess[] = [];

beforeAll(async () => {
  nats = await startTestNats();
  profile = await startProfileApi();
  // An in-process relay only to create keys and players; the services under test are processes.
  admin = await RelayFixture.start({ nats, profile, service: 'ingress' });
  env = { NATS_URL: nats.url, PROFILE_API_URL: profile.url };
});
afterAll(async () => {
  await Promise.all(procs.map((p) => p.kill()));
  await admin?.close();
  await profile?.close();
  await nats?.stop();
});

describe('separate deployables', () => {
  it('relay serve gateway and relay serve ingress, each on its own port, carry a chat between them', async () => {
    const gateway = await startRelayProcess('gateway', env);
    const ingress = await startRelayProcess('ingress', env);
    procs.push(gateway, ingress);
    const key = await admin.createKey();
    const ch = 'deploy.example.net';
    const s = await openStream(gateway.url, { headers: admin.headers(admin.player(), key, ch) });
    await s.waitForComment(/^connected/);
    const res = await fetch(ingress.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...admin.headers(admin.player(), key, ch) },
      body: JSON.stringify({ type: 'chat', message: 'across processes' }),
    });
    expect(res.status).toBe(200);
    expect((await s.nextPair()).data.message).toBe('across processes');

    // A proxy that sends a verb to the wrong service gets a sentence saying so.
    const misroutedPost = await fetch(gateway.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(misroutedPost.status).toBe(405);
    expect(await misroutedPost.json()).toMatchObject({ error: 'method_not_allowed', message: expect.stringMatching(/ingress/) });
    const misroutedGet = await openStream(ingress.url, { headers: { accept: 'text/event-stream' } });
    expect((await misroutedGet.refusal()).body).toMatchObject({ error: 'method_not_allowed', message: expect.stringMatching(/gateway/) });
  });

  it('a service with a bad environment does not start, and says every problem', async () => {
    const bad = await startRelayProcess('gateway', { ...env, KEEPALIVE_INTERVAL: '1m', STREAM_MAX_AGE: 'forever' }, { waitReady: false });
    const code = await bad.exited;
    expect(code).toBe(2);
    expect(bad.log()).toMatch(/KEEPALIVE_INTERVAL must be at least 1s and below 15s/);
    expect(bad.log()).toMatch(/STREAM_MAX_AGE must be a duration/);
  });

  it('SIGTERM drains a gateway: streams get a retry hint and a closing comment, claims are released, the process exits 0', async () => {
    const gateway = await startRelayProcess('gateway', { ...env, RETRY_MIN: '1s', RETRY_MAX: '3s' });
    const key = await admin.createKey();
    const p = admin.player();
    const s = await openStream(gateway.url, { headers: admin.headers(p, key, 'drain.example.net') });
    await s.waitForComment(/^connected/);
    const code = await gateway.stop();
    expect(code).toBe(0);
    await s.waitClosed();
    expect(s.comments.some((c) => /restarting; reconnect with Last-Event-ID/.test(c))).toBe(true);
    const retry = s.retries[s.retries.length - 1]!;
    expect(retry).toBeGreaterThanOrEqual(1000);
    expect(retry).toBeLessThanOrEqual(3000);
    const claims = await admin.server.core.nats.buckets.streams.keys();
    const left: string[] = [];
    for await (const k of claims) left.push(k);
    expect(left.filter((k) => k.startsWith(p.uuid))).toEqual([]);
  });

  it('relay serve all answers both verbs on one port', async () => {
    const all = await startRelayProcess('all', env);
    procs.push(all);
    const key = await admin.createKey();
    const ch = 'all-in-one.example.net';
    const s = await openStream(all.url, { headers: admin.headers(admin.player(), key, ch) });
    await s.waitForComment(/^connected/);
    await fetch(all.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...admin.headers(admin.player(), key, ch) },
      body: JSON.stringify({ type: 'chat', message: 'one port' }),
    });
    expect((await s.nextPair()).data.message).toBe('one port');
  });

  it('npm run build produces dist/ whose entry point serves the same way', async () => {
    execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { stdio: 'pipe' });
    const entry = new URL('../dist/services/cli/main.js', import.meta.url);
    expect(existsSync(entry)).toBe(true);
    const gateway = await startRelayProcess('gateway', env, { command: [entry.pathname, 'serve', 'gateway'] });
    procs.push(gateway);
    const key = await admin.createKey();
    const s = await openStream(gateway.url, { headers: admin.headers(admin.player(), key, 'dist.example.net') });
    await s.waitForComment(/^connected/);
  });
});

describe('a production install (runtime dependencies only, as the image has them)', () => {
  let install: ProductionInstall | undefined;
  beforeAll(() => {
    install = createProductionInstall({ checkoutFiles: ['bin/relay.js', 'tools/relay-cli.ts'] });
  }, 120_000);
  afterAll(() => install?.remove());

  it('has neither tsx nor pino-pretty, and with LOG_PRETTY=true dist/ serves, logging JSON after one warning', async () => {
    const dir = install!.dir;
    expect(existsSync(join(dir, 'node_modules', 'pino'))).toBe(true);
    expect(existsSync(join(dir, 'node_modules', 'tsx'))).toBe(false);
    expect(existsSync(join(dir, 'node_modules', 'pino-pretty'))).toBe(false);
    const gateway = await startRelayProcess('gateway', { ...env, LOG_PRETTY: 'true', NODE_ENV: 'production' }, { command: [install!.entry, 'serve', 'gateway'] });
    procs.push(gateway);
    const key = await admin.createKey();
    const s = await openStream(gateway.url, { headers: admin.headers(admin.player(), key, 'production.example.net') });
    await s.waitForComment(/^connected/);
    const lines = gateway.log().trim().split('\n');
    for (const line of lines) expect(() => JSON.parse(line) as unknown, line).not.toThrow();
    expect(lines.filter((l) => /pino-pretty, a development dependency, is not installed/.test(l))).toHaveLength(1);
  });

  it('bin/relay.js in a checkout pruned to production dependencies (tools/ there, esbuild not) runs dist/', async () => {
    expect(existsSync(join(install!.dir, 'node_modules', 'esbuild'))).toBe(false);
    const gateway = await startRelayProcess('gateway', env, { command: [join(install!.dir, 'bin', 'relay.js'), 'serve', 'gateway'] });
    procs.push(gateway);
    const key = await admin.createKey();
    const s = await openStream(gateway.url, { headers: admin.headers(admin.player(), key, 'pruned.example.net') });
    await s.waitForComment(/^connected/);
  });
});
