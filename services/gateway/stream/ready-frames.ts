// What a stream sends once the node has subscribed it (DESIGN.md section 6): the `ready` event a
// program reads (schemas/ready.ts), then the `: connected to <channel>` comment for people reading
// with curl (and for clients written against relays older than the event).

import type { ReadyEvent } from '../../../schemas/ready.js';
import { advisedRetryMs } from '../../../schemas/stream-timings.js';
import { encodeComment, encodeEvent } from './sse.js';

/** `channel` null is a bridge stream hearing every channel (`*`); `resumedAfter` the Last-Event-ID, or null. */
export function readyFrames(channel: string | null, everyChannel: string, resumedAfter: number | null, retryMs: number): Buffer {
  // The same wait as the `retry:` field the stream opened with (sse.ts encodeRetry).
  const event: ReadyEvent = { channel: channel ?? everyChannel, resumedAfter, retryMs: advisedRetryMs(retryMs) };
  return Buffer.concat([encodeEvent('ready', JSON.stringify(event)), encodeComment(`connected to ${channel ?? 'every channel'}`)]);
}
