import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RelayFixture } from './helpers/relay.js';

describe('a chat travels from POST to every stream on the channel', () => {
  let relay: RelayFixture;
  beforeAll(async () => {
    relay = await RelayFixture.start();
  });
  afterAll(async () => {
    await relay?.close();
  });

  it('delivers a meta frame then the payload to another player on the same server', async () => {
    const key = await relay.createKey();
    const alice = relay.player('Alice');
    const bob = relay.player('Bob');
    const stream = await relay.connect(relay.headers(bob, key, 'play.example.net'));
    const res = await relay.post({ type: 'chat', message: 'hello' }, relay.headers(alice, key, 'play.example.net'));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ accepted: 1, dropped: 0 });
    const pair = await stream.nextPair();
    expect(pair.meta).toEqual({ uuid: alice.uuid, agent: 'testmod/1.0.0+0123456789abcdef0123456789abcdef01234567', channel: 'play.example.net' });
    expect(pair.data).toEqual({ type: 'chat', message: 'hello' });
    expect(pair.id).toBeGreaterThan(0);
  });
});
