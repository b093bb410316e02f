// Who is asking, as far as fairness goes: the client address, which an attacker cannot copy the way
// it copies a mod's public client credentials (DESIGN.md section 6). Both services read it here.
//
// The socket's peer is the client unless it is a trusted proxy (TRUSTED_PROXIES); only then is
// X-Forwarded-For read, from the right, skipping trusted proxies, and the first untrusted address is
// the client. A client outside can write any X-Forwarded-For it likes: a direct peer's is never read,
// and behind a proxy only what the proxy appended is believed. The walk is @fastify/proxy-addr's
// (the proxy-addr of Express, kept by fastify), not a parser of our own.

import type { IncomingMessage } from 'node:http';
import { isIPv4 } from 'node:net';
import proxyaddr from '@fastify/proxy-addr';
import ipaddr from 'ipaddr.js';
import { quoted } from './config/wording.js';

export type TrustProxy = (address: string, hop: number) => boolean;

/** How a dual-stack socket writes an IPv4 peer. */
const MAPPED = '::ffff:';

/** Compiles TRUSTED_PROXIES (IPs, CIDRs, or loopback / linklocal / uniquelocal); throws on a bad entry. */
export function compileTrustedProxies(entries: readonly string[]): TrustProxy {
  return proxyaddr.compile([...entries]);
}

/** What is wrong with a TRUSTED_PROXIES value, one sentence per bad entry. */
export function trustedProxiesProblems(entries: readonly string[]): string[] {
  const problems: string[] = [];
  for (const entry of entries) {
    try {
      proxyaddr.compile([entry]);
    } catch {
      problems.push(`TRUSTED_PROXIES has ${quoted(entry)}, which is not an IP address, a CIDR range (10.0.0.0/8) or one of loopback, linklocal, uniquelocal.`);
    }
  }
  return problems;
}

/**
 * The client's address: the peer, or behind trusted proxies the first untrusted X-Forwarded-For hop.
 * A hop that is no IP address (a trusted proxy passing on what the client wrote) is not believed:
 * the peer stands instead, so made-up values cannot each become an address of their own.
 */
export function clientAddress(req: IncomingMessage, trust: TrustProxy): string {
  const peer = req.socket.remoteAddress ?? 'unknown';
  const address = proxyaddr(req, trust);
  return ipaddr.isValid(address) ? address : peer;
}

/**
 * The group an address is counted in. IPv4: the address itself (an IPv4-mapped IPv6 peer included).
 * IPv6: its block of `ipv6Prefix` bits (PROFILE_API_IPV6_PREFIX), so one home or server cannot take
 * a share per address it may pick inside the block it was given (SLAAC picks at will in a /64, and a
 * home is usually given a /56).
 */
export function fairnessGroup(address: string, ipv6Prefix: number): string {
  // Most peers, and every connection the connection caps count: a dotted quad is its own group
  // already (ipaddr.js would take some microseconds to say so, twice per connection).
  if (isIPv4(address)) return address;
  if (address.startsWith(MAPPED) && isIPv4(address.slice(MAPPED.length))) return address.slice(MAPPED.length);
  if (!ipaddr.isValid(address)) return address;
  const ip = ipaddr.process(address);
  if (!(ip instanceof ipaddr.IPv6)) return ip.toString();
  const bytes = ip.toByteArray().map((b, i) => {
    const kept = Math.max(0, Math.min(8, ipv6Prefix - i * 8));
    return b & ((0xff << (8 - kept)) & 0xff);
  });
  return `${ipaddr.fromByteArray(bytes).toString()}/${ipv6Prefix}`;
}
