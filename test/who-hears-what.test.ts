// The delivery rules (DESIGN.md "Who hears what"): receive scopes fixed at connect, own frames,
// direct messages, keepalives, bridge streams. "Not delivered" is shown with a sentinel: the next
// pair the stream reads is the sentinel, so nothing came before it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Scope } from '../services/core/scopes.js';
import { RelayFixture, type Player } from './helpers/relay.js';
import type { SseStream } from './helpers/sse-client.js';
import type { CreatedKey } from '../services/core/keys.js';

let relay: RelayFixture;
let sendAll: CreatedKey;
let n = 0;
const channel = (): string => `hears-${++n}.example.net`;

const ESTABLISH = Scope.Establish;
const SEND = Scope.Send;
const RECEIVE = Scope.Receive;
const BRIDGE = Scope.Unauthenticated;

const PRESENCE = {
  type: 'presence',
  inventory: [],
  attributes: { absorption: 0, health: 20, hunger: 20, oxygen: 300, saturation: 5 },
};

beforeAll(async () => {
  relay = await RelayFixture.start({ env: { KEEPALIVE_INTERVAL: '1s' } });
  sendAll = await relay.createKey([ESTABLISH, SEND]);
});
afterAll(async () => {
  await relay?.close();
});

async function post(body: unknown, from: Player, ch: string): Promise<void> {
  const res = await relay.post(body, relay.headers(from, sendAll, ch));
  expect(res.status).toBe(200);
}

/** Posts a chat every stream with any receive scope hears, then checks it is the next pair read. */
async function sentinel(streams: SseStream[], ch: string, from: Player, expectedBefore: string[] = []): Promise<void> {
  const tag = `sentinel ${Math.random()}`;
  await post({ type: 'chat', message: tag }, from, ch);
  for (const s of streams) {
    const seen = await s.pairsUntil((p) => p.data['message'] === tag);
    expect(seen.map((p) => (typeof p.data['message'] === 'string' ? p.data['message'] : p.data.type))).toEqual([...expectedBefore, tag]);
  }
}

describe('receive scopes', () => {
  it('plain irc.messages.receive hears every type from others', async () => {
    const ch = channel();
    const key = await relay.createKey([ESTABLISH, RECEIVE]);
    const s = await relay.connect(relay.headers(relay.player(), key, ch));
    const other = relay.player();
    await post(PRESENCE, other, ch);
    await post({ type: 'death', player: { uuid: other.uuid, name: other.name } }, other, ch);
    await post({ type: 'chat', message: 'hi' }, other, ch);
    expect((await s.nextPair()).data.type).toBe('presence');
    expect((await s.nextPair()).data.type).toBe('death');
    expect((await s.nextPair()).data.type).toBe('chat');
  });

  it('a key narrowed to irc.messages.receive.presence hears presence and keepalives, never chat or deaths', async () => {
    const ch = channel();
    const key = await relay.createKey([ESTABLISH, `${RECEIVE}.presence`]);
    const s = await relay.connect(relay.headers(relay.player(), key, ch));
    const other = relay.player();
    await post({ type: 'chat', message: 'not for you' }, other, ch);
    await post({ type: 'death', player: { uuid: other.uuid, name: other.name } }, other, ch);
    await post({ type: 'keepalive' }, other, ch);
    await post(PRESENCE, other, ch);
    const first = await s.nextPair();
    expect(first.data).toEqual({ type: 'keepalive' });
    expect(first.meta.uuid).toBe(other.uuid);
    expect((await s.nextPair()).data.type).toBe('presence');
  });

  it('a key with only irc.connection.establish hears only its own frames', async () => {
    const ch = channel();
    const me = relay.player();
    const key = await relay.createKey([ESTABLISH, SEND]);
    const s = await relay.connect(relay.headers(me, key, ch));
    const other = relay.player();
    await post({ type: 'chat', message: 'from someone else' }, other, ch);
    await post({ type: 'keepalive' }, other, ch);
    await relay.post({ type: 'chat', message: 'my own' }, relay.headers(me, key, ch));
    const pair = await s.nextPair();
    expect(pair.data.message).toBe('my own');
    expect(pair.meta.uuid).toBe(me.uuid);
  });

  it('the sender hears its own chat back, whatever its receive scopes', async () => {
    const ch = channel();
    const me = relay.player();
    const key = await relay.createKey([ESTABLISH, SEND, `${RECEIVE}.presence`]);
    const s = await relay.connect(relay.headers(me, key, ch));
    await relay.post({ type: 'chat', message: 'echo' }, relay.headers(me, key, ch));
    expect((await s.nextPair()).data).toEqual({ type: 'chat', message: 'echo' });
  });

  it('a type outside the receive scopes is dropped silently: the stream stays open and hears the next one', async () => {
    const ch = channel();
    const key = await relay.createKey([ESTABLISH, `${RECEIVE}.chat`]);
    const s = await relay.connect(relay.headers(relay.player(), key, ch));
    const other = relay.player();
    await post(PRESENCE, other, ch);
    await sentinel([s], ch, other);
    expect(s.isClosed).toBe(false);
  });
});

describe('direct messages', () => {
  it('reach the addressee, not a third party, not the sender', async () => {
    const ch = channel();
    const key = await relay.createKey([ESTABLISH, SEND, RECEIVE]);
    const [sender, addressee, third] = [relay.player(), relay.player(), relay.player()];
    const sSender = await relay.connect(relay.headers(sender, key, ch));
    const sAddressee = await relay.connect(relay.headers(addressee, key, ch));
    const sThird = await relay.connect(relay.headers(third, key, ch));
    await relay.post({ type: 'message', message: 'psst', to: addressee.uuid }, relay.headers(sender, key, ch));
    const dm = await sAddressee.nextPair();
    expect(dm.data).toEqual({ type: 'message', message: 'psst', to: addressee.uuid });
    expect(dm.meta.uuid).toBe(sender.uuid);
    await sentinel([sSender, sThird], ch, relay.player());
  });

  it('a DM addressed to oneself comes back to the sender', async () => {
    const ch = channel();
    const me = relay.player();
    const key = await relay.createKey([ESTABLISH, SEND, RECEIVE]);
    const s = await relay.connect(relay.headers(me, key, ch));
    await relay.post({ type: 'message', message: 'note to self', to: me.uuid }, relay.headers(me, key, ch));
    expect((await s.nextPair()).data.message).toBe('note to self');
  });

  it('the addressee hears a DM only if its receive scopes cover message', async () => {
    const ch = channel();
    const addressee = relay.player();
    const key = await relay.createKey([ESTABLISH, `${RECEIVE}.chat`]);
    const s = await relay.connect(relay.headers(addressee, key, ch));
    const sender = relay.player();
    await post({ type: 'message', message: 'you cannot hear this', to: addressee.uuid }, sender, ch);
    await sentinel([s], ch, sender);
  });

  it('a bridge stream hears DMs addressed to anyone when its receive scopes cover message', async () => {
    const ch = channel();
    const bridgeKey = await relay.createKey([BRIDGE, ESTABLISH, RECEIVE]);
    const narrowBridge = await relay.createKey([BRIDGE, ESTABLISH, `${RECEIVE}.chat`]);
    const bridge = await relay.connect(relay.headers(null, bridgeKey, ch));
    const narrow = await relay.connect(relay.headers(null, narrowBridge, ch));
    const [a, b] = [relay.player(), relay.player()];
    await post({ type: 'message', message: 'a to b', to: b.uuid }, a, ch);
    const dm = await bridge.nextPair();
    expect(dm.data).toEqual({ type: 'message', message: 'a to b', to: b.uuid });
    expect(dm.meta.uuid).toBe(a.uuid);
    await sentinel([narrow], ch, a);
  });
});

describe('keepalives', () => {
  it('the relay sends every stream a keepalive pair from the nil UUID, without an id, whatever its scopes', async () => {
    const ch = channel();
    const key = await relay.createKey([ESTABLISH]);
    const s = await relay.connect(relay.headers(relay.player(), key, ch));
    const pair = await s.nextPair({ serverKeepalives: true, timeoutMs: 5000 });
    expect(pair.meta).toEqual({ uuid: '00000000-0000-0000-0000-000000000000', agent: expect.stringMatching(/^channel-relay\//), channel: ch });
    expect(pair.data).toEqual({ type: 'keepalive' });
    expect(pair.id).toBeNull();
  });

  it('keepalives do not move Last-Event-ID: the next stored frame keeps the sequence numbering', async () => {
    const ch = channel();
    const key = await relay.createKey([ESTABLISH, RECEIVE]);
    const s = await relay.connect(relay.headers(relay.player(), key, ch));
    await s.nextPair({ serverKeepalives: true, timeoutMs: 5000 });
    await post({ type: 'chat', message: 'after keepalive' }, relay.player(), ch);
    const pair = await s.nextPair();
    expect(pair.id).toBeGreaterThan(0);
  });
});

describe('bridge streams', () => {
  it('a bridge stream opened without a channel hears every channel, and meta.channel says which', async () => {
    const key = await relay.createKey([BRIDGE, ESTABLISH, RECEIVE]);
    const s = await relay.connect(relay.headers(null, key, null));
    await s.waitForComment(/connected to every channel/);
    const [a, b] = [channel(), channel()];
    const p = relay.player();
    await post({ type: 'chat', message: 'on a' }, p, a);
    await post({ type: 'chat', message: 'on b' }, p, b);
    const first = await s.nextPair();
    const second = await s.nextPair();
    expect([first.meta.channel, first.data.message]).toEqual([a, 'on a']);
    expect([second.meta.channel, second.data.message]).toEqual([b, 'on b']);
  });

  it('a bridge stream opened with a channel hears only that channel', async () => {
    const key = await relay.createKey([BRIDGE, ESTABLISH, RECEIVE]);
    const [a, b] = [channel(), channel()];
    const s = await relay.connect(relay.headers(null, key, a));
    const p = relay.player();
    await post({ type: 'chat', message: 'elsewhere' }, p, b);
    await sentinel([s], a, p);
  });

  it('a key without irc.connection.unauthenticated cannot open a stream without a session', async () => {
    const key = await relay.createKey([ESTABLISH, RECEIVE]);
    const s = await relay.open(relay.headers(null, key, channel()));
    const r = await s.refusal();
    expect(r.status).toBe(401);
    expect(r.body.error).toBe('unauthorized');
  });
});
