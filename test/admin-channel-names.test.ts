// One channel, one name (issue 19): `hidden.example.net:25565.` was normalised to
// `hidden.example.net:25565`, a channel apart from `hidden.example.net`, and the admin API, which
// normalises the name it is given once more, showed that channel empty. The gateway's claim, the
// meta frame and the admin API now all name it `hidden.example.net`.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../tools/poll.js';
import { startAdmin, type AdminFixture } from './helpers/admin.js';
import { RelayFixture } from './helpers/relay.js';

let relay: RelayFixture;
let admin: AdminFixture;

beforeAll(async () => {
  relay = await RelayFixture.start();
  admin = await startAdmin(relay.nats);
});
afterAll(async () => {
  await admin?.close();
  await relay?.close();
});

type Json = Record<string, unknown>;

describe('a channel spelled with the default port and a trailing dot', () => {
  it('is the same channel on the stream, in the meta frame and in the admin API, under either spelling', async () => {
    const key = await relay.createKey();
    const alice = relay.player('Alice');
    const stream = await relay.connect(relay.headers(alice, key, 'Hidden.Example.NET:25565.'));
    expect((await relay.post({ type: 'chat', message: 'hi' }, relay.headers(relay.player(), key, 'hidden.example.net'))).status).toBe(200);
    expect((await stream.nextPair()).meta['channel']).toBe('hidden.example.net');

    for (const spelling of ['hidden.example.net:25565.', 'hidden.example.net']) {
      const list = await waitUntil(async () => {
        const l = (await admin.call(`/api/channels/${spelling}/streams`)).body as Json[];
        return l.some((s) => s['uuid'] === alice.uuid) ? l : undefined;
      }, `alice's stream listed under ${spelling}`);
      expect(list.find((s) => s['uuid'] === alice.uuid)?.['channel']).toBe('hidden.example.net');
    }
    stream.close();
  });
});
