#!/usr/bin/env node
// The `relay` command. In a checkout it runs the TypeScript source through tsx (so it works right
// after `npm ci`); in an image built with `npm run build` it runs the compiled dist/.
import { existsSync } from 'node:fs';

const source = new URL('../services/cli/main.ts', import.meta.url);
const compiled = new URL('../dist/services/cli/main.js', import.meta.url);

if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  await import(source.href);
} else if (existsSync(compiled)) {
  await import(compiled.href);
} else {
  process.stderr.write('relay: neither services/cli/main.ts nor dist/ is present; run npm run build.\n');
  process.exit(1);
}
