// A local, always-current copy of one KV bucket. Every node mirrors the keys, bans and streams
// buckets so a request never waits on NATS for them, and a change made anywhere (another node, the
// CLI) reaches every node within milliseconds. Built on an ordered consumer (last value per key,
// then live) because it reports how much is pending, which tells us when the initial load is done.

import { EventEmitter } from 'node:events';
import { DeliverPolicy, type ConsumerMessages, type JetStreamClient, type JsMsg } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import type { Logger } from './logger.js';

export interface MirrorEvents<T> {
  /** `previous`: the value the key held before, if any. */
  put: [key: string, value: T, revision: number, previous: T | undefined];
  delete: [key: string, previous: T | undefined, revision: number];
}

export class KvMirror<T> extends EventEmitter<MirrorEvents<T>> {
  readonly bucket: string;
  private readonly js: JetStreamClient;
  private readonly parse: (value: unknown) => T | null;
  private readonly logger: Logger;
  private readonly entries = new Map<string, { value: T; revision: number }>();
  private messages: ConsumerMessages | null = null;
  private stopped = false;

  constructor(js: JetStreamClient, bucket: string, parse: (value: unknown) => T | null, logger: Logger) {
    super();
    this.js = js;
    this.bucket = bucket;
    this.parse = parse;
    this.logger = logger;
  }

  /** Resolves once every key's current value has been loaded. */
  async start(): Promise<void> {
    const consumer = await this.js.consumers.get(`KV_${this.bucket}`, {
      filter_subjects: `$KV.${this.bucket}.>`,
      deliver_policy: DeliverPolicy.LastPerSubject,
    });
    const info = await consumer.info();
    let ready!: () => void;
    const loaded = new Promise<void>((resolve) => (ready = resolve));
    if (info.num_pending === 0) ready();
    this.messages = await consumer.consume({
      callback: (m) => {
        this.apply(m);
        if (m.info.pending === 0) ready();
      },
    });
    await loaded;
  }

  private apply(m: JsMsg): void {
    const key = m.subject.slice(`$KV.${this.bucket}.`.length);
    const op = m.headers?.get('KV-Operation');
    // A delete marker (DEL, PURGE) is its subject's last message, so the initial load replays it
    // too: listeners hear of keys deleted before this node started (previous is undefined then).
    if (op === 'DEL' || op === 'PURGE') {
      const previous = this.entries.get(key);
      this.entries.delete(key);
      this.emit('delete', key, previous?.value, m.seq);
      return;
    }
    let value: T | null = null;
    try {
      value = this.parse(m.json<unknown>());
    } catch {
      value = null;
    }
    if (value === null) {
      this.logger.warn({ bucket: this.bucket, key }, 'ignoring a malformed KV record');
      return;
    }
    const previous = this.entries.get(key)?.value;
    this.entries.set(key, { value, revision: m.seq });
    this.emit('put', key, value, m.seq, previous);
  }

  /**
   * Records a value this node has just written, before the watch brings it back: the node's very
   * next request must already see it (a ban issued here must refuse the account's next request).
   */
  remember(key: string, value: T, revision: number): void {
    const current = this.entries.get(key);
    if (current !== undefined && current.revision >= revision) return;
    this.entries.set(key, { value, revision });
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
    await this.messages?.close();
  }
}

/** Writes go straight to the bucket; the mirror then sees them like anyone else's. */
export function encodeRecord(value: unknown): string {
  return JSON.stringify(value);
}

export type { KV };
