// The client address of a request as both services read it (client-address.ts), with a warning
// when a proxy seems to stand in front untrusted: behind nginx or HAProxy with TRUSTED_PROXIES
// unset, every player has the proxy's address and shares one address's look-up places, which
// nothing else would reveal.

import type { IncomingMessage } from 'node:http';
import { clientAddress, type TrustProxy } from './client-address.js';
import { ThrottledWarnings, type Logger } from './logger.js';

/**
 * At most one warning per this interval. Once per process was used up by the first stranger
 * sending X-Forwarded-For directly, and a proxy put in front later was never reported.
 */
export const UNNAMED_PROXY_WARNING_INTERVAL_MS = 10 * 60_000;

export function addressReader(trust: TrustProxy, logger: Logger, clock: () => number = Date.now): (req: IncomingMessage) => string {
  const warnings = new ThrottledWarnings(logger, UNNAMED_PROXY_WARNING_INTERVAL_MS, clock);
  return (req) => {
    const address = clientAddress(req, trust);
    if (req.headers['x-forwarded-for'] !== undefined && !trust(req.socket.remoteAddress ?? '', 0)) {
      warnings.warn(
        'unnamed-proxy',
        { peer: address },
        'a request came through a proxy that TRUSTED_PROXIES does not name: every client behind it counts as this one address; set TRUSTED_PROXIES to the proxy',
      );
    }
    return address;
  };
}
