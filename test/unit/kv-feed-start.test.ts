// A bucket's change feed (core/kv-feed-load.ts) at its own level, over a fake connection: a feed
// message heard while the feed starts, before its first read of the bucket (a gateway started while
// a heartbeat was being written: the mesh suite saw it exit with "held is not iterable"), is applied
// after that read; it does not start a second read beside the first.
import { headers, type Msg, type NatsConnection } from '@nats-io/nats-core';
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { describe, expect, it } from 'vitest';
import { KvFeed } from '../../services/core/kv-feed-load.js';
import { kvStream, kvSubject, type FeedRecord } from '../../services/core/kv-internals.js';
import { createLogger } from '../../services/core/logger.js';
import { BUCKET_NODES, kvFeedSubject } from '../../services/core/subjects.js';

const BUCKET = BUCKET_NODES;
const COPY = 'A_COPY';

function feedMessage(key: string, revision: number): Msg {
  const h = headers();
  h.set('Nats-Stream', kvStream(BUCKET));
  h.set('Nats-Subject', kvSubject(BUCKET, key));
  h.set('Nats-Sequence', String(revision));
  return { subject: kvFeedSubject(BUCKET, key), headers: h, reply: undefined, data: new Uint8Array(), json: () => ({ revision }) } as unknown as Msg;
}

describe("a bucket's change feed starting", () => {
  it('applies a message heard before its first read once that read is done, with one read only', async () => {
    let deliver: ((err: null, msg: Msg) => void) | null = null;
    let reads = 0;
    const nc = {
      subscribe: (_subject: string, opts: { callback: (err: null, msg: Msg) => void }) => {
        deliver = opts.callback;
        return { unsubscribe: () => undefined };
      },
      // The message arrives while the subscription is being flushed.
      flush: async () => deliver?.(null, feedMessage('gateway.n1', 4)),
      status: () => ({ async *[Symbol.asyncIterator]() {}, stop: () => undefined }),
    } as unknown as NatsConnection;
    // The copy read finds the bucket empty (the entry was written after the read's listing).
    const jsm = {
      direct: {
        getMessage: async () => {
          reads++;
          await new Promise((resolve) => setTimeout(resolve, 5));
          return null;
        },
      },
    } as unknown as JetStreamManager;
    const applied: FeedRecord[] = [];
    const feed = new KvFeed({
      nc,
      js: {} as JetStreamClient,
      jsm,
      bucket: BUCKET,
      readFrom: COPY,
      logger: createLogger({ level: 'silent', pretty: false }),
      checkIntervalMs: 60_000,
      sink: { apply: (r) => void applied.push(r), dropAbsent: () => undefined, forgetRevisions: () => undefined },
    });
    await feed.start();
    feed.stop();
    expect(applied.map((r) => [r.key, r.revision])).toEqual([['gateway.n1', 4]]);
    // The first read, and one more that the gap it saw (1 to 3 unheard) asked for, one after the other.
    expect(reads).toBeLessThanOrEqual(2);
  });
});
