// After a time the gateway could not hear the mesh, its claims are read again before any stream gets
// another frame: a stream taken over meanwhile is evicted first. Three things say it could not hear:
// its event loop was away (stall-watch.ts, asked before each live message), NATS reconnected (the
// notices sent meanwhile are lost), or its heartbeat went unwritten (node-heartbeat.ts tells server.ts,
// which calls `afterSilence`). While the claims are read the live feed is held (delivery/live-hold.ts).

import type { NatsConnection } from '@nats-io/nats-core';
import type { Logger } from '../core/logger.js';
import type { ChannelHub } from './delivery/channel-hub.js';
import type { Ownership } from './ownership/ownership.js';
import { StallWatch } from './stall-watch.js';

const CATCH_UP_AGAIN_MS = 2000;
/**
 * An event loop away longer than NODE_TIMEOUT / this re-reads its claims. A sweep needs the
 * heartbeat (every NODE_TIMEOUT / 3) unseen for NODE_TIMEOUT, and its notice, like every message,
 * waits behind the live frames that came in meanwhile: after a shorter stall no claim can have been
 * swept, only replaced, and those notices arrive as they would have. A re-read of every claim holds
 * every stream's live frames, so a loaded gateway's second-long pauses must not cause one.
 */
const STALL_FRACTION = 3;
/** The longest a re-read of the claims holds the live feed. */
const HOLD_MAX_MS = 5000;

export interface SilenceRecoveryOptions {
  hub: ChannelHub;
  ownership: Ownership;
  logger: Logger;
  nodeTimeoutMs: number;
  /** Streams open on this node, for the log line. */
  streams: () => number;
}

export class SilenceRecovery {
  private readonly o: SilenceRecoveryOptions;
  private readonly stalls: StallWatch;

  constructor(options: SilenceRecoveryOptions) {
    this.o = options;
    this.stalls = new StallWatch(Math.round(options.nodeTimeoutMs / STALL_FRACTION));
  }

  /** Watches the event loop and the connection from now on. */
  start(nc: NatsConnection): void {
    const { hub, logger } = this.o;
    this.stalls.start();
    hub.hold.check = () => {
      if (this.stalls.stalled()) void this.recheckClaims('the event loop was stalled or paused');
    };
    void (async () => {
      for await (const s of nc.status()) {
        if (s.type === 'reconnect') {
          logger.info('resubscribed after reconnect; reading what the live feed missed');
          // Notices sent while disconnected are lost: claims taken meanwhile are found first.
          void this.recheckClaims('NATS reconnected').then(() => {
            void hub.catchUp();
            // Interest in the renewed subscriptions reaches the stream leader across the cluster a
            // moment later; a second look catches frames republished in between.
            setTimeout(() => void hub.catchUp(), CATCH_UP_AGAIN_MS).unref();
          });
        }
      }
    })();
  }

  /** The process could not reach the mesh for a while (its heartbeat said so): its claims are read again. */
  afterSilence(why: string): void {
    void this.recheckClaims(why);
  }

  stop(): void {
    this.stalls.stop();
  }

  /**
   * Holds the live feed while every claim is read: a stream taken over meanwhile gets no frame first.
   * Never longer than HOLD_MAX_MS: reads that NATS is slow to answer (a bucket between leaders) must
   * not stop every stream; a claim not read by then is found by its next renewal, as before the hold.
   */
  private async recheckClaims(why: string): Promise<void> {
    const { hub, ownership, logger } = this.o;
    logger.warn({ why, streams: this.o.streams() }, 'this gateway could not hear the mesh for a while; holding deliveries while it re-reads its claims');
    await hub.hold.during(async () => {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), HOLD_MAX_MS)));
      const outcome = await Promise.race([ownership.verify().then(() => 'read' as const), late]);
      clearTimeout(timer);
      if (outcome === 'late') logger.warn({ why, holdMs: HOLD_MAX_MS }, 'its claims were not all read in time; delivering again, the rest are checked as they are renewed');
    });
  }
}
