// KV relay-stream-owners in memory, with JetStream's revision semantics (one sequence for the
// bucket, writes at an expected revision, a delete leaving a marker), counting round trips, for the
// owner index's own tests. `writeNow` applies a write at once: the interleaving tests call it when
// they decide a write lands (test/helpers/interleavings/).
import { RevisionConflict as OwnerRecordConflict } from '../../services/core/jetstream-errors.js';
import type { Holdings, OwnerRecord, OwnerRecords } from '../../services/gateway/ownership/owner-records.js';

export class MemoryOwnerRecords implements OwnerRecords {
  reads = 0;
  writes = 0;
  /** Writes refused as conflicts from now on (each counts down one). */
  failNextWrites = 0;
  /** Writes waiting for their answer now, and the most there were at once. */
  inFlight = 0;
  maxInFlight = 0;
  private seq = 0;
  private readonly records = new Map<string, OwnerRecord>();

  async read(owner: string): Promise<OwnerRecord> {
    this.reads++;
    await Promise.resolve();
    return this.peek(owner);
  }

  async write(owner: string, holdings: Holdings, revision: number): Promise<OwnerRecord> {
    this.writes++;
    this.maxInFlight = Math.max(this.maxInFlight, ++this.inFlight);
    await Promise.resolve();
    this.inFlight--;
    if (this.failNextWrites > 0) {
      this.failNextWrites--;
      throw new OwnerRecordConflict(owner);
    }
    return this.writeNow(owner, holdings, revision);
  }

  /** Writes the record (a delete when empty) if it is at `revision`, else throws OwnerRecordConflict. */
  writeNow(owner: string, holdings: Holdings, revision: number): OwnerRecord {
    if (this.peek(owner).revision !== revision) throw new OwnerRecordConflict(owner);
    const stored = { holdings: new Map(holdings), revision: ++this.seq };
    // A delete leaves a marker at a revision of its own, which the writer is not told.
    this.records.set(owner, holdings.size > 0 ? stored : { holdings: new Map(), revision: stored.revision });
    return holdings.size > 0 ? stored : { holdings: new Map(), revision: 0 };
  }

  /** Every owner with a record (or a marker) now. */
  owners(): string[] {
    return [...this.records.keys()];
  }

  /** The record as stored now (a copy), without a round trip. */
  peek(owner: string): OwnerRecord {
    const r = this.records.get(owner);
    return r === undefined ? { holdings: new Map(), revision: 0 } : { holdings: new Map(r.holdings), revision: r.revision };
  }
}
