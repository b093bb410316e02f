// How busy each channel is: the admin service holds one core subscription on the live feed the
// event log RePublishes (every stored payload, every channel; with regions every region's log's)
// and counts payloads per channel per second over the last minute. Counting only; nothing of a
// payload is kept.

import type { NatsConnection, Subscription } from '@nats-io/nats-core';
import { guarded, loggedThrows } from '../core/guarded-callback.js';
import type { Logger } from '../core/logger.js';
import { channelFromToken } from '../core/channel.js';
import { CHANNEL_SUBJECT_PREFIX, LIVE_ALL_CHANNELS, LIVE_PREFIX, liveInEveryRegion, STREAM_SUBJECTS } from '../core/subjects.js';

const WINDOW_S = 60;
/** A channel with no payload for this long and no stream is forgotten. */
const FORGET_AFTER_MS = 60 * 60_000;
const TOKEN_START = LIVE_PREFIX.length + CHANNEL_SUBJECT_PREFIX.length;

/** The channel token of a live subject: `live.channel.<token>`, with regions `live.region.<r>.channel.<token>`. */
export function liveToken(subject: string, regions: boolean): string {
  if (!regions) return subject.slice(TOKEN_START);
  const channelAt = subject.indexOf(`.${CHANNEL_SUBJECT_PREFIX}`, LIVE_PREFIX.length);
  return channelAt < 0 ? '' : subject.slice(channelAt + 1 + CHANNEL_SUBJECT_PREFIX.length);
}
/**
 * At most this many channels are counted (about 0.7 KiB each): anyone with a key can post to any
 * channel name, and a flood of made-up ones must not grow the admin service without bound.
 */
export const MAX_COUNTED_CHANNELS = 20_000;

interface Counts {
  /** Payloads per second, indexed by epoch second modulo the window. */
  perSecond: Uint32Array;
  /** The epoch second each slot was last written in (a slot from an older minute reads as 0). */
  slotSecond: Float64Array;
  lastAt: number;
}

export interface ChannelCount {
  channel: string;
  lastMinute: number;
  lastAt: number;
}

/**
 * The counts of the `max` most recently active channels. A new name is never refused: past `max`
 * the channel quiet the longest is forgotten, so a flood of made-up names (334 a second from two
 * accounts at the default rate) cycles through the junk and never pushes out a channel in use.
 * The Map's insertion order is the recency order: a payload moves its channel to the end, O(1).
 */
export class ChannelCounts {
  private readonly channels = new Map<string, Counts>();
  private readonly max: number;

  constructor(max = MAX_COUNTED_CHANNELS) {
    this.max = max;
  }

  get size(): number {
    return this.channels.size;
  }

  /** One payload on the channel of this subject token. */
  count(token: string, now = Date.now()): void {
    let c = this.channels.get(token);
    if (c === undefined) {
      if (this.channels.size >= this.max) {
        const quietest = this.channels.keys().next();
        if (quietest.done !== true) this.channels.delete(quietest.value);
      }
      c = { perSecond: new Uint32Array(WINDOW_S), slotSecond: new Float64Array(WINDOW_S), lastAt: now };
    } else {
      this.channels.delete(token);
    }
    this.channels.set(token, c);
    const second = Math.floor(now / 1000);
    const slot = second % WINDOW_S;
    if (c.slotSecond[slot] !== second) {
      c.slotSecond[slot] = second;
      c.perSecond[slot] = 0;
    }
    c.perSecond[slot] = (c.perSecond[slot] ?? 0) + 1;
    c.lastAt = now;
  }

  /** Every channel seen within the hour: readable name, payloads in the last minute, last payload. */
  snapshot(now = Date.now()): ChannelCount[] {
    const second = Math.floor(now / 1000);
    const out: ChannelCount[] = [];
    for (const [token, c] of this.channels) {
      if (now - c.lastAt > FORGET_AFTER_MS) {
        this.channels.delete(token);
        continue;
      }
      let lastMinute = 0;
      for (let i = 0; i < WINDOW_S; i++) if (second - (c.slotSecond[i] ?? 0) < WINDOW_S) lastMinute += c.perSecond[i] ?? 0;
      out.push({ channel: channelFromToken(token), lastMinute, lastAt: c.lastAt });
    }
    return out;
  }
}

export class ChannelActivity {
  private readonly counts = new ChannelCounts();
  private readonly sub: Subscription;
  private total = 0;

  /** `regions`: the mesh has regions, each log RePublishing on subjects of its own. */
  constructor(nc: NatsConnection, regions: boolean, logger: Pick<Logger, 'warn'>) {
    this.sub = nc.subscribe(regions ? liveInEveryRegion(STREAM_SUBJECTS) : LIVE_ALL_CHANNELS, {
      callback: guarded((err, msg) => {
        if (err !== null) return;
        const token = liveToken(msg.subject, regions);
        if (token === '') return;
        this.total++;
        this.counts.count(token);
      }, loggedThrows(logger, 'counting a channel’s payloads')),
    });
  }

  /** Payloads stored since the service started, every channel (the overview's rate is its slope). */
  get payloads(): number {
    return this.total;
  }

  snapshot(now = Date.now()): ChannelCount[] {
    return this.counts.snapshot(now);
  }

  stop(): void {
    this.sub.unsubscribe();
  }
}
