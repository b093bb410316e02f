// Bans and revocations issued anywhere close the affected streams on every gateway.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { Mesh } from '../helpers/mesh.js';

let mesh: Mesh;

beforeAll(async () => {
  mesh = await Mesh.start({ gateways: 2, ingresses: 2 });
});
afterAll(async () => {
  await mesh?.close();
});

describe('mesh-wide state', () => {
  it('relay bans add closes the account’s streams on every gateway and every ingress refuses it', async () => {
    const key = await mesh.createKey();
    const banned = mesh.player();
    const onOne = await mesh.connect(mesh.gateways[0]!, mesh.headers(banned, key, 'ban-a.example.net'));
    const onTwo = await mesh.connect(mesh.gateways[1]!, mesh.headers(banned, key, 'ban-b.example.net'));
    const bystander = await mesh.connect(mesh.gateways[1]!, mesh.headers(mesh.player(), key, 'ban-b.example.net'));
    const r = await runCli(['bans', 'add', banned.uuid, '--reason', 'mesh test'], { NATS_URL: mesh.env['NATS_URL']! });
    expect(r.code, r.stderr).toBe(0);
    for (const s of [onOne, onTwo]) {
      await s.waitForComment(/banned/);
      await s.waitClosed();
    }
    for (const ingress of mesh.ingresses) {
      const res = await mesh.post(ingress, { type: 'chat', message: 'x' }, mesh.headers(banned, key, 'ban-a.example.net'));
      expect(res.body['error']).toBe('banned');
    }
    await mesh.post(mesh.ingresses[0]!, { type: 'chat', message: 'others stay' }, mesh.headers(mesh.player(), key, 'ban-b.example.net'));
    expect((await bystander.nextPair()).data.message).toBe('others stay');
  });

  it('a key revoked on one node closes its streams on every gateway', async () => {
    const key = await mesh.createKey();
    const streams = await Promise.all(mesh.gateways.map((g, i) => mesh.connect(g, mesh.headers(mesh.player(), key, `revoke-${i}.example.net`))));
    await mesh.keys.revoke(key.clientId);
    for (const s of streams) {
      await s.waitForComment(/key was revoked/);
      await s.waitClosed();
    }
    const res = await mesh.post(mesh.ingresses[1]!, { type: 'chat', message: 'x' }, mesh.headers(mesh.player(), key, 'revoke-0.example.net'));
    expect(res.body['error']).toBe('key_revoked');
  });
});
