// What the checker reads from NATS once the mesh has healed, straight from the nodes (around the
// proxies): the event log as each replica holds it, and the accounts banned during the run.
//
// Each replica is read on its own: a direct get is answered by the stream's replicas as a queue
// group, and NATS gives a request to a queue member on the server the client is connected to, so a
// connection to one node reads that node's copy. Replicas must agree; a consumer (the gateways'
// resumes, `relay replay`) may be placed on any of them.

import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { channelFromToken } from '../../services/core/channel.js';
import { BUCKET_BANS, CHANNEL_SUBJECT_PREFIX, STREAM_NAME } from '../../services/core/subjects.js';
import type { LogEntry } from './records.js';

/** Direct gets in flight at once per replica. */
const IN_FLIGHT = 64;

export interface ReplicaLog {
  node: string;
  entries: LogEntry[];
  /** Sequences in [first, last] this replica has no message for (deleted, or never stored). */
  missing: number[];
}

export interface FinalState {
  /** The log as the stream's leader holds it: what live delivery and the checker's verdicts go by. */
  log: LogEntry[];
  leader: string;
  replicas: ReplicaLog[];
  banned: string[];
}

export async function readFinalState(nodes: ReadonlyArray<{ name: string; url: string }>): Promise<FinalState> {
  const nc = await connect({ servers: nodes.map((n) => n.url), name: 'chaos-checker' });
  try {
    const jsm = await jetstreamManager(nc, { timeout: 20_000 });
    const info = await jsm.streams.info(STREAM_NAME);
    const { first_seq: first, last_seq: last } = info.state;
    const replicas = await Promise.all(nodes.map((n) => readReplica(n, first, last)));
    const leader = info.cluster?.leader ?? nodes[0]!.name;
    const bans = await new Kvm(nc).open(BUCKET_BANS);
    const banned: string[] = [];
    for await (const k of await bans.keys()) banned.push(k);
    return { log: (replicas.find((r) => r.node === leader) ?? replicas[0]!).entries, leader, replicas, banned };
  } finally {
    await nc.close();
  }
}

async function readReplica(node: { name: string; url: string }, first: number, last: number): Promise<ReplicaLog> {
  const nc = await connect({ servers: [node.url], name: `chaos-checker-${node.name}`, noRandomize: true });
  try {
    const jsm: JetStreamManager = await jetstreamManager(nc, { timeout: 20_000 });
    const bySeq = new Map<number, LogEntry>();
    const missing: number[] = [];
    let next = first;
    const worker = async (): Promise<void> => {
      while (next <= last) {
        const seq = next++;
        const m = await jsm.direct.getMessage(STREAM_NAME, { seq });
        if (m === null || m.seq !== seq) missing.push(seq);
        else bySeq.set(seq, { seq, channel: channelFromToken(m.subject.slice(CHANNEL_SUBJECT_PREFIX.length)), message: messageOf(m.string()) });
      }
    };
    if (first > 0) await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
    return { node: node.name, entries: [...bySeq.values()].sort((a, b) => a.seq - b.seq), missing: missing.sort((a, b) => a - b) };
  } finally {
    await nc.close();
  }
}

/** The chat message of a stored payload, or the payload itself when it is not one. */
export function messageOf(json: string): string {
  try {
    const p = JSON.parse(json) as { type?: unknown; message?: unknown };
    if (p.type === 'chat' && typeof p.message === 'string') return p.message;
  } catch {
    // not JSON: quoted as is
  }
  return json;
}
