// An in-memory claims bucket with JetStream's revision semantics, for the ownership rules' own
// tests: one sequence for the whole bucket, writes and deletes at an expected revision (0: absent,
// which a delete marker is not), delete markers, a max age after which an unrenewed key is gone with
// no marker, and answers that can be lost (the write applied, the caller told it failed). The
// `...Now` methods apply an operation at once: the interleaving tests call them when they decide an
// operation lands (test/helpers/interleavings/).
import type { StreamClaim } from '../../schemas/records.js';
import type { ClaimHints, ClaimNotice, HintListener } from '../../services/gateway/ownership/claim-hints.js';
import { RevisionConflict as ClaimConflict } from '../../services/core/jetstream-errors.js';
import type { ClaimStore, Freed, StoredClaim } from '../../services/gateway/ownership/claim-store.js';

interface Entry {
  claim: StreamClaim | null;
  revision: number;
  writtenAt: number;
  /** On a delete marker: who left it (none: a marker of an earlier version, which said nothing). */
  freed?: Freed;
}

export class MemoryClaimStore implements ClaimStore {
  now = 0;
  private seq = 0;
  private readonly entries = new Map<string, Entry>();
  /** Reads made through `get` (round trips). */
  reads = 0;
  /** The next write's answer is lost: it is applied, and the caller gets an error. */
  loseNextAnswer = false;
  /** Called after each applied write or delete (a subscriber of the key's subject hears it). */
  onChange: (key: string) => void = () => undefined;

  constructor(private readonly maxAgeMs = 60_000) {}

  async get(key: string): Promise<StoredClaim | null> {
    this.reads++;
    await Promise.resolve();
    return this.getNow(key);
  }

  async write(key: string, claim: StreamClaim, revision: number): Promise<number> {
    await Promise.resolve();
    return this.answer(this.writeNow(key, claim, revision));
  }

  async remove(key: string, revision: number, freed: Freed): Promise<void> {
    await Promise.resolve();
    this.removeNow(key, revision, freed);
    this.answer(0);
  }

  getNow(key: string): StoredClaim | null {
    return this.peek(key) ?? null;
  }

  /** Writes the claim if the key is at `revision` (else throws ClaimConflict); returns its revision. */
  writeNow(key: string, claim: StreamClaim, revision: number): number {
    this.expect(key, revision);
    const entry = { claim, revision: ++this.seq, writtenAt: this.now };
    this.entries.set(key, entry);
    this.onChange(key);
    return entry.revision;
  }

  /**
   * Deletes the key, leaving a marker that says who did (none: as an earlier version did), if it is
   * at `revision` (else throws ClaimConflict); returns the marker's revision.
   */
  removeNow(key: string, revision: number, freed?: Freed): number {
    this.expect(key, revision);
    this.entries.set(key, { claim: null, revision: ++this.seq, writtenAt: this.now, ...(freed !== undefined ? { freed } : {}) });
    this.onChange(key);
    return this.seq;
  }

  /** Ages out, with no marker, every claim `old` picks (as the bucket's max age does an unrenewed one). */
  ageOut(old: (claim: StreamClaim) => boolean): string[] {
    const gone = [...this.entries].filter(([, e]) => e.claim !== null && old(e.claim)).map(([key]) => key);
    for (const key of gone) this.entries.delete(key);
    return gone;
  }

  /** Every key the bucket holds now (markers included). */
  keys(): string[] {
    return [...this.entries.keys()].filter((key) => this.live(key) !== undefined);
  }

  /** What is there now, without the async hop. */
  peek(key: string): StoredClaim | undefined {
    const e = this.live(key);
    return e === undefined ? undefined : { claim: e.claim, revision: e.revision, ...(e.freed !== undefined ? { freed: e.freed } : {}) };
  }

  private answer(revision: number): number {
    if (!this.loseNextAnswer) return revision;
    this.loseNextAnswer = false;
    throw new Error('timeout: the answer was lost');
  }

  private expect(key: string, revision: number): void {
    if ((this.live(key)?.revision ?? 0) !== revision) throw new ClaimConflict(key);
  }

  private live(key: string): Entry | undefined {
    const e = this.entries.get(key);
    if (e !== undefined && this.now - e.writtenAt >= this.maxAgeMs) {
      this.entries.delete(key);
      return undefined;
    }
    return e;
  }
}

/** Notices and account subscriptions between in-memory nodes. */
export class MemoryHints implements ClaimHints {
  readonly told: Array<{ node: string; notice: ClaimNotice }> = [];
  /** Delivered notices go to the node's listener unless `dropNotices`. */
  dropNotices = false;
  readonly watched = new Map<string, number>();

  constructor(private readonly nodes: Map<string, HintListener>) {}

  listen(): void {
    // The nodes' listeners are the map given to the constructor.
  }

  close(): void {
    this.watched.clear();
  }

  watchAccount(account: string): void {
    this.watched.set(account, (this.watched.get(account) ?? 0) + 1);
  }

  unwatchAccount(account: string): void {
    const n = (this.watched.get(account) ?? 0) - 1;
    if (n > 0) this.watched.set(account, n);
    else this.watched.delete(account);
  }

  tell(node: string, notice: ClaimNotice): void {
    this.told.push({ node, notice });
    if (!this.dropNotices) this.nodes.get(node)?.noticed(notice);
  }
}
