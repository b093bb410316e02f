// `relay config check`: the effective configuration, every variable with its value and meaning,
// secrets masked.

import { maskUrls } from '../secret-shapes.js';
import type { RelayConfig } from './build.js';
import { envVariables, isSecretVariable } from './schema.js';

export function describeConfig(config: RelayConfig): Array<{ name: string; value: string; description: string }> {
  const values = new Map<string, unknown>(Object.entries(config.env));
  return Object.entries(envVariables(config.service)).map(([name, schema]) => {
    const value = values.get(name);
    const text = typeof value === 'string' || typeof value === 'number' ? String(value) : '';
    // Every value by its shape, not by its name: a URL-valued setting added tomorrow is masked too.
    const shown = text === '' ? '' : isSecretVariable(name) ? '********' : maskUrls(text);
    const description: unknown = schema['description'];
    return { name, value: shown, description: typeof description === 'string' ? description : '' };
  });
}
