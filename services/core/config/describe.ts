// `relay config check`: the effective configuration, every variable with its value and meaning,
// secrets masked.

import { maskUrlCredentials } from '../display.js';
import type { RelayConfig } from './build.js';
import { envVariables, isSecretVariable } from './schema.js';

export function describeConfig(config: RelayConfig): Array<{ name: string; value: string; description: string }> {
  const values = new Map<string, unknown>(Object.entries(config.env));
  return Object.entries(envVariables(config.service)).map(([name, schema]) => {
    const value = values.get(name);
    const text = typeof value === 'string' || typeof value === 'number' ? String(value) : '';
    // URLs may carry user:password@ (NATS_URL, PROFILE_API_URL): shown as ***@. Only URLs: a path
    // such as NATS_CREDS_FILE may hold an "@" that hides nothing.
    const shown = text === '' ? '' : isSecretVariable(name) ? '********' : name.endsWith('_URL') ? maskUrlCredentials(text) : text;
    const description: unknown = schema['description'];
    return { name, value: shown, description: typeof description === 'string' ? description : '' };
  });
}
