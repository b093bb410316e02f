// Reading a bucket from the stream that holds it in this process's region (docs/REGIONS.md, "Keys,
// bans and revocations"): the bucket itself when it is kept here, else the region's copy of it (a
// mirror, whose revisions are the origin's). Only direct gets, one after another: they need neither
// a consumer nor JetStream's meta group, so a region cut off from the others still reads what it
// last knew, and a service starting there loads it. A bucket keeps a few entries per key (its
// history), so walking every entry costs a few reads per key.

import type { JetStreamManager } from '@nats-io/jetstream';
import type { MsgHdrs } from '@nats-io/nats-core';
import { isKey, kvOperation, kvSubject, type BucketReading, type FeedRecord } from './kv-internals.js';
import { lastHeader } from './wire-headers.js';

/** Each key's latest entry in `stream`, read up to its last entry (complete: a copy lists every entry it holds). */
export async function readCopy(jsm: JetStreamManager, stream: string, bucket: string): Promise<BucketReading> {
  const prefix = kvSubject(bucket, '');
  const latest = new Map<string, FeedRecord>();
  let lastSeq = 0;
  for (;;) {
    const m = await jsm.direct.getMessage(stream, { seq: lastSeq + 1, next_by_subj: kvSubject(bucket, '>') });
    if (m === null) break;
    // An answer of another stream, or one that does not move forward, would skip entries (and the
    // keys only they hold would be taken as gone): the read fails instead, and is tried again.
    if (!isNextEntry(m, lastSeq, stream, bucket)) {
      throw new Error(`${stream} answered a direct get with an entry that is not its next (sequence ${m.seq} after ${lastSeq})`);
    }
    lastSeq = m.seq;
    const key = m.subject.slice(prefix.length);
    if (isKey(key)) latest.set(key, { key, operation: kvOperation(m.header), revision: m.seq, json: () => m.json<unknown>() });
  }
  return { records: [...latest.values()], lastSeq, created: null, complete: true };
}

/** How far `stream` reaches past `heard`: the first entry after it, or `heard` when none (a copy cannot say when it was made). */
export async function copyPosition(jsm: JetStreamManager, stream: string, bucket: string, heard: number): Promise<{ created: null; lastSeq: number }> {
  const m = await jsm.direct.getMessage(stream, { seq: heard + 1, next_by_subj: kvSubject(bucket, '>') });
  return { created: null, lastSeq: m === null ? heard : m.seq };
}

/** Whether a direct get's answer is an entry of `stream`'s bucket past `after` (the walk's next). */
export function isNextEntry(entry: { seq: number; subject: string; header?: MsgHdrs | undefined }, after: number, stream: string, bucket: string): boolean {
  if (!Number.isSafeInteger(entry.seq) || entry.seq <= after || !entry.subject.startsWith(kvSubject(bucket, ''))) return false;
  return entry.header !== undefined && lastHeader(entry.header, 'Nats-Stream') === stream;
}
