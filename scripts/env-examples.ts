// The text of infra/env/<service>.env.example: every variable of the configuration schema with its
// default and meaning. Written by npm run env-examples; a test fails when the files and the schema
// disagree.

import { envVariables, isSecretVariable, type ServiceKind } from '../services/core/config.js';

const TITLES: Record<ServiceKind, string> = {
  ingress: 'the ingress (relay serve ingress)',
  gateway: 'the gateway (relay serve gateway)',
  admin: 'the admin service: console and admin API (relay serve admin)',
  all: 'both services in one process (relay serve all / npm start)',
};

export function envExample(service: ServiceKind): string {
  const lines = [
    `# Environment of ${TITLES[service]}.`,
    '# Generated from the configuration schema (services/core/config/schema.ts) by npm run env-examples;',
    '# a test fails when this file and the schema disagree. Every line shows the default.',
    '',
  ];
  for (const [name, schema] of Object.entries(envVariables(service))) {
    const description: unknown = schema['description'];
    const fallback: unknown = schema['default'];
    for (const line of wrap(typeof description === 'string' ? description : '', 98)) lines.push(`# ${line}`);
    const shown = typeof fallback === 'string' || typeof fallback === 'number' ? String(fallback) : '';
    lines.push(`${isSecretVariable(name) || shown === '' ? '# ' : ''}${name}=${shown}`, '');
  }
  return lines.join('\n');
}

function wrap(text: string, width: number): string[] {
  const out: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && line.length + word.length + 1 > width) {
      out.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '') out.push(line);
  return out;
}
