// npm run env-examples: writes infra/env/<service>.env.example from the configuration schema.
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ENV_SCHEMAS, type ServiceKind } from '../services/core/config.js';
import { envExample } from './env-examples.js';

const dir = fileURLToPath(new URL('../infra/env/', import.meta.url));
mkdirSync(dir, { recursive: true });
for (const service of Object.keys(ENV_SCHEMAS) as ServiceKind[]) writeFileSync(`${dir}${service}.env.example`, envExample(service));
process.stdout.write(`wrote infra/env/{${Object.keys(ENV_SCHEMAS).join(',')}}.env.example\n`);
