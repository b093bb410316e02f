// KV relay-stream-owners as the owner holdings (owner-holdings.ts) see it: one record per owner (an account, or an API key
// for streams without a session) naming the claim keys it holds and the node holding each, read and
// written by compare-and-set. Tests run the index over an in-memory store with the same revision
// semantics (test/helpers/memory-owner-records.ts).

import type { KV } from '@nats-io/kv';
import { channelToken } from '../../core/channel.js';
import { conflictOr } from '../../core/jetstream-errors.js';

/**
 * Claim key -> node holding it. A Map, and stored as an array of pairs: an object keyed by claim
 * keys would give V8 a new hidden class for every account, each allocated in old space.
 */
export type Holdings = Map<string, string>;

/** An owner's record as stored: its holdings, and the revision they were read or written at (0: none). */
export interface OwnerRecord {
  readonly holdings: Holdings;
  readonly revision: number;
}

export interface OwnerRecords {
  read(owner: string): Promise<OwnerRecord>;
  /**
   * Writes the holdings (deletes the record when empty) if it is at `revision`, else throws
   * RevisionConflict (another node wrote it first). Resolves to the holdings and their revision;
   * after a delete, revision 0 (the marker's own is not returned).
   */
  write(owner: string, holdings: Holdings, revision: number): Promise<OwnerRecord>;
}

export class NatsOwnerRecords implements OwnerRecords {
  constructor(private readonly kv: KV) {}

  async read(owner: string): Promise<OwnerRecord> {
    const e = await this.kv.get(channelToken(owner));
    if (e === null) return { holdings: new Map(), revision: 0 };
    if (e.operation !== 'PUT') return { holdings: new Map(), revision: e.revision };
    return { holdings: parseHoldings(e.string()), revision: e.revision };
  }

  async write(owner: string, holdings: Holdings, revision: number): Promise<OwnerRecord> {
    const key = channelToken(owner);
    try {
      if (holdings.size > 0) return { holdings, revision: await this.kv.put(key, JSON.stringify([...holdings]), { previousSeq: revision }) };
      // The delete's own revision is not returned: the next write reads the record first.
      if (revision > 0) await this.kv.delete(key, { previousSeq: revision });
      return { holdings, revision: 0 };
    } catch (err) {
      throw conflictOr(`the owner record of ${owner}`, err);
    }
  }
}

/**
 * `[[claim key, node], ...]`, or an object of claim key to node (how the previous version wrote it:
 * read, so a rolling upgrade drops no key); a malformed record counts as empty, and is written over.
 */
export function parseHoldings(text: string): Holdings {
  const holdings: Holdings = new Map();
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return holdings;
  }
  if (typeof v === 'object' && v !== null && !Array.isArray(v)) {
    for (const [k, node] of Object.entries(v)) if (typeof node === 'string') holdings.set(k, node);
    return holdings;
  }
  if (!Array.isArray(v)) return holdings;
  for (const pair of v as unknown[]) {
    if (Array.isArray(pair) && pair.length === 2 && typeof pair[0] === 'string' && typeof pair[1] === 'string') holdings.set(pair[0], pair[1]);
  }
  return holdings;
}
