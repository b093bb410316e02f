// Start-up meets JetStream between leaders: a node just restarted, a cluster healing after a pause,
// a node whose store is full. Each step that asks NATS something (the streams' check, the mirrors of
// keys and bans, the first heartbeat, the claim index) can then time out or be told "temporarily
// unavailable". A process that exits on that is restarted by its supervisor at best, after a back-off
// of its own; so the whole start is tried again, for about two minutes, before the process gives up.
// A missing permission, a stream `relay setup` must create or a bad setting is not a moment: it
// stops start-up at once. The fault campaign (docs/RELIABILITY.md, seed 2027) restarted an ingress
// just after a pause of NATS's meta leader, and it exited with "JetStream system temporarily unavailable".

import { NatsSetupError, permissionViolationOf } from './nats-refusal.js';
import type { Logger } from './logger.js';

/** Tries of the whole start, with the pause between them growing to PAUSE_MAX_MS: about two minutes. */
const START_TRIES = 30;
const PAUSE_MAX_MS = 5000;

/** The errors NATS answers while it settles (by class name: the client packages do not export them all). */
const MOMENTARY = new Set(['TimeoutError', 'NoResponders', 'RequestError', 'JetStreamNotEnabled', 'JetStreamApiError', 'JetStreamError', 'JetStreamStatusError', 'ConnectionError', 'ClosedConnectionError']);

/** Whether a start that failed with `e` may succeed a moment later. */
export function momentary(e: unknown): boolean {
  if (!(e instanceof Error) || e instanceof NatsSetupError) return false;
  if (permissionViolationOf(e) !== null) return false;
  return MOMENTARY.has(e.name) || (e.cause instanceof Error && momentary(e.cause));
}

/** Runs `start` until it succeeds, its error is not momentary, or START_TRIES are spent. */
export async function startPatiently<T>(start: () => Promise<T>, logger: Logger): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (e) {
      if (!momentary(e) || attempt >= START_TRIES) throw e;
      const pauseMs = Math.min(500 * attempt, PAUSE_MAX_MS);
      logger.warn({ err: e, attempt, pauseMs }, 'start-up failed while NATS settles; starting again');
      await new Promise((r) => setTimeout(r, pauseMs));
    }
  }
}
