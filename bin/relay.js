#!/usr/bin/env node
// The `relay` command. In a checkout it runs the TypeScript source through tsx (so it works right
// after `npm ci`), with the development relay (`relay dev`, npm start) from tools/; in an image
// built with `npm run build` it runs the compiled dist/, which has no development tools.
import { existsSync } from 'node:fs';

const checkout = new URL('../tools/relay-cli.ts', import.meta.url);
const compiled = new URL('../dist/services/cli/main.js', import.meta.url);

if (existsSync(checkout)) {
  const { register } = await import('tsx/esm/api');
  register();
  await import(checkout.href);
} else if (existsSync(compiled)) {
  await import(compiled.href);
} else {
  process.stderr.write('relay: neither tools/relay-cli.ts (a checkout) nor dist/ is present; run npm run build.\n');
  process.exit(1);
}
