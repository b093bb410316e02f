// POST with the guarantees a game needs: one Idempotency-Key per batch, kept across every resend, so
// a batch whose answer was lost (a reset connection, a 503 after part of it was stored) is sent again
// and stored once (the relay answers a repeated key as the first time). Refusals that asking again
// will not change, and 429 rate_limited (the program's own pace), are thrown at once as RelayError
// with the relay's code and details.

import { Backoff } from './backoff.js';
import { networkError, refusal, RelayError, resendable } from './errors.js';
import { commonHeaders, type ClientConfig } from './options.js';
import { excerpt } from './frames.js';
import { wait } from './wait.js';
import { readBody, REDIRECT, redirectRefusal } from './response.js';
import type { Session } from './session.js';

export interface SendResult {
  /** Entries the relay stored. */
  accepted: number;
  /** Envelopes not delivered because they name a banned account. */
  dropped: number;
}

export class Sender {
  private readonly config: ClientConfig;
  private readonly session: Session;
  /** Aborted by stop() (the program's close()): every request and resend wait under way ends. */
  private halt = new AbortController();

  constructor(config: ClientConfig, session: Session) {
    this.config = config;
    this.session = session;
  }

  /** After close(): nothing more is posted, resends waiting stop, and post() rejects with client_closed. */
  stop(): void {
    this.halt.abort();
  }

  /** connect() after close(): posting is allowed again. */
  resume(): void {
    if (this.halt.signal.aborted) this.halt = new AbortController();
  }

  /** `entries`: how many payloads the body holds (the relay's `accepted` is at most that). */
  async post(body: unknown, entries: number): Promise<SendResult> {
    const halt = this.halt.signal;
    const closed = (): RelayError => new RelayError('client_closed', 'close() was called: nothing more is sent');
    const json = JSON.stringify(body);
    const idempotencyKey = crypto.randomUUID();
    const backoff = new Backoff(this.config.backoff);
    let refreshed = false;
    for (let attempt = 1; ; attempt++) {
      if (halt.aborted) throw closed();
      const token = await this.session.token();
      if (halt.aborted) throw closed();
      let failure: RelayError;
      try {
        const res = await this.request(json, token, idempotencyKey, halt);
        if (res.status >= 200 && res.status < 300) return result(res, entries);
        failure = refusal(res.status, res.retryAfter, res.text);
        // The session expired: ask the program for a fresh token once (if the session allows one now)
        // and resend at once. A refreshed token refused too is reported, so later sends fail fast.
        const again = res.status === 401 && !this.session.isBridge && this.session.invalidate(token);
        if (again && !refreshed) {
          refreshed = true;
          attempt--;
          continue;
        }
        if (!resendable(failure)) throw failure;
      } catch (e) {
        if (halt.aborted) throw closed();
        if (e instanceof RelayError) throw e;
        failure = networkError(e);
      }
      if (attempt >= this.config.sendAttempts) throw failure;
      await wait(backoff.next(failure.retryAfterMs), halt);
    }
  }

  private async request(json: string, token: string | undefined, idempotencyKey: string, halt: AbortSignal): Promise<Answer> {
    const controller = new AbortController();
    const stop = (): void => controller.abort(new Error('close() was called'));
    halt.addEventListener('abort', stop);
    // A POST the relay does not answer in time is given up and resent under the same key: safe.
    const timer = setTimeout(() => controller.abort(new Error(`no answer within ${this.config.watchdogMs} ms`)), this.config.watchdogMs);
    try {
      const res = await this.config.fetch(this.config.endpoint, {
        method: 'POST',
        headers: { ...commonHeaders(this.config, token), 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
        body: json,
        signal: controller.signal,
        redirect: REDIRECT,
      });
      // Not resent: the same request would be redirected again.
      const redirect = await redirectRefusal(res);
      if (redirect !== null) throw redirect;
      // The body is read under the same deadline, and only so far.
      const body = await readBody(res);
      // A success whose answer broke off is a lost answer (resent under the same key).
      if (res.status >= 200 && res.status < 300 && body.failure !== null) throw body.failure;
      return { status: res.status, retryAfter: res.headers.get('retry-after'), text: body.text };
    } finally {
      clearTimeout(timer);
      halt.removeEventListener('abort', stop);
    }
  }
}

interface Answer {
  status: number;
  retryAfter: string | null;
  /** At most MAX_BODY_BYTES of the body (of a refusal, what arrived before its deadline). */
  text: string;
}

/** A count the relay reports: a whole number from 0 to the entries sent. */
function count(v: unknown, entries: number): v is number {
  return Number.isInteger(v) && (v as number) >= 0 && (v as number) <= entries;
}

function result(res: Answer, entries: number): SendResult {
  let body: { accepted?: unknown; dropped?: unknown } | null = null;
  try {
    body = JSON.parse(res.text) as { accepted?: unknown; dropped?: unknown } | null;
  } catch {
    // reported below
  }
  if (typeof body === 'object' && body !== null && count(body.accepted, entries)) {
    const dropped = body.dropped === undefined ? 0 : body.dropped;
    if (count(dropped, entries)) return { accepted: body.accepted, dropped };
  }
  throw new RelayError('invalid_response', `the relay answered ${res.status} with a body that is not its answer to ${entries} entries: ${excerpt(res.text)}`, { status: res.status });
}
