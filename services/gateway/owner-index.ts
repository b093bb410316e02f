// MAX_STREAMS_PER_ACCOUNT and MAX_STREAMS_PER_KEY across the mesh, without a copy of every claim:
// KV relay-stream-owners holds, per account (or API key), the claim keys it holds and on which node
// (owner-records.ts). An open reads its owner's one record (a direct get); a node adds the key when
// its claim is written and takes it out when its last local stream on the key ends, by
// compare-and-set. Keys held by nodes taken for dead are not counted, and are dropped at the
// owner's next write.
//
// The record an open read for the caps is handed to the write that adds its key, which is first
// tried at that revision: an open costs one read and one write. A close is one write when the
// record held that key alone as this node last wrote it (a number per key is kept for that; the
// whole record for the stream's life cost 0.4 KiB per stream), else a read and a write. Another
// node's write meanwhile makes an attempt fail and the record is read again: a stale guess costs
// a round trip, never a wrong record.
//
// Listing the claims bucket under `<account>.>` would need no second record, but on nats-server 2.9
// a filtered read scans the whole stream: 30 ms per listing at 200,000 claims, 100-200 ms with a
// consumer (measured, docs/ARCHITECTURE.md), which is the mesh's size again.

import { OwnerRecordConflict, type Holdings, type OwnerRecord, type OwnerRecords } from './owner-records.js';

const WRITE_ATTEMPTS = 8;

/** What an open needs: streams other nodes hold for the owner, and whether one of them holds this key. */
export interface RemoteHoldings {
  count: number;
  holdsKey: boolean;
  /** The record read, handed back to `add` so the write after the claim needs no second read. */
  record?: OwnerRecord;
}

export class OwnerIndex {
  private readonly records: OwnerRecords;
  private readonly nodeId: string;
  private readonly isAlive: (node: string) => boolean;
  /** Local streams per claim key (a key belongs to one owner): the entry goes when the last of them ends. */
  private readonly local = new Map<string, number>();
  /** The record to write over next, per owner, while this node's writes of it are in flight. */
  private readonly known = new Map<string, OwnerRecord>();
  /**
   * Claim keys whose owner's record this node last wrote holding that key alone, and at which
   * revision: the usual case (a player on one channel), whose close then needs no read. A number
   * per local key, where the whole record would cost 0.4 KiB.
   */
  private readonly soleAt = new Map<string, number>();
  /** One write at a time per owner from this node (they would only conflict with each other). */
  private readonly chains = new Map<string, Promise<void>>();

  constructor(records: OwnerRecords, nodeId: string, isAlive: (node: string) => boolean) {
    this.records = records;
    this.nodeId = nodeId;
    this.isAlive = isAlive;
  }

  async remote(owner: string, key: string): Promise<RemoteHoldings> {
    const record = await this.read(owner);
    let count = 0;
    let holdsKey = false;
    for (const [k, node] of record.holdings) {
      if (node === this.nodeId || !this.isAlive(node)) continue;
      count++;
      if (k === key) holdsKey = true;
    }
    return { count, holdsKey, record };
  }

  /** A stream of this node now holds `key` for `owner`; `seen` is the record its open read. */
  add(owner: string, key: string, seen?: OwnerRecord): void {
    const n = (this.local.get(key) ?? 0) + 1;
    this.local.set(key, n);
    if (n > 1) return;
    this.change(owner, (h) => h.set(key, this.nodeId), seen);
  }

  /** A stream of this node holding `key` for `owner` ended. */
  remove(owner: string, key: string): void {
    const n = (this.local.get(key) ?? 0) - 1;
    if (n > 0) return void this.local.set(key, n);
    this.local.delete(key);
    const sole = this.soleAt.get(key);
    this.soleAt.delete(key);
    this.drop(owner, key, this.nodeId, sole === undefined ? undefined : { holdings: new Map([[key, this.nodeId]]), revision: sole });
  }

  /** Takes `key` out of the owner's record if `node` still holds it there (a dead node's, a sweep). */
  drop(owner: string, key: string, node: string, guess?: OwnerRecord): void {
    this.change(
      owner,
      (h) => {
        if (h.get(key) === node) h.delete(key);
      },
      guess,
    );
  }

  /** Resolves once this node's writes so far are done. */
  async settled(): Promise<void> {
    await Promise.all([...this.chains.values()]);
  }

  /** Queues a write of the owner's record; `guess`: what it probably holds now, tried first (a conflict reads it). */
  private change(owner: string, edit: (h: Holdings) => void, guess?: OwnerRecord): void {
    // A write of this owner in flight will leave a newer record than the guess.
    if (guess !== undefined && !this.chains.has(owner) && !this.known.has(owner)) this.known.set(owner, guess);
    const before = this.chains.get(owner) ?? Promise.resolve();
    const next = before.then(() => this.write(owner, edit)).catch(() => {
      // Failed (the bucket unreachable, or lost every round): the next write reads the record first.
      this.known.delete(owner);
    });
    this.chains.set(owner, next);
    void next.then(() => {
      if (this.chains.get(owner) !== next) return;
      this.chains.delete(owner);
      this.known.delete(owner);
    });
  }

  private async write(owner: string, edit: (h: Holdings) => void): Promise<void> {
    let base = this.known.get(owner);
    for (let attempt = 1; ; attempt++) {
      base ??= await this.read(owner);
      const holdings: Holdings = new Map();
      for (const [k, node] of base.holdings) if (node === this.nodeId || this.isAlive(node)) holdings.set(k, node);
      edit(holdings);
      // Nothing to change (a drop of a key another node has taken since): no write.
      if (sameHoldings(holdings, base.holdings)) return;
      try {
        const written = await this.records.write(owner, holdings, base.revision);
        if (written.revision > 0) this.known.set(owner, written);
        else this.known.delete(owner);
        this.noteSole(written);
        return;
      } catch (err) {
        if (!(err instanceof OwnerRecordConflict) || attempt >= WRITE_ATTEMPTS) throw err;
        base = undefined;
      }
    }
  }

  /** Remembers the revision of a record that holds one local key alone; forgets it for the owner's other keys. */
  private noteSole(written: OwnerRecord): void {
    for (const [k, node] of written.holdings) {
      if (node !== this.nodeId) continue;
      if (written.holdings.size === 1 && this.local.has(k)) this.soleAt.set(k, written.revision);
      else this.soleAt.delete(k);
    }
  }

  private read(owner: string): Promise<OwnerRecord> {
    return this.records.read(owner);
  }
}

function sameHoldings(a: Holdings, b: Holdings): boolean {
  if (a.size !== b.size) return false;
  for (const [k, node] of a) if (b.get(k) !== node) return false;
  return true;
}
