// What a client holding a stream sees: the SSE envelope, meta+data pairs, ids, channel isolation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RelayFixture } from './helpers/relay.js';

let relay: RelayFixture;
let n = 0;
const channel = (): string => `delivery-${++n}.example.net`;

beforeAll(async () => {
  relay = await RelayFixture.start();
});
afterAll(async () => {
  await relay?.close();
});

describe('opening a stream', () => {
  it.each(['/', '/irc'])('GET %s opens an SSE stream with headers that keep proxies from buffering it', async (path) => {
    const key = await relay.createKey();
    const s = await relay.open(relay.headers(relay.player(), key, channel()), { path });
    expect(s.status).toBe(200);
    expect(s.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(s.headers['cache-control']).toBe('no-cache, no-transform');
    expect(s.headers['x-accel-buffering']).toBe('no');
    // Bytes arrive at once, before any payload: the client knows it is connected.
    await s.waitForComment(/^connected to /);
    expect(s.retries.length).toBeGreaterThan(0);
  });

  it.each(['/', '/irc'])('a chat posted to %s reaches streams opened on either path', async (postPath) => {
    const key = await relay.createKey();
    const ch = channel();
    const viaRoot = await relay.connect(relay.headers(relay.player(), key, ch), { path: '/' });
    const viaIrc = await relay.connect(relay.headers(relay.player(), key, ch), { path: '/irc' });
    const sender = relay.player();
    const res = await relay.post({ type: 'chat', message: `via ${postPath}` }, relay.headers(sender, key, ch), postPath);
    expect(res.status).toBe(200);
    for (const s of [viaRoot, viaIrc]) {
      const pair = await s.nextPair();
      expect(pair.meta.uuid).toBe(sender.uuid);
      expect(pair.data).toEqual({ type: 'chat', message: `via ${postPath}` });
    }
  });
});

describe('frames', () => {
  it('each payload is a meta event immediately followed by an unnamed data event whose id is the stream sequence', async () => {
    const key = await relay.createKey();
    const ch = channel();
    const s = await relay.connect(relay.headers(relay.player(), key, ch));
    const sender = relay.player();
    await relay.post({ type: 'chat', message: 'one' }, relay.headers(sender, key, ch));
    await relay.post({ type: 'chat', message: 'two' }, relay.headers(sender, key, ch));
    const meta = await s.nextEvent();
    const data = await s.nextEvent();
    expect(meta.event).toBe('meta');
    expect(JSON.parse(meta.data)).toEqual({
      uuid: sender.uuid,
      agent: 'testmod/1.0.0+0123456789abcdef0123456789abcdef01234567',
      channel: ch,
    });
    expect(data.event).toBeNull();
    expect(JSON.parse(data.data)).toEqual({ type: 'chat', message: 'one' });
    expect(Number(data.id)).toBeGreaterThan(0);
    const second = await s.nextPair();
    expect(second.data.message).toBe('two');
    expect(second.id).toBeGreaterThan(Number(data.id));
  });

  it('meta.agent is null when the sender sent no User-Agent', async () => {
    const key = await relay.createKey();
    const ch = channel();
    const s = await relay.connect(relay.headers(relay.player(), key, ch));
    const headers = relay.headers(relay.player(), key, ch);
    delete headers['user-agent'];
    // fetch adds its own User-Agent unless told otherwise; send an empty one.
    await relay.post({ type: 'chat', message: 'anonymous' }, { ...headers, 'user-agent': '' });
    const pair = await s.nextPair();
    expect(pair.meta.agent).toBeNull();
  });

  it('a batch of N entries arrives as N pairs in the order sent', async () => {
    const key = await relay.createKey();
    const ch = channel();
    const s = await relay.connect(relay.headers(relay.player(), key, ch));
    const batch = Array.from({ length: 20 }, (_, i) => ({ type: 'chat', message: `line ${i}` }));
    const res = await relay.post(batch, relay.headers(relay.player(), key, ch));
    expect(res.body).toEqual({ accepted: 20, dropped: 0 });
    const got: string[] = [];
    for (let i = 0; i < 20; i++) got.push(String((await s.nextPair()).data['message']));
    expect(got).toEqual(batch.map((b) => b.message));
  });
});

describe('channels', () => {
  it('a stream on one server never hears another server', async () => {
    const key = await relay.createKey();
    const [a, b] = [channel(), channel()];
    const s = await relay.connect(relay.headers(relay.player(), key, a));
    const sender = relay.player();
    await relay.post({ type: 'chat', message: 'for b' }, relay.headers(sender, key, b));
    await relay.post({ type: 'chat', message: 'for a' }, relay.headers(sender, key, a));
    const pair = await s.nextPair();
    expect(pair.data.message).toBe('for a');
    expect(pair.meta.channel).toBe(a);
  });

  it('the host query wins over the X-IRC-Multiplayer-Server header when opening a stream', async () => {
    const key = await relay.createKey();
    const [fromQuery, fromHeader] = [channel(), channel()];
    const s = await relay.connect(relay.headers(relay.player(), key, fromHeader), { path: `/?host=${fromQuery}` });
    await s.waitForComment(new RegExp(`connected to ${fromQuery.replace(/\./g, '\\.')}`));
    const sender = relay.player();
    await relay.post({ type: 'chat', message: 'header channel' }, relay.headers(sender, key, fromHeader));
    await relay.post({ type: 'chat', message: 'query channel' }, relay.headers(sender, key, fromQuery));
    expect((await s.nextPair()).data.message).toBe('query channel');
  });

  it('a stream without any channel is refused with 400 missing_channel', async () => {
    const key = await relay.createKey();
    const s = await relay.open(relay.headers(relay.player(), key, null));
    const r = await s.refusal();
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('missing_channel');
    expect(r.body.message).toMatch(/X-IRC-Multiplayer-Server/);
  });

  it('the stream channel is normalised the same way as the POST channel', async () => {
    const key = await relay.createKey();
    const s = await relay.connect(relay.headers(relay.player(), key, '  Play.Normal-Ise.NET.:25565 '));
    await s.waitForComment(/connected to play\.normal-ise\.net$/);
    await relay.post({ type: 'chat', message: 'normalised' }, relay.headers(relay.player(), key, 'play.normal-ise.net'));
    const pair = await s.nextPair();
    expect(pair.meta.channel).toBe('play.normal-ise.net');
  });

  it('GET without Accept: text/event-stream is refused with 406', async () => {
    const key = await relay.createKey();
    const s = await relay.open({ ...relay.headers(relay.player(), key, channel()), accept: 'application/json' });
    const r = await s.refusal();
    expect(r.status).toBe(406);
    expect(r.body.error).toBe('not_acceptable');
  });
});
