// Mesh bans (spec A3): KV bucket relay-bans keyed by account uuid, mirrored on every node so a ban
// issued anywhere closes the account's streams everywhere.

import type { JetStreamClient } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import type { BanRecord } from '../../schemas/records.js';
import { plainTextProblem } from '../../schemas/text.js';
import { RelayError } from './errors.js';
import { encodeRecord, KvMirror } from './kv-mirror.js';
import type { Logger } from './logger.js';
import { parseBanRecord } from './records.js';
import { BUCKET_BANS } from './subjects.js';

export interface BanInput {
  reason: string;
  by: string;
  clientId?: string;
  userAgent?: string;
  expiresAt?: string;
}

export class BanStore {
  readonly mirror: KvMirror<BanRecord>;
  private readonly kv: KV;

  constructor(js: JetStreamClient, kv: KV, logger: Logger) {
    this.kv = kv;
    this.mirror = new KvMirror(js, BUCKET_BANS, parseBanRecord, logger);
  }

  start(): Promise<void> {
    return this.mirror.start();
  }

  stop(): Promise<void> {
    return this.mirror.stop();
  }

  /** The ban in force for this account, if any (an expired ban no longer counts). */
  activeBan(uuid: string, now = Date.now()): BanRecord | undefined {
    const ban = this.mirror.get(uuid);
    if (ban === undefined) return undefined;
    if (ban.expiresAt !== undefined && Date.parse(ban.expiresAt) <= now) return undefined;
    return ban;
  }

  list(): BanRecord[] {
    return [...this.mirror.values()].sort((a, b) => a.bannedAt.localeCompare(b.bannedAt));
  }

  /**
   * Every text of the record is read by operators (bans list, the console, the audit trail): one the
   * text rule refuses is a 400 here, whoever writes (the relay escapes what a cracked client sent).
   */
  async ban(uuid: string, input: BanInput): Promise<BanRecord> {
    for (const [what, text] of [['A ban reason', input.reason], ['A ban\'s issuer', input.by], ['A banned client id', input.clientId], ['A banned user agent', input.userAgent]] as const) {
      const problem = text === undefined ? null : plainTextProblem(what, text);
      if (problem !== null) throw new RelayError('bad_request', problem);
    }
    const record: BanRecord = { uuid, reason: input.reason, by: input.by, bannedAt: new Date().toISOString() };
    if (input.clientId !== undefined) record.clientId = input.clientId;
    if (input.userAgent !== undefined) record.userAgent = input.userAgent;
    if (input.expiresAt !== undefined) record.expiresAt = input.expiresAt;
    this.mirror.remember(uuid, record, await this.kv.put(uuid, encodeRecord(record)));
    return record;
  }

  /** Lifts a ban; returns false when there was none. */
  async unban(uuid: string): Promise<boolean> {
    const entry = await this.kv.get(uuid);
    if (entry === null || entry.operation !== 'PUT') return false;
    await this.kv.delete(uuid);
    return true;
  }
}
