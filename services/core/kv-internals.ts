// JetStream KV's own layout, written by hand here and nowhere else. A bucket is the stream
// `KV_<bucket>`, a key the subject `$KV.<bucket>.<key>`, and a delete a message whose `KV-Operation`
// header says DEL. The KV client (@nats-io/kv) names none of these in its public API (`kvPrefix`
// only in its internal module, the operation header not at all), and offers no call for what the
// relay needs of them:
//  - a read from the bucket's stream leader: kv.get() is a direct get that any replica answers, and
//    a replica a moment behind a write the caller heard of (a key just created, a claim a notice
//    announced) would answer with the state before it;
//  - a delete marker with a header of the relay's own (kv.delete() sends none): who left a claim,
//    and the marker's revision (kv.delete() answers nothing);
//  - the bucket's stream itself: for setup, readiness, and how many messages it holds.
// Everything else goes through the KV client's typed calls.

import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { Empty, headers, type MsgHdrs } from '@nats-io/nats-core';

const KV_STREAM_PREFIX = 'KV_';
const KV_OPERATION = 'KV-Operation';

/** The stream that holds a bucket. */
export function kvStream(bucket: string): string {
  return `${KV_STREAM_PREFIX}${bucket}`;
}

/** Whether a stream is a KV bucket's. */
export function isKvStream(stream: string): boolean {
  return stream.startsWith(KV_STREAM_PREFIX);
}

/** The subject a write to `key` of a KV bucket is published on. */
export function kvSubject(bucket: string, key: string): string {
  return `$KV.${bucket}.${key}`;
}

/** What a stored KV message does to its key: PUT (a put carries no header), DEL or PURGE. */
export function kvOperation(h: MsgHdrs | undefined): string {
  return h?.get(KV_OPERATION) || 'PUT';
}

/** One entry of the bucket, from a read or from the bucket's change feed; `operation`: PUT, DEL or PURGE. */
export interface FeedRecord {
  readonly key: string;
  readonly operation: string;
  readonly revision: number;
  json(): unknown;
}

/**
 * A bucket read whole: each key's latest entry; `lastSeq`, the stream's position it was read at
 * (every entry up to it is taken into account); `created`, when the stream was made (null when the
 * read cannot tell); `complete` false when keys may be missing.
 */
export interface BucketReading {
  records: FeedRecord[];
  lastSeq: number;
  created: string | null;
  complete: boolean;
}

/** A key of the bucket: NATS stores a subject with a literal `*` or `>` token, which no read can name alone. */
export function isKey(key: string): boolean {
  return key !== '' && !key.split('.').some((t) => t === '*' || t === '>' || t === '');
}

/** A key's latest message as the stream leader holds it. */
export interface LeaderEntry {
  readonly operation: string;
  readonly revision: number;
  readonly headers: MsgHdrs | undefined;
  json(): unknown;
}

/** The key's latest message, read from the bucket's stream leader; null when it has none. */
export async function readFromLeader(jsm: JetStreamManager, bucket: string, key: string): Promise<LeaderEntry | null> {
  const m = await jsm.streams.getMessage(kvStream(bucket), { last_by_subj: kvSubject(bucket, key) });
  return m === null ? null : { operation: kvOperation(m.header), revision: m.seq, headers: m.header, json: () => m.json<unknown>() };
}

/** What kv.delete publishes (a marker at an expected revision), with headers of the caller's on it; resolves to the marker's revision. */
export async function deleteWithHeaders(js: JetStreamClient, bucket: string, key: string, revision: number, extra: Readonly<Record<string, string>>): Promise<number> {
  const h = headers();
  h.set(KV_OPERATION, 'DEL');
  for (const [name, value] of Object.entries(extra)) h.set(name, value);
  return (await js.publish(kvSubject(bucket, key), Empty, { headers: h, expect: { lastSubjectSequence: revision } })).seq;
}
