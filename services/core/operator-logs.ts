// Where the operator's tools (the CLI, the admin service) read the event log. Without regions: the
// one log. With regions: every region's log as the home region holds it, its own and its copies of
// the others' (a copy keeps its origin's sequences and subjects, docs/REGIONS.md), the place they
// read the keys and bans from too (credential-places.ts). An entry is then named by its region and
// its sequence in that region's log.

import type { RegionSettings } from './config/region-env.js';
import { regionCopyStream, regionLogStream, regionSubjectPrefix, STREAM_NAME } from './subjects.js';

export interface OperatorLog {
  /** The region whose log it is (null: the one log of a mesh without regions). */
  region: string | null;
  /** The stream of the home region that holds it. */
  stream: string;
  /** A subject of the one-log form (`channel.<token>`, `channel.>`) as this log stores it. */
  subject(oneLog: string): string;
}

export function operatorLogs(regions: RegionSettings | null): OperatorLog[] {
  if (regions === null) return [{ region: null, stream: STREAM_NAME, subject: (s) => s }];
  return regions.all.map((region) => ({
    region,
    stream: region === regions.home ? regionLogStream(region) : regionCopyStream(region, regions.home),
    subject: (s) => regionSubjectPrefix(region) + s,
  }));
}

/** The regions of these logs in the mesh's order (none without regions): how positions are spelt. */
export function regionOrder(logs: readonly OperatorLog[]): string[] {
  return logs.flatMap((l) => (l.region === null ? [] : [l.region]));
}
