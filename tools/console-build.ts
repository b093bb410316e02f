// npm run build:console: bundles the console (console/src, preact and uPlot) into dist/console with
// esbuild: one script and one stylesheet named by their content hash, an index.html naming them,
// and gzip and brotli copies the admin service serves to browsers that take them. No CDN, no
// network at run time: the page works on an operator's machine with no internet.

import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const ROOT = resolve(import.meta.dirname, '..');
export const CONSOLE_OUT = join(ROOT, 'dist', 'console');

/**
 * Builds into a folder of its own and then swaps it in, so a console being served (a test that
 * builds while another one's browser loads the page: in a clean clone several test files do) never
 * sees dist/console emptied under it.
 */
export async function buildConsole(): Promise<{ files: { name: string; bytes: number; gzipBytes: number }[] }> {
  const out = `${CONSOLE_OUT}-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    const built = await buildInto(out);
    const old = `${out}-old`;
    if (existsSync(CONSOLE_OUT)) renameSync(CONSOLE_OUT, old);
    renameSync(out, CONSOLE_OUT);
    rmSync(old, { recursive: true, force: true });
    return built;
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

async function buildInto(dir: string): Promise<{ files: { name: string; bytes: number; gzipBytes: number }[] }> {
  mkdirSync(dir, { recursive: true });
  const result = await build({
    entryPoints: [join(ROOT, 'console', 'src', 'main.tsx')],
    bundle: true,
    outdir: dir,
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
  writeFileSync(join(dir, 'index.html'), html);
  // index.html names it; without one the browser asks for /favicon.ico and logs two errors per load.
  copyFileSync(join(ROOT, 'console', 'favicon.svg'), join(dir, 'favicon.svg'));
  const files = [];
  for (const name of [script, style, 'favicon.svg', 'index.html']) {
    const body = readFileSync(join(dir, name));
    const gz = gzipSync(body, { level: 9 });
    writeFileSync(join(dir, `${name}.br`), brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
    // Written last: index.html.gz is how the admin service knows the console is built.
    writeFileSync(join(dir, `${name}.gz`), gz);
    files.push({ name, bytes: body.length, gzipBytes: gz.length });
  }
  return { files };
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const { files } = await buildConsole();
  for (const f of files) process.stdout.write(`dist/console/${f.name}  ${(f.bytes / 1024).toFixed(1)} KiB (${(f.gzipBytes / 1024).toFixed(1)} KiB gzip)\n`);
}
