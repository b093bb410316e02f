// MAX_STREAMS_PER_ACCOUNT and MAX_STREAMS_PER_KEY across the mesh, without a copy of every claim:
// KV relay-stream-owners holds, per account (or API key), the claim keys it holds and on which node.
// An open reads its owner's one record (a direct get); a node adds the key when its claim is
// written and takes it out when its last local stream on the key ends, by compare-and-set. Keys
// held by nodes taken for dead are not counted, and are dropped at the owner's next write.
//
// Listing the claims bucket under `<account>.>` would need no second record, but on nats-server 2.9
// a filtered read scans the whole stream: 30 ms per listing at 200,000 claims, 100-200 ms with a
// consumer (measured, docs/ARCHITECTURE.md), which is the mesh's size again.

import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import { channelToken } from '../core/channel.js';

/** Claim key -> node holding it. */
type Holdings = Record<string, string>;

const WRITE_ATTEMPTS = 8;

/** What an open needs: streams other nodes hold for the owner, and whether one of them holds this key. */
export interface RemoteHoldings {
  count: number;
  holdsKey: boolean;
}

export class OwnerIndex {
  private readonly kv: KV;
  private readonly nodeId: string;
  private readonly isAlive: (node: string) => boolean;
  /** Local streams per owner and key: the entry goes when the last of them ends. */
  private readonly local = new Map<string, number>();
  /** One write at a time per owner from this node (they would only conflict with each other). */
  private readonly chains = new Map<string, Promise<void>>();

  constructor(kv: KV, nodeId: string, isAlive: (node: string) => boolean) {
    this.kv = kv;
    this.nodeId = nodeId;
    this.isAlive = isAlive;
  }

  async remote(owner: string, key: string): Promise<RemoteHoldings> {
    const { holdings } = await this.read(owner);
    let count = 0;
    let holdsKey = false;
    for (const [k, node] of Object.entries(holdings)) {
      if (node === this.nodeId || !this.isAlive(node)) continue;
      count++;
      if (k === key) holdsKey = true;
    }
    return { count, holdsKey };
  }

  /** A stream of this node now holds `key` for `owner`. */
  add(owner: string, key: string): void {
    const id = `${owner}\n${key}`;
    const n = (this.local.get(id) ?? 0) + 1;
    this.local.set(id, n);
    if (n === 1) this.change(owner, (h) => (h[key] = this.nodeId));
  }

  /** A stream of this node holding `key` for `owner` ended. */
  remove(owner: string, key: string): void {
    const id = `${owner}\n${key}`;
    const n = (this.local.get(id) ?? 0) - 1;
    if (n > 0) return void this.local.set(id, n);
    this.local.delete(id);
    this.drop(owner, key, this.nodeId);
  }

  /** Takes `key` out of the owner's record if `node` still holds it there (a dead node's, a sweep). */
  drop(owner: string, key: string, node: string): void {
    this.change(owner, (h) => {
      if (h[key] === node) delete h[key];
    });
  }

  /** Resolves once this node's writes so far are done. */
  async settled(): Promise<void> {
    await Promise.all([...this.chains.values()]);
  }

  private change(owner: string, edit: (h: Holdings) => void): void {
    const before = this.chains.get(owner) ?? Promise.resolve();
    const next = before.then(() => this.write(owner, edit)).catch(() => undefined);
    this.chains.set(owner, next);
    void next.then(() => {
      if (this.chains.get(owner) === next) this.chains.delete(owner);
    });
  }

  private async write(owner: string, edit: (h: Holdings) => void): Promise<void> {
    const key = channelToken(owner);
    for (let attempt = 1; ; attempt++) {
      const { holdings, revision } = await this.read(owner);
      for (const [k, node] of Object.entries(holdings)) if (node !== this.nodeId && !this.isAlive(node)) delete holdings[k];
      edit(holdings);
      try {
        if (Object.keys(holdings).length > 0) await this.kv.put(key, JSON.stringify(holdings), { previousSeq: revision });
        else if (revision > 0) await this.kv.delete(key, { previousSeq: revision });
        return;
      } catch (err) {
        const conflict = err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamWrongLastSequence;
        if (!conflict || attempt >= WRITE_ATTEMPTS) throw err;
      }
    }
  }

  private async read(owner: string): Promise<{ holdings: Holdings; revision: number }> {
    const e = await this.kv.get(channelToken(owner));
    if (e === null) return { holdings: {}, revision: 0 };
    if (e.operation !== 'PUT') return { holdings: {}, revision: e.revision };
    try {
      const v = e.json<unknown>();
      if (typeof v === 'object' && v !== null && !Array.isArray(v)) {
        const holdings: Holdings = {};
        for (const [k, node] of Object.entries(v)) if (typeof node === 'string') holdings[k] = node;
        return { holdings, revision: e.revision };
      }
    } catch {
      // A malformed record is written over.
    }
    return { holdings: {}, revision: e.revision };
  }
}
