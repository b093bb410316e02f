// A bridge: a key with irc.connection.unauthenticated, no session token, one stream on every channel
// (no server), and sendAs posting envelopes that each name their own server.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RelayClient, RelayError } from '../../clients/typescript/src/index.js';
import { ALL_SCOPES } from '../../services/core/scopes.js';
import { CLIENT_AGENT, Recorder, TestTransport } from '../helpers/relay-client.js';
import { RelayFixture } from '../helpers/relay.js';

let relay: RelayFixture;
const clients: RelayClient[] = [];

beforeAll(async () => {
  relay = await RelayFixture.start();
});
afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});
afterAll(async () => {
  await relay?.close();
});

describe('RelayClient as a bridge', () => {
  it('streams every channel without a token, and one sendAs reaches several servers as the named players', async () => {
    const bridgeKey = await relay.createKey(ALL_SCOPES);
    const playerKey = await relay.createKey();
    const transport = new TestTransport();
    const bridge = new RelayClient({ url: relay.url, clientId: bridgeKey.clientId, clientSecret: bridgeKey.clientSecret, userAgent: 'bridge/1.0+abc', fetch: transport.fetch });
    clients.push(bridge);
    const heard = new Recorder(bridge);
    await bridge.connect();
    expect(transport.gets[0]!.headers['authorization']).toBeUndefined();
    expect(transport.gets[0]!.headers['x-irc-multiplayer-server']).toBeUndefined();

    const onServer = async (server: string): Promise<Recorder> => {
      const p = relay.player();
      const c = new RelayClient({ url: relay.url, server, clientId: playerKey.clientId, clientSecret: playerKey.clientSecret, userAgent: CLIENT_AGENT, token: () => p.token });
      clients.push(c);
      const rec = new Recorder(c);
      await c.connect();
      return rec;
    };
    const [a, b] = [await onServer('a.bridge.example.net'), await onServer('b.bridge.example.net')];
    const discordUser = '0a1b2c3d-4e5f-4a6b-8c7d-8e9fa0b1c2d3';
    const result = await bridge.sendAs(
      ['a.bridge.example.net', 'b.bridge.example.net'].map((host) => ({ user: discordUser, agent: 'discord-bridge/2.0', host, message: { type: 'chat' as const, message: `hi ${host}` } })),
    );
    expect(result).toEqual({ accepted: 2, dropped: 0 });
    await a.until(() => a.chats().length === 1, 'a chat on a');
    await b.until(() => b.chats().length === 1, 'a chat on b');
    expect(a.frames.find((f) => f.payload.type === 'chat')).toMatchObject({
      meta: { uuid: discordUser, agent: 'discord-bridge/2.0', channel: 'a.bridge.example.net' },
      payload: { message: 'hi a.bridge.example.net' },
    });
    expect(b.chats()).toEqual(['hi b.bridge.example.net']);
    // The bridge's own stream hears both servers.
    await heard.until(() => heard.chats().length === 2, 'both chats at the bridge');
    expect(heard.frames.filter((f) => f.payload.type === 'chat').map((f) => f.meta.channel).sort()).toEqual(['a.bridge.example.net', 'b.bridge.example.net']);
  });

  it('an envelope without a host, from a bridge without a server, is refused before any request', async () => {
    const key = await relay.createKey(ALL_SCOPES);
    const transport = new TestTransport();
    const bridge = new RelayClient({ url: relay.url, clientId: key.clientId, clientSecret: key.clientSecret, userAgent: 'bridge/1.0+abc', fetch: transport.fetch });
    const err = await bridge.sendAs({ user: '0a1b2c3d-4e5f-4a6b-8c7d-8e9fa0b1c2d3', agent: 'x', message: { type: 'chat', message: 'where?' } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RelayError);
    expect(err).toMatchObject({ code: 'misconfigured' });
    expect(transport.requests).toHaveLength(0);
  });
});
