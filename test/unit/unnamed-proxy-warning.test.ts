// The warning that a proxy stands in front without being named in TRUSTED_PROXIES: at most once per
// interval, so one stranger sending X-Forwarded-For directly cannot use it up for the process's life.
import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { addressReader, UNNAMED_PROXY_WARNING_INTERVAL_MS } from '../../services/core/address-reader.js';
import { compileTrustedProxies } from '../../services/core/client-address.js';
import { createLogger } from '../../services/core/logger.js';
import { LogCapture } from '../helpers/relay.js';

function request(peer: string, forwardedFor?: string): IncomingMessage {
  const headers = forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor };
  return { headers, socket: { remoteAddress: peer }, connection: { remoteAddress: peer } } as unknown as IncomingMessage;
}

describe('the unnamed-proxy warning', () => {
  it('a stranger sending X-Forwarded-For directly does not use it up: it is said again after the interval', () => {
    const logs = new LogCapture();
    let now = 1_000_000;
    const read = addressReader(compileTrustedProxies([]), createLogger({ level: 'warn', pretty: false, destination: logs }), () => now);
    const warnings = (): number => logs.lines.filter((l) => l.includes('TRUSTED_PROXIES does not name')).length;
    expect(read(request('203.0.113.9', '10.0.0.1'))).toBe('203.0.113.9');
    expect(read(request('203.0.113.9', '10.0.0.2'))).toBe('203.0.113.9');
    expect(warnings()).toBe(1);
    // Later an operator puts nginx in front without naming it: that must be reported.
    now += UNNAMED_PROXY_WARNING_INTERVAL_MS;
    read(request('192.0.2.10', '198.51.100.7'));
    expect(warnings()).toBe(2);
    expect(logs.lines.at(-1)).toContain('"suppressed":1');
    expect(logs.lines.at(-1)).toContain('192.0.2.10');
  });

  it('says nothing for requests without X-Forwarded-For, or from a trusted proxy', () => {
    const logs = new LogCapture();
    const read = addressReader(compileTrustedProxies(['loopback']), createLogger({ level: 'warn', pretty: false, destination: logs }));
    read(request('203.0.113.9'));
    expect(read(request('127.0.0.1', '198.51.100.7'))).toBe('198.51.100.7');
    expect(logs.lines).toEqual([]);
  });
});
