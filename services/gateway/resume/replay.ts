// Last-Event-ID: what a resuming stream missed, with the same delivery rules, while its live frames
// wait (the stream holds them); then the held frames follow, skipping what the replay sent, so the
// client sees no gap and no duplicate.
//
// What it costs (DESIGN.md section 6): the stream's group already hears the channel, so when its
// resume window covers the client's Last-Event-ID (the newest frame, or a short gap) the answer
// comes from memory with no JetStream request. A channel this gateway has heard nothing of yet
// costs one request for its newest frame (no consumer), shared by every stream resuming on it
// meanwhile. Only a gap older than the window reads the log, by one message get after another (no
// consumer: log-walk.ts). Beyond retention it resumes from the oldest kept frame, and says so.

import type { JetStreamManager } from '@nats-io/jetstream';
import type { Tracer } from '@opentelemetry/api';
import { walkLog } from '../../core/log-walk.js';
import { ThrottledWarnings, type Logger } from '../../core/logger.js';
import type { EventPosition } from '../../../schemas/event-id.js';
import type { HeardLogs } from '../delivery/heard-logs.js';
import { LogPosition } from '../stream/log-position.js';
import { replayRegions } from './region-replay.js';
import type { RelayMetrics } from '../../core/metrics.js';
import { channelSubject, STREAM_NAME, STREAM_SUBJECTS } from '../../core/subjects.js';
import type { ChannelHub } from '../delivery/channel-hub.js';
import type { ClientStream } from '../stream/client-stream.js';
import { CloseReason } from '../stream/close-reason.js';
import { hears } from '../delivery/delivery-rules.js';
import { frameFromMessage } from '../delivery/frame.js';
import type { ChannelWindow } from '../delivery/resume-window.js';
import { ReplayTrace } from './replay-trace.js';
import { encodeComment } from '../stream/sse.js';

export interface ReplayOptions {
  jsm: JetStreamManager;
  hub: ChannelHub;
  logger: Logger;
  metrics: RelayMetrics;
  /** Null while tracing is off. */
  tracer: Tracer | null;
  logs: HeardLogs;
}

export class Replayer {
  private readonly o: ReplayOptions;
  /** Look-ups of a cold channel's newest frame under way, each shared by the streams resuming on it meanwhile. */
  private readonly lookups = new WeakMap<ChannelWindow, Promise<void>>();
  private readonly warnings: ThrottledWarnings;

  constructor(options: ReplayOptions) {
    this.o = options;
    this.warnings = new ThrottledWarnings(options.logger);
  }

  /** Sends what the client missed since its Last-Event-ID, then the live frames held meanwhile. */
  async replay(stream: ClientStream, position: EventPosition): Promise<void> {
    if (position.kind === 'single') return this.replayOneLog(stream, position.seq);
    const { metrics, logger } = this.o;
    try {
      await replayRegions(stream, LogPosition.of(position), { ...this.o, warnings: this.warnings });
      metrics.resumes.inc({ answered: 'log' });
    } catch (err) {
      logger.warn({ err }, 'replay from Last-Event-ID failed');
      stream.close(CloseReason.Error);
      return;
    }
    if (!stream.closed) stream.releaseLiveFrames();
  }

  private async replayOneLog(stream: ClientStream, lastId: number): Promise<void> {
    const { hub, metrics, logger } = this.o;
    const traced = ReplayTrace.start(this.o.tracer, stream.channel, lastId);
    try {
      const joined = hub.windowOf(stream);
      if (joined !== null && joined.window.cold) await this.learnNewest(stream, joined.window);
      // Taken again: a gap fill may have begun while the look-up ran.
      const now = hub.windowOf(stream);
      const ahead = now !== null && now.whole && !now.window.covers(lastId) && now.window.follows(lastId);
      // The client is ahead of this gateway: the id must name a frame the log has (not one of a log
      // since replaced, or made up), or no frame would reach it until the log grew past it.
      const upTo = ahead ? await this.knownUpTo(lastId) : lastId;
      const answer = ahead ? hub.windowOf(stream) : now;
      if (stream.closed) {
        traced?.end('client_left');
        return;
      }
      if (answer !== null && answer.whole && answer.window.follows(upTo)) {
        for (const f of answer.window.since(upTo)) {
          if (!hears(stream, f)) continue;
          stream.deliverReplayed(f);
          traced?.sent(f.seq, undefined);
        }
        // Held frames up to the client's id were seen already, and those still on their way here
        // (an id past the newest heard) are dropped as they arrive.
        stream.resumeAfter(upTo);
        metrics.resumes.inc({ answered: 'memory' });
        traced?.end('memory');
      } else {
        await this.replayFromLog(stream, lastId, traced);
        metrics.resumes.inc({ answered: 'log' });
        traced?.end('log');
      }
    } catch (err) {
      logger.warn({ err }, 'replay from Last-Event-ID failed');
      traced?.failed(err);
      stream.close(CloseReason.Error);
      return;
    }
    if (!stream.closed) stream.releaseLiveFrames();
  }

  /**
   * A channel heard of nothing yet: its newest stored frame (one request, no consumer). The group is
   * subscribed already, so every later frame reaches the window: from here on the window covers it.
   */
  private learnNewest(stream: ClientStream, window: ChannelWindow): Promise<void> {
    const under = this.lookups.get(window);
    if (under !== undefined) return under;
    const { jsm, metrics } = this.o;
    const lookup = (async () => {
      metrics.resumeLookups.inc();
      const newest =
        stream.channel === null
          ? (await jsm.streams.info(STREAM_NAME)).state.last_seq
          : ((await jsm.direct.getMessage(STREAM_NAME, { last_by_subj: channelSubject(stream.channel) }))?.seq ?? 0);
      window.learn(newest);
    })().finally(() => this.lookups.delete(window));
    this.lookups.set(window, lookup);
    return lookup;
  }

  /** `lastId`, or the log's newest sequence when the id is past it (one request, no consumer). */
  private async knownUpTo(lastId: number): Promise<number> {
    this.o.metrics.resumeLookups.inc();
    return Math.min(lastId, (await this.o.jsm.streams.info(STREAM_NAME)).state.last_seq);
  }

  /** A gap older than the window: read from the log, message by message (no consumer). */
  private async replayFromLog(stream: ClientStream, lastId: number, traced: ReplayTrace | null): Promise<void> {
    const { jsm, metrics, hub } = this.o;
    const info = await jsm.streams.info(STREAM_NAME);
    const { first_seq: first, last_seq: last } = info.state;
    if (lastId + 1 < first) {
      // Retention shorter than clients' absences: the alert on this counter says so.
      metrics.replaysBeyondRetention.inc();
      stream.writeRaw(encodeComment(`frames after ${lastId} up to ${first - 1} are no longer kept; resuming from ${first}`));
    }
    stream.resumeAfter(Math.min(lastId, last));
    if (lastId >= last) return;
    const filter = stream.channel === null ? STREAM_SUBJECTS : channelSubject(stream.channel);
    // Everything after `last` reaches the stream live; a client that leaves mid-replay stops the read.
    const walk = { stream: STREAM_NAME, filter, fromSeq: lastId + 1, untilSeq: last, everySubject: stream.channel === null };
    await walkLog(jsm, walk, (m) => {
      if (stream.closed) return false;
      const frame = frameFromMessage(m.headers, m.data, m.seq, m.subject, hub.metaShape);
      if (frame !== null && hears(stream, frame)) {
        stream.deliverReplayed(frame);
        traced?.sent(m.seq, m.headers);
      }
      return true;
    });
  }
}
