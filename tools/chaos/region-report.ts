// The region campaign's report, as report.ts makes the one-log campaign's: faults by kind, operations
// checked, anomalies by class each quoted with the history around it; printed, and written as
// report.json beside history.jsonl, log.jsonl (every region's log), clients.jsonl and ops.jsonl.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { countByClass } from './checker.js';
import { at, type HistoryEvent } from './history.js';
import type { Anomaly } from './records.js';
import type { RegionCampaignResult } from './region-campaign.js';
import { REGION_FAULT_KINDS } from './region-schedule.js';
import type { ReportHeader } from './report.js';

const QUOTED_PER_CLASS = 20;
const AROUND_MS = 5000;

export interface RegionReport {
  header: ReportHeader & { regions: readonly string[] };
  faults: { total: number; byKind: Record<string, number>; list: Array<{ id: number; kind: string; text: string; start: number; end: number; notes: string[] }> };
  operations: RegionCampaignResult['checked']['writes'] & { failedOver: number; refusedAttempts: RegionCampaignResult['refusedAttempts']; perSecond: number; readers: RegionCampaignResult['checked']['readers']; streams: RegionCampaignResult['checked']['streams']; logEntries: Record<string, number> };
  anomalies: { total: number; byClass: Record<string, number>; list: Array<Anomaly & { history?: HistoryEvent[] }> };
}

export function buildRegionReport(header: RegionReport['header'], r: RegionCampaignResult): RegionReport {
  const all = [...r.checked.anomalies, ...r.anomalies];
  const quoted = new Map<string, number>();
  const list = all.map((a) => {
    const n = (quoted.get(a.class) ?? 0) + 1;
    quoted.set(a.class, n);
    return n <= QUOTED_PER_CLASS ? { ...a, history: r.history.around(a.t, a.subjects, AROUND_MS) } : a;
  });
  const byKind: Record<string, number> = Object.fromEntries(REGION_FAULT_KINDS.map((k) => [k, 0]));
  for (const f of r.faults) byKind[f.kind] = (byKind[f.kind] ?? 0) + 1;
  const logEntries: Record<string, number> = Object.fromEntries(header.regions.map((g) => [g, 0]));
  for (const e of r.log) logEntries[e.region ?? '?'] = (logEntries[e.region ?? '?'] ?? 0) + 1;
  return {
    header,
    faults: { total: r.faults.length, byKind, list: r.faults.map((f) => ({ id: f.id, kind: f.kind, text: f.text, start: f.start, end: f.end, notes: f.notes })) },
    operations: {
      ...r.checked.writes,
      // POSTs sent to a second region (writers.ts `route`), whatever their outcome.
      failedOver: r.ops.filter((op) => new Set(op.origins ?? []).size > 1).length,
      refusedAttempts: r.refusedAttempts,
      perSecond: Math.round((r.checked.writes.acknowledged / (r.workloadMs / 1000)) * 10) / 10,
      readers: r.checked.readers,
      streams: r.checked.streams,
      logEntries,
    },
    anomalies: { total: all.length, byClass: countByClass(all), list },
  };
}

/** Writes report.json and what the checker read beside it; returns the report's path. */
export function writeRegionReport(report: RegionReport, r: RegionCampaignResult): string {
  const dir = report.header.outDir;
  const lines = (items: readonly unknown[]): string => items.map((e) => JSON.stringify(e)).join('\n') + '\n';
  const file = join(dir, 'report.json');
  writeFileSync(file, JSON.stringify(report, null, 2) + '\n');
  writeFileSync(join(dir, 'history.jsonl'), lines(r.history.all()));
  writeFileSync(join(dir, 'log.jsonl'), lines(r.log));
  writeFileSync(join(dir, 'clients.jsonl'), lines(r.clients));
  writeFileSync(join(dir, 'ops.jsonl'), lines(r.ops));
  return file;
}

export function formatRegionReport(report: RegionReport, file: string): string {
  const { header: h, faults, operations: o, anomalies } = report;
  const lines: string[] = ['', `chaos campaign with regions (${h.regions.join(', ')}): seed ${h.seed}, ${h.minutes} min, started ${h.startedAt}, ${h.natsVersion}`, `  repeat with: ${h.command}`, ''];
  lines.push(`faults: ${faults.total}`);
  for (const [kind, n] of Object.entries(faults.byKind)) lines.push(`  ${kind.padEnd(26)} ${n}`);
  for (const f of faults.list) lines.push(`    ${at(f.start).padStart(10)} ${f.text}${f.notes.length > 0 ? ` (${f.notes.join('; ')})` : ''}`);
  lines.push('', 'operations checked:');
  lines.push(`  acknowledged POSTs   ${o.acknowledged} (${o.perSecond}/s; ${o.entries} entries), present ${o.present}, lost ${o.lost}, duplicated ${o.duplicated}; ${o.failedOver} sent to a second region, ${o.repeatedAllowed} of them stored in both`);
  lines.push(`  unanswered POSTs     ${o.unknownStored + o.unknownAbsent} (stored ${o.unknownStored}, not stored ${o.unknownAbsent}); refused for good ${o.failed}`);
  lines.push(`  refusals             ${o.refusedAttempts.all} POST attempts refused or failed, ${o.refusedAttempts.reconnects} streams reconnected; ${o.refusedAttempts.whileUp} of them while their region was up`);
  lines.push(`  frames received      ${o.readers.frames} by ${o.readers.clients} reader clients; ${o.readers.caughtUp} running at the end, caught up in every region`);
  lines.push(`  second streams       ${o.streams.takeovers} takeovers on ${o.streams.contested} accounts; ${o.streams.lateFrames} frames on an older stream within the grace or during a fault`);
  lines.push(`  region logs          ${Object.entries(o.logEntries).map(([r, n]) => `${r} ${n}`).join(', ')} entries`);
  lines.push('', `anomalies: ${anomalies.total}`);
  for (const [cls, n] of Object.entries(anomalies.byClass)) if (n > 0) lines.push(`  ${cls.padEnd(22)} ${n}`);
  for (const a of anomalies.list.slice(0, 30)) {
    lines.push('', `${a.class} at ${at(a.t)}: ${a.text}`);
    for (const e of a.history ?? []) lines.push(`    ${at(e.t).padStart(10)} ${e.kind.padEnd(6)} ${e.subject.padEnd(12)} ${e.text}`);
  }
  if (anomalies.list.length > 30) lines.push('', `... ${anomalies.list.length - 30} more in the report`);
  lines.push('', `report: ${file}`, `verdict: ${anomalies.total === 0 ? 'no anomaly' : `${anomalies.total} anomalies`}`);
  return lines.join('\n');
}
