// The claims bucket as the ownership rules see it: a key's current claim and revision, and writes
// that succeed only at an expected revision (JetStream's compare-and-set). The rules never hold a
// copy of the bucket; what they need of another node's claim they read here, one key at a time.
// Tests run the same rules over an in-memory store with the same revision semantics
// (test/helpers/memory-claim-store.ts).

import type { JetStreamManager } from '@nats-io/jetstream';
import type { StreamClaim } from '../../../schemas/records.js';
import { conflictOr } from '../../core/jetstream-errors.js';
import { deleteAt, putAt, readFromLeader, readLatest, requestTimeoutMs, type KeyEntry, type KeyRequests } from '../../core/kv-internals.js';
import { encodeRecord } from '../../core/kv-mirror.js';
import type { Logger } from '../../core/logger.js';
import type { NatsContext } from '../../core/nats.js';
import { NatsReplies } from '../../core/nats-replies.js';
import { claimsBucket } from '../../core/subjects.js';
import { parseStreamClaim } from '../../core/records.js';

/** Who deleted a claim: its own stream's release, or a sweep of a dead node's claim; and which stream's claim it was. */
export interface Freed {
  readonly by: 'release' | 'sweep';
  readonly conn: string;
}

/** A key as the bucket holds it now: its claim (null: deleted, a marker) and the revision of that. */
export interface StoredClaim {
  readonly claim: StreamClaim | null;
  readonly revision: number;
  /** On a delete marker read fresh: who left it. Absent on one an earlier version left (it said nothing). */
  readonly freed?: Freed;
}

/** The header of a delete marker that says who left it: `release <conn>` or `sweep <conn>`. */
const FREED_HEADER = 'Relay-Freed';

function parseFreed(value: string): Freed | undefined {
  const [by, conn] = value.split(' ');
  return (by === 'release' || by === 'sweep') && conn !== undefined && conn !== '' ? { by, conn } : undefined;
}

/**
 * What a key read from the leader says of `stream`'s claim on it:
 *  - `ours`: it names the stream (perhaps at a revision whose answer was lost);
 *  - `replaced`: another stream's claim, a release's marker, or a sweep's of another stream: another
 *    stream claimed the key after ours, and may have let it go since;
 *  - `free`: aged out (its node paused past the claim's TTL), swept from under the live stream (a
 *    sweep that took its node for dead), or a marker that says nothing (an earlier version's, taken
 *    for a sweep as that version took it): the claim may be written again.
 */
export function claimState(now: StoredClaim | null, stream: string): 'ours' | 'replaced' | 'free' {
  if (now?.claim?.conn === stream) return 'ours';
  if (now === null) return 'free';
  if (now.claim !== null || (now.freed !== undefined && (now.freed.by === 'release' || now.freed.conn !== stream))) return 'replaced';
  return 'free';
}

export interface ClaimStore {
  /**
   * The key's current state; null when it was never written or has aged out. Read from any replica
   * (a follower may lag: a write at its revision then conflicts and is retried); `fresh` reads from
   * the stream's leader, for a check that must not be answered with the state before a write it
   * heard of (a notice's, the owner holdings'), and tells a sweep's marker from a release's.
   */
  get(key: string, fresh?: boolean): Promise<StoredClaim | null>;
  /** Writes the claim if the key is at `revision` (0: absent), else throws RevisionConflict. Resolves to the new revision. */
  write(key: string, claim: StreamClaim, revision: number): Promise<number>;
  /**
   * Deletes the key if it is at `revision` (else throws RevisionConflict), leaving a marker that says
   * who did (`freed`); resolves to the marker's revision.
   */
  remove(key: string, revision: number, freed: Freed): Promise<number>;
  /** Stops listening for answers, at the gateway's stop (a store over NATS); requests still waiting reject. */
  close?(): void;
}

/** Reads and writes go out as hand-written requests (nats-replies.ts): an open makes one or two, and a close one. */
export class NatsClaimStore implements ClaimStore {
  private readonly requests: KeyRequests;
  private readonly jsm: JetStreamManager;
  /** The bucket's name (relay-streams, or with regions the region's: subjects.ts claimsBucket). */
  private readonly bucket: string;

  /** The claims of the process's region (subjects.ts claimsBucket), answered under the connection's inbox. */
  static of(nats: Pick<NatsContext, 'nc' | 'inboxPrefix' | 'region' | 'js' | 'jsm'>, logger: Pick<Logger, 'warn'>): NatsClaimStore {
    const requests = { replies: new NatsReplies(nats.nc, nats.inboxPrefix, logger, 'reading an answer about a claim'), apiPrefix: nats.js.apiPrefix, timeoutMs: requestTimeoutMs(nats.js) };
    return new NatsClaimStore(requests, claimsBucket(nats.region), nats.jsm);
  }

  constructor(requests: KeyRequests, bucket: string, jsm: JetStreamManager) {
    this.requests = requests;
    this.bucket = bucket;
    this.jsm = jsm;
  }

  async get(key: string, fresh = false): Promise<StoredClaim | null> {
    const e: KeyEntry | null = fresh ? await readFromLeader(this.jsm, this.bucket, key) : await readLatest(this.requests, this.bucket, key);
    if (e === null) return null;
    if (e.operation !== 'PUT') {
      const freed = fresh ? parseFreed(e.headers?.get(FREED_HEADER) ?? '') : undefined;
      return freed !== undefined ? { claim: null, revision: e.revision, freed } : { claim: null, revision: e.revision };
    }
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
      return await putAt(this.requests, this.bucket, key, encodeRecord(claim), revision);
    } catch (err) {
      throw conflictOr(`claim ${key}`, err);
    }
  }

  /** A delete marker with a header of its own saying who left it (kv.delete sends none: kv-internals.ts). */
  async remove(key: string, revision: number, freed: Freed): Promise<number> {
    try {
      return await deleteAt(this.requests, this.bucket, key, revision, { [FREED_HEADER]: `${freed.by} ${freed.conn}` });
    } catch (err) {
      throw conflictOr(`claim ${key}`, err);
    }
  }

  /** Stops listening for answers; requests still waiting reject. */
  close(): void {
    this.requests.replies.close();
  }
}
