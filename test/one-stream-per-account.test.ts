// Spec 4.1 rule 4: one stream per (account, channel). The newer stream wins; the older one is told
// why and closed. `relay streams` shows who holds what.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StreamClaim } from '../schemas/records.js';
import { runCliJson } from './helpers/cli.js';
import { waitUntil as eventually } from '../tools/poll.js';
import { RelayFixture } from './helpers/relay.js';

let relay: RelayFixture;
let n = 0;
const channel = (): string => `evict-${++n}.example.net`;

beforeAll(async () => {
  relay = await RelayFixture.start();
});
afterAll(async () => {
  await relay?.close();
});

const streams = (): Promise<StreamClaim[]> => runCliJson<StreamClaim[]>(['streams', '--json'], { NATS_URL: relay.nats.url });

describe('one stream per account and channel', () => {
  it('a second stream evicts the first, which gets a comment naming the eviction and is closed; the second keeps working', async () => {
    const key = await relay.createKey();
    const ch = channel();
    const me = relay.player();
    const first = await relay.connect(relay.headers(me, key, ch));
    const second = await relay.connect(relay.headers(me, key, ch));
    await first.waitForComment(/^evicted/);
    await first.waitClosed();
    await relay.post({ type: 'chat', message: 'still here' }, relay.headers(relay.player(), key, ch));
    expect((await second.nextPair()).data.message).toBe('still here');
    expect(second.isClosed).toBe(false);
  });

  it('the same account keeps one stream on each of two servers', async () => {
    const key = await relay.createKey();
    const [a, b] = [channel(), channel()];
    const me = relay.player();
    const onA = await relay.connect(relay.headers(me, key, a));
    const onB = await relay.connect(relay.headers(me, key, b));
    const other = relay.player();
    await relay.post({ type: 'chat', message: 'to a' }, relay.headers(other, key, a));
    await relay.post({ type: 'chat', message: 'to b' }, relay.headers(other, key, b));
    expect((await onA.nextPair()).data.message).toBe('to a');
    expect((await onB.nextPair()).data.message).toBe('to b');
  });

  it('two accounts on one server do not evict each other', async () => {
    const key = await relay.createKey();
    const ch = channel();
    const s1 = await relay.connect(relay.headers(relay.player(), key, ch));
    const s2 = await relay.connect(relay.headers(relay.player(), key, ch));
    await relay.post({ type: 'chat', message: 'both' }, relay.headers(relay.player(), key, ch));
    expect((await s1.nextPair()).data.message).toBe('both');
    expect((await s2.nextPair()).data.message).toBe('both');
  });

  it('relay streams lists the surviving stream, and its entry goes when the stream closes', async () => {
    const key = await relay.createKey();
    const ch = channel();
    const me = relay.player();
    const first = await relay.connect(relay.headers(me, key, ch));
    const second = await relay.connect(relay.headers(me, key, ch));
    await first.waitClosed();
    const held = (await streams()).filter((c) => c.channel === ch);
    expect(held).toHaveLength(1);
    expect(held[0]).toMatchObject({ uuid: me.uuid, channel: ch, clientId: key.clientId, node: relay.server.config.nodeId });
    second.close();
    await second.ended;
    // The claim is deleted as the gateway notices the close.
    await eventually(async () => (await streams()).every((c) => c.channel !== ch), 'the closed stream to leave relay streams');
  });
});
