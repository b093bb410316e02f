// The claims this node holds, each found by its stream (an end or a notice names one); and what this
// node knows of each.

import type { ClaimedStream } from './claim-keys.js';

export interface LocalClaim {
  readonly stream: ClaimedStream;
  readonly key: string;
  /** The revision our claim was written at; 0 while the write is in flight. */
  revision: number;
  /** The newest revision a replacement's notice named while ours was still being written (compared once ours is known). */
  foreignRevision: number;
  /** Likewise for a sweep's notice: once ours is known, an older claim was swept and the key is read. */
  sweptRevision: number;
  /** Another connection's claim replaced ours: nothing to renew or delete any more, its stream evicted. */
  lost: boolean;
}

export class LocalClaims {
  private readonly byStream = new Map<string, LocalClaim>();

  /** A claim about to be written for `stream` under `key`. */
  add(stream: ClaimedStream, key: string): LocalClaim {
    const c: LocalClaim = { stream, key, revision: 0, foreignRevision: 0, sweptRevision: 0, lost: false };
    this.byStream.set(stream.id, c);
    return c;
  }

  get(streamId: string): LocalClaim | undefined {
    return this.byStream.get(streamId);
  }

  /** Whether `c` is still its stream's claim (not forgotten since). */
  has(c: LocalClaim): boolean {
    return this.byStream.get(c.stream.id) === c;
  }

  all(): LocalClaim[] {
    return [...this.byStream.values()];
  }

  /** Forgets the claim; false when it was forgotten already. */
  forget(c: LocalClaim): boolean {
    if (!this.has(c)) return false;
    this.byStream.delete(c.stream.id);
    return true;
  }
}
