// An in-memory claims bucket with JetStream's revision semantics, for the ownership rules' own
// tests: one sequence for the whole bucket, writes and deletes at an expected revision (0: absent,
// which a delete marker is not), delete markers, a max age after which an unrenewed key is gone with
// no marker, and answers that can be lost (the write applied, the caller told it failed) or held
// (the write applied, its answer heard when the test says). The
// `...Now` methods apply an operation at once: the interleaving tests call them when they decide an
// operation lands (test/helpers/interleavings/).
import type { StreamClaim } from '../../schemas/records.js';
import type { ClaimNotice, ClaimNotices, NoticeListener } from '../../services/gateway/ownership/claim-notices.js';
import type { ClaimIndexLog } from '../../services/gateway/ownership/claim-index-log.js';
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
  /** Writes' answers wait for `hearAnswers` (each write is applied as it is made). */
  holdAnswers = false;
  private readonly heldAnswers: Array<() => void> = [];

  constructor(private readonly maxAgeMs = 60_000) {}

  async get(key: string): Promise<StoredClaim | null> {
    this.reads++;
    await Promise.resolve();
    return this.getNow(key);
  }

  async write(key: string, claim: StreamClaim, revision: number): Promise<number> {
    await Promise.resolve();
    const written = this.writeNow(key, claim, revision);
    if (this.holdAnswers) await new Promise<void>((resolve) => this.heldAnswers.push(resolve));
    return this.answer(written);
  }

  /** The writers hear the answers held so far, in order (and later writes are answered at once). */
  hearAnswers(): void {
    this.holdAnswers = false;
    for (const hear of this.heldAnswers.splice(0)) hear();
  }

  async remove(key: string, revision: number, freed: Freed): Promise<number> {
    await Promise.resolve();
    return this.answer(this.removeNow(key, revision, freed));
  }

  getNow(key: string): StoredClaim | null {
    return this.peek(key) ?? null;
  }

  /** Writes the claim if the key is at `revision` (else throws ClaimConflict); returns its revision. */
  writeNow(key: string, claim: StreamClaim, revision: number): number {
    this.expect(key, revision);
    const entry = { claim, revision: ++this.seq, writtenAt: this.now };
    this.entries.set(key, entry);
    return entry.revision;
  }

  /**
   * Deletes the key, leaving a marker that says who did (none: as an earlier version did), if it is
   * at `revision` (else throws ClaimConflict); returns the marker's revision.
   */
  removeNow(key: string, revision: number, freed?: Freed): number {
    this.expect(key, revision);
    this.entries.set(key, { claim: null, revision: ++this.seq, writtenAt: this.now, ...(freed !== undefined ? { freed } : {}) });
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

/** Notices between in-memory nodes. */
export class MemoryNotices implements ClaimNotices {
  readonly told: Array<{ node: string; notice: ClaimNotice }> = [];
  /** Delivered notices go to the node's listener unless `dropNotices`; `holdNotices`: when `deliverHeld` says. */
  dropNotices = false;
  holdNotices = false;
  private readonly held: Array<() => void> = [];

  constructor(private readonly nodes: Map<string, NoticeListener>) {}

  listen(): void {
    // The nodes' listeners are the map given to the constructor.
  }

  close(): void {
    this.held.length = 0;
  }

  tell(node: string, notice: ClaimNotice): void {
    this.told.push({ node, notice });
    if (this.dropNotices) return;
    const deliver = (): void => this.nodes.get(node)?.noticed(notice);
    if (this.holdNotices) this.held.push(deliver);
    else deliver();
  }

  /** Delivers the notices held so far, in the order they were told. */
  deliverHeld(): void {
    for (const deliver of this.held.splice(0)) deliver();
  }
}

/** RELAY_CLAIM_INDEX in memory: each node's claimed keys (never emptied, as there). */
export class MemoryIndexLog implements ClaimIndexLog {
  private readonly lists = new Map<string, Set<string>>();

  append(node: string, keys: string[]): void {
    const list = this.lists.get(node) ?? new Set<string>();
    for (const k of keys) list.add(k);
    this.lists.set(node, list);
  }

  read(node: string): Promise<Set<string>> {
    return Promise.resolve(new Set(this.lists.get(node)));
  }
}
