#!/usr/bin/env node
// The `relay` command. In a checkout it runs the TypeScript sources, compiled once per change into
// node_modules/.cache (compiled-checkout.js: it works right after `npm ci`, and starts as fast as a
// build), with the development relay (`relay dev`, npm start) from tools/; where only production
// dependencies are installed (esbuild is a development one: an image, or a checkout after
// `npm run build` and `npm prune --omit=dev`) it runs the compiled dist/, which has no development tools.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const checkout = new URL('../tools/relay-cli.ts', import.meta.url);
const compiled = new URL('../dist/services/cli/main.js', import.meta.url);

/** esbuild's version, or undefined when it is not installed (a production install). */
function esbuildVersion() {
  try {
    // Its package.json only: esbuild itself is loaded when the sources changed.
    return createRequire(import.meta.url)('esbuild/package.json').version;
  } catch {
    return undefined;
  }
}

const compiler = existsSync(checkout) ? esbuildVersion() : undefined;
if (compiler !== undefined) {
  const { compiledCheckout } = await import('./compiled-checkout.js');
  const dir = await compiledCheckout(root, compiler).catch((e) => {
    // One sentence, as every relay failure: esbuild's own trace says nothing an operator can act on.
    process.stderr.write(`relay: the checkout's TypeScript could not be compiled: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  });
  // Stack traces name the .ts lines where they are read: the services' logs, and the CLI's failures
  // at LOG_LEVEL=debug. Elsewhere reading the maps would cost an operator's command about 0.08 s.
  const command = process.argv[2];
  if (command === 'serve' || command === 'dev' || ['debug', 'trace'].includes(process.env['LOG_LEVEL'] ?? '')) process.setSourceMapsEnabled(true);
  await import(pathToFileURL(`${dir}/tools/relay-cli.js`).href);
} else if (existsSync(compiled)) {
  await import(compiled.href);
} else if (existsSync(checkout)) {
  process.stderr.write('relay: esbuild (a development dependency) is not installed and dist/ is absent; run npm ci, or npm run build.\n');
  process.exit(1);
} else {
  process.stderr.write('relay: neither tools/relay-cli.ts (a checkout) nor dist/ is present; run npm ci, or npm run build.\n');
  process.exit(1);
}
