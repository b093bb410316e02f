// Mesh bans (spec A3), mirrored on every node so a ban issued anywhere closes the account's streams
// everywhere. An operator's ban is keyed by the account's uuid; a ban the relay issues itself (a
// cracked client) by `auto.<service>.<uuid>`, so each NATS role writes only its own keys
// (infra/nats/permissions.conf): a stolen ingress or gateway credential can neither lift nor
// rewrite an operator's ban. An account is banned while any of its keys holds an active ban, in any
// bans bucket: a mesh without regions has one (relay-bans), a mesh with regions one per region
// (credential-places.ts), each read from this region's copy.

import type { JetStreamClient } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import type { BanRecord } from '../../schemas/records.js';
import { plainTextProblem } from '../../schemas/text.js';
import { credentialPlaces, type CredentialPlaces } from './credential-places.js';
import { RelayError } from './errors.js';
import { readFromLeader } from './kv-internals.js';
import { encodeRecord, KvMirror } from './kv-mirror.js';
import type { Logger } from './logger.js';
import { parseBanRecord } from './records.js';

export interface BanInput {
  reason: string;
  by: string;
  clientId?: string;
  userAgent?: string;
  expiresAt?: string;
}

/** The services that ban cracked clients on their own, each under its own key prefix. */
export const AUTO_BANNERS = ['ingress', 'gateway', 'all'] as const;
export type AutoBanner = (typeof AUTO_BANNERS)[number];

/** Where a ban of `uuid` is kept: the operator's key, or the key of the service that issued it. */
export function banKey(uuid: string, issuer: AutoBanner | null): string {
  return issuer === null ? uuid : `auto.${issuer}.${uuid}`;
}

/** Every key a ban of `uuid` may be kept under. */
function banKeys(uuid: string): string[] {
  return [banKey(uuid, null), ...AUTO_BANNERS.map((s) => banKey(uuid, s))];
}

/** A ban record counts only under a key of the account it names. */
function parseBanAt(value: unknown, key: string): BanRecord | null {
  const ban = parseBanRecord(value);
  return ban !== null && banKeys(ban.uuid).includes(key) ? ban : null;
}

export class BanStore {
  private readonly mirrors: KvMirror<BanRecord>[];
  private readonly js: JetStreamClient;
  private readonly kv: KV;
  private readonly issuer: AutoBanner | null;
  private readonly places: Pick<CredentialPlaces, 'bans' | 'bansWritten'>;

  /**
   * `kv`: the bucket this store writes (`places.bansWritten`); `issuer`: the service whose automatic
   * bans this store writes, null for an operator's tools.
   */
  constructor(js: JetStreamClient, kv: KV, logger: Logger, issuer: AutoBanner | null, places: Pick<CredentialPlaces, 'bans' | 'bansWritten'> = credentialPlaces(null)) {
    this.js = js;
    this.kv = kv;
    this.issuer = issuer;
    this.places = places;
    this.mirrors = places.bans.map((p) => new KvMirror(js, p.bucket, parseBanAt, logger, p.readFrom === undefined ? {} : { readFrom: p.readFrom }));
  }

  async start(): Promise<void> {
    await Promise.all(this.mirrors.map((m) => m.start()));
  }

  async stop(): Promise<void> {
    await Promise.all(this.mirrors.map((m) => m.stop()));
  }

  /** Calls `listener` with every ban record written or heard, wherever it was issued. */
  onBan(listener: (ban: BanRecord) => void): void {
    for (const m of this.mirrors) m.on('put', (_key, ban) => listener(ban));
  }

  /** Every bans bucket's record under `key`, the first found. */
  private recordAt(key: string): BanRecord | undefined {
    for (const m of this.mirrors) {
      const ban = m.get(key);
      if (ban !== undefined) return ban;
    }
    return undefined;
  }

  /** The ban in force for this account, if any (an expired ban no longer counts). */
  activeBan(uuid: string, now = Date.now()): BanRecord | undefined {
    for (const key of banKeys(uuid)) {
      for (const m of this.mirrors) {
        const ban = m.get(key);
        if (ban !== undefined && (ban.expiresAt === undefined || Date.parse(ban.expiresAt) > now)) return ban;
      }
    }
    return undefined;
  }

  /** One ban per account: the one in force (the operator's first), else its first record. */
  list(now = Date.now()): BanRecord[] {
    const accounts = new Set(this.mirrors.flatMap((m) => [...m.values()].map((b) => b.uuid)));
    const shown = [...accounts].map((uuid) => this.activeBan(uuid, now) ?? banKeys(uuid).map((k) => this.recordAt(k)).find((b) => b !== undefined));
    return shown.filter((b): b is BanRecord => b !== undefined).sort((a, b) => a.bannedAt.localeCompare(b.bannedAt));
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
    const key = banKey(uuid, this.issuer);
    const revision = await this.kv.put(key, encodeRecord(record));
    this.mirrors[this.places.bans.findIndex((p) => p.bucket === this.places.bansWritten)]?.remember(key, record, revision);
    return record;
  }

  /**
   * Lifts every ban of the account, the operator's and the automatic ones, in every bans bucket.
   * With regions, a bucket that cannot be reached (its region cut off) keeps its ban while the
   * others are lifted; it is named in `unreached`. Without regions (one bucket) the error is thrown.
   */
  async unban(uuid: string): Promise<Lift> {
    let lifted = false;
    const unreached: string[] = [];
    const jsm = await this.js.jetstreamManager(false);
    for (const place of this.places.bans) {
      try {
        const kv = place.bucket === this.places.bansWritten ? this.kv : await new Kvm(this.js).open(place.bucket);
        for (const key of banKeys(uuid)) {
          // From the bucket's leader: a direct get may be answered by a copy in this region (nats-server
          // makes copies answer for their origin), which lags, or holds nothing while its region is cut off.
          const entry = await readFromLeader(jsm, place.bucket, key);
          if (entry === null || entry.operation !== 'PUT') continue;
          await kv.delete(key);
          lifted = true;
        }
      } catch (err) {
        if (this.places.bans.length === 1) throw err;
        unreached.push(`${place.bucket} (${err instanceof Error ? err.message : String(err)})`);
      }
    }
    return { lifted, unreached };
  }
}

/** What a lift did: whether any ban was lifted, and the bans buckets it could not reach (their bans stand). */
export interface Lift {
  lifted: boolean;
  unreached: string[];
}
