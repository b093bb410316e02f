// One channel's group on this gateway: the core subscription to its live subject, the streams that
// hear it, and what keeps its feed whole. RePublish headers carry the previous sequence of the
// subject, so a message lost on the way (a reconnect, a slow route) shows up as a gap: live messages
// wait, in order, while it is read from the log; after a reconnect the same read starts from the
// last sequence dispatched. Every frame dispatched also enters the group's resume window
// (resume-window.ts), and is fanned out to its streams (fan-out.ts).
//
// With regions (docs/REGIONS.md) the group hears every region's log (heard-logs.ts): gaps are per
// region's subject as before, reads go to this region's copy of the log, and the group's position
// (the last sequence dispatched in each region) is every frame's id. A new group reads where its
// channel is in each region before it subscribes (group-start.ts); its streams are told they hear
// the channel once the server has the subscription (`hearing`). Regions keep no resume window: a
// resume reads the copies (resume/region-replay.ts).

import type { Msg, NatsConnection, Subscription } from '@nats-io/nats-core';
import type { WalkedMsg } from '../../core/log-walk.js';
import { followCopies, readSinceStart, startingPoints, type GroupStartContext } from './group-start.js';
import { subscribeLive } from './live-subscription.js';
import { LIVE_PREFIX } from '../../core/subjects.js';
import { LogPosition } from '../stream/log-position.js';
import type { GroupContext } from './group-context.js';
import type { HeardLog } from './heard-logs.js';
import { readRange } from './log-range.js';
import { ChannelWindow } from './resume-window.js';
import type { ClientStream } from '../stream/client-stream.js';
import { deliveryContext, fanOut } from './fan-out.js';
import { frameFromMessage } from './frame.js';
import { republished } from './republished.js';

/** Key of the group of bridge streams that hear every channel. */
export const ALL_CHANNELS = '*';

export class ChannelGroup {
  readonly key: string;
  readonly streams = new Set<ClientStream>();
  readonly window = new ChannelWindow();
  /** The last sequence dispatched in each log (catch-up, and with regions every frame's id). */
  readonly position = new LogPosition();
  /** Settles once the group knows where its channel is in every log (at once without regions); never rejects. */
  readonly started: Promise<void>;
  /** Settles once the server has the subscription: from then on nothing stored on the channel is missed. */
  readonly hearing: Promise<void>;
  /** Settles once what was stored since the start has been read and the held live frames went on; never rejects. */
  readonly caughtUp: Promise<void>;
  private readonly context: GroupContext;
  /** The channel, null for every channel (the bridges' group). */
  private readonly channel: string | null;
  private sub: Subscription | null = null;
  /** Last sequence dispatched per stored subject (gap detection). */
  private readonly lastBySubject = new Map<string, number>();
  /** While a gap is being filled, live messages wait here, in order. */
  private backlog: Msg[] | null = null;
  /**
   * With regions, a channel's gap holds only its own region's messages (one subject per region):
   * a copy waiting for a link that dropped again must not stop the other regions' frames.
   */
  private readonly regionHeld = new Map<string, Msg[]>();
  /** A catch-up asked for while the backlog was held (its region; null: every log): run once it drains. */
  private catchUpWanted: string | null | undefined;
  /** With regions: logs whose start could not be read and nothing has been heard of since (no catch-up from 0). */
  private readonly unstarted = new Set<string>();
  private closed = false;
  private heard = false;

  constructor(key: string, nc: NatsConnection, context: GroupContext) {
    this.key = key;
    this.context = context;
    this.channel = key === ALL_CHANNELS ? null : key;
    if (context.logs.regional) {
      this.started = this.start();
      this.hearing = this.started.then(() => this.subscribeFromStart(nc));
      const readSinceStart = (): Promise<void> => this.readSinceStart();
      this.caughtUp = this.hearing.then(readSinceStart, readSinceStart).catch((err: unknown) => context.logger.error({ err, channel: key }, "reading what a new group's channel stored as it subscribed failed"));
    } else {
      this.subscribe(nc);
      this.started = Promise.resolve();
      this.hearing = nc.flush();
      this.caughtUp = this.hearing.then(undefined, () => undefined);
    }
    // A flush refused by a reconnect fails the streams waiting for it; later ones need not wait, as
    // the reconnect's catch-up reads what the subscription missed (silence-recovery.ts).
    this.hearing = this.hearing.finally(() => void (this.heard = true));
  }

  /** Whether the server has the subscription (a stream joining need not wait for `hearing`). */
  get isHearing(): boolean {
    return this.heard;
  }

  /** From here on every frame stored on the channel reaches the group. */
  private subscribe(nc: NatsConnection): void {
    if (this.closed) return;
    this.sub = subscribeLive(nc, this.context.logs.liveSubject(this.channel), this.key, this.context.warnings, (msg) => this.onLive(msg));
  }

  /** No gap is being filled: the window holds everything it says it covers. */
  get whole(): boolean {
    return this.backlog === null;
  }

  /** What group-start.ts reads with; built when read, as without regions no group reads it. */
  private get startContext(): GroupStartContext {
    return { ...this.context, channel: this.channel, key: this.key };
  }

  /** Where the channel is in each region's log as this region holds it: the group starts there. */
  private async start(): Promise<void> {
    const points = await startingPoints(this.startContext);
    for (const log of this.context.logs.all()) {
      const seq = points.get(log);
      // Not read: its frames still come live; an id then names the region from its first frame heard.
      if (seq === undefined) this.unstarted.add(log.region);
      else this.position.advance(log.region, seq);
      // 0 too: a channel's first frame heard after one it missed (not yet at the origin's link) is a gap.
      if (seq !== undefined && this.channel !== null) this.lastBySubject.set(this.context.logs.filter(log, this.channel), seq);
    }
  }

  /** With regions: subscribes; live frames wait until what was stored since the start's reads is read. */
  private async subscribeFromStart(nc: NatsConnection): Promise<void> {
    this.backlog = [];
    this.subscribe(nc);
    await nc.flush();
  }

  /** The live frames wait meanwhile (the backlog); then a copy behind its origin is followed. */
  private async readSinceStart(): Promise<void> {
    const o = this.startContext;
    const started = this.context.logs.all().filter((l) => !this.unstarted.has(l.region));
    const read = (log: HeardLog, stopped: () => boolean): Promise<number> => this.read(log, o.logs.filter(log, this.channel), () => this.position.get(log.region) + 1, null, stopped);
    await readSinceStart(o, started, read, () => this.closed);
    this.drainBacklog();
    followCopies(o, started, (r) => this.position.get(r), () => this.closed, (r) => this.catchUp(r));
  }

  private onLive(msg: Msg): void {
    const { hold, metrics, warnings, logs } = this.context;
    // Before any other wait: a held region's later messages stay behind its held ones, in its order.
    const waiting = this.regionHeld.size === 0 ? undefined : this.regionHeld.get(logs.logOf(msg.subject.slice(LIVE_PREFIX.length))?.region ?? '');
    if (waiting !== undefined) {
      waiting.push(msg);
      return;
    }
    if (hold.held()) return hold.wait(() => this.onLive(msg));
    if (this.backlog !== null) {
      this.backlog.push(msg);
      return;
    }
    const live = republished(msg);
    const log = live === null ? null : logs.logOf(live.subject);
    if (live === null || log === null) {
      metrics.framesDropped.inc({ reason: 'not_republished' });
      warnings.warn(`forged-${this.key}`, { channel: this.key, subject: msg.subject }, 'dropped a live message JetStream did not republish (a consumer delivering to the live subjects?)');
      return;
    }
    const { headers: h, seq, previous, subject } = live;
    const known = this.lastBySubject.get(subject);
    if (known !== undefined && seq <= known) return;
    if (known !== undefined && previous > known) {
      const own = logs.regional && this.channel !== null;
      if (own) this.regionHeld.set(log.region, [msg]);
      else this.backlog = [msg];
      void this.fillGap(log, subject, known + 1, seq - 1, own);
      return;
    }
    // A bridge's window hears every subject: what precedes its first frame is the stream's, not the subject's.
    this.dispatch(log, { seq, subject, headers: h, data: msg.data }, this.channel === null ? seq - 1 : previous);
  }

  /** `previous`: the sequence before this one on its subject (live), null when not known (read from the log). */
  private dispatch(log: HeardLog, m: WalkedMsg, previous: number | null): void {
    const { seq, subject, headers } = m;
    this.lastBySubject.set(subject, seq);
    this.position.advance(log.region, seq);
    if (this.unstarted.size > 0) this.unstarted.delete(log.region);
    const { windows, tracer, flusher, metaShape, logs } = this.context;
    const place = logs.regional ? { region: log.region, position: this.position.copy(), order: logs.order } : null;
    const frame = frameFromMessage(headers, m.data, seq, logs.oneLogSubject(log, subject), metaShape, place);
    if (frame === null) {
      if (place === null) this.window.heard(seq, previous);
      return;
    }
    if (place === null) windows.record(this.window, frame, previous);
    const heard = fanOut(this.streams, frame, deliveryContext(tracer, headers), tracer, this.key);
    if (heard && frame.publishedAt > 0) flusher.heard(frame);
  }

  /** `own`: only the log's region waits (regionHeld), not the whole group. */
  private async fillGap(log: HeardLog, subject: string, from: number, until: number, own: boolean): Promise<void> {
    const { logger } = this.context;
    try {
      const n = await this.read(log, subject, () => Math.max(from, (this.lastBySubject.get(subject) ?? 0) + 1), until);
      logger.info({ channel: this.key, from, until, filled: n }, 'filled a gap in the live feed from the log');
    } catch (err) {
      logger.error({ err, channel: this.key, from, until }, 'could not fill a gap in the live feed; frames were skipped');
      this.lastBySubject.set(subject, Math.max(until, this.lastBySubject.get(subject) ?? 0));
      if (!this.context.logs.regional) this.window.skipTo(until);
    }
    if (!own) return this.drainBacklog();
    const held = this.regionHeld.get(log.region) ?? [];
    this.regionHeld.delete(log.region);
    this.release(held);
  }

  /** Messages that waited, each taken as if it arrived now; one that fails costs itself only. */
  private release(msgs: readonly Msg[]): void {
    const { hold } = this.context;
    // During a hold they go before what the hold queued: every message it queued arrived after them.
    if (msgs.length > 0 && hold.held()) return hold.waitBefore(msgs.map((m) => () => this.releaseOne(m)));
    for (const m of msgs) this.releaseOne(m);
  }

  private releaseOne(m: Msg): void {
    try {
      this.onLive(m);
    } catch (err) {
      this.context.warnings.warn(`threw-${this.key}`, { err, channel: this.key, subject: m.subject }, 'delivering a live message failed; the channel goes on');
    }
  }

  /**
   * Reads what the group may have missed in each log (`only`: in one region's) while its
   * subscription was down: after a NATS reconnect, or a region's link back (region-links.ts).
   */
  async catchUp(only: string | null = null): Promise<void> {
    await this.started;
    if (this.backlog !== null) {
      // A gap is being filled: the catch-up follows it (dropped, a link's return would go unread).
      this.catchUpWanted = this.catchUpWanted === undefined || this.catchUpWanted === only ? only : null;
      return;
    }
    this.backlog = [];
    await this.readLogs(only);
    this.drainBacklog();
  }

  /** Reads each log (`only`: one region's) from the group's position on; a failure is logged. */
  private async readLogs(only: string | null): Promise<void> {
    const { logs, logger } = this.context;
    for (const log of logs.all()) {
      if (only !== null && log.region !== only) continue;
      // Nothing known of that log: a read from its start would send the channel's whole history.
      if (logs.regional ? this.unstarted.has(log.region) : this.position.get(log.region) === 0) continue;
      try {
        await this.read(log, logs.filter(log, this.channel), () => this.position.get(log.region) + 1, null);
      } catch (err) {
        logger.error({ err, channel: this.key, log: log.stream }, 'a catch-up (after a reconnect or a region link back) failed; later gaps are still filled');
        if (!logs.regional) this.window.forget();
      }
    }
  }

  /** Reads a range of one log into the group, skipping what it has (log-range.ts retries and waits). */
  private async read(log: HeardLog, filter: string, from: () => number, until: number | null, stopped?: () => boolean): Promise<number> {
    const { jsm, metrics, warnings } = this.context;
    const n = await readRange(jsm, { log, filter, from, until, ...(stopped === undefined ? {} : { stopped }) }, warnings, this.key, (m) => {
      if (m.seq > (this.lastBySubject.get(m.subject) ?? 0)) this.dispatch(log, m, null);
    });
    if (n > 0) metrics.gapsFilled.inc(n);
    return n;
  }

  private drainBacklog(): void {
    const backlog = this.backlog ?? [];
    this.backlog = null;
    this.release(backlog);
    // Still held when the backlog began another gap fill: the next drain runs it.
    const wanted = this.catchUpWanted;
    if (wanted === undefined || this.backlog !== null) return;
    this.catchUpWanted = undefined;
    void this.catchUp(wanted);
  }

  /** Stops hearing the channel; the window's frames stop counting against the budget. */
  close(): void {
    this.closed = true;
    this.sub?.unsubscribe();
    this.context.windows.drop(this.window);
  }
}
