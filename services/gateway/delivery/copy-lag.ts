// With regions, a channel group starts where its channel is in this region's copy of each other
// region's log (channel-group.ts). A copy (a mirror) stores a frame a moment after its origin did,
// and the group's live subscription begins only now (and reaches the other regions over their links
// later still): a frame stored in the origin before that, and not yet in the copy when the group read
// it, is neither heard live nor seen as a gap until the region's next frame on the channel, which a
// quiet channel may never send. A client resumed onto a gateway without a group for its channel
// missed exactly that, and with slowed links streams opened just before missed other regions' frames
// (test/mesh/regions-slow-links.test.ts).
// So the group also asks the origin where the channel is; when the origin is ahead, it waits for the
// copy to hold that much, and the group catches up from it. An origin out of reach (a region cut
// off) is not waited for: its link's return catches the group up (gateway/region-links.ts).

import type { JetStreamManager } from '@nats-io/jetstream';
import { newestOn } from '../../core/log-walk.js';
import type { HeardLog } from './heard-logs.js';
import { RECOVERY_DEADLINE_MS } from './log-range.js';

/**
 * The origin's newest sequence on `filter` once the copy holds it, when that is past `known` (the
 * group's position in that region); null when the origin is not ahead, cannot be asked, or the copy
 * does not catch up within RECOVERY_DEADLINE_MS, or `stopped` says the group is gone.
 */
export async function originAhead(jsm: JetStreamManager, log: HeardLog, filter: string, known: () => number, stopped: () => boolean): Promise<number | null> {
  let newest: number;
  try {
    newest = await newestOn(jsm, log.origin, filter);
  } catch {
    return null;
  }
  const deadline = Date.now() + RECOVERY_DEADLINE_MS;
  for (let delay = 50; ; delay = Math.min(delay * 2, 2000)) {
    if (stopped() || newest <= known()) return null;
    const held = await newestOn(jsm, log.stream, filter, log.local).catch(() => 0);
    if (held >= newest) return newest;
    if (Date.now() > deadline) return null;
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}
