// Following a KV bucket without a consumer, which the ingress and the gateway may not create (its
// deliveries go wherever its creator says, within the JetStream account). The bucket's stream
// republishes every entry it stores on the bucket's change feed (subjects.ts), heard by a core
// subscription at most once. Stream sequences have no holes and every entry is republished, so a
// feed message more than one past the last heard shows a loss (Nats-Last-Sequence cannot: nats-server
// 2.9 puts the previous sequence of the same subject there); the bucket is then read again: its keys
// by STREAM.INFO, each key's last entry from the stream leader.

import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import type { Msg, MsgCallback, NatsConnection, Status, Subscription } from '@nats-io/nats-core';
import { guarded, loggedThrows } from './guarded-callback.js';
import { lastHeader } from './wire-headers.js';
import { kvOperation, kvStream, kvSubject, readFromLeader } from './kv-internals.js';
import type { Logger } from './logger.js';
import { kvFeedSubject } from './subjects.js';

/** One entry of the bucket, from a leader read or from the feed; `operation`: PUT, DEL or PURGE. */
export interface FeedRecord {
  readonly key: string;
  readonly operation: string;
  readonly revision: number;
  json(): unknown;
}

/** What following the feed changes (the mirror's map). */
export interface FeedSink {
  /** Applies a record newer than the key's known revision; ignores it otherwise. */
  apply(record: FeedRecord): void;
  /** Drops the keys a listing no longer has that were known at or before its position. */
  dropAbsent(present: ReadonlySet<string>, upTo: number): void;
  /** The stream was made anew: its revisions say nothing of the ones known. */
  forgetRevisions(): void;
}

export interface FeedOptions {
  /** The feed is a core subscription on the connection under `js`. */
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  bucket: string;
  sink: FeedSink;
  logger: Logger;
  checkIntervalMs: number;
}

/** Leader reads in flight at once: enough to load thousands of keys quickly, not to swamp the leader. */
const READS_AT_ONCE = 64;
const LISTING_ATTEMPTS = 3;

export class KvFeed {
  private sub: Subscription | null = null;
  private status: (AsyncIterable<Status> & { stop?: () => void }) | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** Feed messages held while the bucket is read; null when they apply as they come. */
  private held: Msg[] | null = null;
  /** The last stream sequence accounted for: heard on the feed, or covered by a listing. */
  private heard = 0;
  private created: string | null = null;
  private syncing = false;
  private again = false;
  /** The last read failed or listed too little: the periodic check tries again (not each feed message). */
  private failed = false;
  private checking = false;
  /** The stream's last sequence at the previous check, when the feed had not reached it. */
  private unheard: number | null = null;
  private stopped = false;

  /** Each message is taken through this, live or held during a read: one that throws costs itself only. */
  private readonly hear: MsgCallback<Msg>;

  constructor(private readonly o: FeedOptions) {
    this.hear = guarded(
      (err, msg) => (err === null ? this.take(msg) : o.logger.error({ bucket: o.bucket, err }, 'the KV change feed failed')),
      loggedThrows(o.logger, `the ${o.bucket} mirror`),
    );
  }

  /** Resolves once every key's latest entry is applied. */
  async start(): Promise<void> {
    this.sub = this.o.nc.subscribe(kvFeedSubject(this.o.bucket, '>'), {
      callback: this.hear,
    });
    try {
      // The server holds the subscription before the listing is taken: nothing after it is missed.
      await this.o.nc.flush();
      await this.run(true);
    } catch (err) {
      this.stop();
      throw err;
    }
    if (this.stopped) return;
    this.timer = setInterval(() => void this.check(), this.o.checkIntervalMs);
    this.timer.unref();
    this.watchReconnects();
  }

  stop(): void {
    this.stopped = true;
    this.sub?.unsubscribe();
    if (this.timer !== null) clearInterval(this.timer);
    this.status?.stop?.();
  }

  private take(msg: Msg): void {
    if (this.stopped) return;
    if (this.held !== null) {
      this.held.push(msg);
      return;
    }
    const record = decodeFeed(msg, this.o.bucket);
    if (record === null) {
      this.o.logger.warn({ bucket: this.o.bucket, subject: msg.subject }, 'ignoring a KV change feed message without its stream headers');
      return;
    }
    // At or below `heard`: heard already, or covered by the listing the bucket was last read at.
    if (record.revision <= this.heard) return;
    if (record.revision > this.heard + 1) {
      this.o.logger.warn({ bucket: this.o.bucket, expected: this.heard + 1, heard: record.revision }, 'KV change feed messages were lost; reading the bucket again');
      if (!this.failed) this.resync();
    }
    this.heard = record.revision;
    this.o.sink.apply(record);
  }

  /** Reads the bucket again, one read at a time; one asked for meanwhile runs after it. */
  private resync(): void {
    if (this.stopped) return;
    if (this.syncing) this.again = true;
    else void this.run(false);
  }

  private async run(first: boolean): Promise<void> {
    this.syncing = true;
    this.again = false;
    try {
      this.failed = !(await this.sync());
    } catch (err) {
      this.failed = true;
      if (first) throw err;
      this.o.logger.error({ bucket: this.o.bucket, err }, 'reading the KV bucket again failed; keeping what was known, trying again at the next check');
    } finally {
      this.syncing = false;
    }
    if (this.again && !this.failed) this.resync();
  }

  /** False when the listing was not steady: the next check reads the bucket again. */
  private async sync(): Promise<boolean> {
    this.held ??= [];
    try {
      const listing = await listKeys(this.o.nc, this.o.js, this.o.bucket, this.o.logger);
      const records = await readLatest(this.o.jsm, this.o.bucket, listing.keys);
      if (this.stopped) return true;
      if (this.created !== null && (listing.created !== this.created || listing.lastSeq < this.heard)) {
        this.o.logger.warn({ bucket: this.o.bucket }, "the KV bucket's stream was made anew; taking its entries as they are");
        this.o.sink.forgetRevisions();
      }
      for (const r of records) this.o.sink.apply(r);
      // A listing missing keys would drop them wrongly: only a complete one says what is gone.
      if (listing.complete) this.o.sink.dropAbsent(new Set(records.map((r) => r.key)), listing.lastSeq);
      this.heard = listing.lastSeq;
      this.created = listing.created;
      return listing.complete;
    } finally {
      const held = this.held;
      this.held = null;
      for (const msg of held) void this.hear(null, msg);
    }
  }

  /**
   * The cheap check for a loss no later message shows (the last one lost, a reconnect unseen). An
   * entry just stored may still be on its way: the stream's position is confirmed unheard at the next.
   */
  private async check(): Promise<void> {
    if (this.stopped || this.syncing || this.checking) return;
    this.checking = true;
    try {
      const { created, state } = await this.o.jsm.streams.info(kvStream(this.o.bucket));
      const unheard = this.unheard !== null && this.heard < this.unheard;
      this.unheard = state.last_seq > this.heard ? state.last_seq : null;
      if (this.failed || created !== this.created || state.last_seq < this.heard || unheard) this.resync();
    } catch (err) {
      this.o.logger.warn({ bucket: this.o.bucket, err }, 'checking the KV change feed against its stream failed');
    } finally {
      this.checking = false;
    }
  }

  /** Whatever was published while the connection was down never reaches a core subscription. */
  private watchReconnects(): void {
    const status = this.o.nc.status();
    this.status = status;
    void (async () => {
      for await (const s of status) if (s.type === 'reconnect') this.resync();
    })().catch((err: unknown) => this.o.logger.warn({ bucket: this.o.bucket, err }, 'watching the NATS connection failed'));
  }
}

/** A feed message as a record; null without the headers the stream puts on what it republishes. */
export function decodeFeed(msg: Msg, bucket: string): FeedRecord | null {
  const h = msg.headers;
  if (h === undefined || (msg.reply !== undefined && msg.reply !== '')) return null;
  // A writer's own Nats-* headers stay in what it stored, and RePublish appends the server's after
  // them: only the last value of each is the server's. An answer aimed at the feed subject (a direct
  // get's, through the role's own imports) names the stream and subject it really read, so a record
  // counts only when both are this bucket's and this very key's.
  const key = msg.subject.slice(kvFeedSubject(bucket, '').length);
  const revision = Number(lastHeader(h, 'Nats-Sequence'));
  if (!msg.subject.startsWith(kvFeedSubject(bucket, '')) || !isKey(key)) return null;
  if (lastHeader(h, 'Nats-Stream') !== kvStream(bucket) || lastHeader(h, 'Nats-Subject') !== kvSubject(bucket, key)) return null;
  if (!Number.isSafeInteger(revision) || revision < 1) return null;
  return { key, operation: kvOperation(h), revision, json: () => msg.json<unknown>() };
}

/** A key of the bucket: NATS stores a subject with a literal `*` or `>` token, which no read can name alone. */
export function isKey(key: string): boolean {
  return key !== '' && !key.split('.').some((t) => t === '*' || t === '>' || t === '');
}

/**
 * `lastSeq`: the stream's last sequence when the listing began (every key written up to it is
 * listed); `complete` false when keys kept coming and going while the pages were taken.
 */
type KeyListing = { keys: string[]; lastSeq: number; created: string; complete: boolean };

/** The STREAM.INFO answer, paged: nats-server lists at most 100,000 subjects per answer. */
type InfoPage = { total?: number; limit?: number; created: string; state: { last_seq: number; subjects?: Record<string, number> }; error?: { code: number; description: string } };

/**
 * Every key of the bucket. The client's own paging merges pages silently; pages taken while keys
 * come and go shift (subjects are sorted), so a changed total takes the listing again.
 */
async function listKeys(nc: NatsConnection, js: JetStreamClient, bucket: string, logger: Logger): Promise<KeyListing> {
  const prefix = kvSubject(bucket, '');
  const page = async (offset: number): Promise<InfoPage> => {
    const body = JSON.stringify({ subjects_filter: kvSubject(bucket, '>'), offset });
    const answer = (await nc.request(`${js.apiPrefix}.STREAM.INFO.${kvStream(bucket)}`, body, { timeout: js.getOptions().timeout ?? 5000 })).json<InfoPage>();
    if (answer.error !== undefined) throw new Error(`STREAM.INFO ${kvStream(bucket)}: ${answer.error.description} (${answer.error.code})`);
    return answer;
  };
  for (let attempt = 1; ; attempt++) {
    const first = await page(0);
    const total = first.total ?? 0;
    const subjects = new Set(Object.keys(first.state.subjects ?? {}));
    let steady = true;
    for (let offset = first.limit ?? 0; steady && offset > 0 && subjects.size < total; offset += first.limit ?? 0) {
      const next = await page(offset);
      const more = Object.keys(next.state.subjects ?? {});
      steady = next.total === total && more.length > 0;
      for (const s of more) subjects.add(s);
    }
    if (steady || attempt === LISTING_ATTEMPTS) {
      const complete = steady && subjects.size >= total;
      if (!complete) logger.warn({ bucket, listed: subjects.size, total }, 'the KV bucket changed while its keys were listed; the next check reads it again');
      const keys = [...subjects].filter((s) => s.startsWith(prefix)).map((s) => s.slice(prefix.length)).filter(isKey);
      return { keys, lastSeq: first.state.last_seq, created: first.created, complete };
    }
  }
}

/** Each key's latest entry from the stream leader (a replica may lag); keys gone meanwhile are left out. */
async function readLatest(jsm: JetStreamManager, bucket: string, keys: readonly string[]): Promise<FeedRecord[]> {
  const records: FeedRecord[] = [];
  let next = 0;
  let failed = false;
  const reader = async (): Promise<void> => {
    for (let key = keys[next++]; key !== undefined && !failed; key = keys[next++]) {
      const e = await readFromLeader(jsm, bucket, key).catch((err: unknown) => {
        failed = true; // the others stop too: the whole read is tried again
        throw err;
      });
      if (e !== null) records.push({ key, operation: e.operation, revision: e.revision, json: () => e.json() });
    }
  };
  await Promise.all(Array.from({ length: Math.min(READS_AT_ONCE, keys.length) }, reader));
  return records;
}
