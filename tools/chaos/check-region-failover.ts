// A writer that fails over sends a POST its region refused or did not answer to another region's
// ingress under the same Idempotency-Key, and keys are per region (docs/REGIONS.md "Idempotency keys
// are per region"): its first region may have stored it too. So such a POST may be stored twice,
// once in each of two regions it was sent to, and that is the one duplicate the write checker lets
// pass (check-writes.ts `mayRepeat`). Twice in one region, three times, in a region it was never
// sent to, or for a POST that never left its region is still `duplicated`.

import type { LogEntry, WriteOp } from './records.js';

/** `regionOf`: the region of an ingress's base URL (null: not an ingress of the mesh). */
export function mayRepeatAcrossRegions(regionOf: (origin: string) => string | null): (op: WriteOp, found: ReadonlyArray<readonly LogEntry[]>) => boolean {
  return (op, found) => {
    const sentTo = new Set((op.origins ?? []).map(regionOf).filter((r): r is string => r !== null));
    if (sentTo.size < 2) return false;
    return found.every((copies) => {
      const regions = copies.map((e) => e.region ?? '');
      return copies.length <= 2 && new Set(regions).size === regions.length && regions.every((r) => sentTo.has(r));
    });
  };
}
