// Configuration from the environment: every variable accepted with a good value and refused with a
// sentence naming it for a bad one; every problem listed at once; the env examples in step.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { envExample } from '../scripts/env-examples.js';
import { ConfigError, ENV_SCHEMAS, loadConfig, type ServiceKind } from '../services/core/config.js';
import { nkeys } from '@nats-io/nats-core';
import { runCli } from './helpers/cli.js';

const USER_SEED = new TextDecoder().decode(nkeys.createUser().getSeed());
/** Variables that go in pairs: each is tried with its companion set. */
const companions: Record<string, Record<string, string>> = {
  NATS_TLS_CERT: { NATS_TLS_KEY: '/etc/hostname' },
  NATS_TLS_KEY: { NATS_TLS_CERT: '/etc/hostname' },
  REGION: { REGIONS: 'eu,us,ap' },
  REGION_HOME: { REGIONS: 'eu,us,ap' },
};

// [variable, good value, bad value or null when every string is acceptable, what the sentence says]
const cases: Array<[string, string, string | null, RegExp]> = [
  ['NODE_ENV', 'production', 'staging', /one of development, production, test/],
  ['HOST', '127.0.0.1', 'two words', /must not contain spaces/],
  ['PORT', '9000', '70000', /whole number from 0 to 65535/],
  ['RELAY_NODE_ID', 'gateway-1', 'gateway 1', /letters, digits, "-" and "_" only/],
  ['LOG_LEVEL', 'debug', 'loud', /one of fatal, error, warn, info, debug, trace, silent/],
  ['LOG_PRETTY', 'false', 'maybe', /one of auto, true, false/],
  ['NATS_URL', 'nats://a:4222,nats://b:4222', 'http://a:4222', /not a NATS URL/],
  ['NATS_USER', 'relay', null, /./],
  ['NATS_PASSWORD', 'pw', null, /./],
  ['NATS_TOKEN', 'tok', null, /./],
  ['NATS_CREDS_FILE', '/etc/hostname', '/nonexistent/relay.creds', /does not exist/],
  ['NATS_NKEY_SEED', USER_SEED, 'SUnotaseed', /user nkey seed, starting with SU \(got \(hidden\)\)/],
  ['NATS_TLS_CA', '/etc/hostname', '/nonexistent/ca.pem', /does not exist/],
  ['NATS_TLS_CERT', '/etc/hostname', '/nonexistent/client.pem', /does not exist/],
  ['NATS_TLS_KEY', '/etc/hostname', '/nonexistent/client.key', /does not exist/],
  ['NATS_TLS_SERVER_NAME', 'nats.example.net', 'two words', /a host name without spaces/],
  ['PROFILE_API_URL', 'https://profiles.example/v1', 'ftp://profiles.example', /http\(s\) URL or "offline"/],
  ['PROFILE_API_TIMEOUT', '2s', 'soon', /duration like/],
  ['PROFILE_CACHE_TTL', '5m', '5 minutes', /duration like/],
  ['PROFILE_NEGATIVE_CACHE_TTL', '10s', '-1s', /duration like/],
  ['CLIENT_HEADER_PREFIXES', 'X-Hackware,X-Other', 'X Hackware', /comma-separated header prefixes/],
  ['STREAM_MAX_AGE', '7d', 'forever', /duration like/],
  ['STREAM_MAX_BYTES', '10GiB', 'lots', /size like/],
  ['STREAM_REPLICAS', '3', '0', /whole number from 1 to 5/],
  ['STREAM_STORAGE', 'memory', 'disk', /one of file, memory/],
  ['STREAM_DUPLICATE_WINDOW', '1m', 'two minutes', /duration like/],
  ['STREAM_MAX_MSGS_PER_CHANNEL', '50000', '-1', /whole number of at least 0/],
  ['KV_REPLICAS', '3', '6', /whole number from 1 to 5/],
  ['REGIONS', 'eu,us,ap-south', 'eu,us', /REGIONS must name from 3 to 16 regions \(got 2\)/],
  ['REGION', 'us', 'mars', /REGION is "mars", which is not one of REGIONS/],
  ['REGION_HOME', 'ap', 'mars', /REGION_HOME is "mars", which is not one of REGIONS/],
  ['AUDIT_MAX_AGE', '90d', 'a year', /duration like/],
  ['SHUTDOWN_TIMEOUT', '30s', '30', /duration like/],
  ['BODY_TIMEOUT', '30s', '50ms', /at least 100ms/],
  ['PROFILE_API_CONCURRENCY', '16', '0', /whole number from 1 to 4096/],
  ['PROFILE_API_MAX_QUEUE', '0', 'many', /whole number of at least 0/],
  ['PROFILE_API_PER_ADDRESS', '32', '0', /whole number from 1 to 100000/],
  ['PROFILE_API_RATE_PER_ADDRESS', '0.5', '-1', /number of at least 0/],
  ['PROFILE_API_RATE_BURST', '50', '0', /whole number of at least 1/],
  ['PROFILE_API_IPV6_PREFIX', '64', '129', /whole number from 32 to 128/],
  ['TRUSTED_PROXIES', '10.0.0.5, 172.16.0.0/12,loopback,::1', '10.0.0.0/33', /TRUSTED_PROXIES has "10.0.0.0\/33", which is not an IP address/],
  ['BODY_LIMIT', '2MiB', 'big', /size like/],
  ['BATCH_MAX_ENTRIES', '100', '0', /whole number from 1/],
  ['RATE_LIMIT_PER_SECOND', '0', '-1', /number of at least 0/],
  ['RATE_LIMIT_BURST', '10', '0.5', /whole number of at least 1/],
  ['RATE_LIMIT_BYTES_PER_SECOND', '1MiB', 'fast', /size like/],
  ['RATE_LIMIT_BYTES_BURST', '16MiB', 'huge', /size like/],
  ['ENTRY_MAX_BYTES', '256KiB', 'big', /size like/],
  ['PUBLISH_TIMEOUT', '1s', '1', /duration like/],
  ['KEEPALIVE_INTERVAL', '5s', '15s', /below 15s/],
  ['STREAM_QUEUE_MAX_BYTES', '1MiB', 'x', /size like/],
  ['RESUME_WINDOW_BYTES', '0', '64 MB of frames', /size like/],
  ['META_AUTHORITATIVE_SENDER', 'true', 'yes', /true|false/],
  ['IDEMPOTENCY_MAX_BYTES', '1MiB', '1KiB', /at least 4KiB/],
  ['CLAIM_TTL', '10m', '30s', /at least 1m/],
  ['NODE_TIMEOUT', '5s', '500ms', /at least 1s/],
  ['MAX_STREAMS_PER_ACCOUNT', '0', '-2', /whole number of at least 0/],
  ['MAX_STREAMS_PER_KEY', '1000', 'all', /whole number of at least 0/],
  ['STREAM_OPEN_RATE', '0', 'fast', /number of at least 0/],
  ['STREAM_OPEN_BURST', '20', '0', /whole number of at least 1/],
  ['HEAP_COMPACTION_AFTER_OPENS', '0', '-1', /whole number of at least 0/],
  ['RETRY_MIN', '2s', '500ms', /at least 1s: a relay never advises an immediate reconnect/],
  ['RETRY_MAX', '10s', 'x', /duration like/],
  ['ADMIN_HOST', '0.0.0.0', 'two words', /must not contain spaces/],
  ['ADMIN_ALLOWED_HOSTS', 'admin.example.net,10.0.0.5:8090', 'https://admin.example.net/', /ADMIN_ALLOWED_HOSTS item 1/],
  ['ADMIN_PORT', '8091', '-1', /whole number from 0 to 65535/],
  ['MAX_CONNECTIONS_PER_ADDRESS', '0', 'many', /whole number of at least 0/],
  ['ADMIN_MAX_CONNECTIONS', '16384', '8', /whole number from 16 to 65536/],
  ['ADMIN_MAX_CONNECTIONS_PER_ADDRESS', '0', '4096', /at most a quarter of ADMIN_MAX_CONNECTIONS \(8192\), so one address never takes every connection/],
  ['ADMIN_TOKEN', 'c0193846a545894008456162d2493ded', 'short', /shorter than 24 characters/],
  ['ADMIN_TOKENS', `alice=${'a'.repeat(24)},bob=${'b'.repeat(24)}`, 'alice', /ADMIN_TOKENS item 1 must be name=token/],
  ['DEV_NATS', 'true', 'yes', /one of auto, true, false/],
  ['OTEL_SDK_DISABLED', 'true', 'yes', /one of false, true/],
  ['OTEL_EXPORTER_OTLP_ENDPOINT', 'http://collector:4318', 'collector:4318', /an http\(s\) URL/],
  ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'https://collector.example/v1/traces', 'grpc://collector:4317', /an http\(s\) URL/],
  ['OTEL_EXPORTER_OTLP_HEADERS', 'x-api-key=abc,x-team=relay', 'x-api-key', /comma-separated name=value pairs \(got \(hidden\)\)/],
  ['OTEL_EXPORTER_OTLP_PROTOCOL', 'http/json', 'grpc', /must be http\/json, the only protocol/],
  ['OTEL_SERVICE_NAME', 'relay-eu', 'relay eu', /a name without spaces/],
  ['OTEL_TRACES_SAMPLER', 'always_on', 'sometimes', /one of always_on, always_off, traceidratio/],
  ['OTEL_TRACES_SAMPLER_ARG', '0.01', '2', /number from 0 to 1/],
];

describe('configuration', () => {
  // Guards: a duration past what a timer holds (2^31-1 ms) made Node fire it at once: CLAIM_TTL=60d
  // refreshed every claim every millisecond, and a huge SHUTDOWN_TIMEOUT became no timeout at all.
  it.each([
    ['CLAIM_TTL', '60d', /CLAIM_TTL is too long \(got 60d\); at most 24d/],
    ['SHUTDOWN_TIMEOUT', '99999999999999999999d', /SHUTDOWN_TIMEOUT is too long/],
    ['BODY_LIMIT', '99999999999999TiB', /BODY_LIMIT is too large/],
  ])('%s=%s, out of range, is refused with a sentence', (name, value, sentence) => {
    expect(() => loadConfig('all', { [name]: value })).toThrow(sentence);
  });

  it('a retention longer than a timer holds is fine: it never becomes a timer', () => {
    expect(loadConfig('all', { STREAM_MAX_AGE: '365d' }).stream.maxAgeMs).toBe(365 * 86_400_000);
  });

  it('the table below covers every variable of every service', () => {
    expect(cases.map(([name]) => name).sort()).toEqual(Object.keys(ENV_SCHEMAS.all.properties).sort());
  });

  it('refuses a client certificate without its key, and an nkey seed beside a creds file', () => {
    expect(() => loadConfig('all', { NATS_TLS_CERT: '/etc/hostname' })).toThrow(/NATS_TLS_CERT and NATS_TLS_KEY go together/);
    expect(() => loadConfig('all', { NATS_NKEY_SEED: USER_SEED, NATS_CREDS_FILE: '/etc/hostname' })).toThrow(/NATS_NKEY_SEED and NATS_CREDS_FILE exclude each other/);
  });

  it.each(cases)('%s accepts %s', (name, good) => {
    expect(() => loadConfig('all', { ...companions[name], [name]: good })).not.toThrow();
  });

  it.each(cases.filter(([, , bad]) => bad !== null))('%s refuses a bad value with a sentence naming it', (name, _good, bad, sentence) => {
    let error: unknown;
    try {
      loadConfig('all', { ...companions[name], [name]: bad! });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems;
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(name);
    expect(problems[0]).toMatch(sentence);
  });

  it('lists every problem at once and never shows a secret value', () => {
    try {
      loadConfig('gateway', { PORT: 'abc', KEEPALIVE_INTERVAL: '1h', NATS_URL: 'nope', NATS_PASSWORD: 'hunter2', STREAM_STORAGE: 'disk' });
      throw new Error('expected a ConfigError');
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      const { problems, message } = e as ConfigError;
      expect(problems.map((p) => p.split(' ')[0])).toEqual(expect.arrayContaining(['PORT', 'KEEPALIVE_INTERVAL', 'NATS_URL', 'STREAM_STORAGE']));
      expect(message).not.toContain('hunter2');
    }
  });

  it('refuses offline identities in production', () => {
    expect(() => loadConfig('all', { PROFILE_API_URL: 'offline', NODE_ENV: 'production' })).toThrow(/refused when NODE_ENV=production/);
  });

  it('each service checks only its own variables', () => {
    expect(() => loadConfig('ingress', { KEEPALIVE_INTERVAL: '1h' })).not.toThrow();
    expect(() => loadConfig('gateway', { BODY_LIMIT: 'big' })).not.toThrow();
  });

  it.each(['ingress', 'gateway', 'all'] as ServiceKind[])('infra/env/%s.env.example lists every variable with its default and meaning', (service) => {
    const committed = readFileSync(new URL(`../infra/env/${service}.env.example`, import.meta.url), 'utf8');
    expect(committed, 'stale: run npm run env-examples').toBe(envExample(service));
    for (const name of Object.keys(ENV_SCHEMAS[service].properties)) expect(committed).toMatch(new RegExp(`^(# )?${name}=`, 'm'));
  });
});

describe('relay config check', () => {
  it('prints the effective configuration with secrets masked', async () => {
    const r = await runCli(['config', 'check', 'gateway', '--json'], { NATS_PASSWORD: 'hunter2', NATS_TOKEN: 's3cr3t', PORT: '9123' });
    expect(r.code).toBe(0);
    const rows = JSON.parse(r.stdout) as Array<{ name: string; value: string }>;
    const value = (n: string): string | undefined => rows.find((x) => x.name === n)?.value;
    expect(value('PORT')).toBe('9123');
    expect(value('KEEPALIVE_INTERVAL')).toBe('10s');
    expect(value('NATS_PASSWORD')).toBe('********');
    expect(value('NATS_TOKEN')).toBe('********');
    expect(value('BODY_LIMIT')).toBeUndefined();
    expect(r.stdout).not.toMatch(/hunter2|s3cr3t/);
  });

  // Issue 19: RETRY_MIN=0s RETRY_MAX=0s was accepted, and a draining gateway told every stream "now".
  it('refuses RETRY_MIN=0s RETRY_MAX=0s: a relay never advises an immediate reconnect', async () => {
    const r = await runCli(['config', 'check', 'gateway'], { RETRY_MIN: '0s', RETRY_MAX: '0s' });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/RETRY_MIN must be at least 1s/);
  });

  // Issue 21: "admin" was refused as a choice, so the admin service's settings could not be checked.
  it('checks the admin service: its settings, tokens masked, and a missing ADMIN_TOKEN refused', async () => {
    const ok = await runCli(['config', 'check', 'admin', '--json'], { ADMIN_TOKEN: 'a'.repeat(48), ADMIN_PORT: '9124' });
    expect(ok.code, ok.stderr).toBe(0);
    const rows = JSON.parse(ok.stdout) as Array<{ name: string; value: string }>;
    expect(rows.find((x) => x.name === 'ADMIN_PORT')?.value).toBe('9124');
    expect(rows.find((x) => x.name === 'ADMIN_TOKEN')?.value).toBe('********');
    expect(rows.some((x) => x.name === 'BODY_LIMIT')).toBe(false);
    expect(ok.stdout).not.toContain('a'.repeat(48));
    const missing = await runCli(['config', 'check', 'admin'], { ADMIN_TOKEN: '', ADMIN_TOKENS: '' });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/The admin service needs ADMIN_TOKEN/);
  });

  it('exits 2 and lists every problem when the environment would not start the service', async () => {
    const r = await runCli(['config', 'check', 'ingress'], { PORT: 'eighty', BODY_LIMIT: 'big', NATS_TOKEN: 's3cr3t' });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/PORT must be a whole number/);
    expect(r.stderr).toMatch(/BODY_LIMIT must be a size/);
    expect(r.stderr).not.toContain('s3cr3t');
  });
});
