// npm run client-types (and the client's build): writes clients/typescript/src/generated/wire.ts,
// the client library's wire types, from schemas/. It is committed; a test fails when it is stale.

import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { clientWireTypes } from './client-types.js';

const out = fileURLToPath(new URL('../clients/typescript/src/generated/wire.ts', import.meta.url));
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, clientWireTypes());
process.stdout.write('wrote clients/typescript/src/generated/wire.ts\n');
