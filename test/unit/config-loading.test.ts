// Loading the configuration, alone (no process, no NATS): the schema's defaults are the only ones,
// each service reads only its own variables, and every problem is reported at once.

import { describe, expect, it } from 'vitest';
import { ConfigError, ENV_SCHEMAS, loadConfig, type ServiceKind } from '../../services/core/config.js';
import { parseDuration, parseSize } from '../../services/core/units.js';

function problems(service: ServiceKind, env: NodeJS.ProcessEnv): string[] {
  try {
    loadConfig(service, env);
    return [];
  } catch (e) {
    if (e instanceof ConfigError) return e.problems;
    throw e;
  }
}

describe('configuration loading', () => {
  it('an empty environment gives every default the schema writes, converted to its unit', () => {
    const config = loadConfig('all', {});
    const { properties } = ENV_SCHEMAS.all;
    const def = (name: keyof typeof properties): string => String(properties[name].default);
    expect(config.env).toEqual(Object.fromEntries(Object.entries(properties).map(([name, s]) => [name, s.default])));
    expect(config.port).toBe(Number(def('PORT')));
    expect(config.profile.timeoutMs).toBe(parseDuration(def('PROFILE_API_TIMEOUT')));
    expect(config.stream.maxBytes).toBe(parseSize(def('STREAM_MAX_BYTES')));
    expect(config.ingress.bytesBurst).toBe(parseSize(def('RATE_LIMIT_BYTES_BURST')));
    expect(config.gateway.keepaliveMs).toBe(parseDuration(def('KEEPALIVE_INTERVAL')));
    expect(config.claimTtlMs).toBe(parseDuration(def('CLAIM_TTL')));
  });

  it("a service reads only its own variables; the other service's section keeps the schema's defaults", () => {
    const gateway = loadConfig('gateway', { PUBLISH_TIMEOUT: '1s', BATCH_MAX_ENTRIES: 'not read', KEEPALIVE_INTERVAL: '5s' });
    expect(gateway.ingress.publishTimeoutMs).toBe(5000);
    expect(gateway.ingress.batchMax).toBe(256);
    expect(gateway.gateway.keepaliveMs).toBe(5000);
    const ingress = loadConfig('ingress', { PUBLISH_TIMEOUT: '1s', KEEPALIVE_INTERVAL: 'never' });
    expect(ingress.ingress.publishTimeoutMs).toBe(1000);
    expect(ingress.gateway.keepaliveMs).toBe(10_000);
  });

  it('an empty variable counts as unset', () => {
    expect(loadConfig('all', { PORT: '', STREAM_MAX_AGE: '' }).stream.maxAgeMs).toBe(86_400_000);
  });

  it('reports every problem at once, one sentence per variable, schema and cross-checks together', () => {
    const found = problems('all', { PORT: '70000', STREAM_STORAGE: 'disk', RETRY_MIN: '10s', RETRY_MAX: '1s', KEEPALIVE_INTERVAL: '30d' });
    expect(found).toEqual([
      'PORT must be a whole number from 0 to 65535 (got "70000").',
      'STREAM_STORAGE must be one of file, memory (got "disk").',
      'KEEPALIVE_INTERVAL is too long (got 30d); at most 24d.',
      'RETRY_MIN (10s) must not exceed RETRY_MAX (1s).',
    ]);
  });

  it('bounds durations that become timers at 24 days, and lifetimes only by what a number holds', () => {
    expect(problems('all', { SHUTDOWN_TIMEOUT: '25d' })).toEqual(['SHUTDOWN_TIMEOUT is too long (got 25d); at most 24d.']);
    expect(problems('all', { STREAM_MAX_AGE: '365d' })).toEqual([]);
    expect(problems('all', { STREAM_MAX_AGE: '1000000000000d' })).toEqual(['STREAM_MAX_AGE is too long (got 1000000000000d); at most about 285,000 years.']);
  });
});
