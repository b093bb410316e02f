// Local fan-out. One core NATS subscription per channel with at least one local stream (plus one on
// every channel for bridge streams that asked for all), never one per client: NATS carries each
// message to this node once and the node fans it out. Each message becomes one Frame whose bytes
// every recipient shares. RePublish headers carry the previous sequence of the subject, so a
// message lost on the way (a reconnect, a slow route) shows up as a gap and is read from the log.
// Every frame dispatched also enters the group's resume window (resume-window.ts).

import type { MetaShape } from '../../../schemas/meta.js';
import type { Msg, MsgHdrs, NatsConnection, Subscription } from '@nats-io/nats-core';
import type { JetStreamClient } from '@nats-io/jetstream';
import type { Tracer } from '@opentelemetry/api';
import { ThrottledWarnings, type Logger } from '../../core/logger.js';
import type { RelayMetrics } from '../../core/metrics.js';
import { channelSubject, LIVE_ALL_CHANNELS, liveSubject, STREAM_SUBJECTS } from '../../core/subjects.js';
import type { ClientStream } from '../stream/client-stream.js';
import { deliveryContext, fanOut } from './fan-out.js';
import { frameFromMessage, type Frame } from './frame.js';
import { fromSequence, readRange } from '../../core/log-reader.js';
import { LiveHold } from './live-hold.js';
import { republished } from './republished.js';
import { ChannelWindow, type ResumeWindows } from '../resume/resume-window.js';
import type { TurnFlusher } from '../stream/turn-flusher.js';

/** How long a gap fill or catch-up keeps retrying while the log cannot be read. */
const RECOVERY_DEADLINE_MS = 120_000;

/** Key of the group of bridge streams that hear every channel. */
export const ALL_CHANNELS = '*';

interface Group {
  key: string;
  /** Log subject filter for catch-up reads. */
  filter: string;
  sub: Subscription;
  streams: Set<ClientStream>;
  /** Last sequence dispatched per log subject (gap detection). */
  lastBySubject: Map<string, number>;
  /** Highest sequence dispatched on any subject (catch-up after a reconnect). */
  lastSeq: number;
  /** While a gap is being filled, live messages wait here, in order. */
  backlog: Msg[] | null;
  window: ChannelWindow;
}

export class ChannelHub {
  private readonly nc: NatsConnection;
  private readonly js: JetStreamClient;
  private readonly logger: Logger;
  private readonly warnings: ThrottledWarnings;
  private readonly metrics: RelayMetrics;
  private readonly windows: ResumeWindows;
  private readonly groups = new Map<string, Group>();
  private readonly flusher: TurnFlusher;
  /** Null while tracing is off. */
  private readonly tracer: Tracer | null;
  /** The meta frame this gateway writes (META_AUTHORITATIVE_SENDER). */
  readonly metaShape: MetaShape;
  /** While held, live messages wait (live-hold.ts). */
  readonly hold = new LiveHold();

  constructor(nc: NatsConnection, js: JetStreamClient, logger: Logger, metrics: RelayMetrics, windows: ResumeWindows, flusher: TurnFlusher, tracer: Tracer | null, metaShape: MetaShape) {
    this.nc = nc;
    this.metaShape = metaShape;
    this.tracer = tracer;
    this.windows = windows;
    this.flusher = flusher;
    this.js = js;
    this.logger = logger;
    this.warnings = new ThrottledWarnings(logger);
    this.metrics = metrics;
  }

  /**
   * Adds a stream to its channel's group, subscribing the node when it is the first. Returns what to
   * wait for before the stream can count on hearing the channel (the new subscription reaching the
   * server), or null when it already does.
   */
  join(stream: ClientStream): Promise<void> | null {
    if (stream.closed) return null;
    const key = stream.channel ?? ALL_CHANNELS;
    let group = this.groups.get(key);
    if (group === undefined) {
      group = this.subscribe(key);
      this.groups.set(key, group);
      this.metrics.channelSubscriptions.set(this.groups.size);
      group.streams.add(stream);
      // The server must know the subscription before a replay decides where live delivery starts.
      return this.nc.flush();
    }
    group.streams.add(stream);
    return null;
  }

  leave(stream: ClientStream): void {
    const key = stream.channel ?? ALL_CHANNELS;
    const group = this.groups.get(key);
    if (group === undefined) return;
    group.streams.delete(stream);
    if (group.streams.size === 0) {
      group.sub.unsubscribe();
      this.windows.drop(group.window);
      this.groups.delete(key);
      this.metrics.channelSubscriptions.set(this.groups.size);
    }
  }

  private subscribe(key: string): Group {
    const subject = key === ALL_CHANNELS ? LIVE_ALL_CHANNELS : liveSubject(key);
    const filter = key === ALL_CHANNELS ? STREAM_SUBJECTS : channelSubject(key);
    const group: Group = {
      key,
      filter,
      streams: new Set(),
      lastBySubject: new Map(),
      lastSeq: 0,
      backlog: null,
      window: new ChannelWindow(),
      sub: this.nc.subscribe(subject, {
        callback: (err, msg) => {
          if (err !== null) {
            this.warnings.warn(`sub-${key}`, { err, channel: key }, 'live subscription error');
            return;
          }
          this.onLive(group, msg);
        },
      }),
    };
    return group;
  }

  private onLive(group: Group, msg: Msg): void {
    if (this.hold.held()) return this.hold.wait(() => this.onLive(group, msg));
    if (group.backlog !== null) {
      group.backlog.push(msg);
      return;
    }
    const live = republished(msg);
    if (live === null) {
      this.metrics.framesDropped.inc({ reason: 'not_republished' });
      this.warnings.warn(`forged-${group.key}`, { channel: group.key, subject: msg.subject }, 'dropped a live message JetStream did not republish (a consumer delivering to the live subjects?)');
      return;
    }
    const { headers: h, seq, previous, subject } = live;
    const known = group.lastBySubject.get(subject);
    if (known !== undefined && seq <= known) return;
    if (known !== undefined && previous > known) {
      group.backlog = [msg];
      void this.fillGap(group, subject, known + 1, seq - 1);
      return;
    }
    // A bridge's window hears every subject: what precedes its first frame is the stream's, not the subject's.
    this.dispatch(group, subject, seq, frameFromMessage(h, msg.data, seq, subject, this.metaShape), group.key === ALL_CHANNELS ? seq - 1 : previous, h);
  }

  /** `previous`: the sequence before this one on its subject (live), null when not known (read from the log). */
  private dispatch(group: Group, subject: string, seq: number, frame: Frame | null, previous: number | null, headers: MsgHdrs | undefined): void {
    group.lastBySubject.set(subject, seq);
    if (seq > group.lastSeq) group.lastSeq = seq;
    if (frame === null) {
      group.window.heard(seq, previous);
      return;
    }
    this.windows.record(group.window, frame, previous);
    const heard = fanOut(group.streams, frame, deliveryContext(this.tracer, headers), this.tracer, group.key);
    if (heard && frame.publishedAt > 0) this.flusher.heard(frame);
  }

  private async fillGap(group: Group, subject: string, from: number, until: number): Promise<void> {
    try {
      const n = await this.readIntoGroup(group, subject, () => Math.max(from, (group.lastBySubject.get(subject) ?? 0) + 1), until);
      this.logger.info({ channel: group.key, from, until, filled: n }, 'filled a gap in the live feed from the log');
    } catch (err) {
      this.logger.error({ err, channel: group.key, from, until }, 'could not fill a gap in the live feed; frames were skipped');
      group.lastBySubject.set(subject, until);
      group.window.skipTo(until);
    }
    this.drainBacklog(group);
  }

  /** After a NATS reconnect, read what every group may have missed while the subscription was down. */
  async catchUp(): Promise<void> {
    await Promise.all(
      [...this.groups.values()].map(async (group) => {
        if (group.lastSeq === 0 || group.backlog !== null) return;
        group.backlog = [];
        try {
          await this.readIntoGroup(group, group.filter, () => group.lastSeq + 1, null);
        } catch (err) {
          this.logger.error({ err, channel: group.key }, 'catch-up after reconnect failed; later gaps are still filled');
          group.window.forget();
        }
        this.drainBacklog(group);
      }),
    );
  }

  /**
   * Reads a range of the log into a group, retrying while the log cannot be read (a NATS node down,
   * a leader being elected): giving up early would lose frames the client can never get back live.
   * `from` is re-evaluated on each attempt, so a retry continues where the last one stopped.
   */
  private async readIntoGroup(group: Group, filter: string, from: () => number, until: number | null): Promise<number> {
    const deadline = Date.now() + RECOVERY_DEADLINE_MS;
    let delay = 250;
    let total = 0;
    for (;;) {
      try {
        const fromSeq = from();
        if (until !== null && until < fromSeq) return total;
        total += await readRange(this.js, { filter, start: fromSequence(fromSeq), untilSeq: until }, (m) => {
          if (m.seq > (group.lastBySubject.get(m.subject) ?? 0)) {
            this.dispatch(group, m.subject, m.seq, frameFromMessage(m.headers, m.data, m.seq, m.subject, this.metaShape), null, m.headers);
          }
        });
        if (total > 0) this.metrics.gapsFilled.inc(total);
        return total;
      } catch (err) {
        if (Date.now() > deadline) throw err;
        this.warnings.warn(`recover-${group.key}`, { err, channel: group.key }, 'the log cannot be read yet; retrying');
        await new Promise((r) => setTimeout(r, delay));
        delay = Math.min(delay * 2, 2000);
      }
    }
  }

  private drainBacklog(group: Group): void {
    const backlog = group.backlog ?? [];
    group.backlog = null;
    for (const m of backlog) this.onLive(group, m);
  }

  /** The resume window of the stream's group, and whether it is whole now (no gap being filled). */
  windowOf(stream: ClientStream): { window: ChannelWindow; whole: boolean } | null {
    const group = this.groups.get(stream.channel ?? ALL_CHANNELS);
    return group === undefined ? null : { window: group.window, whole: group.backlog === null };
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
    for (const g of this.groups.values()) {
      g.sub.unsubscribe();
      this.windows.drop(g.window);
    }
    this.groups.clear();
    this.metrics.channelSubscriptions.set(0);
  }
}
