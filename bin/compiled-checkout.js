// A checkout's TypeScript compiled once per change of its sources, so `relay` in a checkout starts as
// fast as from dist/ (tsx spends about 0.3 s registering itself before the first line runs, and
// operators and scripts call `relay` in loops). esbuild transpiles file by file, as tsx does (the
// tsconfig's isolatedModules makes that exact); nothing is bundled.
//
// Each set of sources gets its own folder, named by a hash of every file's path, size and time, and
// never changed once complete: relays running from an older set keep their files, and processes
// starting at once (a test suite's) race only to rename a finished folder into place. The folder
// mirrors the checkout (services/, schemas/, tools/ compiled; package.json, dist/ and console/
// linked), so code that finds files next to itself finds them as in the checkout.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const COMPILED = ['services', 'schemas', 'tools'];
const LINKED = ['package.json', 'dist', 'console'];
/** Marks a folder as whole: written last, before the rename. */
const COMPLETE = '.complete';
/** Older sets are removed after this long: long enough for any relay still loading from one. */
const KEEP_OLD_MS = 24 * 3600_000;

/** Every .ts file under the compiled folders, with what says it changed. */
function sources(root) {
  const found = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) {
        const s = statSync(path);
        found.push({ path, stamp: `${relative(root, path)}\0${s.size}\0${s.mtimeMs}` });
      }
    }
  };
  for (const dir of COMPILED) if (existsSync(join(root, dir))) walk(join(root, dir));
  return found.sort((a, b) => (a.stamp < b.stamp ? -1 : 1));
}

/**
 * The folder holding the compiled checkout (compiled now if these sources have not been), whose
 * tools/relay-cli.js is the `relay` command. `esbuildVersion` is part of the name: a new compiler
 * compiles again.
 */
export async function compiledCheckout(root, esbuildVersion) {
  const files = sources(root);
  const hash = createHash('sha256').update(`${esbuildVersion}\n${process.version}\n`);
  for (const f of files) hash.update(`${f.stamp}\n`);
  const cache = join(root, 'node_modules', '.cache', 'channel-relay');
  const dir = join(cache, `cli-${hash.digest('hex').slice(0, 16)}`);
  if (existsSync(join(dir, COMPLETE))) return dir;

  const building = `${dir}.${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    const { build } = await import('esbuild');
    await build({
      entryPoints: files.map((f) => f.path),
      outdir: building,
      outbase: root,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      // Stack traces can name the .ts lines (bin/relay.js says when they are read).
      sourcemap: 'linked',
      logLevel: 'error',
    });
    for (const name of LINKED) {
      // dist/ is made if missing: the console's build writes through this link.
      if (name === 'dist') mkdirSync(join(root, name), { recursive: true });
      if (existsSync(join(root, name))) symlinkSync(join(root, name), join(building, name));
    }
    writeFileSync(join(building, COMPLETE), '');
    try {
      renameSync(building, dir);
    } catch (e) {
      // Another process finished the same set first: theirs is as good.
      if (!existsSync(join(dir, COMPLETE))) throw e;
    }
  } finally {
    rmSync(building, { recursive: true, force: true });
  }
  removeOld(cache, dir);
  return dir;
}

/** Sets compiled from sources that have since changed, and builds abandoned by a killed process. */
function removeOld(cache, keep) {
  const now = Date.now();
  for (const name of readdirSync(cache)) {
    const path = join(cache, name);
    if (path === keep || !name.startsWith('cli-')) continue;
    if (now - statSync(path).mtimeMs > KEEP_OLD_MS) rmSync(path, { recursive: true, force: true });
  }
}
