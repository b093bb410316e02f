// The event log's replicas against its leader's: every replica must hold the same message at each
// sequence. A consumer may be placed on any replica (a gateway's resume or gap fill reads one), and
// any replica may lead next, so one that disagrees is what a client may read, and what the log may
// become. Each replica that differs is one anomaly, saying where and which acknowledged writes it lacks.

import type { ReplicaLog } from './final-state.js';
import type { Anomaly, WriteOp } from './records.js';

const QUOTED = 5;

export function checkReplicas(leader: string, replicas: readonly ReplicaLog[], ops: readonly WriteOp[], t: number): Anomaly[] {
  const reference = replicas.find((r) => r.node === leader);
  if (reference === undefined) return [];
  const theirs = new Map(reference.entries.map((e) => [e.seq, e]));
  const acked = ops.filter((op) => op.outcome === 'ok');
  const anomalies: Anomaly[] = [];
  for (const r of replicas) {
    if (r === reference) continue;
    const mine = new Map(r.entries.map((e) => [e.seq, e]));
    const differing: number[] = [];
    for (const seq of new Set([...theirs.keys(), ...mine.keys()])) {
      const a = theirs.get(seq);
      const b = mine.get(seq);
      if (a?.message !== b?.message || a?.channel !== b?.channel) differing.push(seq);
    }
    if (differing.length === 0) continue;
    differing.sort((x, y) => x - y);
    const held = new Set(r.entries.map((e) => e.message));
    const lacking = acked.filter((op) => op.entries.some((m) => !held.has(m))).map((op) => op.id);
    const examples = differing.slice(0, QUOTED).map((seq) => `${seq}: ${theirs.get(seq)?.message ?? 'nothing'} / ${mine.get(seq)?.message ?? 'nothing'}`);
    anomalies.push({
      class: 'replica-divergence',
      t,
      subjects: lacking.slice(0, QUOTED),
      text:
        `${r.node} differs from the leader ${leader} at ${differing.length} sequences from ${differing[0]} on (leader / ${r.node}: ${examples.join('; ')}); ` +
        `it lacks ${lacking.length} acknowledged writes${lacking.length > 0 ? ` (${lacking.slice(0, QUOTED).join(', ')}${lacking.length > QUOTED ? ', ...' : ''})` : ''}`,
    });
  }
  return anomalies;
}
