// Which gateways are alive: each writes a heartbeat to KV relay-nodes every few seconds, and every
// gateway notes when it last saw each one (by its own clock, so clock skew between hosts does not
// matter). A node unseen for the heartbeat TTL is gone, and its stream claims can be swept.

import type { KV } from '@nats-io/kv';
import type { JetStreamClient } from '@nats-io/jetstream';
import type { NodeRecord } from '../../schemas/records.js';
import { encodeRecord, KvMirror } from '../core/kv-mirror.js';
import type { Logger } from '../core/logger.js';
import { parseNodeRecord } from '../core/records.js';
import { BUCKET_NODES } from '../core/subjects.js';

export class NodeLiveness {
  readonly mirror: KvMirror<NodeRecord>;
  private readonly kv: KV;
  private readonly nodeId: string;
  private readonly role: string;
  private readonly startedAt = new Date().toISOString();
  private readonly lastSeen = new Map<string, number>();
  private readonly startedWatching = Date.now();
  private readonly timeoutMs: number;
  private timer: NodeJS.Timeout | undefined;

  constructor(js: JetStreamClient, kv: KV, nodeId: string, role: string, timeoutMs: number, logger: Logger) {
    this.kv = kv;
    this.timeoutMs = timeoutMs;
    this.nodeId = nodeId;
    this.role = role;
    this.mirror = new KvMirror(js, BUCKET_NODES, parseNodeRecord, logger);
    this.mirror.on('put', (node) => this.lastSeen.set(node, Date.now()));
  }

  async start(): Promise<void> {
    await this.beat();
    await this.mirror.start();
    this.timer = setInterval(() => void this.beat().catch(() => undefined), this.timeoutMs / 3).unref();
  }

  private async beat(): Promise<void> {
    const record: NodeRecord = {
      node: this.nodeId,
      role: this.role,
      startedAt: this.startedAt,
      heartbeatAt: new Date().toISOString(),
    };
    await this.kv.put(this.nodeId, encodeRecord(record));
  }

  /** Unknown nodes count as alive until this node has watched for a full TTL. */
  isAlive(node: string, now = Date.now()): boolean {
    const seen = this.lastSeen.get(node) ?? this.startedWatching;
    return now - seen < this.timeoutMs;
  }

  async stop(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    await this.kv.delete(this.nodeId).catch(() => undefined);
    await this.mirror.stop();
  }
}
