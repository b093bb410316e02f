// API keys (client credentials): KV bucket relay-keys, mirrored locally. The secret is shown once at
// creation; only its SHA-256 is stored, and it is compared in constant time.

import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { JetStreamClient } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import type { KeyRecord } from '../../schemas/records.js';
import { ErrorCode, RelayError } from './errors.js';
import { encodeRecord, KvMirror } from './kv-mirror.js';
import type { Logger } from './logger.js';
import { parseKeyRecord } from './records.js';
import { unknownScopes } from './scopes.js';
import { BUCKET_KEYS } from './subjects.js';

export type KeyCheck =
  | { status: 'ok'; key: KeyRecord }
  | { status: 'expired' | 'revoked'; key: KeyRecord }
  | { status: 'unknown' | 'wrong_secret' };

export interface CreatedKey {
  clientId: string;
  clientSecret: string;
  scopes: string[];
  label?: string;
  expiresAt?: string;
}

const DUMMY_HASH = Buffer.alloc(32);
/** The shape of ids this relay issues; anything else is not worth a look-up in the bucket. */
const KEY_ID = /^relay_[0-9a-f]{24}$/;

/** Unknown ids cost the same hash-and-compare as known ones. */
function evaluate(key: KeyRecord | undefined, secret: string, now: number): KeyCheck {
  const presented = createHash('sha256').update(secret, 'utf8').digest();
  const stored = key ? Buffer.from(key.secretSha256, 'hex') : DUMMY_HASH;
  const matches = timingSafeEqual(presented, stored) && key !== undefined;
  if (key === undefined) return { status: 'unknown' };
  if (!matches) return { status: 'wrong_secret' };
  if (key.revokedAt !== undefined) return { status: 'revoked', key };
  if (key.expiresAt !== undefined && Date.parse(key.expiresAt) <= now) return { status: 'expired', key };
  return { status: 'ok', key };
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

export class KeyStore {
  readonly mirror: KvMirror<KeyRecord>;
  private readonly kv: KV;

  constructor(js: JetStreamClient, kv: KV, logger: Logger) {
    this.kv = kv;
    this.mirror = new KvMirror(js, BUCKET_KEYS, parseKeyRecord, logger);
  }

  start(): Promise<void> {
    return this.mirror.start();
  }

  stop(): Promise<void> {
    return this.mirror.stop();
  }

  /** Checks a presented id and secret against the local mirror. */
  check(clientId: string, secret: string, now = Date.now()): KeyCheck {
    return evaluate(this.mirror.get(clientId), secret, now);
  }

  /**
   * Like check(), but an id the mirror does not know yet is read from the bucket before it is called
   * unknown: a key created a moment ago on another node must not get its first user banned.
   */
  async checkFresh(clientId: string, secret: string, now = Date.now()): Promise<KeyCheck> {
    const local = this.check(clientId, secret, now);
    if (local.status !== 'unknown' || !KEY_ID.test(clientId)) return local;
    const entry = await this.kv.get(clientId).catch(() => null);
    const record = entry !== null && entry.operation === 'PUT' ? parseKeyRecord(entry.json<unknown>()) : null;
    return evaluate(record ?? undefined, secret, now);
  }


  list(): KeyRecord[] {
    return [...this.mirror.values()].sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  async create(options: { scopes: string[]; label?: string; expiresAt?: string }): Promise<CreatedKey> {
    const unknown = unknownScopes(options.scopes);
    if (unknown.length > 0) {
      throw new RelayError(400, ErrorCode.BadRequest, `Unknown scope(s): ${unknown.join(', ')}.`);
    }
    if (options.scopes.length === 0) throw new RelayError(400, ErrorCode.BadRequest, 'A key needs at least one scope.');
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
    await this.kv.create(clientId, encodeRecord(record));
    const created: CreatedKey = { clientId, clientSecret, scopes: record.scopes };
    if (record.label !== undefined) created.label = record.label;
    if (record.expiresAt !== undefined) created.expiresAt = record.expiresAt;
    return created;
  }

  /** Marks a key revoked (kept for the audit trail); every node closes its streams. */
  async revoke(clientId: string): Promise<KeyRecord> {
    const entry = await this.kv.get(clientId);
    if (entry === null || entry.operation !== 'PUT') {
      throw new RelayError(404, ErrorCode.NotFound, `No key with client id ${clientId}.`);
    }
    const record = parseKeyRecord(entry.json<unknown>());
    if (record === null) throw new RelayError(500, ErrorCode.Internal, `The record of key ${clientId} is malformed.`);
    if (record.revokedAt !== undefined) return record;
    const revoked: KeyRecord = { ...record, revokedAt: new Date().toISOString() };
    await this.kv.update(clientId, encodeRecord(revoked), entry.revision);
    return revoked;
  }
}
