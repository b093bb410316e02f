// One request for the stream: open it, read it until it ends, or report the refusal or failure that
// prevented it. RelayClient decides what comes next (retry, back off, close); this file only tells it
// what happened, under the watchdog.

import { networkError, RelayError } from './errors.js';
import type { CloseEvent, MetaFrame, Payload } from './generated/wire.js';
import { commonHeaders, type ClientConfig } from './options.js';
import { errorFromResponse, REDIRECT, redirectRefusal } from './response.js';
import { readSse } from './sse.js';

export type Attempt =
  | { kind: 'aborted' }
  | { kind: 'refused'; error: RelayError; token: string | undefined }
  | { kind: 'failed'; error: RelayError }
  | { kind: 'ended'; openedAt: number | null; close: CloseEvent | null; error: RelayError | null };

export interface AttemptHooks {
  /** Whether the run that made this request still stands (false after close()). */
  live(): boolean;
  /** The request's abort, kept by the client for close(), and released when the request is over. */
  started(controller: AbortController): void;
  finished(controller: AbortController): void;
  /** The relay subscribed the stream (its greeting, or a first frame). */
  opened(): void;
  /** The relay's `retry:`, unchecked (the client's back-off checks it). */
  retry(ms: number): void;
  /** A frame, with its id when it is one the relay sends. */
  frame(meta: MetaFrame, payload: Payload, id: string | null): void;
}

export async function attemptStream(config: ClientConfig, token: string | undefined, resumedFrom: string | null, hooks: AttemptHooks): Promise<Attempt> {
  const controller = new AbortController();
  hooks.started(controller);
  let silent = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  // The watchdog: any byte (a keepalive pair, a comment) proves the connection alive.
  const arm = (): void => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      silent = true;
      controller.abort();
    }, config.watchdogMs);
  };
  const watchdog = (): RelayError => new RelayError('watchdog_timeout', `nothing arrived for ${config.watchdogMs} ms`);
  const headers: Record<string, string> = { ...commonHeaders(config, token), accept: 'text/event-stream', 'cache-control': 'no-cache' };
  if (resumedFrom !== null) headers['last-event-id'] = resumedFrom;
  arm();
  try {
    let res: Response;
    try {
      res = await config.fetch(config.endpoint, { method: 'GET', headers, signal: controller.signal, redirect: REDIRECT });
    } catch (e) {
      if (!hooks.live()) return { kind: 'aborted' };
      return { kind: 'failed', error: silent ? watchdog() : networkError(e) };
    }
    arm();
    const redirect = await redirectRefusal(res);
    // Retried with back-off like any failure: the relay's address may be fixed in front of it.
    if (redirect !== null) return { kind: 'failed', error: redirect };
    if (res.status !== 200) return { kind: 'refused', error: await errorFromResponse(res), token };
    if (res.body === null || !/^text\/event-stream/i.test(res.headers.get('content-type') ?? '')) {
      await res.body?.cancel().catch(() => undefined);
      return { kind: 'failed', error: new RelayError('invalid_response', `expected an event stream, got ${res.headers.get('content-type') ?? 'no content type'}`, { status: res.status }) };
    }
    let openedAt: number | null = null;
    let close: CloseEvent | null = null;
    const open = (): void => {
      if (openedAt !== null || !hooks.live()) return;
      openedAt = Date.now();
      hooks.opened();
    };
    try {
      await readSse(res.body, {
        onBytes: arm,
        onRetry: (ms) => hooks.retry(ms),
        // The relay's greeting, sent once it has subscribed the stream.
        onComment: (text) => {
          if (text.startsWith('connected')) open();
        },
        onClose: (event) => {
          close = event;
        },
        onPair: (meta, payload, id) => {
          open();
          hooks.frame(meta, payload, id);
        },
      });
    } catch (e) {
      if (!hooks.live()) return { kind: 'aborted' };
      return { kind: 'ended', openedAt, close, error: silent ? watchdog() : networkError(e) };
    }
    return { kind: 'ended', openedAt, close, error: null };
  } finally {
    clearTimeout(timer);
    hooks.finished(controller);
  }
}
