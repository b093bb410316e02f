// Every service process says it is alive: a record in KV relay-nodes, rewritten every beat, with
// what the console shows of it (role, version, readiness, streams held, counters). Gateways judge
// each other's liveness from it (node-liveness.ts); the admin service lists the mesh from it.

import type { KV } from '@nats-io/kv';
import type { NodeRecord } from '../../schemas/records.js';
import { encodeRecord } from './kv-mirror.js';
import { RELAY_VERSION } from './version.js';

/**
 * The record's key: the role first, so each NATS role may write only its own role's heartbeats
 * (`$KV.relay-nodes.gateway.*` for gateways; infra/nats/permissions.conf). Node ids are one token.
 */
export function heartbeatKey(role: string, nodeId: string): string {
  return `${role}.${nodeId}`;
}

/**
 * Told when a beat is written after none could be for longer than `afterMs`: others may have taken
 * the node for dead meanwhile (a NATS link that went silent, a process paused), whatever the
 * connection says. A gateway then reads its claims again (gateway.ts).
 */
export interface Silence {
  afterMs: number;
  then(gapMs: number): void;
}

/** What a node reports of itself at each beat. */
export type NodeStatus = Pick<NodeRecord, 'ready' | 'streams' | 'framesDelivered' | 'entriesPublished'>;

export class NodeHeartbeat {
  private readonly kv: KV;
  private readonly nodeId: string;
  private readonly role: string;
  private readonly beatMs: number;
  private readonly status: () => Promise<NodeStatus>;
  private readonly startedAt = new Date().toISOString();
  private timer: NodeJS.Timeout | undefined;
  private readonly silence: Silence | undefined;
  private lastWritten: number | null = null;

  constructor(options: { kv: KV; nodeId: string; role: string; beatMs: number; status: () => Promise<NodeStatus>; silence?: Silence }) {
    this.kv = options.kv;
    this.nodeId = options.nodeId;
    this.role = options.role;
    this.beatMs = options.beatMs;
    this.status = options.status;
    this.silence = options.silence;
  }

  /** Writes the first beat (so the node is seen before it serves), then one every beatMs. */
  async start(): Promise<void> {
    await this.beat();
    this.timer = setInterval(() => void this.beat().catch(() => undefined), this.beatMs).unref();
  }

  private async beat(): Promise<void> {
    const record: NodeRecord = {
      node: this.nodeId,
      role: this.role,
      startedAt: this.startedAt,
      heartbeatAt: new Date().toISOString(),
      beatMs: this.beatMs,
      version: RELAY_VERSION,
      ...(await this.status()),
    };
    await this.kv.put(heartbeatKey(this.role, this.nodeId), encodeRecord(record));
    const now = performance.now();
    const gapMs = this.lastWritten === null ? 0 : now - this.lastWritten;
    this.lastWritten = now;
    if (this.silence !== undefined && gapMs > this.silence.afterMs) this.silence.then(Math.round(gapMs));
  }

  /** Stops beating and removes the record: a node that leaves cleanly is gone at once. */
  async stop(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    await this.kv.delete(heartbeatKey(this.role, this.nodeId)).catch(() => undefined);
  }
}
