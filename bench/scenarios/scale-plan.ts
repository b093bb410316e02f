// The scale scenario's streams: how 100,000 (or fewer) spread over channels, gateways and load
// generators, and opening them all at once (first opens, and the storm's reopen).

import type { LoadGen } from '../lib/loadgen-client.js';
import type { RelaySystem } from '../systems/relay.js';

/** Sockets per process, under the hard open-files limit here (20,000) with room for the rest. */
export const PER_PROCESS = 17_000;

export interface Planned {
  channel: string;
  count: number;
}

/**
 * Big channels (5,000, 3,000, 2,000, 1,000, 1,000 per 100,000 streams) and then small ones of 2 to
 * 50 streams, cycling, until every stream has a channel. Deterministic, so runs compare.
 */
export function channelPlan(total: number): Planned[] {
  const scale = total / 100_000;
  const plan: Planned[] = [5000, 3000, 2000, 1000, 1000].map((n, i) => ({ channel: `big-${i + 1}.example.net`, count: Math.max(2, Math.round(n * scale)) }));
  let left = total - plan.reduce((s, p) => s + p.count, 0);
  for (let i = 0; left > 0; i++) {
    const count = Math.min(left, 2 + ((i * 7) % 49));
    plan.push({ channel: `small-${i + 1}.example.net`, count });
    left -= count;
  }
  return plan;
}

export interface OpenResult {
  opened: number;
  /** Not open in the end. */
  failed: number;
  /** Refused and opened again later (storm only: the generators retry as the published client does). */
  refused: number;
  /** Every failed attempt by `<status> <error code>` (or how its connection ended). */
  reasons: Record<string, number>;
  ms: number;
}

/** How long the storm's generators keep retrying refused opens: twice the target, so a miss is measured. */
const STORM_RETRY_MS = 120_000;

/**
 * Opens every group's streams at once; the slowest group decides the time. Each open carries
 * Last-Event-ID: the last id its stream saw, or `resumeFrom` for a stream that saw none.
 */
export async function openAll(relay: RelaySystem, loadgens: LoadGen[], plan: Planned[], per: number, concurrency: number, resumeFrom: number, retry = false): Promise<OpenResult> {
  const t0 = performance.now();
  const results = await Promise.all(
    loadgens.map((lg, g) =>
      lg.send<OpenResult>({ cmd: 'open', spec: { ...relay.streamSpecOn(g, per, [], concurrency), plan, offset: g * per, resume: { lastEventId: resumeFrom }, ...(retry ? { retry: { untilMs: STORM_RETRY_MS } } : {}) } }),
    ),
  );
  const sum = (f: (r: OpenResult) => number): number => results.reduce((s, r) => s + f(r), 0);
  const reasons: Record<string, number> = {};
  for (const r of results) for (const [why, n] of Object.entries(r.reasons)) reasons[why] = (reasons[why] ?? 0) + n;
  return { opened: sum((r) => r.opened), failed: sum((r) => r.failed), refused: sum((r) => r.refused), reasons, ms: performance.now() - t0 };
}

