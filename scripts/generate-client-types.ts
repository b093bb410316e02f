// npm run client-types (and the client's build): writes clients/typescript/src/generated/wire.ts,
// the client library's wire types, from schemas/. It is committed; a test fails when it is stale.

import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { clientWireTypes } from './client-types.js';

const out = fileURLToPath(new URL('../clients/typescript/src/generated/wire.ts', import.meta.url));
const text = clientWireTypes();
// Rewritten only when it changes: builds run while tests read it, and an unchanged file keeps its mtime.
if (existsSync(out) && readFileSync(out, 'utf8') === text) {
  process.stdout.write('clients/typescript/src/generated/wire.ts is up to date\n');
} else {
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, text);
  process.stdout.write('wrote clients/typescript/src/generated/wire.ts\n');
}
