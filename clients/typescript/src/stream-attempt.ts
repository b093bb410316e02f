// One request for the stream: open it, read it until it ends, or report the refusal or failure that
// prevented it. RelayClient decides what comes next (retry, back off, close); this file only tells it
// what happened, under the watchdog, and hands on only frames that passed frames.ts.

import { networkError, RelayError } from './errors.js';
import { checkPair, readClose, type Closing, type InvalidFrame } from './frames.js';
import type { MetaFrame, Payload } from './generated/wire.js';
import { commonHeaders, type ClientConfig } from './options.js';
import { errorFromResponse, REDIRECT, redirectRefusal } from './response.js';
import { isGreeting, readSse } from './sse.js';

export type Attempt =
  | { kind: 'aborted' }
  | { kind: 'refused'; error: RelayError; token: string | undefined }
  | { kind: 'failed'; error: RelayError }
  | { kind: 'ended'; openedAt: number | null; close: Closing | null; error: RelayError | null };

export interface AttemptHooks {
  /** Whether the run that made this request still stands (false after close() or a final close event). */
  live(): boolean;
  /** The request's abort, kept by the client for close(), and released when the request is over. */
  started(controller: AbortController): void;
  finished(controller: AbortController): void;
  /** The relay subscribed the stream (its ready event, an older relay's greeting, or a first frame). */
  opened(): void;
  /** The relay's `retry:`, unchecked (the client's back-off checks it). */
  retry(ms: number): void;
  /** A checked frame, with its id when it is one the relay sends. */
  frame(meta: MetaFrame, payload: Payload, id: string | null): void;
  /** A frame that was not delivered. */
  invalid(frame: InvalidFrame): void;
  /** A close event that ends the client for good: it stops at once, whatever follows on the wire. */
  final(error: RelayError): void;
}

/** A media type, without its parameters, in lower case. */
function mediaType(contentType: string | null): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}

export async function attemptStream(config: ClientConfig, token: string | undefined, resumedFrom: string | null, hooks: AttemptHooks): Promise<Attempt> {
  const controller = new AbortController();
  hooks.started(controller);
  let silent: RelayError | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let greeting: ReturnType<typeof setTimeout> | undefined;
  // The watchdog: any byte (a keepalive pair, a comment) proves the connection alive.
  const arm = (): void => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      silent = new RelayError('watchdog_timeout', `nothing arrived for ${config.watchdogMs} ms`);
      controller.abort();
    }, config.watchdogMs);
  };
  const headers: Record<string, string> = { ...commonHeaders(config, token), accept: 'text/event-stream', 'cache-control': 'no-cache' };
  if (resumedFrom !== null) headers['last-event-id'] = resumedFrom;
  arm();
  try {
    let res: Response;
    try {
      res = await config.fetch(config.endpoint, { method: 'GET', headers, signal: controller.signal, redirect: REDIRECT });
    } catch (e) {
      if (!hooks.live()) return { kind: 'aborted' };
      return { kind: 'failed', error: silent ?? networkError(e) };
    }
    arm();
    const redirect = await redirectRefusal(res);
    // Retried with back-off like any failure: the relay's address may be fixed in front of it.
    if (redirect !== null) return { kind: 'failed', error: redirect };
    const stream = res.status === 200 && res.body !== null && mediaType(res.headers.get('content-type')) === 'text/event-stream';
    // Another 2xx (a proxy's 204) or a 200 that is no event stream: not the relay's answer, retried.
    if (!stream && res.status >= 200 && res.status < 300) {
      await res.body?.cancel().catch(() => undefined);
      const what = res.status === 200 ? (res.headers.get('content-type') ?? 'no content type').slice(0, 100) : `HTTP ${res.status}`;
      return { kind: 'failed', error: new RelayError('invalid_response', `expected an event stream, got ${what}`, { status: res.status }) };
    }
    if (!stream || res.body === null) return { kind: 'refused', error: await errorFromResponse(res), token };
    let openedAt: number | null = null;
    let close: Closing | null = null;
    const open = (): void => {
      if (openedAt !== null || !hooks.live()) return;
      openedAt = Date.now();
      clearTimeout(greeting);
      hooks.opened();
    };
    // Bytes that never include the greeting (comments, a drip) keep the watchdog fed, not the wait.
    greeting = setTimeout(() => {
      silent = new RelayError('watchdog_timeout', `the relay did not confirm the stream within ${config.watchdogMs} ms`);
      controller.abort();
    }, config.watchdogMs);
    try {
      await readSse(res.body, {
        onBytes: arm,
        onRetry: (ms) => hooks.retry(ms),
        onReady: open,
        // Relays older than the ready event said so only with this comment.
        onComment: (text) => {
          if (isGreeting(text)) open();
        },
        onClose: (data) => {
          if (!hooks.live()) return;
          const c = readClose(data);
          if ('problem' in c) return hooks.invalid({ reason: 'invalid_close', id: null, message: c.problem });
          close = c;
          if (!c.reconnect) hooks.final(c.error);
        },
        onInvalid: (reason, id, message) => {
          if (hooks.live()) hooks.invalid({ reason, id, message });
        },
        onPair: (meta, payload, id) => {
          // The parser goes on through the rest of a chunk after close(): nothing of it is delivered.
          if (!hooks.live()) return;
          const c = checkPair(meta, payload, config.channel);
          if (!c.ok) return hooks.invalid({ reason: c.reason, id, message: c.message });
          open();
          hooks.frame(c.meta, c.payload, id);
        },
      });
    } catch (e) {
      if (!hooks.live()) return { kind: 'aborted' };
      return { kind: 'ended', openedAt, close, error: silent ?? (e instanceof RelayError ? e : networkError(e)) };
    }
    if (!hooks.live()) return { kind: 'aborted' };
    return { kind: 'ended', openedAt, close, error: openedAt === null ? new RelayError('stream_ended', 'the relay ended the stream before confirming it') : null };
  } finally {
    clearTimeout(timer);
    clearTimeout(greeting);
    hooks.finished(controller);
  }
}
