// A client whose gateway dies reconnects to another with Last-Event-ID and misses nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STREAM_NAME } from '../../services/core/subjects.js';
import { Mesh } from '../helpers/mesh.js';

let mesh: Mesh;

beforeAll(async () => {
  mesh = await Mesh.start({ gateways: 2, ingresses: 1 });
});
afterAll(async () => {
  await mesh?.close();
});

describe('resume across gateways', () => {
  it('after kill -9 of its gateway, a client resumes on another and gets every missed frame in order, once', async () => {
    const victim = await mesh.addGateway();
    const key = await mesh.createKey();
    const ch = 'failover.example.net';
    const me = mesh.player();
    const sender = mesh.player();
    const post = (message: string): Promise<unknown> =>
      mesh.post(mesh.ingresses[0]!, { type: 'chat', message }, mesh.headers(sender, key, ch)).then((r) => expect(r.status).toBe(200));

    const s = await mesh.connect(victim, mesh.headers(me, key, ch));
    for (let i = 0; i < 10; i++) await post(`before ${i}`);
    let last = 0;
    for (let i = 0; i < 10; i++) last = (await s.nextPair()).id!;
    await victim.kill();
    await s.ended;
    for (let i = 0; i < 50; i++) await post(`while down ${i}`);
    const resumed = await mesh.open(mesh.gateways[0]!, { ...mesh.headers(me, key, ch), 'last-event-id': String(last) });
    const live = (async () => {
      for (let i = 0; i < 20; i++) await post(`after ${i}`);
    })();
    await live;
    const got = await resumed.pairsUntil((p) => p.data.message === 'after 19', 15_000);
    const expected = [...Array.from({ length: 50 }, (_, i) => `while down ${i}`), ...Array.from({ length: 20 }, (_, i) => `after ${i}`)];
    expect(got.map((p) => p.data.message)).toEqual(expected);
    expect(new Set(got.map((p) => p.id)).size).toBe(expected.length);
  });

  it('beyond retention it resumes from the oldest kept frame and says so', async () => {
    const key = await mesh.createKey();
    const ch = 'expired.example.net';
    const me = mesh.player();
    const s = await mesh.connect(mesh.gateways[1]!, mesh.headers(me, key, ch));
    await mesh.post(mesh.ingresses[0]!, { type: 'chat', message: 'seen' }, mesh.headers(mesh.player(), key, ch));
    const seen = await s.nextPair();
    s.close();
    await mesh.post(mesh.ingresses[0]!, { type: 'chat', message: 'lost' }, mesh.headers(mesh.player(), key, ch));
    await mesh.post(mesh.ingresses[0]!, { type: 'chat', message: 'kept' }, mesh.headers(mesh.player(), key, ch));
    const info = await mesh.nats.jsm.streams.info(STREAM_NAME);
    await mesh.nats.jsm.streams.purge(STREAM_NAME, { seq: info.state.last_seq });
    const resumed = await mesh.open(mesh.gateways[0]!, { ...mesh.headers(me, key, ch), 'last-event-id': String(seen.id) });
    await resumed.waitForComment(/no longer kept/);
    expect((await resumed.nextPair()).data.message).toBe('kept');
  });
});
