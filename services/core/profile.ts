// Who is behind a session token: the game's profile API (GET with the same bearer; 200 gives
// {id, name}). Results are cached by a hash of the token, concurrent look-ups of one token share one
// request, and every call has a timeout counted from when it was asked for. How many run at once and
// who waits is the LookupGate's business (fair across client addresses); how often an address may
// start one, and backing off when upstream says 429, the LookupBudget's. What cannot be a token is
// refused before any of it, and a token found invalid is remembered for a while in a cache of its
// own (bounded, so junk never pushes out the sessions of real players): repeating it costs neither a
// look-up nor a place in the gate. Invalid session: 401. One address over its share of look-ups:
// 429 with Retry-After. The API unreachable, failing or rate-limiting the relay, or the relay's queue
// full: 503 with Retry-After. Never a ban (the caller only bans on a session it could verify).

import { createHash } from 'node:crypto';
import { TOKEN_SHAPE_PROBLEMS, tokenShapeProblem } from './bearer-token.js';
import { RelayError } from './errors.js';
import { ExpiringCache } from './expiring-cache.js';
import { ThrottledWarnings, type Logger } from './logger.js';
import { BUDGET_REFUSALS, LookupBudget } from './lookup-budget.js';
import { GATE_REFUSALS, LookupGate } from './lookup-gate.js';
import { parseProfile, ProfileHttp } from './profile-http.js';
import { untilAborted } from './until-aborted.js';

export interface Profile {
  uuid: string;
  name: string;
}

export const PROFILE_OUTCOMES = ['valid', 'invalid', 'unavailable', 'cached'] as const;
export type ProfileOutcome = (typeof PROFILE_OUTCOMES)[number];

export interface ProfileObserver {
  (outcome: ProfileOutcome, seconds: number): void;
}

/** Why a session was refused without asking the profile API. */
export const LOOKUP_REFUSALS = [...TOKEN_SHAPE_PROBLEMS, ...GATE_REFUSALS, ...BUDGET_REFUSALS, 'remembered_invalid', 'no_time_left'] as const;
export type LookupRefusal = (typeof LOOKUP_REFUSALS)[number];

export interface ResolveOptions {
  /** The client's address (client-address.ts): look-ups are shared fairly between addresses. */
  address?: string;
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
  /** A session refused without a look-up, and why. */
  refused?: (reason: LookupRefusal) => void;
  /** Look-ups in flight at once, how many may wait for a place, and how many one address may have. */
  concurrency: number;
  maxQueue: number;
  perAddress: number;
  /** New look-ups per second one address may start, and at once; IPv6 addresses count per block. */
  ratePerAddress: number;
  rateBurst: number;
  ipv6Prefix: number;
  /** Valid sessions kept at most; the oldest go first. */
  maxEntries?: number;
}

/**
 * Invalid tokens remembered at most. A client can only add one per look-up it is granted, and each
 * entry is a hash (about 100 bytes with its Map slot): at most about 1 MB, and never at the expense
 * of the valid sessions' cache.
 */
const MAX_INVALID_ENTRIES = 10_000;
/** Where a request without a known address (a test calling resolve directly) is counted. */
const NO_ADDRESS = 'unknown';

/** One look-up in flight, shared by every request for the same token. */
interface Lookup {
  promise: Promise<Profile | null>;
  waiters: number;
  /** Drops the look-up if it has not started (nobody waits for it any more). */
  leave(): void;
}

const RETRY_AFTER_SECONDS = 5;
/**
 * Least time a look-up is started with (or a tenth of the timeout, if less): one granted a place
 * just before its deadline cannot be answered in time, and would only cost upstream a call and log
 * a misleading "unreachable".
 */
const MIN_LOOKUP_MS = 250;

export class HttpProfileClient implements ProfileResolver {
  private readonly options: ProfileClientOptions;
  private readonly valid: ExpiringCache<Profile>;
  private readonly invalid = new ExpiringCache<true>(MAX_INVALID_ENTRIES);
  private readonly inflight = new Map<string, Lookup>();
  private readonly gate: LookupGate;
  private readonly budget: LookupBudget;
  private readonly warnings: ThrottledWarnings;
  private readonly http: ProfileHttp;

  constructor(options: ProfileClientOptions) {
    this.options = options;
    this.http = new ProfileHttp(options.url, options.concurrency);
    this.gate = new LookupGate({
      places: options.concurrency,
      maxQueue: options.maxQueue,
      perAddress: options.perAddress,
      ipv6Prefix: options.ipv6Prefix,
      ...(options.refused !== undefined ? { refused: options.refused } : {}),
    });
    this.budget = new LookupBudget({ ratePerAddress: options.ratePerAddress, rateBurst: options.rateBurst, ipv6Prefix: options.ipv6Prefix });
    this.warnings = new ThrottledWarnings(options.logger);
    this.valid = new ExpiringCache(options.maxEntries ?? 100_000);
  }

  /** Look-ups waiting for a place (a gauge). */
  get waiting(): number {
    return this.gate.waiting;
  }

  async resolve(token: string, options: ResolveOptions = {}): Promise<Profile> {
    const shape = tokenShapeProblem(token);
    if (shape !== null) {
      this.options.refused?.(shape);
      throw invalidSession();
    }
    const id = createHash('sha256').update(token, 'utf8').digest('base64url');
    const hit = this.valid.get(id);
    if (hit !== undefined) {
      this.options.observe?.('cached', 0);
      return hit;
    }
    if (this.invalid.get(id) !== undefined) {
      this.options.observe?.('cached', 0);
      this.options.refused?.('remembered_invalid');
      throw invalidSession();
    }
    const lookup = this.inflight.get(id) ?? this.start(id, token, options.address ?? NO_ADDRESS);
    // (A request joining a look-up already running costs upstream nothing, so pays nothing.)
    lookup.waiters++;
    try {
      return orInvalid(await untilAborted(lookup.promise, options.signal));
    } finally {
      if (--lookup.waiters === 0) lookup.leave();
    }
  }

  private start(id: string, token: string, address: string): Lookup {
    const asked = performance.now();
    const refusal = this.budget.take(address, asked);
    if (refusal !== null) {
      this.options.refused?.(refusal.reason);
      throw refusal.error;
    }
    const ticket = this.gate.enter(address, this.options.timeoutMs);
    const floor = Math.min(MIN_LOOKUP_MS, this.options.timeoutMs / 10);
    const promise = ticket.granted
      .then(() => {
        const left = this.options.timeoutMs - (performance.now() - asked);
        if (left >= floor) return this.fetchProfile(token, left);
        this.options.refused?.('no_time_left');
        throw new RelayError('profile_api_busy', 'Too many sessions are being checked right now; try again shortly.', { retryAfter: RETRY_AFTER_SECONDS });
      })
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
    if (profile === null) this.invalid.set(id, true, this.options.negativeCacheTtlMs);
    else this.valid.set(id, profile, this.options.cacheTtlMs);
  }

  /** A profile, null for an invalid session; throws 503 when the API cannot say within `timeoutMs`. */
  private async fetchProfile(token: string, timeoutMs: number): Promise<Profile | null> {
    const started = performance.now();
    const seconds = (): number => (performance.now() - started) / 1000;
    let answer: Awaited<ReturnType<ProfileHttp['get']>>;
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
    if (answer.status === 429) {
      this.options.observe?.('unavailable', seconds());
      const wait = this.budget.upstreamLimited(answer.retryAfter);
      this.warnings.warn('status-429', { status: 429, backoffSeconds: wait }, 'profile API rate-limited the relay: no look-up until it allows');
      throw unavailable(wait);
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

function orInvalid(profile: Profile | null): Profile {
  if (profile === null) throw invalidSession();
  return profile;
}

function invalidSession(): RelayError {
  return new RelayError('invalid_session', 'The session token is not valid; log in to the game again and retry.');
}

function unavailable(retryAfter = RETRY_AFTER_SECONDS): RelayError {
  return new RelayError('profile_api_unavailable', 'The game profile API is not answering; try again shortly.', {
    retryAfter,
  });
}
