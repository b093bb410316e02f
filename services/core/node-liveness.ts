// Which nodes are alive, judged from their heartbeats (node-heartbeat.ts) in KV relay-nodes: every
// watcher notes when it last saw each node's record change, by its own clock, so clock skew between
// hosts does not matter. A node unseen for the timeout is gone (unless the watcher was deaf
// meanwhile: sightings.ts): gateways sweep its stream claims, the console shows it silent.

import type { JetStreamClient } from '@nats-io/jetstream';
import type { NodeRecord } from '../../schemas/records.js';
import { kvStream } from './kv-internals.js';
import { KvMirror } from './kv-mirror.js';
import type { Logger } from './logger.js';
import { heartbeatKey } from './node-heartbeat.js';
import { parseNodeRecord } from './records.js';
import { Sightings } from './sightings.js';
import { nodesBucket } from './subjects.js';

/**
 * A heartbeat counts only under its own role's key, so a role cannot speak for another's nodes; a
 * record keyed by the bare node id is one of a node from before the key named the role.
 */
function parseHeartbeat(value: unknown, key: string): NodeRecord | null {
  const record = parseNodeRecord(value);
  return record !== null && (key === heartbeatKey(record.role, record.node) || key === record.node) ? record : null;
}

/** The roles whose processes hold streams (and claims): a gateway, or the development all-in-one. */
export const GATEWAY_ROLES: ReadonlySet<string> = new Set(['gateway', 'all']);

export class NodeLiveness {
  readonly mirror: KvMirror<NodeRecord>;
  private readonly sightings: Sightings;

  /**
   * `region`: whose heartbeats are watched (null: a mesh without regions); `self`: this process's
   * node id, when it beats: while it does not see its own beat, it concludes nothing.
   */
  constructor(js: JetStreamClient, region: string | null, timeoutMs: number, logger: Logger, self?: string) {
    this.sightings = new Sightings(timeoutMs, self, Date.now());
    this.mirror = new KvMirror(js, nodesBucket(region), parseHeartbeat, logger, region === null ? {} : { readFrom: kvStream(nodesBucket(region)) });
    this.mirror.on('put', (_key, record) => this.sightings.seen(record.node, Date.now()));
  }

  async start(): Promise<void> {
    await this.mirror.start();
  }

  /** Unknown nodes count as alive until this watcher has watched for a full timeout (sightings.ts). */
  isAlive(node: string, now = Date.now()): boolean {
    return this.sightings.isAlive(node, now);
  }

  /** Whether this watcher hears the mesh now; a deaf one must not take others for dead. */
  hearing(now = Date.now()): boolean {
    return this.sightings.hearing(now);
  }

  /** When this watcher last saw the node beat (epoch ms), if ever. */
  lastBeat(node: string): number | undefined {
    return this.sightings.lastBeat(node);
  }

  async stop(): Promise<void> {
    await this.mirror.stop();
  }
}
