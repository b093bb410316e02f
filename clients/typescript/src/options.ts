// The client's options, checked before any request: a mistake the relay would punish (a session
// without client credentials gets the account banned, spec rule A3) or refuse is reported here, at
// construction, with a sentence saying what to fix.

import { agentProblem } from './agent-text.js';
import { DEFAULT_BACKOFF, MAX_DELAY_MS, MIN_BASE_MS, type BackoffOptions } from './backoff.js';
import { STREAM_TIMINGS } from './generated/timings.js';
import { channelProblem, normaliseChannel } from './channel.js';
import { RelayError } from './errors.js';
import { headerValueProblem } from './header-values.js';
import type { REDIRECT } from './response.js';
import { isEventId } from './sse.js';
import type { TokenSource } from './session.js';

/** What the client needs of fetch: the global one fits, and so does a test's or a runtime's own. */
export type FetchLike = (url: string, init: FetchInit) => Promise<Response>;

export interface FetchInit {
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  signal: AbortSignal;
  /** Always 'manual': a fetch passed in must hand redirects back unfollowed (the library refuses them). */
  redirect: typeof REDIRECT;
}

export interface RelayClientOptions {
  /** The relay's base URL (https://relay.example.net); requests go to its /irc path. */
  url: string;
  /**
   * The multiplayer server the player is on, named as every client on it names it (the SRV-resolved
   * host): the channel. Required with a `token`; a bridge that omits it streams every channel.
   */
  server?: string;
  /** The API key built into the client (sent as Client-ID / Client-Secret). */
  clientId: string;
  clientSecret: string;
  /** `<mod_id>/<mod_version>+<git commit>`. */
  userAgent: string;
  /**
   * The game session token (the player's access token), asked at the first request and again after a
   * 401. Omit it for a bridge: a key with irc.connection.unauthenticated needs no session.
   */
  token?: TokenSource;
  /** Resume from this frame on the first connect (a program that kept `client.lastEventId`). */
  lastEventId?: string;
  /** Presence snapshots posted per second at most; newer ones replace waiting ones. Default 5. */
  presencePerSecond?: number;
  /** Reconnect and resend delays. Defaults: base 1 s (or the relay's `retry:`), cap 30 s. */
  backoff?: BackoffOptions;
  /** A stream silent this long (ms), or a POST unanswered this long, is dropped and tried again. Default 15000. */
  watchdogMs?: number;
  /** Tries for one send when the relay is unavailable or unreachable (same Idempotency-Key each time). Default 5. */
  sendAttempts?: number;
  /** The fetch to use (default: the global one). */
  fetch?: FetchLike;
  /**
   * Allow an `http://` url to a host that is not this machine (loopback). Off by default: the client
   * secret and the session token would cross every network on the way in clear text.
   */
  allowInsecureHttp?: boolean;
}

export interface ClientConfig {
  endpoint: string;
  server: string | undefined;
  /** The server as the relay normalises it (meta.channel); undefined for a bridge on every channel. */
  channel: string | undefined;
  clientId: string;
  clientSecret: string;
  userAgent: string;
  lastEventId: string | undefined;
  presencePerSecond: number;
  backoff: BackoffOptions & { baseMs: number; capMs: number };
  watchdogMs: number;
  sendAttempts: number;
  fetch: FetchLike;
}

function misconfigured(message: string): RelayError {
  return new RelayError('misconfigured', message);
}

/** A value a build system leaves behind when the real one was never set. */
function blank(v: unknown): boolean {
  return typeof v !== 'string' || v.trim() === '' || /^(undefined|null)$/i.test(v.trim());
}

function positive(name: string, v: number | undefined, fallback: number, integer = false): number {
  if (v === undefined) return fallback;
  if (!Number.isFinite(v) || v <= 0 || (integer && !Number.isInteger(v))) throw misconfigured(`${name} must be a positive ${integer ? 'integer' : 'number'} (got ${v})`);
  return v;
}

/** A time in ms the library sets a timer for: within [min, MAX_DELAY_MS] (Node fires a longer timer at once). */
function duration(name: string, v: number | undefined, fallback: number, min: number): number {
  const ms = positive(name, v, fallback);
  if (ms < min || ms > MAX_DELAY_MS) throw misconfigured(`${name} must be between ${min} and ${MAX_DELAY_MS} ms (got ${ms})`);
  return ms;
}

/** This machine: localhost, 127.0.0.0/8 or ::1 (the URL parser gives IPv6 hosts in brackets). */
function isLoopback(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/\.$/, '');
  return h === 'localhost' || h.endsWith('.localhost') || /^127(?:\.\d{1,3}){3}$/.test(h) || h === '[::1]';
}

export function resolveOptions(o: RelayClientOptions): ClientConfig {
  const session = o.token !== undefined;
  for (const name of ['clientId', 'clientSecret'] as const) {
    if (blank(o[name])) {
      throw misconfigured(
        session
          ? `${name} is missing (${JSON.stringify(o[name])}). The relay bans an account whose session arrives with missing or wrong client credentials (spec rule A3), so no request is sent without them: pass your API key's client id and secret.`
          : `${name} is missing (${JSON.stringify(o[name])}): a bridge is authenticated by its API key alone; pass the key's client id and secret.`,
      );
    }
  }
  for (const name of ['clientId', 'clientSecret'] as const) {
    // The value stays out of the message: it is a credential, and messages reach logs.
    const problem = headerValueProblem(o[name].trim());
    if (problem !== null) throw misconfigured(`${name} cannot be sent in a header: it ${problem}`);
  }
  if (o.token !== undefined && typeof o.token !== 'function') throw misconfigured('token must be a function returning the game session token (or a promise of it)');
  if (blank(o.userAgent) || /[^\x00-\xff]/.test(o.userAgent)) {
    throw misconfigured('userAgent is required, without characters past U+00FF (a header cannot carry them): <mod_id>/<mod_version>+<git commit>');
  }
  // Other players read it as this client's agent (the relay's text rule).
  const agentIssue = agentProblem(o.userAgent);
  if (agentIssue !== null) throw misconfigured(`userAgent ${agentIssue}; send <mod_id>/<mod_version>+<git commit>`);
  let url: URL;
  try {
    url = new URL(o.url);
  } catch {
    throw misconfigured(`url is not a URL: ${JSON.stringify(o.url)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw misconfigured(`url must be http or https: ${o.url}`);
  if (url.protocol === 'http:' && !isLoopback(url.hostname) && o.allowInsecureHttp !== true) {
    throw misconfigured(`url is http:// to ${url.hostname}: the client secret and session token would travel in clear text. Use https://, or set allowInsecureHttp: true for a network you trust`);
  }
  if (!url.pathname.endsWith('/irc')) url.pathname = `${url.pathname.replace(/\/+$/, '')}/irc`;
  const server = o.server?.trim();
  if (server !== undefined && server === '') throw misconfigured('server is empty: name the multiplayer server, or omit it for a bridge stream on every channel');
  const problem = server === undefined ? null : channelProblem(server);
  if (problem !== null) throw misconfigured(`server is not a name the relay accepts as a channel: ${problem}`);
  if (session && server === undefined) throw misconfigured('server is required with a token: the channel is the multiplayer server the player is on');
  const baseMs = duration('backoff.baseMs', o.backoff?.baseMs, DEFAULT_BACKOFF.baseMs, MIN_BASE_MS);
  const capMs = duration('backoff.capMs', o.backoff?.capMs, Math.max(DEFAULT_BACKOFF.capMs, baseMs), MIN_BASE_MS);
  if (capMs < baseMs) throw misconfigured(`backoff.capMs (${capMs}) must not be below backoff.baseMs (${baseMs})`);
  // Typed as possibly absent: the library runs where fetch may not exist.
  const fetchImpl: FetchLike | undefined = o.fetch ?? globalThis.fetch;
  if (typeof fetchImpl !== 'function') throw misconfigured('no fetch in this runtime: pass options.fetch');
  if (o.lastEventId !== undefined && !isEventId(o.lastEventId)) throw misconfigured(`lastEventId must be an id the relay sent (a whole number, or with regions eu:1042.us:77): ${JSON.stringify(o.lastEventId)}`);
  return {
    endpoint: url.toString(),
    server,
    channel: server === undefined ? undefined : normaliseChannel(server),
    clientId: o.clientId.trim(),
    clientSecret: o.clientSecret.trim(),
    userAgent: o.userAgent,
    lastEventId: o.lastEventId,
    presencePerSecond: positive('presencePerSecond', o.presencePerSecond, 5),
    backoff: { ...o.backoff, baseMs, capMs },
    watchdogMs: duration('watchdogMs', o.watchdogMs, STREAM_TIMINGS.watchdogMs, 1),
    sendAttempts: positive('sendAttempts', o.sendAttempts, 5, true),
    fetch: fetchImpl,
  };
}

/** The headers of spec 5.1 common to GET and POST. */
export function commonHeaders(c: ClientConfig, token: string | undefined): Record<string, string> {
  const h: Record<string, string> = {
    'user-agent': c.userAgent,
    'client-id': c.clientId,
    'client-secret': c.clientSecret,
  };
  if (token !== undefined) h['authorization'] = `Bearer ${token}`;
  if (c.server !== undefined) h['x-irc-multiplayer-server'] = c.server;
  return h;
}
