#!/usr/bin/env node
// The `relay` command. In a checkout it runs the TypeScript source through tsx (so it works right
// after `npm ci`), with the development relay (`relay dev`, npm start) from tools/; where only
// production dependencies are installed (tsx is a development one: an image, or a checkout after
// `npm run build` and `npm prune --omit=dev`) it runs the compiled dist/, which has no development tools.
import { existsSync } from 'node:fs';

const checkout = new URL('../tools/relay-cli.ts', import.meta.url);
const compiled = new URL('../dist/services/cli/main.js', import.meta.url);

/** tsx's loader API, or undefined when tsx is not installed (a production install). */
async function tsxApi() {
  try {
    return await import('tsx/esm/api');
  } catch (e) {
    if (e instanceof Error && 'code' in e && e.code === 'ERR_MODULE_NOT_FOUND') return undefined;
    throw e;
  }
}

const tsx = existsSync(checkout) ? await tsxApi() : undefined;
if (tsx !== undefined) {
  tsx.register();
  await import(checkout.href);
} else if (existsSync(compiled)) {
  await import(compiled.href);
} else if (existsSync(checkout)) {
  process.stderr.write('relay: tsx (a development dependency) is not installed and dist/ is absent; run npm ci, or npm run build.\n');
  process.exit(1);
} else {
  process.stderr.write('relay: neither tools/relay-cli.ts (a checkout) nor dist/ is present; run npm run build.\n');
  process.exit(1);
}
