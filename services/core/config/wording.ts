// How a refused variable is told to the operator: one sentence naming the variable, what it must be,
// and what it was (a secret is never shown, nor the secret parts of a URL).

import type { ErrorObject } from 'ajv';
import { maskUrls } from '../secret-shapes.js';
import { DURATION_PATTERN, SIZE_PATTERN } from '../units.js';
import { isSecretVariable } from './schema.js';

/** The sentence for one failed variable; `source` is the environment as given. */
export function envProblem(e: ErrorObject, source: NodeJS.ProcessEnv): string {
  const name = e.instancePath.replace(/^\//, '');
  const schema: Readonly<Record<string, unknown>> = e.parentSchema ?? {};
  const shown = isSecretVariable(name) ? '(hidden)' : quoted(source[name] ?? '');
  return `${name} ${expectation(e, schema)} (got ${shown}).`;
}

/**
 * A value as a sentence quotes it: in JSON quotes, any URL in it masked (secret-shapes.ts), cut to
 * `max` characters once masked (cut first, a URL could lose the "@" that marks its user info).
 */
export function quoted(value: string, max = Infinity): string {
  return JSON.stringify(maskUrls(value).slice(0, max));
}

const word = (v: unknown): string => (typeof v === 'string' || typeof v === 'number' ? String(v) : JSON.stringify(v));

/** What a variable must be, in words. */
function expectation(e: ErrorObject, schema: Readonly<Record<string, unknown>>): string {
  const range = (): string => {
    const min = schema['minimum'];
    const max = schema['maximum'];
    if (min !== undefined && max !== undefined) return ` from ${word(min)} to ${word(max)}`;
    if (min !== undefined) return ` of at least ${word(min)}`;
    if (max !== undefined) return ` of at most ${word(max)}`;
    return '';
  };
  switch (e.keyword) {
    case 'type':
      return schema['type'] === 'integer' ? `must be a whole number${range()}` : `must be a number${range()}`;
    case 'minimum':
    case 'maximum':
      return `must be a ${schema['type'] === 'integer' ? 'whole number' : 'number'}${range()}`;
    case 'pattern':
      if (schema['pattern'] === DURATION_PATTERN) return 'must be a duration like 500ms, 30s, 10m, 12h or 7d';
      if (schema['pattern'] === SIZE_PATTERN) return 'must be a size like 1048576, 512KiB, 1MiB or 2GB';
      if (schema['pattern'] === '^\\S+$') return 'must not contain spaces';
      if (typeof schema['x-expected'] === 'string') return `must be ${schema['x-expected']}`;
      return `must match ${word(schema['pattern'])}`;
    case 'anyOf': {
      const options = Array.isArray(schema['anyOf']) ? (schema['anyOf'] as Array<{ const?: unknown }>).map((o) => word(o.const)) : [];
      return `must be one of ${options.join(', ')}`;
    }
    case 'maxLength':
      return `must be at most ${word(schema['maxLength'])} characters`;
    case 'minLength':
      return 'must not be empty';
    default:
      return e.message ?? 'is invalid';
  }
}
