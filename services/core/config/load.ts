// Loading: the environment of one service, checked against its schema with the defaults applied
// (ajv's useDefaults and coerceTypes, the same engine fastify's env-schema wraps, used directly so
// each problem keeps its own sentence), then the checks the schema cannot express. Every problem is
// reported at once; a service starts only on a configuration with none.

import { Ajv, type ValidateFunction } from 'ajv';
import { ConfigError } from './config-error.js';
import { buildConfig, type RelayConfig } from './build.js';
import { crossChecks } from './checks.js';
import { trustedProxiesProblems } from '../client-address.js';
import { ENV_SCHEMAS, envVariables, type Env, type ServiceKind } from './schema.js';
import { envProblem } from './wording.js';

// Not optimised: a validator run once per process costs less compiled plainly (a CLI command saves
// about 50 ms of its start).
const envAjv = new Ajv({ allErrors: true, coerceTypes: true, useDefaults: true, strict: false, verbose: true, code: { optimize: false } });
// Compiled when first asked for: a process loads one service's configuration (and 'all'), and the
// CLI's read commands should not pay for four compilations at start.
const validators = new Map<ServiceKind, ValidateFunction<Env>>();
function validator(kind: ServiceKind): ValidateFunction<Env> {
  let v = validators.get(kind);
  if (v === undefined) {
    v = envAjv.compile<Env>(ENV_SCHEMAS[kind]);
    validators.set(kind, v);
  }
  return v;
}

/** Reads and checks the environment for one service; throws ConfigError listing every problem. */
export function loadConfig(service: ServiceKind, source: NodeJS.ProcessEnv = process.env): RelayConfig {
  // Only the service's own variables are read; an empty one counts as unset (its default applies).
  const values: Record<string, unknown> = {};
  for (const name of Object.keys(envVariables(service))) {
    const value = source[name];
    if (value !== undefined && value !== '') values[name] = value;
  }
  const validate = validator(service);
  // One line per variable: several keywords (anyOf and each branch) may fail for one value.
  const failed = new Map<string, string>();
  for (const e of validate(values) ? [] : (validate.errors ?? [])) {
    const name = e.instancePath.replace(/^\//, '');
    if (!failed.has(name) || e.keyword === 'anyOf') failed.set(name, envProblem(e, source));
  }
  const problems = [...failed.values(), ...crossChecks(service, values, new Set(failed.keys())), ...proxyProblems(values, failed)];
  if (problems.length > 0) throw new ConfigError(problems);
  // The other services' variables take their defaults: a gateway's config still has an ingress
  // section, the schema's, so code shared by both never meets a missing value.
  const env: unknown = values;
  const all = validator('all');
  if (!all(env)) throw new ConfigError((all.errors ?? []).map((e) => envProblem(e, source)));
  return buildConfig(service, env, new Set(Object.keys(values)));
}

/** TRUSTED_PROXIES, entry by entry, as the address logic will read it. */
function proxyProblems(values: Readonly<Record<string, unknown>>, failed: ReadonlyMap<string, string>): string[] {
  const value = values['TRUSTED_PROXIES'];
  if (typeof value !== 'string' || failed.has('TRUSTED_PROXIES')) return [];
  return trustedProxiesProblems(value.split(',').map((s) => s.trim()).filter((s) => s !== ''));
}
