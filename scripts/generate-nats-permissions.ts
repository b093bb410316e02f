// npm run nats-permissions: writes the committed NATS permission files from the relay's layout.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { permissionFiles } from './nats-permissions.js';

const root = fileURLToPath(new URL('../', import.meta.url));
const files = permissionFiles();
for (const [path, text] of Object.entries(files)) {
  mkdirSync(dirname(`${root}${path}`), { recursive: true });
  writeFileSync(`${root}${path}`, text);
}
process.stdout.write(`wrote ${Object.keys(files).join(', ')}\n`);
