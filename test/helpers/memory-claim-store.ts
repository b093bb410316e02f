// An in-memory claims bucket with JetStream's revision semantics, for the ownership rules' own
// tests: one sequence for the whole bucket, writes and deletes at an expected revision (0: absent,
// which a delete marker is not), delete markers, a max age after which an unrenewed key is gone with
// no marker, and answers that can be lost (the write applied, the caller told it failed).
import type { StreamClaim } from '../../schemas/records.js';
import type { ClaimHints, ClaimNotice, HintListener } from '../../services/gateway/claim-hints.js';
import { ClaimConflict, type ClaimStore, type StoredClaim } from '../../services/gateway/claim-store.js';

interface Entry {
  claim: StreamClaim | null;
  revision: number;
  writtenAt: number;
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
    const e = this.live(key);
    return e === undefined ? null : { claim: e.claim, revision: e.revision };
  }

  async write(key: string, claim: StreamClaim, revision: number): Promise<number> {
    await Promise.resolve();
    this.expect(key, revision);
    const entry = { claim, revision: ++this.seq, writtenAt: this.now };
    this.entries.set(key, entry);
    this.onChange(key);
    return this.answer(entry.revision);
  }

  async remove(key: string, revision: number): Promise<void> {
    await Promise.resolve();
    this.expect(key, revision);
    this.entries.set(key, { claim: null, revision: ++this.seq, writtenAt: this.now });
    this.onChange(key);
    this.answer(0);
  }

  /** What is there now, without the async hop. */
  peek(key: string): StoredClaim | undefined {
    return this.live(key);
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
