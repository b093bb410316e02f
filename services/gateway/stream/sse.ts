// SSE framing, by hand: this is the hot path. A delivered payload is one buffer holding the `meta`
// event and the unnamed data event (with `id:` = stream sequence), built once per message and
// written unchanged to every recipient.

import type { MetaShape } from '../../../schemas/meta.js';
import { advisedRetryMs } from '../../../schemas/stream-timings.js';

export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
  // When the relay ends a stream (eviction, ban, drain) the connection ends with it, so every client
  // sees the close, not only those that watch for the end of the chunked body.
  connection: 'close',
};

const META_PREFIX = Buffer.from('event: meta\ndata: ');
const BLANK_LINE = Buffer.from('\n\n');
const DATA_PREFIX = Buffer.from('data: ');

/**
 * One meta+data pair. `metaJson` and `dataJson` are single-line JSON (JSON.stringify never emits a
 * raw newline, and ingress stores payloads as JSON.stringify output). `id` is omitted for frames
 * that are not in the log (server keepalives), so they never move a client's Last-Event-ID.
 */
export function encodePair(metaJson: string, data: Uint8Array | string, id: number | string | null): Buffer {
  const dataBuf = typeof data === 'string' ? Buffer.from(data) : data;
  const meta = Buffer.from(metaJson);
  const idLine = id === null ? null : Buffer.from(`id: ${id}\n`);
  const parts: Uint8Array[] = [META_PREFIX, meta, BLANK_LINE];
  if (idLine !== null) parts.push(idLine);
  parts.push(DATA_PREFIX, dataBuf, BLANK_LINE);
  return Buffer.concat(parts);
}

/** An SSE comment: ignored by clients' event handlers, read by people and by our tests. */
export function encodeComment(text: string): Buffer {
  return Buffer.from(`: ${text.replace(/\n/g, ' ')}\n\n`);
}

/** A named event with JSON data (`event: close`). */
export function encodeEvent(name: string, json: string): Buffer {
  return Buffer.from(`event: ${name}\ndata: ${json}\n\n`);
}

/** The SSE `retry:` field, never below MIN_RETRY_MS (schemas/stream-timings.ts). */
export function encodeRetry(ms: number): Buffer {
  return Buffer.from(`retry: ${advisedRetryMs(ms)}\n\n`);
}

export function metaJson(uuid: string, agent: string | null, channel: string, shape: MetaShape = 'spec', username: string | null = null): string {
  if (shape === 'spec') return JSON.stringify({ uuid, agent, channel });
  // The spec's fields first and unchanged; the published client's after them (META_AUTHORITATIVE_SENDER).
  return JSON.stringify({ uuid, agent, channel, userAgent: agent, authoritativeSender: { id: uuid, username } });
}
