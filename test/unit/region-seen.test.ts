// With regions, what a stream has of each region's log decides what it is sent and which id each
// frame carries (stream/region-seen.ts): a frame it has is skipped, and a stream further than its
// group in some region gets its own id until the group is as far.
import { describe, expect, it } from 'vitest';
import { LogPosition } from '../../services/gateway/stream/log-position.js';
import { RegionSeen } from '../../services/gateway/stream/region-seen.js';
import type { StreamFrame } from '../../services/gateway/stream/stream-context.js';

const ORDER = ['eu', 'us'];
const pos = (eu: number, us: number): LogPosition => new LogPosition([['eu', eu], ['us', us]]);

/** A frame of `region` at `seq` whose group is at `group` once it is delivered. */
function frame(region: string, seq: number, group: LogPosition): StreamFrame {
  return { seq, region, position: group, isPresence: false, sender: 's', bytes: Buffer.from(`shared ${group.id(ORDER)}`), withId: (id) => Buffer.from(`own ${id}`) };
}

const text = (b: Uint8Array | null): string | null => (b === null ? null : Buffer.from(b).toString());

describe('what a stream has of each region', () => {
  it('skips a frame at or below what it has of its region, in any interleaving of regions, and sends the rest with the shared bytes', () => {
    const seen = new RegionSeen(pos(10, 5), ORDER, false);
    expect(text(seen.admit(frame('eu', 10, pos(10, 5)), 'eu'))).toBeNull();
    expect(text(seen.admit(frame('us', 6, pos(10, 6)), 'us'))).toBe('shared eu:10.us:6');
    expect(text(seen.admit(frame('eu', 11, pos(11, 6)), 'eu'))).toBe('shared eu:11.us:6');
    expect(text(seen.admit(frame('us', 6, pos(11, 6)), 'us'))).toBeNull();
    // A region it had heard nothing of.
    expect(text(seen.admit(frame('ap', 1, pos(11, 6)), 'ap'))).toBe('shared eu:11.us:6');
  });

  it('writes its own id while it is further than its group in a region, never stepping back, then the group’s once the group is as far', () => {
    // Resumed at us:9 from a gateway that had heard more of us than this one (at us:6).
    const seen = new RegionSeen(pos(10, 9), ORDER, true);
    expect(text(seen.admit(frame('eu', 11, pos(11, 6)), 'eu'))).toBe('own eu:11.us:9');
    expect(text(seen.admit(frame('us', 7, pos(11, 7)), 'us'))).toBeNull();
    expect(text(seen.admit(frame('us', 9, pos(11, 9)), 'us'))).toBeNull();
    // The group is as far as the stream now: the shared bytes from here on.
    expect(text(seen.admit(frame('us', 10, pos(11, 10)), 'us'))).toBe('shared eu:11.us:10');
    expect(text(seen.admit(frame('eu', 12, pos(12, 10)), 'eu'))).toBe('shared eu:12.us:10');
  });

  it('after a replay, skips the held live frames the replay sent or the client had', () => {
    const seen = new RegionSeen(new LogPosition(), ORDER, false);
    // The replay sent eu 11..12; the group was at eu:12.us:6 when it read.
    expect(text(seen.admit(frame('eu', 11, pos(11, 3)), 'eu'))).not.toBeNull();
    expect(text(seen.admit(frame('eu', 12, pos(12, 3)), 'eu'))).not.toBeNull();
    seen.raise(pos(12, 6), ORDER, false);
    expect(text(seen.admit(frame('eu', 12, pos(12, 6)), 'eu'))).toBeNull();
    expect(text(seen.admit(frame('us', 6, pos(12, 6)), 'us'))).toBeNull();
    expect(text(seen.admit(frame('us', 7, pos(12, 7)), 'us'))).toBe('shared eu:12.us:7');
  });
});
