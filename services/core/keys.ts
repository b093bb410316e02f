// API keys (client credentials): KV bucket relay-keys, mirrored locally. The secret is shown once at
// creation; only its SHA-256 is stored, and it is compared in constant time.

import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import type { KeyRecord } from '../../schemas/records.js';
import { RelayError } from './errors.js';
import { readFromLeader, type KeyEntry } from './kv-internals.js';
import { encodeRecord, KvMirror } from './kv-mirror.js';
import { ThrottledWarnings, type Logger } from './logger.js';
import { parseKeyRecord } from './records.js';
import { plainTextProblem } from '../../schemas/text.js';
import { unknownScopes } from './scopes.js';
import { BUCKET_KEYS } from './subjects.js';
import type { BucketPlace } from './credential-places.js';

export type KeyCheck =
  | { status: 'ok'; key: KeyRecord }
  | { status: 'expired' | 'revoked'; key: KeyRecord }
  /** Deleted from the bucket (KV DEL or PURGE): an id the relay knew, refused like a revoked one. */
  | { status: 'deleted' }
  | { status: 'unknown' | 'wrong_secret' };

export interface CreatedKey {
  clientId: string;
  clientSecret: string;
  scopes: string[];
  label?: string;
  expiresAt?: string;
}

const DUMMY_HASH = Buffer.alloc(32);
/**
 * The shape of ids this relay issues; anything else is not worth a look-up in the bucket (nor always
 * a valid KV key: its get would throw, and a failed look-up answers 503).
 */
const KEY_ID = /^relay_[0-9a-f]{24}$/;

/** Bucket reads for ids the mirror does not know, at once. */
const MAX_FRESH_READS = 64;

export function isIssuedKeyId(id: string): boolean {
  return KEY_ID.test(id);
}

/** Unknown and deleted ids cost the same hash-and-compare as known ones. */
function evaluate(key: KeyRecord | undefined, secret: string, now: number, deleted = false): KeyCheck {
  const presented = createHash('sha256').update(secret, 'utf8').digest();
  const stored = key ? Buffer.from(key.secretSha256, 'hex') : DUMMY_HASH;
  const matches = timingSafeEqual(presented, stored) && key !== undefined;
  // A deleted id is refused as revoked whatever secret comes with it, never banned. Nobody can hold
  // it legitimately any more, but its users ran a genuine build; and a wrong secret is not wrong for
  // sure: a node that started after the delete never saw the hash, and every node must agree.
  if (deleted) return { status: 'deleted' };
  if (key === undefined) return { status: 'unknown' };
  if (!matches) return { status: 'wrong_secret' };
  if (key.revokedAt !== undefined) return { status: 'revoked', key };
  if (key.expiresAt !== undefined && Date.parse(key.expiresAt) <= now) return { status: 'expired', key };
  return { status: 'ok', key };
}

function keysUnavailable(cause?: unknown): RelayError {
  return new RelayError('unavailable', 'The API keys cannot be read right now; retry shortly.', { retryAfter: 1, cause });
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

export class KeyStore {
  readonly mirror: KvMirror<KeyRecord>;
  private readonly kv: KV;
  private readonly js: JetStreamClient;
  private jsm: JetStreamManager | undefined;
  private freshReads = 0;
  private readonly warnings: ThrottledWarnings;
  /**
   * Tombstones: ids deleted from the bucket (live, or before this node started: the mirror replays
   * the delete markers). Without them a deleted key's users would look unknown and be banned.
   */
  private readonly deleted = new Set<string>();

  /** `place`: where the keys are read (credential-places.ts; with regions, this region's copy). */
  constructor(js: JetStreamClient, kv: KV, logger: Logger, place: BucketPlace = { bucket: BUCKET_KEYS }) {
    this.js = js;
    this.kv = kv;
    this.warnings = new ThrottledWarnings(logger);
    this.mirror = new KvMirror(js, BUCKET_KEYS, parseKeyRecord, logger, place.readFrom === undefined ? {} : { readFrom: place.readFrom });
    this.mirror.on('delete', (clientId) => this.deleted.add(clientId));
    this.mirror.on('put', (clientId) => this.deleted.delete(clientId));
  }

  start(): Promise<void> {
    return this.mirror.start();
  }

  stop(): Promise<void> {
    return this.mirror.stop();
  }

  /** Checks a presented id and secret against the local mirror. */
  check(clientId: string, secret: string, now = Date.now()): KeyCheck {
    return evaluate(this.mirror.get(clientId), secret, now, this.deleted.has(clientId));
  }

  /**
   * Like check(), but an id the mirror does not know yet is read from the bucket before it is called
   * unknown: a key created a moment ago on another node must not get its first user banned. Only an
   * answer from the bucket makes an id unknown: a look-up that fails or times out, or a record that
   * cannot be read, throws 503 unavailable (unknown bans; an outage must not).
   */
  async checkFresh(clientId: string, secret: string, now = Date.now()): Promise<KeyCheck> {
    const local = this.check(clientId, secret, now);
    if (local.status !== 'unknown' || !KEY_ID.test(clientId)) return local;
    // Made-up ids of the right shape each cost a read: bound how many run at once (a refusal here
    // is a 503, never "unknown", so it bans nobody).
    if (this.freshReads >= MAX_FRESH_READS) throw keysUnavailable();
    let entry: KeyEntry | null;
    this.freshReads++;
    try {
      entry = await this.leaderRead(clientId);
    } catch (err) {
      this.warnings.warn('lookup', { err }, 'key look-up in the bucket failed');
      throw keysUnavailable(err);
    } finally {
      this.freshReads--;
    }
    if (entry === null) return local;
    if (entry.operation !== 'PUT') return evaluate(undefined, secret, now, true);
    let record: KeyRecord | null;
    try {
      record = parseKeyRecord(entry.json());
    } catch {
      record = null;
    }
    if (record === null) {
      this.warnings.warn('malformed', { clientId }, 'the record of a presented key is malformed');
      throw keysUnavailable();
    }
    // Known from now on without a read: with regions, a copy that lagged when this process loaded it
    // would otherwise send every request with this key across to the home region, and refuse them
    // all with 503 while that region cannot be reached. The feed's later changes are newer.
    this.mirror.remember(clientId, record, entry.revision);
    return evaluate(record, secret, now);
  }


  /**
   * The key's latest record as the bucket's stream leader has it. Not kv.get(): the buckets allow
   * direct gets, which any replica answers, and a replica a moment behind would call a key created
   * a moment ago unknown, and ban its first user (seen on a three-node cluster).
   */
  private async leaderRead(clientId: string): Promise<KeyEntry | null> {
    this.jsm ??= await this.js.jetstreamManager(false); // checked at start; a region cut off does not answer it
    return readFromLeader(this.jsm, BUCKET_KEYS, clientId);
  }

  list(): KeyRecord[] {
    return [...this.mirror.values()].sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  async create(options: { scopes: string[]; label?: string; expiresAt?: string }): Promise<CreatedKey> {
    const unknown = unknownScopes(options.scopes);
    if (unknown.length > 0) {
      throw new RelayError('bad_request', `Unknown scope(s): ${unknown.join(', ')}.`);
    }
    if (options.scopes.length === 0) throw new RelayError('bad_request', 'A key needs at least one scope.');
    const labelProblem = options.label === undefined ? null : plainTextProblem('A key label', options.label);
    if (labelProblem !== null) throw new RelayError('bad_request', labelProblem);
    const clientId = `relay_${randomBytes(12).toString('hex')}`;
    const clientSecret = randomBytes(32).toString('base64url');
    const record: KeyRecord = {
      clientId,
      secretSha256: hashSecret(clientSecret),
      scopes: [...new Set(options.scopes)],
      createdAt: new Date().toISOString(),
    };
    if (options.label !== undefined) record.label = options.label;
    if (options.expiresAt !== undefined) record.expiresAt = options.expiresAt;
    // Remembered at once, so a listing right after the answer shows the key (the watch follows).
    this.mirror.remember(clientId, record, await this.kv.create(clientId, encodeRecord(record)));
    const created: CreatedKey = { clientId, clientSecret, scopes: record.scopes };
    if (record.label !== undefined) created.label = record.label;
    if (record.expiresAt !== undefined) created.expiresAt = record.expiresAt;
    return created;
  }

  /**
   * Marks a key revoked (kept for the audit trail); every node closes its streams. `changed` is false
   * when it already was, so a repeated revoke writes no second audit record.
   */
  async revoke(clientId: string): Promise<{ key: KeyRecord; changed: boolean }> {
    // From the bucket's leader: with regions, a direct get may be answered by this region's copy, which lags.
    this.jsm ??= await this.js.jetstreamManager(false);
    const entry = await readFromLeader(this.jsm, BUCKET_KEYS, clientId);
    if (entry === null || entry.operation !== 'PUT') {
      throw new RelayError('not_found', `No key with client id ${clientId}.`);
    }
    const record = parseKeyRecord(entry.json());
    if (record === null) throw new RelayError('internal_error', `The record of key ${clientId} is malformed.`);
    if (record.revokedAt !== undefined) return { key: record, changed: false };
    const revoked: KeyRecord = { ...record, revokedAt: new Date().toISOString() };
    this.mirror.remember(clientId, revoked, await this.kv.update(clientId, encodeRecord(revoked), entry.revision));
    return { key: revoked, changed: true };
  }
}
