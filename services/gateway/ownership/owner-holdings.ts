// Each owner's holdings across the mesh, for MAX_STREAMS_PER_ACCOUNT and MAX_STREAMS_PER_KEY, without
// a copy of every claim:
// KV relay-stream-owners holds, per account (or API key), the claim keys it holds and on which node
// (owner-records.ts). An open reads its owner's one record (a direct get); when a node's first
// stream on a key opens or its last ends, the node brings the record in line with what it holds
// (compare-and-set). Keys held by nodes taken for dead are not counted, and stay in the record
// until a sweep has taken their claims (`drop`): a node only paused still holds them when it is back.
//
// Who writes a key's entry: a node sets its own when its first stream on the key opens, and takes
// out its own when its last ends. An entry naming another node gives way only when the claim, read
// from the stream leader after the record, names this node (an open whose claim was replaced
// meanwhile leaves the newer holder's entry alone); a sweep takes out a dead node's entry unless
// the claim names that node again. Each reads the claim between its read of the record and its
// compare-and-set, so the record's revision orders it against the other node's write.
//
// Round trips: a write is first tried on a *guess* of the record, where the node has one: the
// record the open read for its caps, or, for a close, the record this node last wrote when it held
// that key alone (a revision per local key is kept for that: the usual player on one channel).
// An open is then one read and one write (and a read of the claim when it takes the key over from
// another node), such a close one write. A guess is never trusted beyond its compare-and-set: a
// stale one fails and the record is read, and a guess that already looks right is read too before
// the write is skipped. A write that fails for good is tried again later (the caps would otherwise
// miscount for the stream's life).
//
// Listing the claims bucket under `<account>.>` would need no second record, but on nats-server 2.9
// a filtered read scans the whole stream: 30 ms per listing at 200,000 claims, 100-200 ms with a
// consumer (measured, docs/ARCHITECTURE.md), which is the mesh's size again.

import { PacedQueue } from '../../core/paced-queue.js';
import type { Holdings, OwnerRecord, OwnerRecords } from './owner-records.js';
import { RevisionConflict } from '../../core/jetstream-errors.js';
import { IN_FLIGHT } from './in-flight.js';
import { systemTimers, type CancelTimer, type Timers } from '../../core/timers.js';

const WRITE_ATTEMPTS = 8;
/** A write that failed for good (the bucket unreachable, or lost every round) is tried again after 1 s, 2 s, ... */
const RETRY_FIRST_MS = 1000;
const RETRIES = 6;

export interface OwnerHoldingsOptions {
  records: OwnerRecords;
  nodeId: string;
  isAlive: (node: string) => boolean;
  /** The node the key's claim names now (read from the stream leader), or null. */
  holder: (key: string) => Promise<string | null>;
  timers?: Timers;
}

/** What an open needs: streams other nodes hold for the owner, and whether one of them holds this key. */
export interface RemoteHoldings {
  count: number;
  holdsKey: boolean;
  /** The record read, handed back to `add` as a guess for the write after the claim. */
  record?: OwnerRecord;
}

/** Changes a copy of the record's holdings to what they should say. */
type Edit = (h: Holdings) => void | Promise<void>;

export class OwnerHoldings {
  private readonly records: OwnerRecords;
  private readonly nodeId: string;
  private readonly isAlive: (node: string) => boolean;
  private readonly holder: (key: string) => Promise<string | null>;
  /** Local streams per claim key (a key belongs to one owner): the entry goes when the last of them ends. */
  private readonly local = new Map<string, number>();
  /** What the owner's record probably is, per owner, while this node's writes of it are queued. */
  private readonly guesses = new Map<string, OwnerRecord>();
  /** Claim keys whose owner's record this node last wrote holding that key alone, at this revision. */
  private readonly soleAt = new Map<string, number>();
  /** One write at a time per owner from this node (they would only conflict with each other). */
  private readonly chains = new Map<string, Promise<void>>();
  private readonly retryTimers = new Set<CancelTimer>();
  /** Keys whose last local stream ended, waiting for their removal's turn (a key held again by then needs no write). */
  private readonly removals: PacedQueue<{ owner: string; key: string }>;
  private readonly timers: Timers;

  constructor(o: OwnerHoldingsOptions) {
    this.records = o.records;
    this.nodeId = o.nodeId;
    this.isAlive = o.isAlive;
    this.holder = o.holder;
    const timers = o.timers ?? systemTimers;
    this.timers = timers;
    this.removals = new PacedQueue(
      IN_FLIGHT.ownerRemovals,
      ({ owner, key }) => {
        const sole = this.local.has(key) ? undefined : this.soleAt.get(key);
        if (sole !== undefined) this.soleAt.delete(key);
        return this.sync(owner, key, sole === undefined ? undefined : { holdings: new Map([[key, this.nodeId]]), revision: sole });
      },
      timers,
    );
  }

  async remote(owner: string, key: string): Promise<RemoteHoldings> {
    const record = await this.records.read(owner);
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
    if (n === 1) void this.sync(owner, key, seen);
  }

  /** A stream of this node holding `key` for `owner` ended. */
  remove(owner: string, key: string): void {
    const n = (this.local.get(key) ?? 0) - 1;
    if (n > 0) return void this.local.set(key, n);
    this.local.delete(key);
    this.removals.add({ owner, key });
  }

  /**
   * A sweep took `node`'s claim of `key`: takes the key out of the owner's record if `node` still
   * holds it there and the claim, read after the record, does not name it again (a node only
   * paused writes its claim back, and `reassert`s the key).
   */
  drop(owner: string, key: string, node: string): void {
    void this.persist(owner, async (h) => {
      if (h.get(key) === node && (await this.holder(key)) !== node) h.delete(key);
    });
  }

  /**
   * This node wrote the key's claim back after a sweep took it: the key is written again, even
   * when the record already names this node, so that a sweep's drop computed before (from a
   * record that named it) fails its compare-and-set and reads again.
   */
  reassert(owner: string, key: string): void {
    if (this.local.has(key)) void this.persist(owner, this.holdingsEdit(key), undefined, true);
  }

  /** Resolves once this node's writes so far, queued removals included, are done. */
  async settled(): Promise<void> {
    await this.removals.settled();
    await Promise.all([...this.chains.values()]);
  }

  stop(): void {
    for (const cancel of this.retryTimers) cancel();
    this.retryTimers.clear();
  }

  /** Makes the record say what this node holds of `key` at the time of the write. */
  private sync(owner: string, key: string, guess?: OwnerRecord): Promise<void> {
    return this.persist(owner, this.holdingsEdit(key), guess);
  }

  private holdingsEdit(key: string): Edit {
    return async (h) => {
      const other = h.get(key);
      // Another node's entry gives way only when the claim, read after the record, names this node:
      // an open whose claim was replaced before this write must not write over the newer holder's
      // entry (its own removal would then take the key out, and the newer stream with it).
      if (this.local.has(key) && other !== undefined && other !== this.nodeId && (await this.holder(key)) !== this.nodeId) return;
      if (this.local.has(key)) h.set(key, this.nodeId);
      else if (h.get(key) === this.nodeId) h.delete(key);
    };
  }

  /** `change`, resolving after the first attempt; one that fails for good is tried again later. */
  private persist(owner: string, edit: Edit, guess?: OwnerRecord, force = false, attempt = 0): Promise<void> {
    return this.change(owner, edit, guess, force).catch(() => {
      if (attempt >= RETRIES) return;
      const cancel = this.timers.after(RETRY_FIRST_MS * 2 ** attempt, () => {
        this.retryTimers.delete(cancel);
        void this.persist(owner, edit, undefined, force, attempt + 1);
      });
      this.retryTimers.add(cancel);
    });
  }

  /**
   * Queues a write of the owner's record, first tried on `guess` when no write of it is queued;
   * `force`: written even when the edit changes nothing (a new revision).
   */
  private change(owner: string, edit: Edit, guess?: OwnerRecord, force = false): Promise<void> {
    if (guess !== undefined && !this.chains.has(owner)) this.guesses.set(owner, guess);
    const next = (this.chains.get(owner) ?? Promise.resolve()).then(() => this.write(owner, edit, force));
    const ended = next.catch(() => undefined);
    this.chains.set(owner, ended);
    void ended.then(() => {
      if (this.chains.get(owner) !== ended) return;
      this.chains.delete(owner);
      this.guesses.delete(owner);
    });
    return next;
  }

  private async write(owner: string, edit: Edit, force: boolean): Promise<void> {
    let base = this.guesses.get(owner);
    this.guesses.delete(owner);
    for (let attempt = 1; ; attempt++) {
      const read = base === undefined;
      base ??= await this.records.read(owner);
      // Every node's entries are kept, those of nodes taken for dead too: such a node may be paused,
      // not dead, and its live streams must still count when it is back. A sweep drops its keys.
      const holdings: Holdings = new Map(base.holdings);
      await edit(holdings);
      if (!force && sameHoldings(holdings, base.holdings)) {
        // Nothing to change, as far as a fresh read shows: no write. A guess proves nothing.
        if (read) return;
        base = undefined;
        continue;
      }
      try {
        const written = await this.records.write(owner, holdings, base.revision);
        // The next queued write of this owner starts from what this one wrote.
        if (written.revision > 0) this.guesses.set(owner, written);
        this.noteSole(written);
        return;
      } catch (err) {
        if (!(err instanceof RevisionConflict) || attempt >= WRITE_ATTEMPTS) throw err;
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
}

function sameHoldings(a: Holdings, b: Holdings): boolean {
  if (a.size !== b.size) return false;
  for (const [k, node] of a) if (b.get(k) !== node) return false;
  return true;
}
