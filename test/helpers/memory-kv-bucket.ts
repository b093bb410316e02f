// An in-memory KV bucket with the parts of JetStream's semantics the Idempotency-Key records use:
// one revision sequence, `create` refused with JetStream's "wrong last sequence" when the key holds
// a value, and a bucket without a leader, as after a NATS node fails: writes go unanswered (they
// need the leader) while reads are still answered (a direct get is served by any replica).
import { JetStreamApiError } from '@nats-io/jetstream';
import type { KvEntry } from '@nats-io/kv';
import type { Payload } from '@nats-io/nats-core';
import type { RecordBucket } from '../../services/ingress/idempotency.js';

const WRONG_LAST_SEQUENCE = 10071;

export class MemoryKvBucket implements RecordBucket {
  /** No leader: creates and puts fail (as a JetStream request times out), gets still answer. */
  leaderless = false;
  private seq = 0;
  private readonly entries = new Map<string, { value: Uint8Array; revision: number }>();
  /** Writes refused while leaderless. */
  refusedWrites = 0;

  async create(k: string, data: Payload): Promise<number> {
    await Promise.resolve();
    this.writable();
    const now = this.entries.get(k);
    if (now !== undefined) {
      throw new JetStreamApiError({ code: 400, err_code: WRONG_LAST_SEQUENCE, description: `wrong last sequence: ${now.revision}` });
    }
    return this.store(k, data);
  }

  async put(k: string, data: Payload): Promise<number> {
    await Promise.resolve();
    this.writable();
    return this.store(k, data);
  }

  async get(k: string): Promise<KvEntry | null> {
    await Promise.resolve();
    const e = this.entries.get(k);
    if (e === undefined) return null;
    const value = e.value;
    return {
      bucket: 'memory',
      key: k,
      rawKey: k,
      value,
      created: new Date(0),
      revision: e.revision,
      operation: 'PUT',
      length: value.length,
      json: <T>() => JSON.parse(new TextDecoder().decode(value)) as T,
      string: () => new TextDecoder().decode(value),
    };
  }

  /** How many keys hold a record. */
  get size(): number {
    return this.entries.size;
  }

  private writable(): void {
    if (!this.leaderless) return;
    this.refusedWrites++;
    throw new Error('TimeoutError: timeout (the bucket has no leader)');
  }

  private store(k: string, data: Payload): number {
    const value = typeof data === 'string' ? new TextEncoder().encode(data) : data;
    this.entries.set(k, { value, revision: ++this.seq });
    return this.seq;
  }
}
