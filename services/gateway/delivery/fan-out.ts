// The fan-out: a frame handed to each stream of its group that the delivery rules let hear it
// (delivery-rules.ts). A sampled message also gets the gateway's part of its trace: one `deliver`
// span, a child of the ingress's publish span (its context rides in the NATS headers), saying what
// the fan-out did with it. Unsampled messages (and every message while tracing is off) take the plain
// loop: no span, no counting, no header parsed beyond a `has`.

import { SpanKind, type Context, type Tracer } from '@opentelemetry/api';
import type { MsgHdrs } from '@nats-io/nats-core';
import { natsMessaging, SpanAttr } from '../../core/span-attributes.js';
import { sampledContext } from '../../core/tracing.js';
import type { ClientStream } from '../stream/client-stream.js';
import { CloseReason } from '../stream/close-reason.js';
import type { Delivery } from '../stream/stream-context.js';
import { hears } from './delivery-rules.js';
import type { Frame } from './frame.js';

/** Fans a frame out to a group's streams; returns whether any stream heard it. */
export function fanOut(streams: Iterable<ClientStream>, frame: Frame, traced: Context | null, tracer: Tracer | null, channel: string): boolean {
  if (traced === null || tracer === null) {
    let heard = false;
    for (const s of streams) {
      if (hears(s, frame)) {
        deliverTo(s, frame);
        heard = true;
      }
    }
    return heard;
  }
  const attributes = { ...natsMessaging('process'), [SpanAttr.Channel]: channel, [SpanAttr.Sequence]: frame.seq };
  const span = tracer.startSpan('deliver', { kind: SpanKind.CONSUMER, attributes }, traced);
  const counts = { queued: 0, coalesced: 0, dropped: 0, skipped: 0, filtered: 0 };
  for (const s of streams) {
    if (hears(s, frame)) counts[deliverTo(s, frame)]++;
    else counts.filtered++;
  }
  span.setAttributes({
    [SpanAttr.StreamsHeard]: counts.queued + counts.coalesced,
    [SpanAttr.StreamsFiltered]: counts.filtered,
    [SpanAttr.StreamsCoalesced]: counts.coalesced,
    [SpanAttr.StreamsDropped]: counts.dropped,
    [SpanAttr.StreamsSkipped]: counts.skipped,
  });
  span.end();
  return counts.queued + counts.coalesced + counts.dropped + counts.skipped > 0;
}

/** One stream's failure (a bug, a frame it cannot take) ends that stream, not the fan-out to the others. */
function deliverTo(s: ClientStream, frame: Frame): Delivery {
  try {
    return s.deliver(frame);
  } catch {
    s.close(CloseReason.Error);
    return 'dropped';
  }
}

/** The sampled trace a received message continues, or null (tracing off, untraced, unsampled). */
export function deliveryContext(tracer: Tracer | null, headers: MsgHdrs | undefined): Context | null {
  return tracer === null ? null : sampledContext(headers);
}
