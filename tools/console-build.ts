// npm run build:console: bundles the console (console/src, preact and uPlot) into dist/console with
// esbuild: one script and one stylesheet named by their content hash, an index.html naming them,
// and gzip and brotli copies the admin service serves to browsers that take them. No CDN, no
// network at run time: the page works on an operator's machine with no internet.

import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const ROOT = resolve(import.meta.dirname, '..');
export const CONSOLE_OUT = join(ROOT, 'dist', 'console');

export async function buildConsole(): Promise<{ files: { name: string; bytes: number; gzipBytes: number }[] }> {
  rmSync(CONSOLE_OUT, { recursive: true, force: true });
  mkdirSync(CONSOLE_OUT, { recursive: true });
  const result = await build({
    entryPoints: [join(ROOT, 'console', 'src', 'main.tsx')],
    bundle: true,
    outdir: CONSOLE_OUT,
    entryNames: '[name]-[hash]',
    format: 'esm',
    target: ['es2022'],
    minify: true,
    legalComments: 'none',
    tsconfig: join(ROOT, 'console', 'tsconfig.json'),
    metafile: true,
    logLevel: 'warning',
  });
  const outputs = Object.keys(result.metafile.outputs).map((p) => basename(p));
  const script = outputs.find((f) => f.endsWith('.js'));
  const style = outputs.find((f) => f.endsWith('.css'));
  if (script === undefined || style === undefined) throw new Error(`esbuild wrote ${outputs.join(', ')}, not a script and a stylesheet`);
  const html = readFileSync(join(ROOT, 'console', 'index.html'), 'utf8').replace('%SCRIPT%', `/${script}`).replace('%STYLE%', `/${style}`);
  writeFileSync(join(CONSOLE_OUT, 'index.html'), html);
  // index.html names it; without one the browser asks for /favicon.ico and logs two errors per load.
  copyFileSync(join(ROOT, 'console', 'favicon.svg'), join(CONSOLE_OUT, 'favicon.svg'));
  const files = [];
  for (const name of [script, style, 'favicon.svg', 'index.html']) {
    const body = readFileSync(join(CONSOLE_OUT, name));
    const gz = gzipSync(body, { level: 9 });
    writeFileSync(join(CONSOLE_OUT, `${name}.br`), brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
    // Written last: index.html.gz is how the admin service knows the console is built.
    writeFileSync(join(CONSOLE_OUT, `${name}.gz`), gz);
    files.push({ name, bytes: body.length, gzipBytes: gz.length });
  }
  return { files };
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const { files } = await buildConsole();
  for (const f of files) process.stdout.write(`dist/console/${f.name}  ${(f.bytes / 1024).toFixed(1)} KiB (${(f.gzipBytes / 1024).toFixed(1)} KiB gzip)\n`);
}
