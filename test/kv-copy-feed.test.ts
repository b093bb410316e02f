// A mirror of a bucket read from a copy of it (docs/REGIONS.md, "Keys, bans and revocations"): the
// bucket's stream mirrored into another stream, as a region keeps the keys and the other regions'
// bans, read only by direct gets, whose user may ask neither for the account's nor a stream's
// information, nor read from a stream's leader (all need JetStream's meta group, which a region cut
// off lacks). It loads
// what the copy holds, hears later writes on the origin's change feed, and reads the copy again when
// the feed lost something, once the copy has it.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/nats-core';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import { createLogger } from '../services/core/logger.js';
import { KvMirror } from '../services/core/kv-mirror.js';
import { kvStream } from '../services/core/kv-internals.js';
import { BUCKET_BANS, kvFeedSubject } from '../services/core/subjects.js';
import { startNatsNode, type NatsNode } from '../tools/nats-launcher.js';
import { setUpNats } from './helpers/nats-setup.js';

interface Rec {
  n: number;
}
const parse = (v: unknown): Rec | null => (typeof v === 'object' && v !== null && typeof (v as { n?: unknown }).n === 'number' ? (v as Rec) : null);

const BUCKET = BUCKET_BANS;
const COPY = 'RELAY_COPY_relay-bans_AT_TEST';
const HIDDEN = 'hidden';

let dir: string;
let node: NatsNode;
let writer: NatsConnection;
let kv: KV;
const opened: { mirror: KvMirror<Rec>; nc: NatsConnection }[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'relay-kv-copy-'));
  node = await startNatsNode({
    storeDir: dir,
    // The follower reads as a region cut off does: direct gets, the feed, nothing that needs the meta group.
    extraConfig: `authorization { users: [
      { user: operator, password: operator }
      { user: follower, password: follower, permissions: {
        publish: { allow: [">"], deny: ["$JS.API.INFO", "$JS.API.STREAM.INFO.>", "$JS.API.STREAM.MSG.GET.>", "$JS.API.CONSUMER.>"] }
        subscribe: { allow: [">"], deny: ["${kvFeedSubject(BUCKET, `${HIDDEN}.>`)}"] }
      } }
    ] }`,
  });
  await setUpNats(node.url, { NATS_USER: 'operator', NATS_PASSWORD: 'operator' });
  writer = await connect({ servers: node.url, user: 'operator', pass: 'operator' });
  const jsm = await jetstreamManager(writer);
  await jsm.streams.add({ name: COPY, mirror: { name: kvStream(BUCKET) }, allow_direct: true, max_msgs_per_subject: 5 });
  kv = await new Kvm(writer).open(BUCKET);
});
afterEach(async () => {
  for (const { mirror, nc } of opened.splice(0)) {
    await mirror.stop();
    await nc.close();
  }
});
afterAll(async () => {
  await writer.close();
  await node.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function follow(checkIntervalMs = 3_600_000): Promise<KvMirror<Rec>> {
  const nc = await connect({ servers: node.url, user: 'follower', pass: 'follower' });
  const mirror = new KvMirror(jetstream(nc), BUCKET, parse, createLogger({ level: 'silent', pretty: false }), { checkIntervalMs, readFrom: COPY });
  opened.push({ mirror, nc });
  await mirror.start();
  return mirror;
}

/** Resolves with the value and revision of the mirror's next put of `key`. */
function nextPut(mirror: KvMirror<Rec>, key: string): Promise<[Rec, number]> {
  return new Promise((resolve) => {
    const listener = (k: string, value: Rec, revision: number): void => {
      if (k !== key) return;
      mirror.off('put', listener);
      resolve([value, revision]);
    };
    mirror.on('put', listener);
  });
}

const put = (key: string, n: number): Promise<number> => kv.put(key, JSON.stringify({ n }));

/** Resolves once the copy holds the origin's entry `revision` (a mirror lags its origin). */
async function copied(revision: number): Promise<void> {
  const jsm = await jetstreamManager(writer);
  await expect.poll(async () => (await jsm.streams.info(COPY)).state.last_seq, { timeout: 10_000, interval: 20 }).toBeGreaterThanOrEqual(revision);
}

describe('a KV mirror read from a copy of its bucket, by direct gets only', () => {
  it('loads the latest value of every key the copy holds, and no key deleted before it started', async () => {
    await put('load.a', 1);
    const latest = await put('load.a', 2);
    await put('load.b', 3);
    const marker = await kv.delete('load.b').then(async () => (await kv.get('load.b'))!.revision);
    await copied(marker);
    const mirror = await follow();
    expect(mirror.get('load.a')).toEqual({ n: 2 });
    expect(mirror.revision('load.a')).toBe(latest);
    expect(mirror.get('load.b')).toBeUndefined();
  });

  it("hears a put made after it started on the origin's change feed", async () => {
    const mirror = await follow();
    const heard = nextPut(mirror, 'live.a');
    const revision = await put('live.a', 5);
    expect(await heard).toEqual([{ n: 5 }, revision]);
  });

  it('reads the copy again once a later feed message shows one was lost', async () => {
    const mirror = await follow();
    const found = nextPut(mirror, `${HIDDEN}.a`);
    const hidden = await put(`${HIDDEN}.a`, 7); // never reaches the mirror's subscription
    await copied(hidden);
    await put('gap.b', 1);
    expect(await found).toEqual([{ n: 7 }, hidden]);
  });

  it('reads the copy again when its periodic check finds an entry past the last one heard', async () => {
    const mirror = await follow(200);
    const found = nextPut(mirror, `${HIDDEN}.last`);
    const revision = await put(`${HIDDEN}.last`, 4); // lost, and nothing follows it
    expect(await found).toEqual([{ n: 4 }, revision]);
  });
});
