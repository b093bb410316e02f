// Following a KV bucket without a consumer, which the ingress and the gateway may not create (its
// deliveries go wherever its creator says, within the JetStream account). The bucket's stream
// republishes every entry it stores on the bucket's change feed (subjects.ts), heard by a core
// subscription at most once. Stream sequences have no holes and every entry is republished, so a
// feed message more than one past the last heard shows a loss (Nats-Last-Sequence cannot: nats-server
// 2.9 puts the previous sequence of the same subject there); the bucket is then read again: its keys
// by STREAM.INFO, each key's last entry from the stream leader (kv-leader-read.ts), or with regions
// every entry of this region's stream that holds it or its copy, by direct gets (kv-copy-read.ts).

import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import type { Msg, MsgCallback, NatsConnection, Status, Subscription } from '@nats-io/nats-core';
import { guarded, loggedThrows } from './guarded-callback.js';
import { lastHeader } from './wire-headers.js';
import { isKey, kvOperation, kvStream, kvSubject, type FeedRecord } from './kv-internals.js';
import { copyPosition, readCopy } from './kv-copy-read.js';
import { leaderPosition, readFromLeaders } from './kv-leader-read.js';
import { ThrottledWarnings, type Logger } from './logger.js';
import { kvFeedSubject } from './subjects.js';


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
  /**
   * With regions: the stream of this region that holds the bucket or its copy, read by direct gets
   * (kv-copy-read.ts). Absent: the bucket's own stream, listed and read from its leader.
   */
  readFrom?: string;
}


/** Feed messages held while the bucket is read, at most (each a record's entry, up to the server's max payload). */
const HELD_AT_MOST = 10_000;

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

  private readonly warnings: ThrottledWarnings;

  /** Each message is taken through this, live or held during a read: one that throws costs itself only. */
  private readonly hear: MsgCallback<Msg>;

  constructor(private readonly o: FeedOptions) {
    this.warnings = new ThrottledWarnings(o.logger);
    this.hear = guarded(
      (err, msg) => (err === null ? this.take(msg) : o.logger.error({ bucket: o.bucket, err }, 'the KV change feed failed')),
      loggedThrows(o.logger, `the ${o.bucket} mirror`),
    );
  }

  /** Resolves once every key's latest entry is applied. */
  async start(): Promise<void> {
    // Held from the first message on: one heard before the first read (while the subscription is
    // flushed) is applied after it, not taken for a loss that starts a second read beside the first.
    this.held = [];
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
    const record = decodeFeed(msg, this.o.bucket);
    if (record === null) {
      // Anyone who may aim a reply at the feed can send these by the thousand: said, not at each.
      this.warnings.warn('headless', { bucket: this.o.bucket, subject: msg.subject }, 'ignoring a KV change feed message without its stream headers');
      return;
    }
    if (this.held !== null) {
      // Bounded: past it, what was held is let go and the bucket is read again after this read.
      if (this.held.length >= HELD_AT_MOST) {
        this.held = [];
        this.again = true;
      }
      this.held.push(msg);
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
    // One read at a time: the held messages belong to it.
    if (this.syncing && !first) {
      this.again = true;
      return;
    }
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
      const o = this.o;
      const listing = o.readFrom === undefined ? await readFromLeaders(o.nc, o.js, o.jsm, o.bucket, o.logger) : await readCopy(o.jsm, o.readFrom, o.bucket);
      const records = listing.records;
      if (this.stopped) return true;
      // A copy's position says nothing of the origin's stream: it lags it, and may be behind the feed.
      if (this.created !== null && listing.created !== null && (listing.created !== this.created || listing.lastSeq < this.heard)) {
        this.o.logger.warn({ bucket: this.o.bucket }, "the KV bucket's stream was made anew; taking its entries as they are");
        this.o.sink.forgetRevisions();
      }
      for (const r of records) this.o.sink.apply(r);
      // A listing missing keys would drop them wrongly: only a complete one says what is gone.
      if (listing.complete) this.o.sink.dropAbsent(new Set(records.map((r) => r.key)), listing.lastSeq);
      // A copy behind the feed sets this back: what the feed brings next is then read again from the
      // copy (a loss warned of) until the copy has caught up, which keeps nothing heard unapplied.
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
      const o = this.o;
      const { created, lastSeq } = o.readFrom === undefined ? await leaderPosition(o.jsm, o.bucket) : await copyPosition(o.jsm, o.readFrom, o.bucket, this.heard);
      const unheard = this.unheard !== null && this.heard < this.unheard;
      this.unheard = lastSeq > this.heard ? lastSeq : null;
      const anew = created !== null && (created !== this.created || lastSeq < this.heard);
      if (this.failed || anew || unheard) this.resync();
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
