// Channel names: the one module that knows how a multiplayer server host becomes a readable channel
// name (meta.channel) and how that name becomes a NATS subject token and KV key part.

import ipaddr from 'ipaddr.js';
import { escapeControlChars } from './display.js';
import { RelayError } from './errors.js';

const DEFAULT_PORT_SUFFIX = ':25565';
const MAX_LENGTH = 253;
const HOST_PATTERN = /^[a-z0-9._:-]+$/;
const IPV6_PATTERN = /^\[([0-9a-f:.]+)\](:[0-9]{1,5})?$/;
/** Only ASCII is looked at: lower-casing first let the Kelvin sign (U+212A) become "k". */
const NON_ASCII = /[^\x00-\x7f]/;

/** Why a raw channel name is not acceptable, or null when it is. */
export function channelProblem(raw: string): string | null {
  if (NON_ASCII.test(raw)) return 'the channel may contain only ASCII letters, digits, ".", "-", "_" and ":" (or be a bracketed IPv6 literal)';
  const name = normaliseLoose(raw);
  if (name.length === 0) return 'the channel (multiplayer server host) is empty';
  if (name.length > MAX_LENGTH) return `the channel is longer than ${MAX_LENGTH} characters`;
  if (name.startsWith('[')) {
    const literal = IPV6_PATTERN.exec(name)?.[1];
    return literal !== undefined && ipaddr.IPv6.isValid(literal) ? null : 'an IPv6 channel must be a bracketed literal like [2001:db8::1]:25566';
  }
  if (!HOST_PATTERN.test(name)) {
    return 'the channel may contain only letters, digits, ".", "-", "_" and ":" (or be a bracketed IPv6 literal)';
  }
  return null;
}

/**
 * Trimmed and lower-cased, then the default port and a trailing dot removed until neither is left:
 * one pass would turn `host:25565.` into `host:25565`, a channel apart from `host` that a second
 * pass (the admin API's, say) would move again. A fixed point, so normalising a name twice changes
 * nothing. White space is trimmed once only: `host :25565` is refused, not read as `host`.
 */
function normaliseLoose(raw: string): string {
  let name = raw.trim().toLowerCase();
  for (;;) {
    const before = name;
    if (name.endsWith(DEFAULT_PORT_SUFFIX)) name = name.slice(0, -DEFAULT_PORT_SUFFIX.length);
    if (name.endsWith('.')) name = name.slice(0, -1);
    if (name === before) return canonicalIpv6(name);
  }
}

/**
 * A bracketed IPv6 literal in its RFC 5952 form (an IPv4-mapped one in mixed notation, RFC 5952
 * section 5), so `[::1]` and `[0:0::1]` are one channel; anything else unchanged. Its output ends
 * in a digit or "]", so the default port and dot removal above have nothing more to do.
 */
function canonicalIpv6(name: string): string {
  const m = IPV6_PATTERN.exec(name);
  if (m === null || !ipaddr.IPv6.isValid(m[1]!)) return name;
  const ip = ipaddr.IPv6.parse(m[1]!);
  const text = ip.isIPv4MappedAddress() ? `::ffff:${ip.toIPv4Address().toString()}` : ip.toRFC5952String();
  return `[${text}]${m[2] ?? ''}`;
}

/**
 * Normalise a multiplayer server host into the readable channel name: trimmed, lower-cased, the
 * default port and trailing dots removed (see normaliseLoose). Throws a 400 RelayError when it is not
 * acceptable. Idempotent: an accepted name normalises to itself.
 */
export function normaliseChannel(raw: string): string {
  const problem = channelProblem(raw);
  if (problem !== null) {
    throw new RelayError('invalid_channel', `Invalid channel "${truncate(raw)}": ${problem}.`);
  }
  return normaliseLoose(raw);
}

/**
 * The channel a request names: the query `host` of its URL, else the X-IRC-Multiplayer-Server
 * header. A `host` given twice is ambiguous (400), never "the first one". Null when neither names one.
 */
export function requestChannel(url: string | undefined, header: string | string[] | undefined): string | null {
  const at = url?.indexOf('?') ?? -1;
  const hosts = at === -1 ? [] : new URLSearchParams(url!.slice(at + 1)).getAll('host');
  const headers = Array.isArray(header) ? header : header === undefined ? [] : [header];
  if (hosts.length > 1 || headers.length > 1) {
    const what = hosts.length > 1 ? `?host= was given ${hosts.length} times` : 'X-IRC-Multiplayer-Server was sent more than once';
    throw new RelayError('invalid_channel', `Name one channel: ${what}.`);
  }
  return channelFromRequest(hosts[0], headers[0]);
}

/**
 * The query `host` wins over the header. Returns null when neither names a channel.
 */
export function channelFromRequest(queryHost: string | undefined, header: string | undefined): string | null {
  const raw = queryHost !== undefined && queryHost !== '' ? queryHost : header;
  if (raw === undefined || raw === '') return null;
  return normaliseChannel(raw);
}

// Subject tokens may not hold ".", "*", ">" or white space, and KV keys allow only [-/_=.a-zA-Z0-9].
// Every character outside [a-z0-9_-] of a normalised name is written as "=" and two hex digits;
// "=" never occurs in a normalised name, so the encoding is reversible.
const TOKEN_SAFE = /^[a-z0-9_-]$/;

export function channelToken(channel: string): string {
  let out = '';
  for (const ch of channel) {
    out += TOKEN_SAFE.test(ch) ? ch : '=' + ch.charCodeAt(0).toString(16).padStart(2, '0');
  }
  return out;
}

export function channelFromToken(token: string): string {
  return token.replace(/=([0-9a-f]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** What was sent, shortened, with control characters as visible escapes (error bodies reach logs and terminals). */
function truncate(s: string): string {
  return escapeControlChars(s.length > 64 ? `${s.slice(0, 64)}...` : s);
}
