// Which anomalies the store under the relay explains. The relay answers a POST 2xx only once
// JetStream acknowledged every entry of it, so an acknowledged entry missing from the log was lost
// by JetStream after it said stored. When the log's replicas disagree (check-replicas.ts), a client
// may have been served one history and the log kept another: an acknowledged entry another replica
// holds, or a frame a reader got that another replica holds at that id, shows it. These counts do
// not excuse anything (an anomaly is one whoever caused it); they say where to look first.

import type { ReplicaLog } from './final-state.js';
import type { ClientRecord, LogEntry, WriteOp } from './records.js';

export interface Attribution {
  /** Replicas holding something else than the leader at some sequence. */
  divergentReplicas: string[];
  /** Acknowledged writes with an entry missing from the leader's log, and of those, how many another replica holds. */
  lost: number;
  lostHeldByAnotherReplica: number;
  /** Frames whose message is not the leader's at their id, and of those, how many equal another replica's entry there. */
  framesDiffering: number;
  framesFromAnotherReplica: number;
}

export function attribute(leader: string, log: readonly LogEntry[], replicas: readonly ReplicaLog[], ops: readonly WriteOp[], clients: readonly ClientRecord[]): Attribution {
  const leaderAt = new Map(log.map((e) => [e.seq, e.message]));
  const others = replicas.filter((r) => r.node !== leader).map((r) => ({ node: r.node, at: new Map(r.entries.map((e) => [e.seq, e.message])) }));
  const divergentReplicas = others.filter((o) => o.at.size !== leaderAt.size || [...o.at].some(([seq, m]) => leaderAt.get(seq) !== m)).map((o) => o.node);
  const inLog = new Set(log.map((e) => e.message));
  const elsewhere = new Set(others.flatMap((o) => [...o.at.values()]));
  const lostOps = ops.filter((op) => op.outcome === 'ok' && op.entries.some((m) => !inLog.has(m)));
  const lostHeldByAnotherReplica = lostOps.filter((op) => op.entries.some((m) => !inLog.has(m) && elsewhere.has(m))).length;
  let framesDiffering = 0;
  let framesFromAnotherReplica = 0;
  for (const c of clients) {
    for (const f of c.frames) {
      if (leaderAt.get(f.id) === f.message) continue;
      framesDiffering++;
      if (others.some((o) => o.at.get(f.id) === f.message)) framesFromAnotherReplica++;
    }
  }
  return { divergentReplicas, lost: lostOps.length, lostHeldByAnotherReplica, framesDiffering, framesFromAnotherReplica };
}
