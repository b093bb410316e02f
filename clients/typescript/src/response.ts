// What the library accepts of an HTTP answer before believing it. A redirect is never followed: it
// would carry Client-ID, Client-Secret, the session token, the Idempotency-Key and the body to
// whatever origin it names, and report that origin's answer as the relay's. A body (a refusal's, a
// send's answer) is read up to MAX_BODY_BYTES and the rest cancelled: a body that never ends must
// cost neither memory nor, past the caller's deadline, time.

import { refusal, RelayError } from './errors.js';

/** The most of any non-stream body the library reads; the relay's answers are a few hundred bytes. */
export const MAX_BODY_BYTES = 64 * 1024;

/** Asked of every request: fetch must hand a redirect back, never follow it (see redirectRefusal). */
export const REDIRECT = 'manual' as const;

/**
 * A redirect as a failure (its body cancelled unread), or null for any other answer. Covers an
 * answer a fetch followed anyway (`redirected`) and the opaque answer browsers give for 'manual'.
 */
export async function redirectRefusal(res: Response): Promise<RelayError | null> {
  const followed = res.redirected;
  if (!followed && res.type !== 'opaqueredirect' && (res.status < 300 || res.status > 399)) return null;
  await res.body?.cancel().catch(() => undefined);
  const to = res.headers.get('location');
  const what = followed ? `a fetch that followed a redirect to ${res.url}` : `a redirect (${res.status}${to === null ? '' : ` to ${to.slice(0, 200)}`})`;
  return new RelayError('redirect_refused', `the relay answered with ${what}: not followed, credentials are only sent to the configured URL`, { status: res.status });
}

export interface Body {
  /** At most MAX_BODY_BYTES of it, decoded as UTF-8. */
  text: string;
  /** Why the read stopped early (the caller's deadline, a reset), or null when it ended or was capped. */
  failure: Error | null;
}

/** Reads at most MAX_BODY_BYTES and cancels the rest; a failure mid-read keeps what arrived. */
export async function readBody(res: Response): Promise<Body> {
  if (res.body === null) return { text: '', failure: null };
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let failure: Error | null = null;
  try {
    while (size < MAX_BODY_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      const part = value.subarray(0, MAX_BODY_BYTES - size);
      chunks.push(part);
      size += part.length;
    }
  } catch (e) {
    failure = e instanceof Error ? e : new Error('the body broke off');
  } finally {
    reader.cancel().catch(() => undefined);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.length;
  }
  return { text: new TextDecoder().decode(all), failure };
}

/** A refusal as a RelayError, from the relay's JSON body when it has one (read as readBody does). */
export async function errorFromResponse(res: Response): Promise<RelayError> {
  return refusal(res.status, res.headers.get('retry-after'), (await readBody(res)).text);
}
