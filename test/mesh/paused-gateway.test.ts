// A gateway that wakes from a pause must not go on delivering on a stream that was taken over while
// it slept. The fault campaign (docs/RELIABILITY.md, seed 31) paused a gateway for 14 s while its
// account opened a stream on the other gateway: on waking it delivered 430 queued frames on the old
// stream before its eviction got through (the claim had been swept meanwhile, so no notice was sent,
// and the check its account subscription asked for waited behind the queued frames).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimKey } from '../../services/gateway/ownership/claim-keys.js';
import { waitUntil } from '../../tools/poll.js';
import { Mesh } from '../helpers/mesh.js';
import { freezeProcess } from '../helpers/nats.js';
import type { SseStream } from '../helpers/sse-client.js';

const NIL = '00000000-0000-0000-0000-000000000000';

let mesh: Mesh;

beforeAll(async () => {
  // NODE_TIMEOUT is 3 s here: the sleeper's claims are swept while it sleeps.
  mesh = await Mesh.start({ gateways: 2, ingresses: 1 });
});
afterAll(async () => {
  await mesh?.close();
});

/** The senders of the data frames a stream received after event `from` (the relay's keepalives left out). */
function sendersSince(s: SseStream, from: number): string[] {
  return s.events
    .slice(from)
    .filter((e) => e.event === 'meta')
    .map((e) => (JSON.parse(e.data) as { uuid: string }).uuid)
    .filter((uuid) => uuid !== NIL);
}

describe('a gateway paused while its account moves to another gateway', () => {
  it('wakes, delivers nothing more on the old stream and closes it as evicted', async () => {
    const key = await mesh.createKey();
    const ch = 'paused-gateway.example.net';
    const alice = mesh.player();
    const bob = mesh.player();
    const [sleeper, other] = [mesh.gateways[0]!, mesh.gateways[1]!];
    const old = await mesh.connect(sleeper, mesh.headers(alice, key, ch));
    expect((await mesh.post(mesh.ingresses[0]!, { type: 'chat', message: 'before' }, mesh.headers(bob, key, ch))).status).toBe(200);
    const last = (await old.nextPair()).id!;
    const mark = old.events.length;

    const thaw = await freezeProcess(sleeper.child);
    try {
      for (let i = 0; i < 5; i++) {
        expect((await mesh.post(mesh.ingresses[0]!, { type: 'chat', message: `asleep ${i}` }, mesh.headers(bob, key, ch))).status).toBe(200);
      }
      // The other gateway takes the sleeper for dead (NODE_TIMEOUT) and sweeps its claims: the
      // move below then replaces no claim, and no notice is sent.
      const claim = claimKey(alice.uuid, ch);
      await waitUntil(async () => (await mesh.nats.buckets.streams.get(claim))?.operation === 'DEL', 'the sweep to delete the sleeper’s claim', 20_000);
      // Alice goes on from where she was, on the other gateway: her stream there is the one.
      const moved = await mesh.open(other, { ...mesh.headers(alice, key, ch), 'last-event-id': String(last) });
      const got = await moved.pairsUntil((p) => p.data.message === 'asleep 4', 10_000);
      expect(got.map((p) => p.data.message)).toEqual(['asleep 0', 'asleep 1', 'asleep 2', 'asleep 3', 'asleep 4']);
      expect((await mesh.post(mesh.ingresses[0]!, { type: 'chat', message: 'after the move' }, mesh.headers(bob, key, ch))).status).toBe(200);
      expect((await moved.nextPair()).data.message).toBe('after the move');
    } finally {
      thaw();
    }
    expect((await old.closeEvent(15_000)).reason).toBe('evicted');
    expect(sendersSince(old, mark)).toEqual([]);
  });
});
