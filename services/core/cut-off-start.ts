// Starting in a region cut off from the others (docs/REGIONS.md): JetStream's meta group spans every
// region, and a region alone has no majority, so it answers neither the account's information nor a
// stream's. What a service reads to serve (its region's log, copies and buckets, by direct and
// leader gets) still answers there, so with regions a service whose checks the meta group will not
// answer starts unchecked, saying so, rather than leave its region's players without it.

import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { isMetaUnavailable } from './jetstream-errors.js';
import type { Logger } from './logger.js';
import type { LayoutFindings } from './nats-check.js';

/** Checks refused by the meta group this many times in a row are given up (a super-cluster still forming answers within them). */
const META_TRIES = 3;

/** JetStream's manager; with regions, one that skips the account check when the meta group does not answer. */
export async function managerOrCutOff(nc: NatsConnection, regions: boolean, logger: Logger): Promise<JetStreamManager> {
  try {
    return await jetstreamManager(nc);
  } catch (e) {
    if (!regions || !isMetaUnavailable(e)) throw e;
    logger.warn("JetStream's meta group does not answer: this region may be cut off from the others; starting with what the region holds");
    return jetstreamManager(nc, { checkAPI: false });
  }
}

/** The layout's check, or with regions, once the meta group has refused it META_TRIES times, nothing found and a warning. */
export function checkOrCutOff(check: () => Promise<LayoutFindings>, regions: boolean, logger: Logger): () => Promise<LayoutFindings> {
  let refusals = 0;
  return async () => {
    try {
      const findings = await check();
      refusals = 0;
      return findings;
    } catch (e) {
      // Only refusals in a row: one answer of another kind means the meta group is there, settling.
      if (!regions || !isMetaUnavailable(e)) refusals = 0;
      if (!regions || !isMetaUnavailable(e) || ++refusals < META_TRIES) throw e;
      logger.warn("the streams this service uses could not be checked (JetStream's meta group does not answer: this region may be cut off from the others); starting unchecked");
      return { problems: [], warnings: [], found: new Map() };
    }
  };
}
