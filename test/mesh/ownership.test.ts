// One stream per (account, channel) across the mesh: eviction across gateways, the simultaneous
// open race, and stale claims of a crashed gateway.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Counter } from 'prom-client';
import type { StreamClaim } from '../../schemas/records.js';
import { createLogger } from '../../services/core/logger.js';
import { ClaimIndex } from '../../services/gateway/ownership/claim-index.js';
import { NatsClaimIndexLog } from '../../services/gateway/ownership/claim-index-log.js';
import { NatsClaimNotices } from '../../services/gateway/ownership/claim-notices.js';
import { NatsClaimStore } from '../../services/gateway/ownership/claim-store.js';
import { claimKey } from '../../services/gateway/ownership/ownership.js';
import { waitUntil as eventually } from '../../tools/poll.js';
import { Mesh } from '../helpers/mesh.js';
import type { SseStream } from '../helpers/sse-client.js';

let mesh: Mesh;

beforeAll(async () => {
  mesh = await Mesh.start({ gateways: 2, ingresses: 1 });
});
afterAll(async () => {
  await mesh?.close();
});

/**
 * What a gateway's sweep does when it takes `node` for dead (its heartbeat late): deletes each claim
 * of the node's index still naming it, and tells the node of each (the real sweep, from the test's
 * own connection).
 */
function sweep(node: string): Promise<number> {
  const { nats } = mesh;
  const quiet = createLogger({ level: 'silent', pretty: false });
  const liveness = { isAlive: () => false, hearing: () => true, mirror: { values: () => [] } };
  const notices = new NatsClaimNotices(nats.nc, 'test-sweeper', new Counter({ name: 'mesh_test_notices', help: 'test', registers: [] }), quiet);
  const store = NatsClaimStore.of(nats, quiet);
  const index = new ClaimIndex({ log: new NatsClaimIndexLog({ ...nats, logger: quiet }), store, nodeId: 'test-sweeper', liveness, logger: quiet, notices });
  return index.sweepNode(node).finally(() => store.close());
}

async function claimOf(uuid: string, channel: string): Promise<StreamClaim | null> {
  const e = await mesh.nats.buckets.streams.get(claimKey(uuid, channel));
  return e !== null && e.operation === 'PUT' ? e.json<StreamClaim>() : null;
}

describe('one stream per account and channel, mesh-wide', () => {
  it('a second stream on gateway 2 evicts the first on gateway 1, which is told why and closed', async () => {
    const key = await mesh.createKey();
    const ch = 'evict-across.example.net';
    const me = mesh.player();
    const first = await mesh.connect(mesh.gateways[0]!, mesh.headers(me, key, ch));
    const second = await mesh.connect(mesh.gateways[1]!, mesh.headers(me, key, ch));
    await first.waitForComment(/^evicted: this account opened another stream on this channel/);
    await first.waitClosed();
    const res = await mesh.post(mesh.ingresses[0]!, { type: 'chat', message: 'to the survivor' }, mesh.headers(mesh.player(), key, ch));
    expect(res.status).toBe(200);
    expect((await second.nextPair()).data.message).toBe('to the survivor');
    expect((await claimOf(me.uuid, ch))?.node).toBe(mesh.gateways[1]!.nodeId);
  });

  it('two opens at the same moment on two gateways end with exactly one survivor, the one the claim names, every time', async () => {
    const key = await mesh.createKey();
    const ch = 'race.example.net';
    for (let round = 0; round < 20; round++) {
      const me = mesh.player();
      const [a, b] = await Promise.all([
        mesh.open(mesh.gateways[0]!, mesh.headers(me, key, ch)),
        mesh.open(mesh.gateways[1]!, mesh.headers(me, key, ch)),
      ]);
      const streams: SseStream[] = [a, b];
      // Exactly one ends with the eviction comment; the other stays and keeps its claim.
      const loser = await Promise.race(streams.map((s, i) => s.waitForComment(/^evicted/, 15_000).then(() => i)));
      const survivor = streams[1 - loser]!;
      await streams[loser]!.waitClosed();
      await survivor.waitForComment(/^connected/);
      expect(survivor.isClosed, `round ${round}`).toBe(false);
      expect(survivor.comments.some((c) => c.startsWith('evicted')), `round ${round}`).toBe(false);
      const claim = await claimOf(me.uuid, ch);
      expect(claim?.node, `round ${round}`).toBe(mesh.gateways[1 - loser]!.nodeId);
      // The survivor still hears the channel.
      const tag = `round ${round}`;
      await mesh.post(mesh.ingresses[0]!, { type: 'chat', message: tag }, mesh.headers(mesh.player(), key, ch));
      expect((await survivor.pairsUntil((p) => p.data.message === tag)).at(-1)!.data.message).toBe(tag);
      survivor.close();
    }
  });

  it('a live stream whose claim was deleted behind its back (swept by a gateway that took its node for dead) writes it again, and still loses to a later open', async () => {
    const key = await mesh.createKey();
    const ch = 'reclaim.example.net';
    const me = mesh.player();
    const stream = await mesh.connect(mesh.gateways[0]!, mesh.headers(me, key, ch));
    const before = await claimOf(me.uuid, ch);
    expect(before?.node).toBe(mesh.gateways[0]!.nodeId);
    // Another gateway's sweep, this node's heartbeat late: the claim deleted, and this node told.
    expect(await sweep(mesh.gateways[0]!.nodeId)).toBeGreaterThanOrEqual(1);
    await eventually(async () => (await claimOf(me.uuid, ch))?.conn === before!.conn, 'the live stream’s claim to be written again', 15_000);
    expect(stream.isClosed).toBe(false);
    // The claim counts again: a second stream of the account on the other gateway evicts this one.
    const second = await mesh.connect(mesh.gateways[1]!, mesh.headers(me, key, ch));
    await stream.waitForComment(/^evicted/);
    await stream.waitClosed();
    expect((await claimOf(me.uuid, ch))?.node).toBe(mesh.gateways[1]!.nodeId);
    second.close();
  });

  it('a crashed gateway’s claims never block a new stream elsewhere, and are swept away', async () => {
    const doomed = await mesh.addGateway();
    const key = await mesh.createKey();
    const ch = 'crash.example.net';
    const [reopens, abandons] = [mesh.player(), mesh.player()];
    await mesh.connect(doomed, mesh.headers(reopens, key, ch));
    await mesh.connect(doomed, mesh.headers(abandons, key, ch));
    expect((await claimOf(abandons.uuid, ch))?.node).toBe(doomed.nodeId);
    await doomed.kill();
    // The player whose gateway died reconnects elsewhere at once: nothing blocks it.
    const again = await mesh.connect(mesh.gateways[0]!, mesh.headers(reopens, key, ch));
    await mesh.post(mesh.ingresses[0]!, { type: 'chat', message: 'after the crash' }, mesh.headers(mesh.player(), key, ch));
    expect((await again.nextPair()).data.message).toBe('after the crash');
    expect((await claimOf(reopens.uuid, ch))?.node).toBe(mesh.gateways[0]!.nodeId);
    // The claim nobody replaced is removed once the dead node's heartbeat is missed (NODE_TIMEOUT=3s).
    await eventually(async () => (await claimOf(abandons.uuid, ch)) === null, 'the dead gateway’s claim to be swept', 30_000);
  });

  // Last in the file: CLAIM_TTL is the bucket's max age, which this gateway sets for the whole mesh.
  it('a live stream’s claim is rewritten within half of CLAIM_TTL, so the bucket’s max age never drops it', async () => {
    const renewing = await mesh.addGateway({ CLAIM_TTL: '1m' });
    const key = await mesh.createKey();
    const ch = 'renewal.example.net';
    const me = mesh.player();
    const stream = await mesh.connect(renewing, mesh.headers(me, key, ch));
    const first = await mesh.nats.buckets.streams.get(claimKey(me.uuid, ch));
    expect(first?.json<StreamClaim>().node).toBe(renewing.nodeId);
    // Renewed at its own tick of the 30-s period (the claims of a gateway are spread over it).
    await eventually(async () => ((await mesh.nats.buckets.streams.get(claimKey(me.uuid, ch)))?.revision ?? 0) > first!.revision, 'the claim to be renewed', 45_000);
    const renewed = await claimOf(me.uuid, ch);
    expect(renewed?.conn).toBe(first!.json<StreamClaim>().conn);
    expect(stream.isClosed).toBe(false);
    stream.close();
  });
});
