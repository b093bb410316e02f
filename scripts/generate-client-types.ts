// npm run client-types (and the client's build): writes clients/typescript/src/generated/wire.ts (the
// client library's wire types), generated/schemas.ts (what it checks delivered frames against) and
// generated/timings.ts (the stream timings it plans with) and generated/event-id.ts (the ids it keeps), all from schemas/.
// They are committed; a test fails when one is stale.

import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { clientEventId } from './client-event-id.js';
import { clientWireSchemas } from './client-schemas.js';
import { clientStreamTimings } from './client-timings.js';
import { clientWireTypes } from './client-types.js';

for (const [name, text] of [
  ['wire.ts', clientWireTypes()],
  ['schemas.ts', clientWireSchemas()],
  ['timings.ts', clientStreamTimings()],
  ['event-id.ts', clientEventId()],
] as const) {
  const out = fileURLToPath(new URL(`../clients/typescript/src/generated/${name}`, import.meta.url));
  // Rewritten only when it changes: builds run while tests read it, and an unchanged file keeps its mtime.
  if (existsSync(out) && readFileSync(out, 'utf8') === text) {
    process.stdout.write(`clients/typescript/src/generated/${name} is up to date\n`);
  } else {
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, text);
    process.stdout.write(`wrote clients/typescript/src/generated/${name}\n`);
  }
}
