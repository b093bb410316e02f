// With regions, a gateway watches its region's links to the others (docs/REGIONS.md). A frame stored
// in another region while the link was down reaches this region's copy of that log once the link is
// back, but never live: a group would hear of it only at its channel's next frame (a gap), and a
// quiet channel has none. So every LINK_CHECK_MS the gateway asks each other region's log for its
// newest sequence (one get from its leader, across the link); when a region that did not answer
// answers again, the gateway waits until its copy holds what the region said, then every group reads
// what that copy has past the group (delivery/channel-group.ts catchUp). A region that answers every
// time costs one small request per check.

import type { JetStreamManager } from '@nats-io/jetstream';
import { newestOn } from '../core/log-walk.js';
import type { Logger } from '../core/logger.js';
import type { ChannelHub } from './delivery/channel-hub.js';
import type { HeardLog, HeardLogs } from './delivery/heard-logs.js';
import { RECOVERY_DEADLINE_MS } from './delivery/log-range.js';

export const LINK_CHECK_MS = 2000;

export interface RegionLinksOptions {
  jsm: JetStreamManager;
  logs: HeardLogs;
  hub: ChannelHub;
  logger: Logger;
  /** This gateway's region. */
  here: string;
  /** Called when a region that did not answer answers again. */
  returned?: (region: string) => void;
  checkMs?: number;
}

export class RegionLinks {
  private readonly o: RegionLinksOptions;
  /** Regions that did not answer the last check. */
  private readonly down = new Set<string>();
  private readonly checking = new Set<string>();
  private timer: NodeJS.Timeout | null = null;

  constructor(options: RegionLinksOptions) {
    this.o = options;
  }

  start(): void {
    this.timer = setInterval(() => this.check(), this.o.checkMs ?? LINK_CHECK_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  private check(): void {
    for (const log of this.o.logs.all()) {
      if (log.region === this.o.here || this.checking.has(log.region)) continue;
      this.checking.add(log.region);
      void this.checkOne(log).finally(() => this.checking.delete(log.region));
    }
  }

  private async checkOne(log: HeardLog): Promise<void> {
    const { jsm, logger } = this.o;
    let newest: number;
    try {
      newest = await newestOn(jsm, log.origin, log.subjects);
    } catch (err) {
      if (!this.down.has(log.region)) logger.warn({ region: log.region, err }, 'a region does not answer: its frames stored meanwhile are read from its copy once it does');
      this.down.add(log.region);
      return;
    }
    if (!this.down.delete(log.region)) return;
    logger.info({ region: log.region, newest }, 'a region answers again; reading what its copy holds past every channel heard here');
    this.o.returned?.(log.region);
    await this.copyHolds(log, newest);
    await this.o.hub.catchUp(log.region);
  }

  /** Until this region's copy of the log holds `seq` (a mirror catches up seconds after a link returns). */
  private async copyHolds(log: HeardLog, seq: number): Promise<void> {
    const deadline = Date.now() + RECOVERY_DEADLINE_MS;
    for (let delay = 100; Date.now() < deadline; delay = Math.min(delay * 2, 2000)) {
      try {
        if ((await newestOn(this.o.jsm, log.stream, log.subjects, log.local)) >= seq) return;
      } catch {
        // Asked again below.
      }
      await new Promise((r) => setTimeout(r, delay));
    }
  }
}
