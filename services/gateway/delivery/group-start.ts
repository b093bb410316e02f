// With regions (docs/REGIONS.md), where a new channel group starts. It first reads where its channel
// is in each region's log as this region holds it, so its first frame's id names every region, and
// subscribes to the live subjects only then: a frame stored between a subscription and a later read
// would be both read and heard, and dropped as seen (a CI run's stream in a region cut off, ready,
// never got the frame its client posted next, while the reads waited for leader gets to be refused).
// Once the server has the subscription, the group reads each log from its start while live frames
// wait: what was stored between the read and the subscription is read (a quiet channel would never
// show it as a gap; the bridges' group, on every subject, sees no gap at all), what came later is
// heard. A copy may lag its origin by frames the group will never hear live (copy-lag.ts).

import type { JetStreamManager } from '@nats-io/jetstream';
import { newestOn } from '../../core/log-walk.js';
import type { Logger } from '../../core/logger.js';
import { originAhead } from './copy-lag.js';
import type { HeardLog, HeardLogs } from './heard-logs.js';

/** The longest a new group's live frames wait while it reads what was stored since its start. */
export const START_HOLD_MS = 5000;

export interface GroupStartContext {
  readonly jsm: JetStreamManager;
  readonly logs: HeardLogs;
  readonly logger: Logger;
  /** The channel, null for every channel (the bridges' group). */
  readonly channel: string | null;
  /** The group's key, for the log lines. */
  readonly key: string;
}

/** The newest sequence on the channel in each log; a log that could not be read is left out (its frames still come live). */
export async function startingPoints(o: GroupStartContext): Promise<Map<HeardLog, number>> {
  const { jsm, logs, logger } = o;
  const points = new Map<HeardLog, number>();
  await Promise.all(
    logs.all().map(async (log) => {
      try {
        points.set(log, await newestOn(jsm, log.stream, logs.filter(log, o.channel), log.local));
      } catch (err) {
        logger.warn({ err, channel: o.key, log: log.stream }, 'could not read where a channel is in a log; starting from its first frame heard');
      }
    }),
  );
  return points;
}

/** Reads each started log from where the group is, side by side, for START_HOLD_MS at most (`closed`: at once). */
export async function readSinceStart(o: GroupStartContext, started: readonly HeardLog[], read: (log: HeardLog, stopped: () => boolean) => Promise<number>, closed: () => boolean): Promise<void> {
  const until = Date.now() + START_HOLD_MS;
  const stopped = (): boolean => closed() || Date.now() > until;
  await Promise.all(
    started.map((log) =>
      read(log, stopped).catch((err: unknown) => o.logger.warn({ err, channel: o.key, log: log.stream }, 'could not read what a log stored as a new group subscribed; later gaps are still filled')),
    ),
  );
}

/**
 * A copy read at the start may lag its origin by frames the group will never hear live: the origin
 * is asked, and the group caught up from the copy once it holds that much (copy-lag.ts).
 */
export function followCopies(o: GroupStartContext, started: readonly HeardLog[], known: (region: string) => number, stopped: () => boolean, catchUp: (region: string) => Promise<void>): void {
  const { jsm, logs, logger } = o;
  for (const log of started.filter((l) => l.copy)) {
    void originAhead(jsm, log, logs.filter(log, o.channel), () => known(log.region), stopped)
      .then((ahead) => (ahead === null || stopped() ? undefined : catchUp(log.region)))
      .catch((err: unknown) => logger.warn({ err, channel: o.key, log: log.stream }, "catching up with a copy behind its origin at the group's start failed"));
  }
}
