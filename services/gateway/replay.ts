// Last-Event-ID: what a resuming stream missed, read from the log with the same delivery rules, while
// its live frames wait (the stream holds them); then the held frames follow, skipping what the
// replay sent, so the client sees no gap and no duplicate. Beyond retention it resumes from the
// oldest kept frame, and says so.

import type { JetStreamClient } from '@nats-io/jetstream';
import type { Counter } from 'prom-client';
import type { Logger } from '../core/logger.js';
import { channelSubject, STREAM_SUBJECTS } from '../core/subjects.js';
import type { ClientStream } from './client-stream.js';
import { CloseReason } from './close-reason.js';
import { hears } from './delivery-rules.js';
import { frameFromMessage } from './frame.js';
import { logBounds, readLog } from './log-reader.js';
import { encodeComment } from './sse.js';

/**
 * Sends what the client missed since `lastId`, then releases the held live frames. `beyondRetention`
 * counts resumes that asked for more than the log keeps (retention too short for clients' absences).
 */
export async function replay(js: JetStreamClient, logger: Logger, stream: ClientStream, lastId: number, beyondRetention: Counter): Promise<void> {
  try {
    const bounds = await logBounds(js);
    if (lastId + 1 < bounds.first) {
      beyondRetention.inc();
      stream.writeRaw(encodeComment(`frames after ${lastId} up to ${bounds.first - 1} are no longer kept; resuming from ${bounds.first}`));
    }
    const filter = stream.channel === null ? STREAM_SUBJECTS : channelSubject(stream.channel);
    // A client that leaves mid-replay stops the read: nothing more is read for it.
    await readLog(js, { filter, fromSeq: lastId + 1, untilSeq: null }, (m) => {
      if (stream.closed) return false;
      const frame = frameFromMessage(m.headers, m.data, m.seq);
      if (frame !== null && hears(stream, frame)) stream.deliverReplayed(frame);
      return true;
    });
  } catch (err) {
    logger.warn({ err }, 'replay from Last-Event-ID failed');
    stream.close(CloseReason.Error);
    return;
  }
  if (!stream.closed) stream.releaseHeld();
}
