// A local, always-current copy of one KV bucket. Every node mirrors the keys, bans and streams
// buckets so a request never waits on NATS for them, and a change made anywhere (another node, the
// CLI) reaches every node within milliseconds. The buckets with a change feed (subjects.ts hasFeed)
// are followed without a consumer, which the ingress and the gateway may not create
// (kv-feed-load.ts); with regions, read from the region's stream that holds them (`readFrom`).
// The others (the claims, mirrored only by the admin service and the CLI) use the KV client's watch
// (last value of every key, then live): each entry carries its operation and how many are still
// pending (`delta`), which tells us when the initial load is done.

import { EventEmitter } from 'node:events';
import type { JetStreamClient } from '@nats-io/jetstream';
import { Kvm, type KV, type KvWatchEntry } from '@nats-io/kv';
import type { NatsConnection, QueuedIterator } from '@nats-io/nats-core';
import { KvFeed } from './kv-feed-load.js';
import type { FeedRecord } from './kv-internals.js';
import { kvStream } from './kv-internals.js';
import type { Logger } from './logger.js';
import { hasFeed } from './subjects.js';

export interface MirrorEvents<T> {
  /** `previous`: the value the key held before, if any. */
  put: [key: string, value: T, revision: number, previous: T | undefined];
  delete: [key: string, previous: T | undefined, revision: number];
}

export interface MirrorOptions {
  /** How often a mirror that follows a change feed checks it against the stream (a lost last message). */
  checkIntervalMs?: number;
  /** With regions, a bucket with a change feed is read from this stream of the process's region (kv-copy-read.ts). */
  readFrom?: string;
}

export class KvMirror<T> extends EventEmitter<MirrorEvents<T>> {
  readonly bucket: string;
  private readonly js: JetStreamClient;
  /** Null refuses the record: malformed, or not what its key may hold. */
  private readonly parse: (value: unknown, key: string) => T | null;
  private readonly logger: Logger;
  private readonly checkIntervalMs: number;
  private readonly readFrom: string | undefined;
  private entries = new Map<string, { value: T; revision: number }>();
  /**
   * Following a feed: the revision of each key's delete marker, so that an older put heard late
   * (the feed and the leader reads cross) does not bring the key back.
   */
  private readonly deletedAt = new Map<string, number>();
  private watcher: QueuedIterator<KvWatchEntry> | null = null;
  private feed: KvFeed | null = null;
  private stopped = false;
  private unblockStart: (() => void) | undefined;

  constructor(js: JetStreamClient, bucket: string, parse: (value: unknown, key: string) => T | null, logger: Logger, options: MirrorOptions = {}) {
    super();
    this.js = js;
    this.bucket = bucket;
    this.parse = parse;
    this.logger = logger;
    this.checkIntervalMs = options.checkIntervalMs ?? 10_000;
    this.readFrom = options.readFrom;
  }

  /** Resolves once every key's current value has been loaded. */
  async start(): Promise<void> {
    if (hasFeed(this.bucket)) return this.follow();
    const kv = await new Kvm(this.js).open(this.bucket);
    const jsm = await this.js.jetstreamManager();
    // The watch replays the last entry of every key (deletes included) and says how many are still
    // pending; an empty bucket replays nothing, so its emptiness is asked of the stream instead,
    // before and once more after the watch starts (records expiring by max age may empty it between).
    const isEmpty = async (): Promise<boolean> => (await jsm.streams.info(kvStream(this.bucket))).state.messages === 0;
    let ready!: () => void;
    const loaded = new Promise<void>((resolve) => (ready = resolve));
    if (await isEmpty()) ready();
    const watcher = await kv.watch();
    this.watcher = watcher;
    // Stopped while the watch was being made: nothing may keep running, and the start ends.
    if (this.stopped) {
      watcher.stop();
      return;
    }
    this.unblockStart = ready;
    void (async () => {
      for await (const entry of watcher) {
        this.apply(entry.key, entry.operation, entry.revision, () => entry.json<unknown>());
        if (entry.delta === 0) ready();
      }
    })().catch((err: unknown) => this.logger.error({ bucket: this.bucket, err }, 'the KV watch ended'));
    if (await isEmpty()) ready();
    await loaded;
  }

  private async follow(): Promise<void> {
    const feed = new KvFeed({
      nc: connectionOf(this.js),
      js: this.js,
      // No account check: the connection's start made it, and a region cut off does not answer it.
      jsm: await this.js.jetstreamManager(false),
      bucket: this.bucket,
      logger: this.logger,
      checkIntervalMs: this.checkIntervalMs,
      ...(this.readFrom === undefined ? {} : { readFrom: this.readFrom }),
      sink: {
        apply: (r) => this.applyNewer(r),
        dropAbsent: (present, upTo) => this.dropAbsent(present, upTo),
        forgetRevisions: () => {
          this.entries = new Map([...this.entries].map(([key, e]) => [key, { value: e.value, revision: 0 }]));
          this.deletedAt.clear();
        },
      },
    });
    if (this.stopped) return;
    this.feed = feed;
    await feed.start();
  }

  /** The feed and the leader reads may bring an entry already applied, or one older than it. */
  private applyNewer(r: FeedRecord): void {
    if (r.revision <= this.knownRevision(r.key)) return;
    if (r.operation !== 'PUT') this.deletedAt.set(r.key, r.revision);
    this.apply(r.key, r.operation, r.revision, () => r.json());
  }

  private knownRevision(key: string): number {
    return Math.max(this.entries.get(key)?.revision ?? 0, this.deletedAt.get(key) ?? 0);
  }

  /** A key the stream no longer has (expired by max age, purged), unless written since the listing. */
  private dropAbsent(present: ReadonlySet<string>, upTo: number): void {
    for (const [key, e] of this.entries) {
      if (present.has(key) || e.revision > upTo) continue;
      this.entries.delete(key);
      this.emit('delete', key, e.value, e.revision);
    }
    for (const [key, revision] of this.deletedAt) if (!present.has(key) && revision <= upTo) this.deletedAt.delete(key);
  }

  private apply(key: string, operation: string, revision: number, json: () => unknown): void {
    // A delete marker (DEL, PURGE) is its key's last entry, so the initial load replays it too:
    // listeners hear of keys deleted before this node started (previous is undefined then).
    if (operation !== 'PUT') {
      const previous = this.entries.get(key);
      this.entries.delete(key);
      this.emit('delete', key, previous?.value, revision);
      return;
    }
    let value: T | null = null;
    try {
      value = this.parse(json(), key);
    } catch {
      value = null;
    }
    if (value === null) {
      this.logger.warn({ bucket: this.bucket, key }, 'ignoring a malformed KV record');
      return;
    }
    const previous = this.entries.get(key)?.value;
    this.entries.set(key, { value, revision });
    this.deletedAt.delete(key);
    this.emit('put', key, value, revision, previous);
  }

  /**
   * Records a value this node has just written, before the watch brings it back: the node's very
   * next request must already see it (a ban issued here must refuse the account's next request).
   * Also a value read from the bucket's leader that the mirror had not loaded (keys.ts).
   */
  remember(key: string, value: T, revision: number): void {
    const current = this.entries.get(key);
    if (current !== undefined && current.revision >= revision) return;
    if ((this.deletedAt.get(key) ?? 0) >= revision) return; // a delete heard since the write stands
    this.entries.set(key, { value, revision });
    this.deletedAt.delete(key);
    this.emit('put', key, value, revision, current?.value);
  }

  /**
   * Drops a key this node knows to be gone although no delete was seen: KV records that expire by
   * the bucket's max age leave no marker behind.
   */
  forget(key: string): void {
    const previous = this.entries.get(key);
    if (previous === undefined) return;
    this.entries.delete(key);
    this.emit('delete', key, previous.value, previous.revision);
  }

  get(key: string): T | undefined {
    return this.entries.get(key)?.value;
  }

  /** The revision of the key's current value, if it has one. */
  revision(key: string): number | undefined {
    return this.entries.get(key)?.revision;
  }

  /** Every key with its value and revision. */
  *items(): Generator<[key: string, value: T, revision: number]> {
    for (const [key, e] of this.entries) yield [key, e.value, e.revision];
  }

  values(): IterableIterator<T> {
    return (function* (entries) {
      for (const e of entries.values()) yield e.value;
    })(this.entries);
  }

  get size(): number {
    return this.entries.size;
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.watcher?.stop();
    this.feed?.stop();
    // A start still waiting for the watch to load ends with the stop.
    this.unblockStart?.();
  }
}

/** The connection under a JetStream client (its type does not name it), which the feed subscribes on. */
function connectionOf(js: JetStreamClient): NatsConnection {
  const nc = (js as JetStreamClient & { readonly nc?: NatsConnection }).nc;
  if (nc === undefined) throw new Error('the JetStream client does not expose its NATS connection');
  return nc;
}

/** Writes go straight to the bucket; the mirror then sees them like anyone else's. */
export function encodeRecord(value: unknown): string {
  return JSON.stringify(value);
}

export type { KV };
