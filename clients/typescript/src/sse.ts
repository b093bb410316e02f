// Reads the relay's event stream from a fetch body: `meta` events paired with the unnamed data event
// that follows (spec 6), the `close` event the relay sends before ending a stream, `retry:` and
// comments. eventsource-parser does the SSE framing; this file adds the relay's meaning.

import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { CloseEvent, MetaFrame, Payload } from './generated/wire.js';

export interface SseHandlers {
  /** Any bytes arrived (the watchdog's heartbeat: comments and partial events count). */
  onBytes(): void;
  onPair(meta: MetaFrame, payload: Payload, id: string | null): void;
  onClose(event: CloseEvent): void;
  onRetry(ms: number): void;
  onComment(text: string): void;
}

/** Far above anything the relay sends (an entry is at most 64 KiB); a stream past it is broken. */
const MAX_BUFFER = 4 * 1024 * 1024;

/** Longest id taken: a sequence is a 64-bit number, at most 20 digits. */
const MAX_ID_DIGITS = 20;

/**
 * Whether `id` is an id the relay sends (its log sequence). Any other is ignored, never kept as
 * Last-Event-ID: one a header cannot carry (a non-Latin-1 character) made every reconnect throw
 * inside fetch before reaching the relay, for ever.
 */
export function isEventId(id: string | undefined): id is string {
  return id !== undefined && id.length <= MAX_ID_DIGITS && /^\d+$/.test(id);
}

function parseObject(data: string): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(data);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/**
 * Feeds the body to the handlers until it ends (resolves) or fails (rejects). Payloads are not
 * validated again: the relay validated every one at ingress against the same schemas.
 */
export async function readSse(body: ReadableStream<Uint8Array>, h: SseHandlers): Promise<void> {
  // The meta frame waiting for its data event; anything else in between breaks the pair.
  let meta: MetaFrame | null = null;
  const broken: { error: Error | null } = { error: null };
  const parser = createParser({
    maxBufferSize: MAX_BUFFER,
    onRetry: (ms) => h.onRetry(ms),
    onComment: (text) => h.onComment(text),
    onError: (e) => {
      // Only an oversized event stops the stream; unknown fields are ignored, as SSE says.
      if (e.type === 'max-buffer-size-exceeded') broken.error = e;
    },
    onEvent: (ev: EventSourceMessage) => {
      if (ev.event === 'meta') {
        const m = parseObject(ev.data);
        meta = m !== null && typeof m['uuid'] === 'string' && typeof m['channel'] === 'string' ? (m as unknown as MetaFrame) : null;
        return;
      }
      if (ev.event === undefined || ev.event === 'message') {
        const p = parseObject(ev.data);
        // A data event without its meta is not a frame the relay sends: skipped, and its id is not
        // taken, so a resume would fetch it again with its meta. A frame with an id the relay would
        // not send is delivered without it.
        if (meta !== null && p !== null && typeof p['type'] === 'string') h.onPair(meta, p as unknown as Payload, isEventId(ev.id) ? ev.id : null);
        meta = null;
        return;
      }
      meta = null;
      if (ev.event === 'close') {
        const c = parseObject(ev.data);
        if (c !== null && typeof c['reason'] === 'string' && typeof c['reconnect'] === 'boolean') h.onClose(c as unknown as CloseEvent);
      }
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
