// Client credentials (spec 5.1): an id and a secret identifying the client build, accepted under
// several header spellings plus any prefixes an operator configures. The one place that knows those
// header names (the logger takes its list of secret headers from here too).
//
// Node joins repeated header lines into one value with ", ": two Client-Secret lines arrive as
// "s, s". The relay's ids (relay_<hex>) and secrets (base64url) never hold a comma, so each part is a
// value sent. Identical parts, under one spelling or several, are one value; different parts are a
// malformed request (400), never evidence of a cracked client.

import type { IncomingHttpHeaders } from 'node:http';
import { RelayError } from './errors.js';

export const BUILTIN_PREFIXES = ['', 'X-', 'Service-', 'X-Service-'] as const;

export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
}

export type CredentialHeaders = ReadonlyArray<{ id: string; secret: string }>;

/** Lower-cased header names to look in: built-in spellings first, then configured prefixes. */
export function credentialHeaders(extraPrefixes: readonly string[]): CredentialHeaders {
  const prefixes = [...BUILTIN_PREFIXES, ...extraPrefixes.map((p) => (p.endsWith('-') ? p : `${p}-`))];
  return prefixes.map((p) => ({ id: `${p}client-id`.toLowerCase(), secret: `${p}client-secret`.toLowerCase() }));
}

/**
 * The one value sent under any of `names` (repeated lines and spellings included), undefined when
 * none is. Throws 400 conflicting_credentials when two different values are sent.
 */
function oneValue(headers: IncomingHttpHeaders, names: readonly string[], what: string): string | undefined {
  const values = new Set<string>();
  const sentUnder: string[] = [];
  for (const name of names) {
    const raw = headers[name];
    if (raw === undefined) continue;
    for (const line of Array.isArray(raw) ? raw : [raw]) {
      for (const part of line.split(',')) {
        const value = part.trim();
        if (value === '') continue;
        values.add(value);
        if (!sentUnder.includes(name)) sentUnder.push(name);
      }
    }
  }
  if (values.size > 1) {
    // Names only: the values may be secrets.
    throw new RelayError('conflicting_credentials',
      `The request carries more than one ${what} (in ${sentUnder.join(', ')}); send one client id and one client secret.`,
    );
  }
  return values.values().next().value;
}

/**
 * The id and secret presented, or null when either is missing. They may come under different
 * accepted spellings: a client that sends the right id and secret is never taken for a cracked one.
 * Throws 400 conflicting_credentials for two different ids or secrets; callers read credentials
 * before anything that could ban, so a conflict is refused, never banned.
 */
export function readCredentials(headers: IncomingHttpHeaders, names: CredentialHeaders): ClientCredentials | null {
  const clientId = oneValue(headers, names.map((n) => n.id), 'client id');
  const clientSecret = oneValue(headers, names.map((n) => n.secret), 'client secret');
  return clientId !== undefined && clientSecret !== undefined ? { clientId, clientSecret } : null;
}

/** The id presented, even without a secret, for the ban record. */
export function presentedClientId(headers: IncomingHttpHeaders, names: CredentialHeaders): string | undefined {
  return oneValue(headers, names.map((n) => n.id), 'client id')?.slice(0, 128);
}
