// What a stream sends once the node has subscribed it (DESIGN.md section 6): the `ready` event a
// program reads (schemas/ready.ts), then the `: connected to <channel>` comment for people reading
// with curl (and for clients written against relays older than the event).

import { formatEventId, type EventPosition } from '../../../schemas/event-id.js';
import type { ReadyEvent } from '../../../schemas/ready.js';
import { advisedRetryMs } from '../../../schemas/stream-timings.js';
import { encodeComment, encodeEvent } from './sse.js';

/**
 * `channel` null is a bridge stream hearing every channel (`*`); `resumedAfter` the Last-Event-ID,
 * or null; `order`, with regions, the mesh's regions (the id is then written in `resumedAfterId`).
 */
export function readyFrames(channel: string | null, everyChannel: string, resumedAfter: EventPosition | null, retryMs: number, order: readonly string[] = []): Buffer {
  // The same wait as the `retry:` field the stream opened with (sse.ts encodeRetry).
  const event: ReadyEvent = { channel: channel ?? everyChannel, resumedAfter: resumedAfter?.kind === 'single' ? resumedAfter.seq : null, retryMs: advisedRetryMs(retryMs) };
  if (resumedAfter?.kind === 'regions') event.resumedAfterId = idOf(resumedAfter, order);
  return Buffer.concat([encodeEvent('ready', JSON.stringify(event)), encodeComment(`connected to ${channel ?? 'every channel'}`)]);
}

/** The id as the relay reads it; a position at 0 everywhere (which no id names) as its first region's 0. */
function idOf(position: EventPosition & { kind: 'regions' }, order: readonly string[]): string {
  try {
    return formatEventId(position, order);
  } catch {
    return `${[...position.seqs.keys()][0]!}:0`;
  }
}
