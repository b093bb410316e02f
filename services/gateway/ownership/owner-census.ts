// Each owner's streams on the other gateways, for MAX_STREAMS_PER_ACCOUNT and MAX_STREAMS_PER_KEY:
// asked of them when a stream opens, not written anywhere. An open publishes one question on
// `relay.owner-census.ask` (owner, channel); every gateway counts that owner's streams in its own
// registry (opening ones included) and answers on the asker's subject,
// `relay.owner-census.answer.<node>`. The asker waits for the gateways it takes for alive, at most
// CENSUS_WAIT_MS.
//
// Why not a record per owner in a bucket (what this replaced): every open and every close wrote it,
// a replicated write each, as many as the claims themselves; in a cluster storm they were half the
// writes the RAFT groups could not keep up with. A question costs no write, is answered from memory,
// and a lone gateway asks nobody.
//
// What the count may miss, as the record could: two opens of one owner at once on two nodes each
// count the other's only if it registered first (the cap is passed by at most one stream per node
// racing); a gateway that does not answer within the wait (stalled, or cut off but not yet taken
// for dead) is counted as holding nothing, and the miss is counted (relay_owner_census_unanswered_total).
// A node taken for dead is not waited for, and counts only if it answers anyway (it was only paused).
// Answers come from gateway credentials only (infra/nats/permissions.conf); one that does not parse
// or answers no question of ours is ignored.

import type { NatsConnection, Subscription } from '@nats-io/nats-core';
import { OWNER_CENSUS_ANSWER_PREFIX, OWNER_CENSUS_ASK } from '../../core/subjects.js';
import { systemTimers, type Timers } from '../../core/timers.js';

/** How long an open waits for the other gateways' answers. */
export const CENSUS_WAIT_MS = 1000;

/** What an open needs: streams other nodes hold for the owner, and whether one of them holds its channel. */
export interface RemoteHoldings {
  count: number;
  holdsKey: boolean;
}

export interface OwnerCensusOptions {
  nc: NatsConnection;
  nodeId: string;
  /** The other gateways this node takes for alive now: the answers it waits for. */
  peers: () => Iterable<string>;
  /** This node's streams of an owner, opening ones included (the gateway's registry). */
  local: (owner: string) => ReadonlyArray<{ readonly channel: string | null }>;
  /** Called once per gateway that did not answer in time. */
  unanswered?: (node: string) => void;
  waitMs?: number;
  timers?: Timers;
}

interface Question {
  /** The peers not heard yet. */
  readonly waiting: Set<string>;
  /** Every node heard, peers or not (one answer each). */
  readonly heard: Set<string>;
  readonly holdings: RemoteHoldings;
  readonly done: () => void;
}

export class OwnerCensus {
  private readonly o: OwnerCensusOptions;
  private readonly timers: Timers;
  private readonly asked = new Map<string, Question>();
  private seq = 0;
  private subs: Subscription[] = [];

  constructor(o: OwnerCensusOptions) {
    this.o = o;
    this.timers = o.timers ?? systemTimers;
  }

  /** Answers the other gateways' questions, and hears the answers to this node's. */
  listen(): void {
    const { nc, nodeId } = this.o;
    this.subs = [
      nc.subscribe(OWNER_CENSUS_ASK, { callback: (err, msg) => void (err === null && this.answer(msg.string())) }),
      nc.subscribe(OWNER_CENSUS_ANSWER_PREFIX + nodeId, { callback: (err, msg) => void (err === null && this.heard(msg.string())) }),
    ];
  }

  /** What the other gateways hold for `owner`; `channel`: the opening stream's (null without one). */
  remote(owner: string, channel: string | null): Promise<RemoteHoldings> {
    const waiting = new Set([...this.o.peers()].filter((n) => n !== this.o.nodeId));
    const holdings: RemoteHoldings = { count: 0, holdsKey: false };
    if (waiting.size === 0) return Promise.resolve(holdings);
    const id = `${this.o.nodeId}.${++this.seq}`;
    return new Promise((resolve) => {
      const cancel = this.timers.after(this.o.waitMs ?? CENSUS_WAIT_MS, () => {
        for (const node of waiting) this.o.unanswered?.(node);
        done();
      });
      const done = (): void => {
        cancel();
        this.asked.delete(id);
        resolve(holdings);
      };
      this.asked.set(id, { waiting, heard: new Set(), holdings, done });
      try {
        this.o.nc.publish(OWNER_CENSUS_ASK, JSON.stringify({ id, from: this.o.nodeId, owner, channel }));
      } catch {
        // The connection is closing (this node is stopping): nobody will answer; the wait ends it.
      }
    });
  }

  close(): void {
    for (const s of this.subs) s.unsubscribe();
    this.subs = [];
    for (const q of [...this.asked.values()]) q.done();
  }

  private answer(text: string): void {
    const q = parseQuestion(text);
    if (q === null || q.from === this.o.nodeId) return;
    const mine = this.o.local(q.owner);
    const holdsKey = q.channel !== null && mine.some((s) => s.channel === q.channel);
    try {
      this.o.nc.publish(OWNER_CENSUS_ANSWER_PREFIX + q.from, JSON.stringify({ id: q.id, node: this.o.nodeId, count: mine.length, holdsKey }));
    } catch {
      // Closing: the asker's wait ends without this answer.
    }
  }

  private heard(text: string): void {
    const a = parseAnswer(text);
    if (a === null) return;
    const q = this.asked.get(a.id);
    // Late (the wait ended), a node's second answer, or this node's own: nothing to add.
    if (q === undefined || a.node === this.o.nodeId || q.heard.has(a.node)) return;
    q.heard.add(a.node);
    q.waiting.delete(a.node);
    q.holdings.count += a.count;
    q.holdings.holdsKey ||= a.holdsKey;
    if (q.waiting.size === 0) q.done();
  }
}

const NODE_ID = /^[A-Za-z0-9_-]{1,128}$/;

function parseQuestion(text: string): { id: string; from: string; owner: string; channel: string | null } | null {
  const v = parseObject(text);
  if (v === null || typeof v.id !== 'string' || typeof v.from !== 'string' || !NODE_ID.test(v.from) || typeof v.owner !== 'string') return null;
  if (v.channel !== null && typeof v.channel !== 'string') return null;
  return { id: v.id, from: v.from, owner: v.owner, channel: v.channel };
}

function parseAnswer(text: string): { id: string; node: string; count: number; holdsKey: boolean } | null {
  const v = parseObject(text);
  if (v === null || typeof v.id !== 'string' || typeof v.node !== 'string' || typeof v.holdsKey !== 'boolean') return null;
  if (typeof v.count !== 'number' || !Number.isSafeInteger(v.count) || v.count < 0) return null;
  return { id: v.id, node: v.node, count: v.count, holdsKey: v.holdsKey };
}

function parseObject(text: string): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
