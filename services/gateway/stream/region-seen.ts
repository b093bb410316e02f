// With regions, what a stream has of each region's log (docs/REGIONS.md, "An id says where the
// stream is in every region's log"). Frames of one region reach it in that region's order, so a frame
// at or below what the stream has of its region is one it had (from a replay, or from the gateway
// it resumed from) and is skipped.
//
// A frame's bytes carry its group's position as id, shared by every stream of the group. A stream
// that resumed *ahead* of its group in some region (its previous gateway had heard more) has more
// than that: until the group is as far in every region, each frame is written for it alone with
// the stream's own position, so its id never steps back and a resume from it repeats nothing.

import type { LogPosition } from './log-position.js';
import type { StreamFrame } from './stream-context.js';

export class RegionSeen {
  private readonly has: LogPosition;
  private order: readonly string[];
  /** The stream may still be further than its group in some region. */
  private ahead: boolean;

  constructor(has: LogPosition, order: readonly string[], ahead: boolean) {
    this.has = has;
    this.order = order;
    this.ahead = ahead;
  }

  /** Moves the stream up to `position` (what a replay sent, or what its group had): nothing there is sent again. */
  raise(position: LogPosition, order: readonly string[], ahead: boolean): void {
    this.has.raise(position);
    this.order = order;
    this.ahead ||= ahead;
  }

  /** The bytes to write for a frame of `region`, or null when the stream has it. */
  admit(frame: StreamFrame, region: string): Uint8Array | null {
    if (!this.has.advance(region, frame.seq)) return null;
    const groupAt = frame.position;
    if (!this.ahead || groupAt === undefined || frame.withId === undefined) return frame.bytes;
    if (!this.has.exceeds(groupAt)) {
      this.ahead = false;
      return frame.bytes;
    }
    return frame.withId(this.has.copy().raise(groupAt).id(this.order));
  }
}
