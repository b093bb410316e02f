// The logs a gateway hears, and where it reads each. Without regions: the one log, `RELAY`. With
// regions (docs/REGIONS.md): every region's log, heard live on its own live subjects
// (`live.region.<r>.channel.<token>`) and read from what this gateway's region holds of it: its own
// log for its own region, the copy it keeps of every other (a mirror keeps its origin's sequences,
// so a sequence means the same frame wherever it is read). Nothing here reaches another region:
// a region cut off reads all it has.

import type { RegionSettings } from '../../core/config.js';
import {
  channelSubject,
  LIVE_ALL_CHANNELS,
  liveInEveryRegion,
  liveSubject,
  regionCopyStream,
  regionLogStream,
  regionSubjectPrefix,
  regionSubjects,
  STREAM_NAME,
  STREAM_SUBJECTS,
} from '../../core/subjects.js';
import { ONE_LOG } from '../stream/log-position.js';

/** One log as a gateway reads it. */
export interface HeardLog {
  /** Its region; ONE_LOG without regions. */
  readonly region: string;
  /** The stream read here: the log itself, or this region's copy of it. */
  readonly stream: string;
  /** The copy of another region's log (it may lag that log's live feed). */
  readonly copy: boolean;
  /** The log itself, in its own region (what a clamp or a link check asks). */
  readonly origin: string;
  /** What its stored subjects begin with before `channel.<token>` ('' for the one log). */
  readonly prefix: string;
  /** Every subject it stores. */
  readonly subjects: string;
  /** In a region cut off, read from a replica once leader reads are refused (core/log-walk.ts getOne). */
  readonly local: boolean;
}

export class HeardLogs {
  /** With regions: every region, in the mesh's fixed order (what ids are written in). */
  readonly order: readonly string[];
  readonly regional: boolean;
  private readonly logs: readonly HeardLog[];

  private constructor(logs: readonly HeardLog[], regional: boolean) {
    this.logs = logs;
    this.regional = regional;
    this.order = regional ? logs.map((l) => l.region) : [];
  }

  /** With regions, `regions.here` (this gateway's region) is required. */
  static of(regions: RegionSettings | null): HeardLogs {
    if (regions === null) return new HeardLogs([{ region: ONE_LOG, stream: STREAM_NAME, copy: false, origin: STREAM_NAME, prefix: '', subjects: STREAM_SUBJECTS, local: false }], false);
    const here = regions.here;
    if (here === null) throw new Error('a gateway in a mesh with regions needs its REGION');
    return new HeardLogs(
      regions.all.map((r) => ({
        region: r,
        stream: r === here ? regionLogStream(r) : regionCopyStream(r, here),
        copy: r !== here,
        origin: regionLogStream(r),
        prefix: regionSubjectPrefix(r),
        subjects: regionSubjects(r),
        local: true,
      })),
      true,
    );
  }

  all(): readonly HeardLog[] {
    return this.logs;
  }

  /** The log of `region`, if the mesh has it. */
  inRegion(region: string): HeardLog | undefined {
    return this.logs.find((l) => l.region === region);
  }

  /** The live subject of a channel (null: every channel) in every log. */
  liveSubject(channel: string | null): string {
    if (!this.regional) return channel === null ? LIVE_ALL_CHANNELS : liveSubject(channel);
    return liveInEveryRegion(channel === null ? STREAM_SUBJECTS : channelSubject(channel));
  }

  /** The subject filter of a channel (null: every channel) in one log. */
  filter(log: HeardLog, channel: string | null): string {
    return channel === null ? log.subjects : log.prefix + channelSubject(channel);
  }

  /** The log a stored subject is in, or null when it is no log this mesh has (a region not in REGIONS). */
  logOf(storedSubject: string): HeardLog | null {
    if (!this.regional) return this.logs[0]!;
    for (const log of this.logs) if (storedSubject.startsWith(log.prefix)) return log;
    return null;
  }

  /** A stored subject as a mesh without regions spells it (`channel.<token>`): what names its channel. */
  oneLogSubject(log: HeardLog, storedSubject: string): string {
    return storedSubject.slice(log.prefix.length);
  }
}
