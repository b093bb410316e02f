// With regions, a resume from an id naming a position in each region's log (docs/REGIONS.md, "Resume
// anywhere"). The stream's group first learns where its channel is in every region (it starts
// there: delivery/channel-group.ts); the stream is then sent, region by region, what it lacks of the
// group's position, read from this region's copies of the logs (which may lag the live feed:
// delivery/log-range.ts waits for them), each frame carrying the stream's own position as its id.
// Its live frames wait meanwhile (the stream holds them), and what the replay sent is not sent again.
// A stream further than its group in some region (it came from a gateway that had heard more) keeps
// that: those frames are not sent again and its ids never step back (stream/region-seen.ts).
//
// Sequences mean the same in every region (a copy keeps its origin's numbers), so a client resumes
// at any gateway of any region. An id past what a region's own log holds (made up, or of a log since
// recreated) is clamped to where the group is there, or the region's frames would never reach the
// stream: not to the log's newest, which may already hold frames stored after the stream opened and
// still on their way to the group (a CI run's stream never got the frame its client posted next);
// a region that does not answer (cut off, lost) is not clamped: its copy may lag what the client had.

import type { JetStreamManager } from '@nats-io/jetstream';
import { TimeoutError } from '@nats-io/nats-core';
import { newestOn } from '../../core/log-walk.js';
import type { ThrottledWarnings } from '../../core/logger.js';
import type { ChannelHub } from '../delivery/channel-hub.js';
import { hears } from '../delivery/delivery-rules.js';
import { frameFromMessage } from '../delivery/frame.js';
import type { HeardLogs } from '../delivery/heard-logs.js';
import { readRange } from '../delivery/log-range.js';
import type { ClientStream } from '../stream/client-stream.js';
import type { LogPosition } from '../stream/log-position.js';

export interface RegionReplayOptions {
  jsm: JetStreamManager;
  hub: ChannelHub;
  logs: HeardLogs;
  warnings: ThrottledWarnings;
}

/** Sends what the stream lacks after `from`; the caller releases its live frames once this settles. */
export async function replayRegions(stream: ClientStream, asked: LogPosition, o: RegionReplayOptions): Promise<number> {
  const { jsm, hub, logs } = o;
  const group = hub.groupOf(stream);
  if (group === null) return 0;
  await group.started;
  const target = group.position.copy();
  const from = await clamped(o, stream, asked, target);
  const at = from.copy();
  let sent = 0;
  for (const range of from.lacks(target, logs.order)) {
    const log = logs.inRegion(range.region);
    if (log === undefined || stream.closed) continue;
    const read = { log, filter: logs.filter(log, stream.channel), from: () => at.get(log.region) + 1, until: range.until, stopped: () => stream.closed };
    await readRange(jsm, read, o.warnings, group.key, (m) => {
      if (stream.closed) return false;
      at.advance(log.region, m.seq);
      const frame = frameFromMessage(m.headers, m.data, m.seq, logs.oneLogSubject(log, m.subject), hub.metaShape, { region: log.region, position: at.copy(), order: logs.order });
      if (frame !== null && hears(stream, frame)) {
        stream.deliverReplayed(frame);
        sent++;
      }
    });
  }
  // Held frames up to the group's position were read above, or are older than what the client had.
  stream.resumeAt(at.raise(target), logs.order, from.exceeds(target));
  return sent;
}

/** Asks of a region's log that answered with an error (a leader being elected) before giving up. */
const CLAMP_TRIES = 3;

/**
 * `from`, where it is past `target` in a region beyond what that region's own log holds, lowered to
 * where the group was there when the stream began holding its live frames: `target`, or before the
 * first frame of that region the stream holds (heard after it opened), which is then sent too.
 */
async function clamped(o: RegionReplayOptions, stream: ClientStream, from: LogPosition, target: LogPosition): Promise<LogPosition> {
  const out = from.copy();
  await Promise.all(
    o.logs.all().map(async (log) => {
      const asked = from.get(log.region);
      if (asked <= target.get(log.region)) return;
      for (let tried = 1; ; tried++) {
        try {
          // The region's own log may be read from a replica when its leader gets are refused (log-walk.ts).
          const newest = await newestOn(o.jsm, log.origin, log.subjects, log.local && log.origin === log.stream);
          if (newest >= asked) return;
          const held = stream.firstHeld(log.region);
          out.lower(log.region, Math.min(newest, target.get(log.region), held === null ? Infinity : held - 1));
          return;
        } catch (err) {
          // Unanswered (cut off, lost): the region may hold what the client had, so the id stands.
          if (err instanceof TimeoutError || tried === CLAMP_TRIES) {
            o.warnings.warn(`clamp-${log.region}`, { err, region: log.region, asked }, "a resume's id could not be checked against a region's log; the region's frames up to it are not sent");
            return;
          }
          await new Promise((r) => setTimeout(r, 200 * tried));
        }
      }
    }),
  );
  return out;
}
