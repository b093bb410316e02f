// The campaign's report: faults by kind, operations checked and anomalies by class, printed and
// written as JSON (report.json, beside history.jsonl: every event of the run), each anomaly with
// the history around it (the operations, streams, faults and probes near it in time).

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { attribute, type Attribution } from './attribution.js';
import type { CampaignResult } from './campaign.js';
import { countByClass } from './checker.js';
import { at, type HistoryEvent } from './history.js';
import type { Anomaly } from './records.js';
import { FAULT_KINDS } from './schedule.js';

/** Anomalies of one class quoted with their history (all are listed). */
const QUOTED_PER_CLASS = 20;
const AROUND_MS = 5000;

export interface ReportHeader {
  seed: number;
  minutes: number;
  command: string;
  startedAt: string;
  outDir: string;
  /** `nats-server --version` of the binary the run used. */
  natsVersion: string;
}

export interface Report {
  header: ReportHeader;
  faults: { total: number; byKind: Record<string, number>; list: Array<{ id: number; kind: string; text: string; start: number; end: number; notes: string[] }> };
  operations: CampaignResult['checked']['writes'] & { perSecond: number; readers: CampaignResult['checked']['readers']; streams: CampaignResult['checked']['streams']; logEntries: number };
  anomalies: { total: number; byClass: Record<string, number>; list: Array<Anomaly & { history?: HistoryEvent[] }> };
  /** What the log's replicas disagreeing explains (attribution.ts). */
  attribution: Attribution;
  probes: {
    noLogLeaderMs: number;
    noMetaLeaderMs: number;
    readiness: Record<string, unknown>;
    counters: Record<string, number>;
  };
}

export function buildReport(header: ReportHeader, r: CampaignResult): Report {
  const all = [...r.checked.anomalies, ...r.anomalies];
  const quoted = new Map<string, number>();
  const list = all.map((a) => {
    const n = (quoted.get(a.class) ?? 0) + 1;
    quoted.set(a.class, n);
    return n <= QUOTED_PER_CLASS ? { ...a, history: r.history.around(a.t, a.subjects, AROUND_MS) } : a;
  });
  const byKind: Record<string, number> = Object.fromEntries(FAULT_KINDS.map((k) => [k, 0]));
  for (const f of r.faults) byKind[f.kind] = (byKind[f.kind] ?? 0) + 1;
  return {
    header,
    faults: { total: r.faults.length, byKind, list: r.faults.map((f) => ({ id: f.id, kind: f.kind, text: f.text, start: f.start, end: f.end, notes: f.notes })) },
    operations: {
      ...r.checked.writes,
      perSecond: Math.round((r.checked.writes.acknowledged / (r.workloadMs / 1000)) * 10) / 10,
      readers: r.checked.readers,
      streams: r.checked.streams,
      logEntries: r.final.log.length,
    },
    anomalies: { total: all.length, byClass: countByClass(all), list },
    attribution: attribute(r.final.leader, r.final.log, r.final.replicas, r.ops, r.clients),
    probes: {
      noLogLeaderMs: r.probes.noLogLeaderMs,
      noMetaLeaderMs: r.probes.noMetaLeaderMs,
      readiness: Object.fromEntries(r.probes.readiness),
      counters: Object.fromEntries(r.probes.counters),
    },
  };
}

/**
 * Writes report.json, and beside it what the checker read, for a look at an anomaly by hand:
 * history.jsonl (every event), log.jsonl (the event log as its leader holds it), replicas.jsonl (as
 * each replica holds it), clients.jsonl (each reader client's
 * record with its frames) and ops.jsonl (every write). Returns the report's path.
 */
export function writeReport(report: Report, r: CampaignResult): string {
  const dir = report.header.outDir;
  const lines = (items: readonly unknown[]): string => items.map((e) => JSON.stringify(e)).join('\n') + '\n';
  const file = join(dir, 'report.json');
  writeFileSync(file, JSON.stringify(report, null, 2) + '\n');
  writeFileSync(join(dir, 'history.jsonl'), lines(r.history.all()));
  writeFileSync(join(dir, 'log.jsonl'), lines(r.final.log));
  writeFileSync(join(dir, 'replicas.jsonl'), lines(r.final.replicas.map((x) => ({ node: x.node, entries: x.entries, missing: x.missing }))));
  writeFileSync(join(dir, 'clients.jsonl'), lines(r.clients));
  writeFileSync(join(dir, 'ops.jsonl'), lines(r.ops));
  return file;
}

/** The report as the terminal shows it. */
export function formatReport(report: Report, file: string): string {
  const lines: string[] = [];
  const { header: h, faults, operations: o, anomalies, probes } = report;
  lines.push('', `chaos campaign: seed ${h.seed}, ${h.minutes} min, started ${h.startedAt}, ${h.natsVersion}`, `  repeat with: ${h.command}`, '');
  lines.push(`faults: ${faults.total}`);
  for (const [kind, n] of Object.entries(faults.byKind)) lines.push(`  ${kind.padEnd(26)} ${n}`);
  lines.push('', 'operations checked:');
  lines.push(`  acknowledged POSTs   ${o.acknowledged} (${o.perSecond}/s; ${o.entries} entries), present ${o.present}, lost ${o.lost}, duplicated ${o.duplicated}`);
  lines.push(`  unanswered POSTs     ${o.unknownStored + o.unknownAbsent} (stored ${o.unknownStored}, not stored ${o.unknownAbsent}); refused for good ${o.failed}`);
  lines.push(`  frames received      ${o.readers.frames} by ${o.readers.clients} reader clients; ${o.readers.caughtUp} running at the end, caught up`);
  lines.push(`  second streams       ${o.streams.takeovers} takeovers on ${o.streams.contested} accounts; ${o.streams.lateFrames} frames on an older stream within the grace or during a fault`);
  lines.push(`  event log            ${o.logEntries} entries`);
  lines.push('', `probes: the log had no leader for ${(probes.noLogLeaderMs / 1000).toFixed(1)} s, JetStream no meta leader for ${(probes.noMetaLeaderMs / 1000).toFixed(1)} s`);
  for (const [node, s] of Object.entries(probes.readiness)) lines.push(`  ${node.padEnd(10)} ${JSON.stringify(s)}`);
  lines.push(`  counters: ${JSON.stringify(probes.counters)}`);
  lines.push('', `anomalies: ${anomalies.total}`);
  for (const [cls, n] of Object.entries(anomalies.byClass)) lines.push(`  ${cls.padEnd(22)} ${n}`);
  const w = report.attribution;
  if (w.divergentReplicas.length > 0) {
    lines.push(`  the log's replicas disagree (${w.divergentReplicas.join(', ')} with the leader): of ${w.lost} lost writes ${w.lostHeldByAnotherReplica} are held by another replica; of ${w.framesDiffering} frames unlike the leader's log ${w.framesFromAnotherReplica} are another replica's entry at their id`);
  }
  for (const a of anomalies.list.slice(0, 30)) {
    lines.push('', `${a.class} at ${at(a.t)}: ${a.text}`);
    for (const e of a.history ?? []) lines.push(`    ${at(e.t).padStart(10)} ${e.kind.padEnd(6)} ${e.subject.padEnd(12)} ${e.text}`);
  }
  if (anomalies.list.length > 30) lines.push('', `... ${anomalies.list.length - 30} more in the report`);
  lines.push('', `report: ${file}`, `verdict: ${anomalies.total === 0 ? 'no anomaly' : `${anomalies.total} anomalies`}`);
  return lines.join('\n');
}
