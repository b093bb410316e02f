// Every region keeps a copy of every other region's log (a mirror, with the origin's sequences:
// docs/REGIONS.md), from which its gateway fills gaps and resumes streams. Once the mesh has healed
// each copy must hold exactly its origin's log: the same message at every sequence, nothing more,
// nothing less. A copy that differs is a `replica-divergence`, named with the first sequences.

import type { Anomaly, LogEntry } from './records.js';

const QUOTED = 5;

export function checkRegionCopies(log: readonly LogEntry[], copies: ReadonlyArray<{ at: string; origin: string; entries: readonly LogEntry[] }>, t: number): Anomaly[] {
  const anomalies: Anomaly[] = [];
  for (const copy of copies) {
    const origin = new Map(log.filter((e) => e.region === copy.origin).map((e) => [e.seq, e.message]));
    const held = new Map(copy.entries.map((e) => [e.seq, e.message]));
    const lacking = [...origin.keys()].filter((seq) => !held.has(seq)).sort((a, b) => a - b);
    const extra = [...held.keys()].filter((seq) => !origin.has(seq)).sort((a, b) => a - b);
    const unlike = [...held].filter(([seq, m]) => origin.has(seq) && origin.get(seq) !== m).map(([seq]) => seq).sort((a, b) => a - b);
    const parts = [
      lacking.length > 0 ? `lacks ${lacking.length} (${lacking.slice(0, QUOTED).join(', ')}${lacking.length > QUOTED ? ', ...' : ''})` : '',
      extra.length > 0 ? `holds ${extra.length} its origin has not (${extra.slice(0, QUOTED).join(', ')})` : '',
      unlike.length > 0 ? `holds another message at ${unlike.length} (${unlike.slice(0, QUOTED).join(', ')})` : '',
    ].filter((p) => p !== '');
    if (parts.length > 0) anomalies.push({ class: 'replica-divergence', t, subjects: [], text: `region ${copy.at}'s copy of ${copy.origin}'s log ${parts.join('; ')}` });
  }
  return anomalies;
}
