// Who is behind a session token: the game's profile API (GET with the same bearer; 200 gives
// {id, name}). Results are cached by a hash of the token, concurrent look-ups of one token share one
// request, and every call has a timeout counted from when it was asked for. How many run at once and
// who waits is the LookupGate's business (requests with valid client credentials first). Invalid
// session: 401. The API unreachable, failing or busy: 503 with Retry-After, and never a ban (the
// caller only bans on a session it could verify).

import { createHash } from 'node:crypto';
import { RelayError } from './errors.js';
import { ThrottledWarnings, type Logger } from './logger.js';
import { LookupGate } from './lookup-gate.js';
import { parseProfile, ProfileHttp } from './profile-http.js';

export interface Profile {
  uuid: string;
  name: string;
}

export type ProfileOutcome = 'valid' | 'invalid' | 'unavailable' | 'cached';

export interface ProfileObserver {
  (outcome: ProfileOutcome, seconds: number): void;
}

export interface ResolveOptions {
  /** The request presented valid client credentials: it goes ahead of those that did not. */
  priority?: boolean;
  /** Aborted when the client goes away: it stops waiting, and a look-up nobody waits for is dropped. */
  signal?: AbortSignal;
}

export interface ProfileResolver {
  resolve(token: string, options?: ResolveOptions): Promise<Profile>;
}

export interface ProfileClientOptions {
  url: string;
  timeoutMs: number;
  cacheTtlMs: number;
  negativeCacheTtlMs: number;
  logger: Logger;
  observe?: ProfileObserver;
  /** Look-ups in flight at once, and how many may wait for a place. */
  concurrency: number;
  maxQueue: number;
  /** Cache entries kept at most; the oldest go first. */
  maxEntries?: number;
}

type Cached = { expires: number; profile: Profile | null };

/** One look-up in flight, shared by every request for the same token. */
interface Lookup {
  promise: Promise<Profile | null>;
  waiters: number;
  /** Drops the look-up if it has not started (nobody waits for it any more). */
  leave(): void;
}

const RETRY_AFTER_SECONDS = 5;

export class HttpProfileClient implements ProfileResolver {
  private readonly options: ProfileClientOptions;
  private readonly cache = new Map<string, Cached>();
  private readonly inflight = new Map<string, Lookup>();
  private readonly gate: LookupGate;
  private readonly maxEntries: number;
  private readonly warnings: ThrottledWarnings;
  private readonly http: ProfileHttp;

  constructor(options: ProfileClientOptions) {
    this.options = options;
    this.http = new ProfileHttp(options.url, options.concurrency);
    this.gate = new LookupGate(options.concurrency, options.maxQueue);
    this.warnings = new ThrottledWarnings(options.logger);
    this.maxEntries = options.maxEntries ?? 100_000;
  }

  async resolve(token: string, options: ResolveOptions = {}): Promise<Profile> {
    const id = createHash('sha256').update(token, 'utf8').digest('base64url');
    const hit = this.cache.get(id);
    if (hit !== undefined && hit.expires > Date.now()) {
      this.options.observe?.('cached', 0);
      return orInvalid(hit.profile);
    }
    const lookup = this.inflight.get(id) ?? this.start(id, token, options.priority === true);
    lookup.waiters++;
    try {
      return orInvalid(await untilAborted(lookup.promise, options.signal));
    } finally {
      if (--lookup.waiters === 0) lookup.leave();
    }
  }

  private start(id: string, token: string, priority: boolean): Lookup {
    const asked = performance.now();
    const ticket = this.gate.enter(priority, this.options.timeoutMs);
    const promise = ticket.granted
      .then(() => this.fetchProfile(token, Math.max(1, this.options.timeoutMs - (performance.now() - asked))))
      .finally(() => {
        ticket.leave();
        this.inflight.delete(id);
      });
    promise.then(
      (profile) => this.remember(id, profile),
      () => undefined,
    );
    // A look-up that has its place runs to its end (its place is given back when it does): the
    // place counts what the profile API is really asked, whoever still waits.
    const lookup: Lookup = { promise, waiters: 0, leave: () => ticket.cancel() };
    this.inflight.set(id, lookup);
    return lookup;
  }

  private remember(id: string, profile: Profile | null): void {
    const ttl = profile === null ? this.options.negativeCacheTtlMs : this.options.cacheTtlMs;
    this.cache.delete(id);
    this.cache.set(id, { expires: Date.now() + ttl, profile });
    if (this.cache.size > this.maxEntries) {
      const oldest = this.cache.keys().next().value;
      if (oldest !== undefined) this.cache.delete(oldest);
    }
  }

  /** A profile, null for an invalid session; throws 503 when the API cannot say within `timeoutMs`. */
  private async fetchProfile(token: string, timeoutMs: number): Promise<Profile | null> {
    const started = performance.now();
    const seconds = (): number => (performance.now() - started) / 1000;
    let answer: { status: number; body: string };
    try {
      answer = await this.http.get(token, timeoutMs);
    } catch (e) {
      this.options.observe?.('unavailable', seconds());
      this.warnings.warn('unreachable', { reason: e instanceof Error ? e.message : 'error' }, 'profile API unreachable');
      throw unavailable();
    }
    if (answer.status === 401 || answer.status === 403 || answer.status === 404) {
      this.options.observe?.('invalid', seconds());
      return null;
    }
    if (answer.status !== 200) {
      this.options.observe?.('unavailable', seconds());
      this.warnings.warn(`status-${answer.status}`, { status: answer.status }, 'profile API failed');
      throw unavailable();
    }
    let body: unknown = null;
    try {
      body = JSON.parse(answer.body);
    } catch {
      body = null;
    }
    const profile = parseProfile(body);
    if (profile === null) {
      this.options.observe?.('unavailable', seconds());
      this.warnings.warn('unusable', {}, 'profile API answered 200 without a usable {id, name}');
      throw unavailable();
    }
    this.options.observe?.('valid', seconds());
    return profile;
  }
}

/** The look-up's result, or a rejection as soon as the client goes away. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) return Promise.reject(clientGone());
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(clientGone());
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function clientGone(): RelayError {
  return new RelayError('unavailable', 'The client closed the connection during the session check.');
}

function orInvalid(profile: Profile | null): Profile {
  if (profile === null) {
    throw new RelayError('invalid_session', 'The session token is not valid; log in to the game again and retry.');
  }
  return profile;
}

function unavailable(): RelayError {
  return new RelayError('profile_api_unavailable', 'The game profile API is not answering; try again shortly.', {
    retryAfter: RETRY_AFTER_SECONDS,
  });
}
