// The event log's plans (nats-layout.ts lists every stream): the one log of a mesh without regions,
// or with regions (docs/REGIONS.md) a log per region, written only there, and in every other region
// a copy of it: a mirror, which keeps the origin's sequence numbers and answers direct gets locally.

import { nanos } from '@nats-io/nats-core';
import { DiscardPolicy, StorageType } from '@nats-io/jetstream';
import type { RelayConfig } from './config.js';
import { SERVICE_KINDS } from './config/service-kinds.js';
import type { StreamLimits, StreamPlan } from './nats-layout.js';
import { bucketCopyStream, LIVE_PREFIX, regionCopyStream, regionLogStream, regionSubjects, STREAM_NAME, STREAM_SUBJECTS } from './subjects.js';

type LogSettings = RelayConfig['stream'];

function logLimits(s: LogSettings): StreamLimits {
  return {
    num_replicas: s.replicas,
    max_age: nanos(s.maxAgeMs),
    max_bytes: s.maxBytes,
    // Each channel's share of the log: a flood in one channel ages out only that channel's history.
    max_msgs_per_subject: s.maxMsgsPerChannel === 0 ? -1 : s.maxMsgsPerChannel,
    max_msgs: -1,
    duplicate_window: nanos(s.duplicateWindowMs),
    discard: DiscardPolicy.Old,
    storage: s.storage === 'memory' ? StorageType.Memory : StorageType.File,
  };
}

const LOG_SOURCES: StreamPlan['sources'] = {
  num_replicas: 'STREAM_REPLICAS',
  max_age: 'STREAM_MAX_AGE',
  max_bytes: 'STREAM_MAX_BYTES',
  max_msgs_per_subject: 'STREAM_MAX_MSGS_PER_CHANNEL',
  duplicate_window: 'STREAM_DUPLICATE_WINDOW',
  storage: 'STREAM_STORAGE',
};

function logPlan(s: LogSettings, stream: string, label: string, subjects: string): StreamPlan {
  return {
    stream,
    label,
    limits: logLimits(s),
    sources: LOG_SOURCES,
    shape: {
      description: 'Channel relay event log: every accepted payload, per channel subject.',
      subjects: [subjects],
      // Live delivery rides the RePublish; resumes read the newest frame with a direct get.
      republish: { src: subjects, dest: LIVE_PREFIX + subjects },
      allow_direct: true,
    },
    usedBy: SERVICE_KINDS,
  };
}

/** The log of a mesh without regions. */
export function oneLogPlan(s: LogSettings): StreamPlan {
  return logPlan(s, STREAM_NAME, `the event log (stream ${STREAM_NAME})`, STREAM_SUBJECTS);
}

/** Every region's log, placed in it, then in every region a copy of every other's. */
export function regionLogPlans(s: LogSettings, regions: readonly string[]): StreamPlan[] {
  const logs = regions.map((r) => {
    const stream = regionLogStream(r);
    return placedIn({ ...logPlan(s, stream, `the event log of region ${r} (stream ${stream})`, regionSubjects(r)), usedBy: ['ingress', 'gateway', 'admin', 'all'] }, r, true);
  });
  const copies = regions.flatMap((at) =>
    regions
      .filter((origin) => origin !== at)
      .map((origin): StreamPlan => {
        const stream = regionCopyStream(origin, at);
        // The copy keeps what its origin keeps; a mirror has no duplicate window (it stores what its origin stored).
        const { duplicate_window: _, ...sources } = LOG_SOURCES;
        return placedIn(
          {
            stream,
            label: `the copy of region ${origin}'s log in region ${at} (stream ${stream})`,
            limits: { ...logLimits(s), duplicate_window: 0 },
            sources,
            shape: { description: `Channel relay event log of region ${origin}, copied.`, subjects: [], mirror: { name: regionLogStream(origin) }, allow_direct: true },
            usedBy: ['gateway', 'admin', 'all'],
          },
          at,
          true,
        );
      }),
  );
  return [...logs, ...copies];
}

/**
 * A copy of a bucket kept in another region (`origin` is placed in its own): a mirror, whose
 * revisions are the origin's, read in region `at` by direct gets with the origin's subjects (the KV
 * client's handle on a mirror reads the wrong prefix).
 */
export function bucketCopyPlan(origin: StreamPlan, at: string): StreamPlan {
  const bucket = origin.bucket ?? origin.stream;
  const stream = bucketCopyStream(bucket, at);
  const { duplicate_window: _, ...sources } = origin.sources;
  return placedIn(
    {
      stream,
      label: `the copy of bucket ${bucket} in region ${at} (stream ${stream})`,
      copies: bucket,
      limits: { ...origin.limits, duplicate_window: 0 },
      sources,
      shape: { subjects: [], mirror: { name: origin.stream }, allow_direct: true },
      usedBy: origin.usedBy,
    },
    at,
    true,
  );
}

/** A plan placed in a region's NATS cluster; `ownRegion`: used only by that region's services. */
export function placedIn(plan: StreamPlan, region: string, ownRegion: boolean): StreamPlan {
  return { ...plan, ...(ownRegion ? { region } : {}), shape: { ...plan.shape, placement: { cluster: region, tags: [] } } };
}
