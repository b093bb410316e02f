// Client credentials (spec 5.1): an id and a secret identifying the client build, accepted under
// several header spellings plus any prefixes an operator configures.

import type { IncomingHttpHeaders } from 'node:http';

export const BUILTIN_PREFIXES = ['', 'X-', 'Service-', 'X-Service-'] as const;

export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
}

export type CredentialHeaders = ReadonlyArray<{ id: string; secret: string }>;

/** Lower-cased header names to look in, in order: built-in spellings first, then configured prefixes. */
export function credentialHeaders(extraPrefixes: readonly string[]): CredentialHeaders {
  const prefixes = [...BUILTIN_PREFIXES, ...extraPrefixes.map((p) => (p.endsWith('-') ? p : `${p}-`))];
  return prefixes.map((p) => ({ id: `${p}client-id`.toLowerCase(), secret: `${p}client-secret`.toLowerCase() }));
}

function single(value: string | string[] | undefined): string | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

/** The first complete id + secret pair, or null when none is presented. */
export function readCredentials(headers: IncomingHttpHeaders, names: CredentialHeaders): ClientCredentials | null {
  for (const n of names) {
    const clientId = single(headers[n.id]);
    const clientSecret = single(headers[n.secret]);
    if (clientId !== undefined && clientSecret !== undefined) return { clientId, clientSecret };
  }
  return null;
}

/** The id presented, even without a secret, for the ban record. */
export function presentedClientId(headers: IncomingHttpHeaders, names: CredentialHeaders): string | undefined {
  for (const n of names) {
    const id = single(headers[n.id]);
    if (id !== undefined) return id.slice(0, 128);
  }
  return undefined;
}
