// Re-attribution envelopes (spec 4.3): bridges post on behalf of other players.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedKey } from '../services/core/keys.js';
import { Scope } from '../services/core/scopes.js';
import { RelayFixture } from './helpers/relay.js';

let relay: RelayFixture;
let bridge: CreatedKey;
let listener: CreatedKey;
let n = 0;
const channel = (): string => `env-${++n}.example.net`;
const chat = (message: string): Record<string, unknown> => ({ type: 'chat', message });

beforeAll(async () => {
  relay = await RelayFixture.start();
  bridge = await relay.createKey([Scope.Unauthenticated, Scope.Establish, Scope.Send, Scope.Receive]);
  listener = await relay.createKey();
});
afterAll(async () => {
  await relay?.close();
});

describe('envelopes from a bridge key', () => {
  it('are delivered with the envelope user and agent, exactly like a bare post from that user', async () => {
    const ch = channel();
    const s = await relay.connect(relay.headers(relay.player(), listener, ch));
    const user = relay.player();
    await relay.post([{ user: user.uuid, agent: 'mod/2.0+abc', message: chat('bridged') }], relay.headers(null, bridge, ch));
    await relay.post(chat('bare'), { ...relay.headers(user, listener, ch), 'user-agent': 'mod/2.0+abc' });
    const bridged = await s.nextPair();
    const bare = await s.nextPair();
    expect(bridged.meta).toEqual(bare.meta);
    expect(bridged.meta).toEqual({ uuid: user.uuid, agent: 'mod/2.0+abc', channel: ch });
  });

  it('one POST fans out to several servers, each entry to the server its host names, mixed with the request channel', async () => {
    const [a, b, fallback] = [channel(), channel(), channel()];
    const sa = await relay.connect(relay.headers(relay.player(), listener, a));
    const sb = await relay.connect(relay.headers(relay.player(), listener, b));
    const sf = await relay.connect(relay.headers(relay.player(), listener, fallback));
    const user = relay.player();
    const res = await relay.post(
      [
        { user: user.uuid, agent: 'bridge', host: a, message: chat('to a') },
        { user: user.uuid, agent: 'bridge', host: b.toUpperCase(), message: chat('to b') },
        { user: user.uuid, agent: 'bridge', message: chat('to the header channel') },
      ],
      relay.headers(null, bridge, fallback),
    );
    expect(res.body).toEqual({ accepted: 3, dropped: 0 });
    expect((await sa.nextPair()).data.message).toBe('to a');
    const onB = await sb.nextPair();
    expect([onB.meta.channel, onB.data.message]).toEqual([b, 'to b']);
    expect((await sf.nextPair()).data.message).toBe('to the header channel');
  });

  it('accept the legacy spellings channel and userAgent; host and agent win when both are given', async () => {
    const [legacy, wins] = [channel(), channel()];
    const sl = await relay.connect(relay.headers(relay.player(), listener, legacy));
    const sw = await relay.connect(relay.headers(relay.player(), listener, wins));
    const user = relay.player();
    await relay.post(
      [
        { user: user.uuid, userAgent: 'old-bridge/1', channel: legacy, message: chat('legacy') },
        { user: user.uuid, agent: 'new', userAgent: 'old', host: wins, channel: legacy, message: chat('both') },
      ],
      relay.headers(null, bridge, null),
    );
    const l = await sl.nextPair();
    expect([l.meta.agent, l.data.message]).toEqual(['old-bridge/1', 'legacy']);
    const w = await sw.nextPair();
    expect([w.meta.agent, w.data.message]).toEqual(['new', 'both']);
  });

  it('validate the inner payload exactly as if bare: an invalid one is a 400 and nothing is stored', async () => {
    const ch = channel();
    const s = await relay.connect(relay.headers(relay.player(), listener, ch));
    const user = relay.player();
    const res = await relay.post(
      [
        { user: user.uuid, agent: 'b', message: chat('ok') },
        { user: user.uuid, agent: 'b', message: { type: 'ping', player: user.uuid, position: { x: 0, y: -100, z: 0, dimension: 'overworld' } } },
      ],
      relay.headers(null, bridge, ch),
    );
    expect(res.status).toBe(400);
    expect(res.body['details']).toEqual([{ entry: 1, path: '/message/position/y', reason: 'must be >= -64' }]);
    const unknown = await relay.post([{ user: user.uuid, agent: 'b', message: { type: 'warp' } }], relay.headers(null, bridge, ch));
    expect(unknown.body['error']).toBe('unknown_type');
    const noUser = await relay.post([{ agent: 'b', message: chat('who?') }], relay.headers(null, bridge, ch));
    expect(noUser.status).toBe(400);
    const noAgent = await relay.post([{ user: user.uuid, message: chat('what?') }], relay.headers(null, bridge, ch));
    expect(noAgent.status).toBe(400);
    await relay.post(chat('sentinel'), relay.headers(relay.player(), listener, ch));
    expect((await s.nextPair()).data.message).toBe('sentinel');
  });

  it('check the inner type against the key’s send scopes: a presence-only bridge relays only presence', async () => {
    const presenceBridge = await relay.createKey([Scope.Unauthenticated, `${Scope.Send}.presence`]);
    const user = relay.player();
    const presence = { type: 'presence', inventory: [], attributes: { absorption: 0, health: 20, hunger: 20, oxygen: 300, saturation: 5 } };
    const ok = await relay.post([{ user: user.uuid, agent: 'b', message: presence }], relay.headers(null, presenceBridge, channel()));
    expect(ok.body).toEqual({ accepted: 1, dropped: 0 });
    const res = await relay.post([{ user: user.uuid, agent: 'b', message: chat('no') }], relay.headers(null, presenceBridge, channel()));
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ error: 'missing_scope', scope: 'irc.messages.send.chat' });
  });

  it('reach the named user’s own stream as its own frame, even for a type that user does not receive', async () => {
    const ch = channel();
    const user = relay.player();
    const ownOnly = await relay.createKey([Scope.Establish]);
    const s = await relay.connect(relay.headers(user, ownOnly, ch));
    await relay.post([{ user: user.uuid, agent: 'bridge', message: chat('said for you') }], relay.headers(null, bridge, ch));
    const pair = await s.nextPair();
    expect([pair.meta.uuid, pair.data.message]).toEqual([user.uuid, 'said for you']);
  });

  it('a bridge without a session cannot post a bare payload: 400 sender_required', async () => {
    const res = await relay.post(chat('who am I'), relay.headers(null, bridge, channel()));
    expect(res.status).toBe(400);
    expect(res.body['error']).toBe('sender_required');
  });

  it('an envelope naming an invalid host is refused with 400 invalid_channel', async () => {
    const res = await relay.post([{ user: relay.player().uuid, agent: 'b', host: 'no spaces allowed', message: chat('x') }], relay.headers(null, bridge, channel()));
    expect(res.status).toBe(400);
    expect(res.body['error']).toBe('invalid_channel');
  });
});

describe('envelopes from an ordinary key', () => {
  it('are dropped silently: 200, only bare entries counted and delivered', async () => {
    const ch = channel();
    const s = await relay.connect(relay.headers(relay.player(), listener, ch));
    const sender = relay.player();
    const victim = relay.player();
    const res = await relay.post(
      [chat('bare one'), { user: victim.uuid, agent: 'spoof', message: chat('spoofed') }, chat('bare two')],
      relay.headers(sender, listener, ch),
    );
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ accepted: 2, dropped: 0 });
    const first = await s.nextPair();
    const second = await s.nextPair();
    expect([first.data.message, second.data.message]).toEqual(['bare one', 'bare two']);
    expect([first.meta.uuid, second.meta.uuid]).toEqual([sender.uuid, sender.uuid]);
  });
});
