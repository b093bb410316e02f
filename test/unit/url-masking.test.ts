// One rule for every URL the relay shows an operator (secret-shapes.ts): user info, secret-looking
// query parameters and the fragment are masked; the rest stays readable. Checked on the rule itself,
// then on every setting of the configuration schema as `relay config check` and its error sentences
// show it, and on the start-up log.

import { describe, expect, it } from 'vitest';
import { ConfigError, describeConfig, ENV_SCHEMAS, isSecretVariable, loadConfig } from '../../services/core/config.js';
import { createLogger } from '../../services/core/logger.js';
import { maskServerList, maskUrls } from '../../services/core/secret-shapes.js';
import { startTracing } from '../../services/core/tracing.js';
import { LogCapture } from '../helpers/relay.js';

describe('the URL masking rule', () => {
  it.each([
    ['user and password', 'http://user:pw@host.example/', 'http://***@host.example/'],
    ['a token as user info', 'tls://s3cr3t@nats.example:4222', 'tls://***@nats.example:4222'],
    ['a password holding "@" and "/"', 'nats://u:p@s/s@nats.example:4222', 'nats://***@nats.example:4222'],
    ['a password holding "?": nothing after the scheme can be told apart', 'https://u:p?w@host.example/?a=1', 'https://***'],
    ['user info without a scheme (host:port)', 'u:pw@nats.example:4222', '***@nats.example:4222'],
    ['a list of URLs, each', 'nats://a:b@n1.example:4222, tls://tok@n2.example:4222', 'nats://***@n1.example:4222, tls://***@n2.example:4222'],
    ['secret query parameters, the others kept', 'https://api.example/p?access_token=t1&lang=en&api_key=k1', 'https://api.example/p?access_token=***&lang=en&api_key=***'],
    ['parameters parted by ";" and ","', 'https://h.example/?scope=a,token=t;b=2', 'https://h.example/?scope=a,token=***;b=2'],
    ['a percent-encoded name', 'https://h.example/?access%5Ftoken=t', 'https://h.example/?access%5Ftoken=***'],
    ['an empty value (nothing to hide)', 'https://h.example/?token=', 'https://h.example/?token='],
    ['the fragment', 'https://h.example/cb#access_token=t&state=s', 'https://h.example/cb#***'],
    ['an "@" in the query is no user info', '/?email=a@b.example&token=t', '/?email=a@b.example&token=***'],
    ['a request target', '/?host=q.example.net&access_token=t', '/?host=q.example.net&access_token=***'],
    ['a path holding "@"', '/files/a@b/x?lang=en', '/files/a@b/x?lang=en'],
    ['no URL: a file path', '/etc/relay/user.creds', '/etc/relay/user.creds'],
    ['no URL: a word', 'offline', 'offline'],
    ['no URL: host:port', '127.0.0.1:4222', '127.0.0.1:4222'],
  ])('%s', (_, url, shown) => {
    expect(maskUrls(url)).toBe(shown);
  });

  // Guards: NATS_URL is split at every comma, and each piece was masked alone, so `relay setup`, the
  // CLI's "Cannot reach NATS" and the services' connection sentences showed `nats://cli:c0mma`.
  it('NATS_URL with a comma inside a password, as the configuration splits it, shows no part of it', () => {
    const servers = 'nats://cli:c0mma,hunter2x@nats.example:4222,nats://n2.example:4222'.split(',');
    expect(maskServerList(servers)).toBe('nats://***@nats.example:4222, nats://n2.example:4222');
    expect(maskServerList(['nats://a:b@n1.example:4222', 'n2.example:4222'])).toBe('nats://***@n1.example:4222, n2.example:4222');
  });

  // The list decided for issue 26, and the shapes real backends use.
  const secretNames = ['token', 'key', 'secret', 'password', 'pass', 'auth', 'signature', 'sig', 'credential', 'session', 'api_key', 'apiKey', 'access-token', 'X-Amz-Signature', 'X-Amz-Credential', 'X-Goog-Signature', 'client_secret', 'sessionid', 'jwt', 'hmac_sig'];
  const plainNames = ['host', 'region', 'lang', 'design', 'signal', 'page', 'channel', 'format'];
  it.each(secretNames)('a query parameter named %s is masked', (name) => {
    expect(maskUrls(`https://h.example/?${name}=v4lue&x=1`)).toBe(`https://h.example/?${name}=***&x=1`);
  });
  it.each(plainNames)('a query parameter named %s is shown', (name) => {
    expect(maskUrls(`https://h.example/?${name}=v4lue`)).toBe(`https://h.example/?${name}=v4lue`);
  });
});

// Every secret a probe URL carries, and what must stay readable of it.
const SECRETS = ['probe-user', 'pw-s3cret-1', 'k3y-s3cret-2', 't0ken-s3cret-3', 'sig-s3cret-4', 'frag-s3cret-5'];
const HOST = 'relay-probe.example';
const PROBES = [
  `https://probe-user:pw-s3cret-1@${HOST}:4318/v1?api_key=k3y-s3cret-2&region=eu&access_token=t0ken-s3cret-3&sig=sig-s3cret-4#frag-s3cret-5`,
  `nats://probe-user:pw-s3cret-1@${HOST}:4222`,
];

/** What an operator sees when `name` holds `probe`: the check's value, or its error sentences. */
function shown(name: string, probe: string): { accepted: boolean; text: string } {
  try {
    const row = describeConfig(loadConfig('all', { [name]: probe })).find((r) => r.name === name);
    return { accepted: true, text: row?.value ?? '' };
  } catch (e) {
    if (e instanceof ConfigError) return { accepted: false, text: e.message };
    throw e;
  }
}

describe('every setting of the configuration schema given a URL with secrets', () => {
  const variables = Object.keys(ENV_SCHEMAS.all.properties);
  const urlValued = variables.filter((name) => PROBES.some((p) => shown(name, p).accepted));

  it.each(variables)('%s: neither `relay config check` nor its error sentences show a secret of the URL', (name) => {
    for (const probe of PROBES) {
      const { accepted, text } = shown(name, probe);
      for (const secret of SECRETS) expect(text, `${name}=${probe}`).not.toContain(secret);
      // Masked, not hidden: the operator still sees where it points.
      if (accepted && !isSecretVariable(name)) expect(text, `${name}=${probe}`).toContain(HOST);
      else if (!accepted) expect(text).toContain(name);
    }
  });

  it('the URL-valued settings are found by what the schema accepts, every *_URL and *_ENDPOINT among them', () => {
    const named = variables.filter((n) => /_(URL|ENDPOINT)$/.test(n));
    expect(named.length).toBeGreaterThanOrEqual(4);
    expect(urlValued).toEqual(expect.arrayContaining(named));
  });

  it('an accepted URL keeps its parameters that hide nothing', () => {
    const { text } = shown('OTEL_EXPORTER_OTLP_ENDPOINT', PROBES[0]!);
    expect(text).toBe(`https://***@${HOST}:4318/v1?api_key=***&region=eu&access_token=***&sig=***#***`);
  });
});

describe('the start-up log', () => {
  it('"tracing on" names the OTLP endpoint with its secrets masked', async () => {
    const out = new LogCapture();
    const config = loadConfig('gateway', { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: PROBES[0]! });
    const tracing = startTracing(config.tracing, 'n1', createLogger({ level: 'info', pretty: false, destination: out }));
    await tracing.shutdown();
    const line = out.lines.map((l) => JSON.parse(l) as { msg: string; url?: string }).find((l) => l.msg.startsWith('tracing on'));
    expect(line?.url).toBe(`https://***@${HOST}:4318/v1?api_key=***&region=eu&access_token=***&sig=***#***`);
    for (const secret of SECRETS) expect(out.text).not.toContain(secret);
  });
});
