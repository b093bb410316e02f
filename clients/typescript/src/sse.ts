// Reads the relay's event stream from a fetch body: the `ready` event, `meta` events paired with the
// unnamed data event that follows (spec 6), the `close` event the relay sends before ending a
// stream, `retry:` and comments. eventsource-parser does the SSE framing; this file pairs the events. Nothing here is
// believed yet: frames.ts checks what it hands on.

import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { RelayError } from './errors.js';
import { excerpt, type InvalidFrameReason } from './frames.js';
import { EVENT_ID, MAX_EVENT_ID_LENGTH } from './generated/event-id.js';

export interface SseHandlers {
  /** Any bytes arrived (the watchdog's heartbeat: comments and partial events count). */
  onBytes(): void;
  /** A meta event and the data event that followed it, parsed but unchecked (see frames.ts). */
  onPair(meta: unknown, payload: object, id: string | null): void;
  /** Something that is not a frame the relay sends; `id` the data event's, when it is one. */
  onInvalid(reason: InvalidFrameReason, id: string | null, message: string): void;
  /** The relay subscribed the stream (`event: ready`; its data is informative, not checked). */
  onReady(): void;
  /** The data of a `close` event, parsed but unchecked. */
  onClose(data: unknown): void;
  onRetry(ms: number): void;
  onComment(text: string): void;
}

/** Far above anything the relay sends (an entry is at most 64 KiB); a stream past it is broken. */
export const MAX_EVENT_BYTES = 4 * 1024 * 1024;

/**
 * Whether `id` is an id the relay sends (a log sequence, or with regions a position in each region's
 * log). Any other is ignored, never kept as Last-Event-ID: one a header cannot carry (a non-Latin-1
 * character) made every reconnect throw inside fetch before reaching the relay, for ever.
 */
export function isEventId(id: string | undefined): id is string {
  return id !== undefined && id.length <= MAX_EVENT_ID_LENGTH && EVENT_ID.test(id);
}

/**
 * The greeting comment (`: connected to <channel>`) of relays older than the `ready` event, which
 * said the stream was subscribed only this way: the one place that recognises it.
 */
export function isGreeting(comment: string): boolean {
  return /^\s?connected(?:\s|$)/.test(comment);
}

function parseObject(data: string): object | null {
  try {
    const v: unknown = JSON.parse(data);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? v : null;
  } catch {
    return null;
  }
}

/** Feeds the body to the handlers until it ends (resolves) or fails (rejects; frame_too_large for an oversized event). */
export async function readSse(body: ReadableStream<Uint8Array>, h: SseHandlers): Promise<void> {
  // The meta frame waiting for its data event; anything else in between breaks the pair.
  let meta: { value: unknown } | null = null;
  const broken: { error: Error | null } = { error: null };
  const parser = createParser({
    maxBufferSize: MAX_EVENT_BYTES,
    onRetry: (ms) => h.onRetry(ms),
    onComment: (text) => h.onComment(text),
    onError: (e) => {
      // Only an oversized event stops the stream; unknown fields are ignored, as SSE says.
      if (e.type === 'max-buffer-size-exceeded') broken.error = new RelayError('frame_too_large', `an event on the stream is larger than ${MAX_EVENT_BYTES} bytes`);
    },
    onEvent: (ev: EventSourceMessage) => {
      if (ev.event === 'meta') {
        const m = parseObject(ev.data);
        if (m === null) h.onInvalid('invalid_json', null, `a meta event that is not a JSON object: ${excerpt(ev.data)}`);
        meta = m === null ? null : { value: m };
        return;
      }
      if (ev.event === undefined || ev.event === 'message') {
        // A frame with an id the relay would not send is reported or delivered without it.
        const id = isEventId(ev.id) ? ev.id : null;
        const p = parseObject(ev.data);
        if (p === null) h.onInvalid('invalid_json', id, `a data event that is not a JSON object: ${excerpt(ev.data)}`);
        else if (meta === null) h.onInvalid('unpaired_data', id, 'a data event without the meta event that precedes every frame');
        else h.onPair(meta.value, p, id);
        meta = null;
        return;
      }
      meta = null;
      if (ev.event === 'ready') h.onReady();
      if (ev.event === 'close') h.onClose(parseObject(ev.data));
      // Other named events are for later versions of the relay: ignored.
    },
  });
  const reader = body.getReader();
  const decoder = new TextDecoder();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      h.onBytes();
      parser.feed(decoder.decode(value, { stream: true }));
      if (broken.error !== null) throw broken.error;
    }
  } finally {
    reader.cancel().catch(() => undefined);
  }
}
