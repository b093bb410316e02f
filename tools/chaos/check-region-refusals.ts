// "One region lost: the other regions keep serving with no refusals beyond the lost region's own
// clients", and a region cut off "keeps accepting its own players' payloads" (issue 30,
// docs/REGIONS.md "Writes stay local"). So every POST attempt a writer makes to its own region's
// ingress must be answered 2xx unless that region was killed at the time: each attempt refused or
// failed otherwise is a `refused-while-up`, quoted with the refusal.

import type { HistoryEvent } from './history.js';
import type { Anomaly } from './records.js';

const ATTEMPT = /^attempt \d+ to :\d+ (refused|failed)/;

/**
 * `regionOf`: the region a writer's operation posts in (from its id), `down`: when each region was
 * killed (from the kill to its relays ready again), `slackMs`: an attempt made just before the kill
 * or answered just after the restart is the kill's.
 */
export function checkRegionRefusals(
  events: readonly HistoryEvent[],
  regionOf: (opId: string) => string | null,
  down: ReadonlyArray<{ region: string; start: number; end: number }>,
  slackMs = 1000,
): { attempts: number; anomalies: Anomaly[] } {
  const anomalies: Anomaly[] = [];
  let attempts = 0;
  for (const e of events) {
    if (e.kind !== 'op' || !ATTEMPT.test(e.text)) continue;
    const region = regionOf(e.subject);
    if (region === null) continue;
    attempts++;
    const excused = down.some((d) => d.region === region && e.t >= d.start - slackMs && e.t <= d.end + slackMs);
    if (!excused) anomalies.push({ class: 'refused-while-up', t: e.t, subjects: [e.subject], text: `${e.subject} in region ${region}, which was up: ${e.text}` });
  }
  return { attempts, anomalies };
}
