// The Host values the admin service answers to: the loopback names, ADMIN_HOST (unless it is a
// wildcard address) and ADMIN_ALLOWED_HOSTS. A page of another site that rebinds its own DNS name to
// this address sends its own name as Host, so it is refused whatever the port.

import { quoted } from './wording.js';

export interface AllowedHost {
  /** Lower case; an IPv6 address in brackets, as a Host header writes it. */
  host: string;
  /** null: any port (the loopback names, ADMIN_HOST, and entries given without a port). */
  port: number | null;
}

const LOOPBACK = ['localhost', '127.0.0.1', '[::1]'];
const WILDCARDS = new Set(['0.0.0.0', '::', '[::]']);
/** host or host:port, the host a DNS name, an IPv4 address or a bracketed IPv6 address. */
const AUTHORITY = /^(\[[0-9a-f:.]+\]|[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?)(?::(\d{1,5}))?$/;

/** A Host header (or an entry of ADMIN_ALLOWED_HOSTS) as host and port; null when it is not one. */
export function parseAuthority(value: string): AllowedHost | null {
  const match = AUTHORITY.exec(value.trim().toLowerCase());
  if (match === null) return null;
  const port = match[2] === undefined ? null : Number(match[2]);
  if (port !== null && port > 65535) return null;
  return { host: match[1] ?? '', port };
}

export function parseAllowedHosts(adminHost: string, list: string): { hosts: AllowedHost[]; problems: string[] } {
  const problems: string[] = [];
  const bind = adminHost.includes(':') && !adminHost.startsWith('[') ? `[${adminHost}]` : adminHost;
  const hosts: AllowedHost[] = [...LOOPBACK, ...(WILDCARDS.has(bind) ? [] : [bind.toLowerCase()])].map((host) => ({ host, port: null }));
  for (const [i, item] of list.split(',').entries()) {
    if (item.trim() === '') continue;
    const parsed = parseAuthority(item);
    if (parsed === null) problems.push(`ADMIN_ALLOWED_HOSTS item ${i + 1} (${quoted(item.trim(), 64)}) must be a host name or address, with :port or without (admin.example.net, 10.0.0.5:8090, [fd00::5]).`);
    else hosts.push(parsed);
  }
  return { hosts, problems };
}
