// "One region lost: the other regions keep serving with no refusals beyond the lost region's own
// clients", and a region cut off "keeps accepting its own players' payloads" (issue 30,
// docs/REGIONS.md "Writes stay local"). So every POST attempt a writer makes to a region's ingress
// (its own, or the next when it fails over) must be answered 2xx, and every reader's stream on its region's gateway must stay open
// (or end evicted), unless that region was down at the time: killed, or its relays restarting while
// it was cut off; its writes alone while its ingress was paused. Each attempt refused or failed otherwise, and each stream of such a region that
// had to reconnect, is a `refused-while-up`, quoted with the refusal.

import type { HistoryEvent } from './history.js';
import type { Anomaly } from './records.js';

const ATTEMPT = /^attempt \d+ to :\d+ (refused|failed)/;
/** A reader's client told to reconnect (region-readers.ts): its stream failed, was refused or ended. */
const RECONNECT = /^reconnecting in \d+ ms: /;

/**
 * `regionOf`: the region a writer's attempt was sent to or a reader's client streams from (null:
 * neither), `down`: when each region's own clients may be refused (from the kill to its
 * relays ready again), `slackMs`: an attempt made just before the kill or answered just after the
 * restart is the kill's.
 */
export function checkRegionRefusals(
  events: readonly HistoryEvent[],
  regionOf: (e: HistoryEvent) => string | null,
  down: ReadonlyArray<{ region: string; start: number; end: number; writesOnly?: boolean }>,
  slackMs = 1000,
): { attempts: number; reconnects: number; anomalies: Anomaly[] } {
  const anomalies: Anomaly[] = [];
  let attempts = 0;
  let reconnects = 0;
  for (const e of events) {
    const write = e.kind === 'op' && ATTEMPT.test(e.text);
    const read = e.kind === 'stream' && RECONNECT.test(e.text);
    if (!write && !read) continue;
    const region = regionOf(e);
    if (region === null) continue;
    if (write) attempts++;
    else reconnects++;
    const excused = down.some((d) => d.region === region && (write || d.writesOnly !== true) && e.t >= d.start - slackMs && e.t <= d.end + slackMs);
    if (!excused) anomalies.push({ class: 'refused-while-up', t: e.t, subjects: [e.subject], text: `${e.subject} in region ${region}, which was up: ${e.text}` });
  }
  return { attempts, reconnects, anomalies };
}
