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
//  - the bucket's stream itself: for setup, readiness, and how many messages it holds;
//  - a gateway's claim reads and writes, at thousands a second, without the client's cost per request
//    (nats-replies.ts): the same direct get and compare-and-set publish the KV client sends.
// Everything else goes through the KV client's typed calls.

import { DirectMsgHeaders, PubHeaders, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { Empty, headers, type Msg, type MsgHdrs } from '@nats-io/nats-core';
import { PublishError, readAck } from './jetstream-ack.js';
import type { NatsReplies } from './nats-replies.js';

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

/** A key's latest message, as the stream leader (readFromLeader) or any replica (readLatest) holds it. */
export interface KeyEntry {
  readonly operation: string;
  readonly revision: number;
  readonly headers: MsgHdrs | undefined;
  json(): unknown;
}

/** The key's latest message, read from the bucket's stream leader; null when it has none. */
export async function readFromLeader(jsm: JetStreamManager, bucket: string, key: string): Promise<KeyEntry | null> {
  const m = await jsm.streams.getMessage(kvStream(bucket), { last_by_subj: kvSubject(bucket, key) });
  return m === null ? null : { operation: kvOperation(m.header), revision: m.seq, headers: m.header, json: () => m.json<unknown>() };
}

/** How long the client's own calls wait for JetStream (its `timeout`, 5 s unless the process set one): a request by hand waits the same. */
export function requestTimeoutMs(js: JetStreamClient): number {
  return js.getOptions().timeout ?? 5000;
}

/** Where replies go and how long a read or write of a key may wait for its answer. */
export interface KeyRequests {
  readonly replies: NatsReplies;
  /** The JetStream API's subject prefix (`$JS.API`; the relay sets no domain, whose KV writes would be named otherwise). */
  readonly apiPrefix: string;
  readonly timeoutMs: number;
}

/** The KV client's own rule for a key (its validateKey), checked before a request by hand names one. */
const KEY_SHAPE = /^[-/=.\w]+$/;

function checkKey(key: string): void {
  if (key.startsWith('.') || key.endsWith('.') || !KEY_SHAPE.test(key)) throw new Error(`invalid key: ${JSON.stringify(key)}`);
}

async function publishAt(r: KeyRequests, bucket: string, key: string, data: string | Uint8Array, h: MsgHdrs, revision: number): Promise<number> {
  checkKey(key);
  // JetStream's compare-and-set: the write lands only if the key's latest message is at this sequence (0: none).
  h.set(PubHeaders.ExpectedLastSubjectSequenceHdr, String(revision));
  const ack = readAck(await r.replies.request(kvSubject(bucket, key), data, h, r.timeoutMs));
  if (ack instanceof PublishError) throw ack;
  return ack.seq;
}

/** What kv.put with previousSeq publishes: `data` written if the key is at `revision` (0: absent); resolves to the new revision. */
export function putAt(r: KeyRequests, bucket: string, key: string, data: string | Uint8Array, revision: number): Promise<number> {
  return publishAt(r, bucket, key, data, headers(), revision);
}

/** What kv.delete publishes (a marker at an expected revision), with headers of the caller's on it; resolves to the marker's revision. */
export function deleteAt(r: KeyRequests, bucket: string, key: string, revision: number, extra: Readonly<Record<string, string>>): Promise<number> {
  const h = headers();
  h.set(KV_OPERATION, 'DEL');
  for (const [name, value] of Object.entries(extra)) h.set(name, value);
  return publishAt(r, bucket, key, Empty, h, revision);
}

/** JetStream's status on a direct get of a subject that holds no message. */
const NOT_FOUND = 404;

/** The key's latest message as any replica holds it (what kv.get reads: a direct get); null when it has none. */
export async function readLatest(r: KeyRequests, bucket: string, key: string): Promise<KeyEntry | null> {
  checkKey(key);
  const m: Msg = await r.replies.request(`${r.apiPrefix}.DIRECT.GET.${kvStream(bucket)}.${kvSubject(bucket, key)}`, Empty, undefined, r.timeoutMs);
  const h = m.headers;
  if (h !== undefined && h.code !== 0) {
    if (h.code === NOT_FOUND) return null;
    throw new Error(`direct get of ${key} refused: ${h.code} ${h.description}`);
  }
  const revision = Number(h?.get(DirectMsgHeaders.Sequence));
  if (!Number.isSafeInteger(revision) || revision <= 0) throw new Error(`direct get of ${key} answered without a sequence`);
  return { operation: kvOperation(h), revision, headers: h, json: () => m.json<unknown>() };
}
