// The claims bucket as the ownership rules see it: a key's current claim and revision, and writes
// that succeed only at an expected revision (JetStream's compare-and-set). The rules never hold a
// copy of the bucket; what they need of another node's claim they read here, one key at a time.
// Tests run the same rules over an in-memory store with the same revision semantics
// (test/helpers/memory-claim-store.ts).

import { JetStreamApiCodes, JetStreamApiError, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { Empty, headers } from '@nats-io/nats-core';
import type { KV } from '@nats-io/kv';
import type { StreamClaim } from '../../schemas/records.js';
import { encodeRecord } from '../core/kv-mirror.js';
import { parseStreamClaim } from '../core/records.js';
import { BUCKET_STREAMS, kvSubject } from '../core/subjects.js';

/** A key as the bucket holds it now: its claim (null: deleted, a marker) and the revision of that. */
export interface StoredClaim {
  readonly claim: StreamClaim | null;
  readonly revision: number;
  /**
   * On a marker left by a sweep (read fresh): the stream whose claim the sweep took away. Any other
   * marker is a release: the stream that held the key let it go.
   */
  readonly swept?: string;
}

/** The header a sweep's delete marker carries: the stream whose claim it took away. */
const SWEPT_HEADER = 'Relay-Swept';

/** The key was not at the expected revision: someone else wrote or deleted it first. */
export class ClaimConflict extends Error {
  constructor(key: string) {
    super(`claim ${key} is not at the expected revision`);
    this.name = 'ClaimConflict';
  }
}

export interface ClaimStore {
  /**
   * The key's current state; null when it was never written or has aged out. Read from any replica
   * (a follower may lag: a write at its revision then conflicts and is retried); `fresh` reads from
   * the stream's leader, for a check that must not be answered with the state before a write it
   * heard of (a hint's, the owner index's), and tells a sweep's marker from a release's.
   */
  get(key: string, fresh?: boolean): Promise<StoredClaim | null>;
  /** Writes the claim if the key is at `revision` (0: absent). Resolves to the new revision. */
  write(key: string, claim: StreamClaim, revision: number): Promise<number>;
  /** Deletes the key (leaves a marker) if it is at `revision`. */
  remove(key: string, revision: number): Promise<void>;
  /** Deletes a dead node's claim of stream `conn` if the key is at `revision`, leaving a marker that names the stream. */
  sweep(key: string, revision: number, conn: string): Promise<void>;
}

export function isConflict(err: unknown): boolean {
  return err instanceof ClaimConflict;
}

function conflictOr(key: string, err: unknown): Error {
  const code = err instanceof JetStreamApiError ? err.code : 0;
  if (code === JetStreamApiCodes.StreamWrongLastSequence || code === JetStreamApiCodes.StreamWrongLastSequenceUnknown) return new ClaimConflict(key);
  return err instanceof Error ? err : new Error(String(err));
}

export class NatsClaimStore implements ClaimStore {
  private readonly kv: KV;
  private readonly js: JetStreamClient;
  private readonly jsm: JetStreamManager;

  constructor(kv: KV, js: JetStreamClient, jsm: JetStreamManager) {
    this.kv = kv;
    this.js = js;
    this.jsm = jsm;
  }

  async get(key: string, fresh = false): Promise<StoredClaim | null> {
    let e: { operation: string; revision: number; swept: string; json: () => unknown } | null;
    if (fresh) {
      const m = await this.jsm.streams.getMessage(`KV_${BUCKET_STREAMS}`, { last_by_subj: kvSubject(BUCKET_STREAMS, key) });
      e = m === null ? null : { operation: m.header?.get('KV-Operation') || 'PUT', revision: m.seq, swept: m.header?.get(SWEPT_HEADER) ?? '', json: () => m.json<unknown>() };
    } else {
      const entry = await this.kv.get(key);
      e = entry === null ? null : { operation: entry.operation, revision: entry.revision, swept: '', json: () => entry.json<unknown>() };
    }
    if (e === null) return null;
    if (e.operation !== 'PUT') return e.swept !== '' ? { claim: null, revision: e.revision, swept: e.swept } : { claim: null, revision: e.revision };
    let claim: StreamClaim | null = null;
    try {
      claim = parseStreamClaim(e.json());
    } catch {
      claim = null;
    }
    // A foreign or malformed value holds the key like a marker would: it can be written over.
    return { claim, revision: e.revision };
  }

  async write(key: string, claim: StreamClaim, revision: number): Promise<number> {
    try {
      // (update() refuses revision 0; put with previousSeq 0 is JetStream's "must not exist".)
      return await this.kv.put(key, encodeRecord(claim), { previousSeq: revision });
    } catch (err) {
      throw conflictOr(key, err);
    }
  }

  async remove(key: string, revision: number): Promise<void> {
    try {
      await this.kv.delete(key, { previousSeq: revision });
    } catch (err) {
      throw conflictOr(key, err);
    }
  }

  /** What kv.delete publishes (a marker at an expected revision), with the swept stream in a header of its own. */
  async sweep(key: string, revision: number, conn: string): Promise<void> {
    const h = headers();
    h.set('KV-Operation', 'DEL');
    h.set(SWEPT_HEADER, conn);
    try {
      await this.js.publish(kvSubject(BUCKET_STREAMS, key), Empty, { headers: h, expect: { lastSubjectSequence: revision } });
    } catch (err) {
      throw conflictOr(key, err);
    }
  }
}
