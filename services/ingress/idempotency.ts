// Idempotency-Key, after the IETF draft "The Idempotency-Key HTTP Header Field": the key names one
// request of one sender. The same key with the same body is answered as the first time and stores
// nothing twice; the same key with another body is 422 idempotency_key_reused. Records (the body's
// fingerprint, then the answer) live in KV relay-idempotency, seen by every ingress, for
// STREAM_DUPLICATE_WINDOW: as long as JetStream de-duplicates the entries.
//
// Where the draft answers a resend that overlaps the first request with 409, the relay runs it again:
// each entry's JetStream message id (sender, key, entry index) is the second line of defence, and a
// client whose first attempt failed part-way is never told to wait on a request that is gone.
//
// A request whose record cannot be written (the bucket has no leader: 5-8 s after a NATS fault) is
// refused with 503 and Retry-After, not run. Running it would leave JetStream's message ids as the
// only defence, and the fault campaign (docs/RELIABILITY.md) saw them fail in exactly such faults:
// across stream leader changes nats-server 2.9 stored one message id twice. The resend a moment
// later has its record, and is answered from it if an earlier attempt was stored.

import { createHash } from 'node:crypto';
import type { KV } from '@nats-io/kv';
import type { Counter } from 'prom-client';
import { RelayError } from '../core/errors.js';
import { isWrongRevision } from '../core/jetstream-errors.js';
import { encodeRecord } from '../core/kv-mirror.js';
import type { Logger } from '../core/logger.js';

interface IdempotencyRecord<A> {
  fingerprint: string;
  /** The answer given, once the request was stored. */
  answer?: A;
}

export type Reservation<A> = { kind: 'run' } | { kind: 'replay'; answer: A };

/** What the store needs of its bucket (KV relay-idempotency; an in-memory twin in the unit tests). */
export type RecordBucket = Pick<KV, 'create' | 'get' | 'put'>;

const KEY_PATTERN = /^[A-Za-z0-9_.:-]{1,128}$/;

/** The Idempotency-Key of a request, null when it sent none; a malformed one is a 400. */
export function idempotencyKey(value: string | string[] | undefined): string | null {
  const raw = Array.isArray(value) ? value.join(',') : value;
  const key = raw?.trim() ?? '';
  if (key === '') return null;
  if (!KEY_PATTERN.test(key)) throw new RelayError('bad_request', 'Idempotency-Key must be 1 to 128 letters, digits or "_.:-".');
  return key;
}

/**
 * What identifies a request's content: its checked entries in body order (position, channel, sender,
 * agent, normalised payload), those dropped for a ban included, so spellings the relay normalises are
 * the same request, a ban arriving between two sends does not make them "different", and nothing is
 * serialised before validation has bounded it.
 */
export function fingerprint(entries: ReadonlyArray<{ index: number; channel: string; sender: string; agent: string | null; json: string }>): string {
  const hash = createHash('sha256');
  for (const e of [...entries].sort((a, b) => a.index - b.index)) hash.update(`${e.index}\n${e.channel}\n${e.sender}\n${e.agent ?? ''}\n${e.json}\n`);
  return hash.digest('base64url');
}

/** `A`: the answer of a stored request. */
export class IdempotencyStore<A extends object> {
  private readonly kv: RecordBucket;
  private readonly logger: Logger;
  private readonly unrecorded: Counter;

  /** `unrecorded` counts answers not written: the POST was stored; a resend of it runs again. */
  constructor(kv: RecordBucket, logger: Logger, unrecorded: Counter) {
    this.kv = kv;
    this.logger = logger;
    this.unrecorded = unrecorded;
  }

  private notRecorded(err: unknown): void {
    this.unrecorded.inc();
    this.logger.warn({ err }, 'Idempotency-Key record not written; the POST runs, and a resend of it would run again');
  }

  /**
   * Ties the key to this body, or says how to answer instead: replay the answer, or refuse (422; 503
   * when the request would run without a record, rather than run).
   */
  async reserve(sender: string, key: string, print: string): Promise<Reservation<A>> {
    const k = recordKey(sender, key);
    let refused: unknown = null;
    await this.kv.create(k, encodeRecord({ fingerprint: print } satisfies IdempotencyRecord<A>)).catch((e: unknown) => {
      refused = e ?? 'refused';
    });
    if (refused === null) return { kind: 'run' };
    // Refused because the key holds a record, or because the bucket could not take one (no leader).
    const exists = isWrongRevision(refused);
    // Read either way: a replica answers reads while the bucket has no leader.
    const entry = await this.kv.get(k).catch((e: unknown) => {
      throw unrecordable(e);
    });
    if (entry === null || entry.operation !== 'PUT') {
      if (!exists) throw unrecordable(refused);
      // The record expired between the create and the read: the key is new again.
      this.notRecorded(refused);
      return { kind: 'run' };
    }
    const record = entry.json<IdempotencyRecord<A>>();
    if (record.fingerprint !== print) {
      throw new RelayError('idempotency_key_reused',
        'This Idempotency-Key was already used for a request with a different body. A resend must carry the same body; a new request needs a new key.',
      );
    }
    if (record.answer !== undefined) return { kind: 'replay', answer: record.answer };
    // Under way elsewhere, or stored without its answer recorded: run again, unless the bucket
    // cannot take this run's answer either.
    if (!exists) throw unrecordable(refused);
    return { kind: 'run' };
  }

  /** Remembers the answer, so a resend is answered the same way without running again. */
  async complete(sender: string, key: string, print: string, answer: A): Promise<void> {
    // Best effort: without it a resend runs again, which stores nothing twice.
    await this.kv.put(recordKey(sender, key), encodeRecord({ fingerprint: print, answer } satisfies IdempotencyRecord<A>)).catch((e: unknown) => this.notRecorded(e));
  }
}

function unrecordable(cause: unknown): RelayError {
  return new RelayError('unavailable', 'The relay cannot record this Idempotency-Key right now; resend the same request with the same key shortly.', { retryAfter: 1, cause });
}

/** KV keys allow few characters; a hash of (sender, key) fits and keeps keys apart per sender. */
function recordKey(sender: string, key: string): string {
  return createHash('sha256').update(`${sender}\n${key}`).digest('hex');
}

