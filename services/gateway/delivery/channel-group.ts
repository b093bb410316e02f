// One channel's group on this gateway: the core subscription to its live subject, the streams that
// hear it, and what keeps its feed whole. RePublish headers carry the previous sequence of the
// subject, so a message lost on the way (a reconnect, a slow route) shows up as a gap: live messages
// wait, in order, while it is read from the log; after a reconnect the same read starts from the
// last sequence dispatched. Every frame dispatched also enters the group's resume window
// (resume-window.ts), and is fanned out to its streams (fan-out.ts).

import type { JetStreamManager } from '@nats-io/jetstream';
import type { Msg, MsgHdrs, NatsConnection, Subscription } from '@nats-io/nats-core';
import type { Tracer } from '@opentelemetry/api';
import type { MetaShape } from '../../../schemas/meta.js';
import { guarded } from '../../core/guarded-callback.js';
import { walkLog } from '../../core/log-walk.js';
import type { Logger, ThrottledWarnings } from '../../core/logger.js';
import type { RelayMetrics } from '../../core/metrics.js';
import { channelSubject, LIVE_ALL_CHANNELS, liveSubject, STREAM_NAME, STREAM_SUBJECTS } from '../../core/subjects.js';
import { ChannelWindow, type ResumeWindows } from './resume-window.js';
import type { ClientStream } from '../stream/client-stream.js';
import type { TurnFlusher } from '../stream/turn-flusher.js';
import { deliveryContext, fanOut } from './fan-out.js';
import { frameFromMessage, type Frame } from './frame.js';
import type { LiveHold } from './live-hold.js';
import { republished } from './republished.js';

/** Key of the group of bridge streams that hear every channel. */
export const ALL_CHANNELS = '*';

/** How long a gap fill or catch-up keeps retrying while the log cannot be read. */
const RECOVERY_DEADLINE_MS = 120_000;

/** What every group of a gateway shares: one object for all rather than fields on each. */
export interface GroupContext {
  /** Reads the log by message gets: a gateway may not create consumers (core/log-walk.ts). */
  readonly jsm: JetStreamManager;
  readonly logger: Logger;
  readonly warnings: ThrottledWarnings;
  readonly metrics: RelayMetrics;
  readonly windows: ResumeWindows;
  readonly flusher: TurnFlusher;
  /** Null while tracing is off. */
  readonly tracer: Tracer | null;
  readonly metaShape: MetaShape;
  /** While held, live messages wait (live-hold.ts). */
  readonly hold: LiveHold;
}

export class ChannelGroup {
  readonly key: string;
  readonly streams = new Set<ClientStream>();
  readonly window = new ChannelWindow();
  private readonly context: GroupContext;
  /** Log subject filter for catch-up reads. */
  private readonly filter: string;
  private readonly sub: Subscription;
  /** Last sequence dispatched per log subject (gap detection). */
  private readonly lastBySubject = new Map<string, number>();
  /** Highest sequence dispatched on any subject (catch-up after a reconnect). */
  private lastSeq = 0;
  /** While a gap is being filled, live messages wait here, in order. */
  private backlog: Msg[] | null = null;

  constructor(key: string, nc: NatsConnection, context: GroupContext) {
    this.key = key;
    this.context = context;
    this.filter = key === ALL_CHANNELS ? STREAM_SUBJECTS : channelSubject(key);
    this.sub = nc.subscribe(key === ALL_CHANNELS ? LIVE_ALL_CHANNELS : liveSubject(key), {
      callback: guarded(
        (err, msg) => {
          if (err !== null) {
            context.warnings.warn(`sub-${key}`, { err, channel: key }, 'live subscription error');
            return;
          }
          this.onLive(msg);
        },
        (err, subject) => context.warnings.warn(`threw-${key}`, { err, channel: key, subject }, 'delivering a live message failed; the channel goes on'),
      ),
    });
  }

  /** No gap is being filled: the window holds everything it says it covers. */
  get whole(): boolean {
    return this.backlog === null;
  }

  private onLive(msg: Msg): void {
    const { hold, metrics, warnings, metaShape } = this.context;
    if (hold.held()) return hold.wait(() => this.onLive(msg));
    if (this.backlog !== null) {
      this.backlog.push(msg);
      return;
    }
    const live = republished(msg);
    if (live === null) {
      metrics.framesDropped.inc({ reason: 'not_republished' });
      warnings.warn(`forged-${this.key}`, { channel: this.key, subject: msg.subject }, 'dropped a live message JetStream did not republish (a consumer delivering to the live subjects?)');
      return;
    }
    const { headers: h, seq, previous, subject } = live;
    const known = this.lastBySubject.get(subject);
    if (known !== undefined && seq <= known) return;
    if (known !== undefined && previous > known) {
      this.backlog = [msg];
      void this.fillGap(subject, known + 1, seq - 1);
      return;
    }
    // A bridge's window hears every subject: what precedes its first frame is the stream's, not the subject's.
    this.dispatch(subject, seq, frameFromMessage(h, msg.data, seq, subject, metaShape), this.key === ALL_CHANNELS ? seq - 1 : previous, h);
  }

  /** `previous`: the sequence before this one on its subject (live), null when not known (read from the log). */
  private dispatch(subject: string, seq: number, frame: Frame | null, previous: number | null, headers: MsgHdrs | undefined): void {
    this.lastBySubject.set(subject, seq);
    if (seq > this.lastSeq) this.lastSeq = seq;
    if (frame === null) {
      this.window.heard(seq, previous);
      return;
    }
    const { windows, tracer, flusher } = this.context;
    windows.record(this.window, frame, previous);
    const heard = fanOut(this.streams, frame, deliveryContext(tracer, headers), tracer, this.key);
    if (heard && frame.publishedAt > 0) flusher.heard(frame);
  }

  private async fillGap(subject: string, from: number, until: number): Promise<void> {
    const { logger } = this.context;
    try {
      const n = await this.readLog(subject, () => Math.max(from, (this.lastBySubject.get(subject) ?? 0) + 1), until);
      logger.info({ channel: this.key, from, until, filled: n }, 'filled a gap in the live feed from the log');
    } catch (err) {
      logger.error({ err, channel: this.key, from, until }, 'could not fill a gap in the live feed; frames were skipped');
      this.lastBySubject.set(subject, until);
      this.window.skipTo(until);
    }
    this.drainBacklog();
  }

  /** After a NATS reconnect: reads what the group may have missed while the subscription was down. */
  async catchUp(): Promise<void> {
    if (this.lastSeq === 0 || this.backlog !== null) return;
    this.backlog = [];
    try {
      await this.readLog(this.filter, () => this.lastSeq + 1, null);
    } catch (err) {
      this.context.logger.error({ err, channel: this.key }, 'catch-up after reconnect failed; later gaps are still filled');
      this.window.forget();
    }
    this.drainBacklog();
  }

  /**
   * Reads a range of the log into the group, retrying while the log cannot be read (a NATS node down,
   * a leader being elected): giving up early would lose frames the client can never get back live.
   * `from` is re-evaluated on each attempt, so a retry continues where the last one stopped.
   */
  private async readLog(filter: string, from: () => number, until: number | null): Promise<number> {
    const { jsm, metrics, warnings, metaShape } = this.context;
    const deadline = Date.now() + RECOVERY_DEADLINE_MS;
    let delay = 250;
    let total = 0;
    for (;;) {
      try {
        const fromSeq = from();
        // A catch-up reads to the log's end as the attempt begins: later frames reach the group live
        // (its backlog), and one get after another could chase a busy log for ever.
        const end = until ?? (await jsm.streams.info(STREAM_NAME)).state.last_seq;
        if (end < fromSeq) return total;
        // The every-channel group's filter takes every message of the log: read a window of gets at a time.
        total += await walkLog(jsm, { stream: STREAM_NAME, filter, fromSeq, untilSeq: end, everySubject: filter === STREAM_SUBJECTS }, (m) => {
          if (m.seq > (this.lastBySubject.get(m.subject) ?? 0)) {
            this.dispatch(m.subject, m.seq, frameFromMessage(m.headers, m.data, m.seq, m.subject, metaShape), null, m.headers);
          }
        });
        if (total > 0) metrics.gapsFilled.inc(total);
        return total;
      } catch (err) {
        if (Date.now() > deadline) throw err;
        warnings.warn(`recover-${this.key}`, { err, channel: this.key }, 'the log cannot be read yet; retrying');
        await new Promise((r) => setTimeout(r, delay));
        delay = Math.min(delay * 2, 2000);
      }
    }
  }

  private drainBacklog(): void {
    const backlog = this.backlog ?? [];
    this.backlog = null;
    for (const m of backlog) this.onLive(m);
  }

  /** Stops hearing the channel; the window's frames stop counting against the budget. */
  close(): void {
    this.sub.unsubscribe();
    this.context.windows.drop(this.window);
  }
}
