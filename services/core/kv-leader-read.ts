// Reading a bucket from its own stream: its keys listed by STREAM.INFO, each key's last entry read
// from the stream leader (a replica may lag a write the caller heard of). Both need JetStream's meta
// group; a mesh with regions reads its copies instead (kv-copy-read.ts).

import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { isKey, kvStream, kvSubject, readFromLeader, requestTimeoutMs, type BucketReading, type FeedRecord } from './kv-internals.js';
import type { Logger } from './logger.js';

/** Leader reads in flight at once: enough to load thousands of keys quickly, not to swamp the leader. */
const READS_AT_ONCE = 64;
const LISTING_ATTEMPTS = 3;

/** Every key's latest entry; `complete` false when keys kept coming and going while they were listed. */
export async function readFromLeaders(nc: NatsConnection, js: JetStreamClient, jsm: JetStreamManager, bucket: string, logger: Logger): Promise<BucketReading> {
  const listing = await listKeys(nc, js, bucket, logger);
  return { records: await readLatest(jsm, bucket, listing.keys), lastSeq: listing.lastSeq, created: listing.created, complete: listing.complete };
}

/** Where the bucket's stream is: when it was made, and its last sequence. */
export async function leaderPosition(jsm: JetStreamManager, bucket: string): Promise<{ created: string; lastSeq: number }> {
  const { created, state } = await jsm.streams.info(kvStream(bucket));
  return { created, lastSeq: state.last_seq };
}

/**
 * `lastSeq`: the stream's last sequence when the listing began (every key written up to it is
 * listed); `complete` false when keys kept coming and going while the pages were taken.
 */
type KeyListing = { keys: string[]; lastSeq: number; created: string; complete: boolean };

/** The STREAM.INFO answer, paged: nats-server lists at most 100,000 subjects per answer. */
type InfoPage = { total?: number; limit?: number; created: string; state: { last_seq: number; subjects?: Record<string, number> }; error?: { code: number; description: string } };

/**
 * Every key of the bucket. The client's own paging merges pages silently; pages taken while keys
 * come and go shift (subjects are sorted), so a changed total takes the listing again.
 */
async function listKeys(nc: NatsConnection, js: JetStreamClient, bucket: string, logger: Logger): Promise<KeyListing> {
  const prefix = kvSubject(bucket, '');
  const page = async (offset: number): Promise<InfoPage> => {
    const body = JSON.stringify({ subjects_filter: kvSubject(bucket, '>'), offset });
    const answer = (await nc.request(`${js.apiPrefix}.STREAM.INFO.${kvStream(bucket)}`, body, { timeout: requestTimeoutMs(js) })).json<InfoPage>();
    if (answer.error !== undefined) throw new Error(`STREAM.INFO ${kvStream(bucket)}: ${answer.error.description} (${answer.error.code})`);
    return answer;
  };
  for (let attempt = 1; ; attempt++) {
    const first = await page(0);
    const total = first.total ?? 0;
    const subjects = new Set(Object.keys(first.state.subjects ?? {}));
    let steady = true;
    for (let offset = first.limit ?? 0; steady && offset > 0 && subjects.size < total; offset += first.limit ?? 0) {
      const next = await page(offset);
      const more = Object.keys(next.state.subjects ?? {});
      steady = next.total === total && more.length > 0;
      for (const s of more) subjects.add(s);
    }
    if (steady || attempt === LISTING_ATTEMPTS) {
      const complete = steady && subjects.size >= total;
      if (!complete) logger.warn({ bucket, listed: subjects.size, total }, 'the KV bucket changed while its keys were listed; the next check reads it again');
      const keys = [...subjects].filter((s) => s.startsWith(prefix)).map((s) => s.slice(prefix.length)).filter(isKey);
      return { keys, lastSeq: first.state.last_seq, created: first.created, complete };
    }
  }
}

/** Each key's latest entry from the stream leader (a replica may lag); keys gone meanwhile are left out. */
async function readLatest(jsm: JetStreamManager, bucket: string, keys: readonly string[]): Promise<FeedRecord[]> {
  const records: FeedRecord[] = [];
  let next = 0;
  let failed = false;
  const reader = async (): Promise<void> => {
    for (let key = keys[next++]; key !== undefined && !failed; key = keys[next++]) {
      const e = await readFromLeader(jsm, bucket, key).catch((err: unknown) => {
        failed = true; // the others stop too: the whole read is tried again
        throw err;
      });
      if (e !== null) records.push({ key, operation: e.operation, revision: e.revision, json: () => e.json() });
    }
  };
  await Promise.all(Array.from({ length: Math.min(READS_AT_ONCE, keys.length) }, reader));
  return records;
}
