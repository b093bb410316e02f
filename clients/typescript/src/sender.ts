// POST with the guarantees a game needs: one Idempotency-Key per batch, kept across every resend, so
// a batch whose answer was lost (a reset connection, a 503 after part of it was stored) is sent again
// and stored once (the relay answers a repeated key as the first time). Refusals that asking again
// will not change are thrown at once as RelayError with the relay's code and details.

import { Backoff } from './backoff.js';
import { networkError, refusal, RelayError, retryableStatus } from './errors.js';
import { commonHeaders, type ClientConfig } from './options.js';
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

  constructor(config: ClientConfig, session: Session) {
    this.config = config;
    this.session = session;
  }

  async post(body: unknown): Promise<SendResult> {
    const json = JSON.stringify(body);
    const idempotencyKey = crypto.randomUUID();
    const backoff = new Backoff(this.config.backoff);
    let refreshed = false;
    for (let attempt = 1; ; attempt++) {
      const token = await this.session.token();
      let failure: RelayError;
      try {
        const res = await this.request(json, token, idempotencyKey);
        if (res.status >= 200 && res.status < 300) return result(res);
        failure = refusal(res.status, res.retryAfter, res.text);
        if (res.status === 401 && !this.session.isBridge && !refreshed) {
          // The session expired: ask the program for a fresh token once and resend at once.
          refreshed = true;
          this.session.invalidate(token);
          attempt--;
          continue;
        }
        if (!retryableStatus(res.status) || res.status === 429) throw failure;
      } catch (e) {
        if (e instanceof RelayError) throw e;
        failure = networkError(e);
      }
      if (attempt >= this.config.sendAttempts) throw failure;
      await new Promise((r) => setTimeout(r, backoff.next(failure.retryAfterMs)));
    }
  }

  private async request(json: string, token: string | undefined, idempotencyKey: string): Promise<Answer> {
    const controller = new AbortController();
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
    }
  }
}

interface Answer {
  status: number;
  retryAfter: string | null;
  /** At most MAX_BODY_BYTES of the body (of a refusal, what arrived before its deadline). */
  text: string;
}

function result(res: Answer): SendResult {
  try {
    const body = JSON.parse(res.text) as { accepted?: unknown; dropped?: unknown };
    if (typeof body.accepted === 'number') return { accepted: body.accepted, dropped: typeof body.dropped === 'number' ? body.dropped : 0 };
  } catch {
    // reported below
  }
  throw new RelayError('invalid_response', `the relay answered ${res.status} with a body that is not its JSON: ${res.text.slice(0, 200)}`, { status: res.status });
}
