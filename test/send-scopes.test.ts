// Send scopes (spec 5.4 rule 1, A4): refused plainly, never banned, and nothing of the batch stored.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Scope } from '../services/core/scopes.js';
import { RelayFixture } from './helpers/relay.js';

let relay: RelayFixture;
const PRESENCE = { type: 'presence', inventory: [], attributes: { absorption: 0, health: 20, hunger: 20, oxygen: 300, saturation: 5 } };

beforeAll(async () => {
  relay = await RelayFixture.start();
});
afterAll(async () => {
  await relay?.close();
});

describe('send scopes', () => {
  it('a key narrowed to irc.messages.send.presence posts presence, and gets 403 missing_scope for chat', async () => {
    const ch = 'send-scope.example.net';
    const narrow = await relay.createKey([Scope.Establish, `${Scope.Send}.presence`]);
    const p = relay.player();
    expect((await relay.post(PRESENCE, relay.headers(p, narrow, ch))).status).toBe(200);
    const res = await relay.post({ type: 'chat', message: 'no' }, relay.headers(p, narrow, ch));
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ error: 'missing_scope', scope: 'irc.messages.send.chat' });
    const ban = await relay.server.core.nats.buckets.bans.get(p.uuid);
    expect(ban).toBeNull();
  });

  it('a batch with one entry outside the send scopes publishes nothing', async () => {
    const ch = 'send-scope-batch.example.net';
    const full = await relay.createKey();
    const narrow = await relay.createKey([Scope.Establish, `${Scope.Send}.presence`]);
    const s = await relay.connect(relay.headers(relay.player(), full, ch));
    const p = relay.player();
    const res = await relay.post([PRESENCE, { type: 'chat', message: 'forbidden' }, PRESENCE], relay.headers(p, narrow, ch));
    expect(res.status).toBe(403);
    await relay.post({ type: 'chat', message: 'sentinel' }, relay.headers(relay.player(), full, ch));
    expect((await s.nextPair()).data.message).toBe('sentinel');
  });

  it('a key with no send scope at all cannot post anything', async () => {
    const listenOnly = await relay.createKey([Scope.Establish, Scope.Receive]);
    const res = await relay.post({ type: 'keepalive' }, relay.headers(relay.player(), listenOnly, 'x.example.net'));
    expect(res.status).toBe(403);
    expect(res.body['error']).toBe('missing_scope');
  });
});
