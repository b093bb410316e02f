// The game session token: asked of the program at the first request and again after a 401, and
// shared by the stream and every send, so one expired token costs one refresh however many requests
// noticed it at once. Refreshes are rate-limited: a relay that answers 401 to everything would
// otherwise make the program's token() (which may call the game's auth service) run once per send.

import { RelayError } from './errors.js';
import { headerValueProblem } from './header-values.js';

export type TokenSource = () => string | Promise<string>;

/**
 * At most one refresh (token() asked again after a 401) per this many ms. A token refused again
 * within it stays refused: requests fail at once with invalid_session, without a request, until it
 * has passed.
 */
export const MIN_REFRESH_INTERVAL_MS = 30_000;

export class Session {
  private readonly source: TokenSource | undefined;
  private value: string | undefined;
  private asking: Promise<string> | null = null;
  private refreshedAt = -Infinity;
  /** The relay refused the refreshed token too: no request until this time. */
  private refusedUntil = -Infinity;

  constructor(source: TokenSource | undefined) {
    this.source = source;
  }

  /** A bridge has no session: its API key alone authenticates it. */
  get isBridge(): boolean {
    return this.source === undefined;
  }

  /**
   * The bearer token (undefined for a bridge). Throws RelayError token_unavailable when the program
   * cannot give one, misconfigured when it gives one no header can carry, and invalid_session while
   * a refused token waits out the refresh interval.
   */
  async token(): Promise<string | undefined> {
    const source = this.source;
    if (source === undefined) return undefined;
    if (Date.now() < this.refusedUntil) {
      throw new RelayError('invalid_session', `the relay refused the session token, also after a refresh; token() is asked again in ${Math.ceil((this.refusedUntil - Date.now()) / 1000)} s`, { status: 401 });
    }
    if (this.refusedUntil !== -Infinity) {
      this.refusedUntil = -Infinity;
      this.refreshedAt = Date.now();
      this.value = undefined;
    }
    if (this.value !== undefined) return this.value;
    this.asking ??= this.ask(source);
    try {
      return await this.asking;
    } catch (e) {
      if (e instanceof RelayError) throw e;
      throw new RelayError('token_unavailable', `the program's token() failed: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
    }
  }

  /**
   * The relay refused `stale` (401). True when the request may be tried again with a fresh token
   * (another request already refreshed it, or a refresh is allowed now); false when the refusal
   * stands, and requests fail at once until MIN_REFRESH_INTERVAL_MS after the last refresh.
   */
  invalidate(stale: string | undefined): boolean {
    if (stale === undefined || this.value !== stale) return Date.now() >= this.refusedUntil;
    const now = Date.now();
    if (now - this.refreshedAt < MIN_REFRESH_INTERVAL_MS) {
      this.refusedUntil = this.refreshedAt + MIN_REFRESH_INTERVAL_MS;
      return false;
    }
    this.refreshedAt = now;
    this.value = undefined;
    return true;
  }

  private async ask(source: TokenSource): Promise<string> {
    try {
      const t = await source();
      if (typeof t !== 'string' || t.trim() === '') throw new Error('it returned no token');
      // The token stays out of the message: it is a credential, and messages reach logs.
      const problem = headerValueProblem(t);
      if (problem !== null) throw new RelayError('misconfigured', `the token returned by token() cannot be sent in a header: it ${problem}`);
      this.value = t;
      return t;
    } finally {
      // A failed ask is not kept: the next request asks again.
      this.asking = null;
    }
  }
}
