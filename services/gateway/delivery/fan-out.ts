// A gateway's part of a message's trace: one `deliver` span per sampled message it receives, a child
// of the ingress's publish span (its context rides in the NATS headers), saying what the local
// fan-out did with it. Unsampled messages (and every message while tracing is off) take the plain
// loop: no span, no counting, no header parsed beyond a `has`.

import { SpanKind, type Context, type Tracer } from '@opentelemetry/api';
import type { MsgHdrs } from '@nats-io/nats-core';
import { sampledContext } from '../../core/tracing.js';
import type { ClientStream } from '../stream/client-stream.js';
import { hears } from './delivery-rules.js';
import type { Frame } from './frame.js';

/**
 * What became of a frame handed to a stream: queued, queued in place of an older presence snapshot
 * of its sender, dropped with the stream closed as a slow consumer, or skipped (the stream ended, or
 * had the frame already).
 */
export type Queued = 'queued' | 'coalesced' | 'dropped' | 'skipped';

/** The deliver span's counts, one attribute each. */
export const DeliverAttr = {
  /** Streams the frame was queued for (coalesced ones included). */
  heard: 'relay.streams.heard',
  /** Streams of the channel the delivery rules kept it from (scopes, DM addressing). */
  filtered: 'relay.streams.filtered',
  /** Streams where it replaced an older waiting presence snapshot of the same sender. */
  coalesced: 'relay.streams.coalesced',
  /** Streams it pushed past STREAM_QUEUE_MAX_BYTES: closed as slow consumers, the frame not sent. */
  dropped: 'relay.streams.dropped_slow',
  /** Streams that had it already (a resume replay sent it) or had just ended. */
  skipped: 'relay.streams.skipped',
} as const;

/** Fans a frame out to a group's streams; returns whether any stream heard it. */
export function fanOut(streams: Iterable<ClientStream>, frame: Frame, traced: Context | null, tracer: Tracer | null, channel: string): boolean {
  if (traced === null || tracer === null) {
    let heard = false;
    for (const s of streams) {
      if (hears(s, frame)) {
        s.deliver(frame);
        heard = true;
      }
    }
    return heard;
  }
  const span = tracer.startSpan(
    'deliver',
    {
      kind: SpanKind.CONSUMER,
      attributes: { 'messaging.system': 'nats', 'messaging.operation.type': 'process', 'relay.channel': channel, 'relay.sequence': frame.seq },
    },
    traced,
  );
  const counts = { queued: 0, coalesced: 0, dropped: 0, skipped: 0, filtered: 0 };
  for (const s of streams) {
    if (hears(s, frame)) counts[s.deliver(frame)]++;
    else counts.filtered++;
  }
  span.setAttributes({
    [DeliverAttr.heard]: counts.queued + counts.coalesced,
    [DeliverAttr.filtered]: counts.filtered,
    [DeliverAttr.coalesced]: counts.coalesced,
    [DeliverAttr.dropped]: counts.dropped,
    [DeliverAttr.skipped]: counts.skipped,
  });
  span.end();
  return counts.queued + counts.coalesced + counts.dropped + counts.skipped > 0;
}

/** The sampled trace a received message continues, or null (tracing off, untraced, unsampled). */
export function deliveryContext(tracer: Tracer | null, headers: MsgHdrs | undefined): Context | null {
  return tracer === null ? null : sampledContext(headers);
}
