// Idempotency-Key, after the IETF draft "The Idempotency-Key HTTP Header Field": the key names one
// request of one sender. The same key with the same body is answered as the first time and stores
// nothing twice; the same key with another body is 422 idempotency_key_reused. Records (the body's
// fingerprint, then the answer) live in KV relay-idempotency, seen by every ingress, for
// STREAM_DUPLICATE_WINDOW: as long as JetStream de-duplicates the entries.
//
// Where the draft answers a resend that overlaps the first request with 409, the relay runs it again:
// each entry's JetStream message id (sender, key, entry index) keeps anything stored from being
// stored twice, so re-running is safe, and a client whose first attempt failed part-way (or whose
// record could not be written during a NATS fault) is never told to wait on a request that is gone.

import { createHash } from 'node:crypto';
import type { KV } from '@nats-io/kv';
import type { Counter } from 'prom-client';
import { RelayError } from '../core/errors.js';
import { encodeRecord } from '../core/kv-mirror.js';
import type { Logger } from '../core/logger.js';

interface IdempotencyRecord<A> {
  fingerprint: string;
  /** The answer given, once the request was stored. */
  answer?: A;
}

export type Reservation<A> = { kind: 'run' } | { kind: 'replay'; answer: A };

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
  private readonly kv: KV;
  private readonly logger: Logger;
  private readonly unrecorded: Counter;

  /** `unrecorded` counts records not written: the POST runs all the same (at-least-once for its resends). */
  constructor(kv: KV, logger: Logger, unrecorded: Counter) {
    this.kv = kv;
    this.logger = logger;
    this.unrecorded = unrecorded;
  }

  private notRecorded(err: unknown): void {
    this.unrecorded.inc();
    this.logger.warn({ err }, 'Idempotency-Key record not written; the POST runs, and a resend of it would run again');
  }

  /** Ties the key to this body, or says how to answer instead: replay the answer, or refuse (422). */
  async reserve(sender: string, key: string, print: string): Promise<Reservation<A>> {
    const k = recordKey(sender, key);
    let refused: unknown = null;
    await this.kv.create(k, encodeRecord({ fingerprint: print } satisfies IdempotencyRecord<A>)).catch((e: unknown) => {
      refused = e ?? 'refused';
    });
    if (refused === null) return { kind: 'run' };
    const entry = await this.kv.get(k).catch((e: unknown) => {
      throw new RelayError('unavailable', 'The relay could not check the Idempotency-Key right now; retry shortly.', { retryAfter: 1, cause: e });
    });
    // Not there after all: the create failed for another reason (the bucket refused it), or the
    // record just expired. Never a refusal of the POST.
    if (entry === null || entry.operation !== 'PUT') {
      if (entry === null) this.notRecorded(refused);
      return { kind: 'run' };
    }
    const record = entry.json<IdempotencyRecord<A>>();
    if (record.fingerprint !== print) {
      throw new RelayError('idempotency_key_reused',
        'This Idempotency-Key was already used for a request with a different body. A resend must carry the same body; a new request needs a new key.',
      );
    }
    return record.answer !== undefined ? { kind: 'replay', answer: record.answer } : { kind: 'run' };
  }

  /** Remembers the answer, so a resend is answered the same way without running again. */
  async complete(sender: string, key: string, print: string, answer: A): Promise<void> {
    // Best effort: without it a resend runs again, which stores nothing twice.
    await this.kv.put(recordKey(sender, key), encodeRecord({ fingerprint: print, answer } satisfies IdempotencyRecord<A>)).catch((e: unknown) => this.notRecorded(e));
  }
}

/** KV keys allow few characters; a hash of (sender, key) fits and keeps keys apart per sender. */
function recordKey(sender: string, key: string): string {
  return createHash('sha256').update(`${sender}\n${key}`).digest('hex');
}

