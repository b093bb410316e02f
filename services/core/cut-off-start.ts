// Starting in a region cut off from the others (docs/REGIONS.md): JetStream's meta group spans every
// region, and a region alone has no majority, so it answers neither the account's information nor a
// stream's. What a service reads to serve (its region's log, copies and buckets, by direct gets)
// still answers there, so with regions a service whose checks the meta group has not answered for
// CUT_OFF_AFTER_MS starts unchecked, saying so, rather than leave its region's players without it.

import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { isMetaUnavailable } from './jetstream-errors.js';
import type { Logger } from './logger.js';
import type { LayoutFindings } from './nats-check.js';

/**
 * How long the meta group must leave a service's requests refused or unanswered, with no answer of
 * another kind between, before the service starts unchecked: longer than a super-cluster starting
 * cold takes to elect its meta leader, so a mesh just started is checked as always. Once concluded,
 * the cut stands for the rest of the start-up (MetaSilence).
 */
export const CUT_OFF_AFTER_MS = 15_000;
const PAUSE_MS = 500;

/**
 * Whether the meta group has been unavailable, without a break, for CUT_OFF_AFTER_MS. Once it has,
 * the start-up has concluded its region is cut off, and a later refusal is that cut again: a stream
 * leader's answer in between (the layout's check) does not make the next step wait it out anew (a
 * campaign run found a gateway ready 31-37 s after starting cut off for want of this).
 */
export class MetaSilence {
  private since: number | null = null;
  private cutOff = false;
  constructor(private readonly now: () => number = Date.now) {}

  /** Notes an outcome (null: an answer); true once the meta group has been unavailable long enough. */
  lasting(err: unknown): boolean {
    if (err === null || !isMetaUnavailable(err)) {
      this.since = null;
      return false;
    }
    this.since ??= this.now();
    this.cutOff ||= this.now() - this.since >= CUT_OFF_AFTER_MS;
    return this.cutOff;
  }
}

/** JetStream's manager; with regions, one that skips the account check once the meta group has long been silent. */
export async function managerOrCutOff(nc: NatsConnection, regions: boolean, logger: Logger, silence = new MetaSilence()): Promise<JetStreamManager> {
  for (;;) {
    try {
      return await jetstreamManager(nc);
    } catch (e) {
      if (!regions || !isMetaUnavailable(e)) throw e;
      if (silence.lasting(e)) break;
      await new Promise((r) => setTimeout(r, PAUSE_MS));
    }
  }
  logger.warn("JetStream's meta group does not answer: this region may be cut off from the others; starting with what the region holds");
  return jetstreamManager(nc, { checkAPI: false });
}

/** The layout's check, or with regions, once the meta group has long been silent, nothing found and a warning. */
export function checkOrCutOff(check: () => Promise<LayoutFindings>, regions: boolean, logger: Logger, silence = new MetaSilence()): () => Promise<LayoutFindings> {
  return async () => {
    try {
      const findings = await check();
      silence.lasting(null);
      return findings;
    } catch (e) {
      if (!regions || !silence.lasting(e)) throw e;
      logger.warn("the streams this service uses could not be checked (JetStream's meta group does not answer: this region may be cut off from the others); starting unchecked");
      return { problems: [], warnings: [], found: new Map() };
    }
  };
}
