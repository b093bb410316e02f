// Local fan-out. One core NATS subscription per channel with at least one local stream (plus one on
// every channel for bridge streams that asked for all), never one per client: NATS carries each
// message to this node once and the node fans it out. Each message becomes one Frame whose bytes
// every recipient shares. A channel's subscription, its streams and its gap filling are its group
// (channel-group.ts); the hub keeps the groups and opens and closes them as streams join and leave.

import type { JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import type { Tracer } from '@opentelemetry/api';
import type { MetaShape } from '../../../schemas/meta.js';
import { ThrottledWarnings, type Logger } from '../../core/logger.js';
import type { RelayMetrics } from '../../core/metrics.js';
import type { ChannelWindow, ResumeWindows } from './resume-window.js';
import type { ClientStream } from '../stream/client-stream.js';
import type { TurnFlusher } from '../stream/turn-flusher.js';
import { ALL_CHANNELS, ChannelGroup } from './channel-group.js';
import type { GroupContext } from './group-context.js';
import type { HeardLogs } from './heard-logs.js';
import type { Frame } from './frame.js';
import { LiveHold } from './live-hold.js';

export interface ChannelHubOptions {
  nc: NatsConnection;
  /** Gap fills and catch-ups read the log by message gets (no consumer: core/log-walk.ts). */
  jsm: JetStreamManager;
  logger: Logger;
  metrics: RelayMetrics;
  /** Every group's resume window, under the gateway's one budget. */
  windows: ResumeWindows;
  flusher: TurnFlusher;
  /** Null while tracing is off. */
  tracer: Tracer | null;
  /** The meta frame this gateway writes (META_AUTHORITATIVE_SENDER). */
  metaShape: MetaShape;
  /** The logs it hears: the one log, or every region's (heard-logs.ts). */
  logs: HeardLogs;
}

export class ChannelHub {
  private readonly nc: NatsConnection;
  private readonly metrics: RelayMetrics;
  private readonly context: GroupContext;
  private readonly groups = new Map<string, ChannelGroup>();
  /** The meta frame this gateway writes (META_AUTHORITATIVE_SENDER). */
  readonly metaShape: MetaShape;
  /** While held, live messages wait (live-hold.ts). */
  readonly hold = new LiveHold();

  constructor(o: ChannelHubOptions) {
    this.nc = o.nc;
    this.metrics = o.metrics;
    this.metaShape = o.metaShape;
    this.context = { ...o, warnings: new ThrottledWarnings(o.logger), hold: this.hold };
  }

  /**
   * Adds a stream to its channel's group, subscribing the node when it is the first. Returns what to
   * wait for before the stream can count on hearing the channel (the group's subscription reaching
   * the server; with regions, after the group has read where it starts), or null when it already does.
   */
  join(stream: ClientStream): Promise<void> | null {
    if (stream.closed) return null;
    const key = stream.channel ?? ALL_CHANNELS;
    let group = this.groups.get(key);
    if (group === undefined) {
      group = new ChannelGroup(key, this.nc, this.context);
      this.groups.set(key, group);
      this.metrics.channelSubscriptions.set(this.groups.size);
    }
    group.streams.add(stream);
    // The server must know the subscription before a replay decides where live delivery starts.
    return group.isHearing ? null : group.hearing;
  }

  leave(stream: ClientStream): void {
    const key = stream.channel ?? ALL_CHANNELS;
    const group = this.groups.get(key);
    if (group === undefined) return;
    group.streams.delete(stream);
    if (group.streams.size === 0) {
      group.close();
      this.groups.delete(key);
      this.metrics.channelSubscriptions.set(this.groups.size);
    }
  }

  /** After a NATS reconnect (or `region`'s link back), read what every group may have missed meanwhile. */
  async catchUp(region: string | null = null): Promise<void> {
    await Promise.all([...this.groups.values()].map((group) => group.catchUp(region)));
  }

  /** The stream's group (with regions, a resume reads from where it is). */
  groupOf(stream: ClientStream): ChannelGroup | null {
    return this.groups.get(stream.channel ?? ALL_CHANNELS) ?? null;
  }

  /** The resume window of the stream's group, and whether it is whole now (no gap being filled). */
  windowOf(stream: ClientStream): { window: ChannelWindow; whole: boolean } | null {
    const group = this.groups.get(stream.channel ?? ALL_CHANNELS);
    return group === undefined ? null : { window: group.window, whole: group.whole };
  }

  /** Sends a frame to every stream of one group (server keepalives). */
  broadcast(key: string, frame: Frame): void {
    const group = this.groups.get(key);
    if (group === undefined) return;
    for (const s of group.streams) s.deliver(frame);
  }

  groupKeys(): IterableIterator<string> {
    return this.groups.keys();
  }

  close(): void {
    for (const g of this.groups.values()) g.close();
    this.groups.clear();
    this.metrics.channelSubscriptions.set(0);
  }
}
