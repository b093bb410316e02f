// A checkout's TypeScript compiled once per change of its sources, so `relay` in a checkout starts as
// fast as from dist/ (tsx spends about 0.3 s registering itself before the first line runs, and
// operators and scripts call `relay` in loops). esbuild transpiles file by file, as tsx does (the
// tsconfig's isolatedModules makes that exact); nothing is bundled.
//
// Each set of sources gets its own folder, named by a hash of the checkout's place and every file's
// path, size, times and inode, and never changed once complete: relays running from an older set
// keep their files, and processes starting at once (a test suite's) race only to rename a finished
// folder into place. The folder mirrors the checkout (services/, schemas/, tools/ compiled;
// package.json, dist/ and console/ linked), so code that finds files next to itself finds them as in
// the checkout. The links name the checkout by its absolute path, so the checkout's path is part of
// the hash: a moved or copied checkout, or worktrees sharing one node_modules, never use each
// other's links.
import { createHash, randomBytes } from 'node:crypto';
import { accessSync, constants, existsSync, lstatSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';

const COMPILED = ['services', 'schemas', 'tools'];
const LINKED = ['package.json', 'dist', 'console'];
/** Marks a folder as whole: written last, before the rename. */
const COMPLETE = '.complete';
/** Older sets are removed after this long: long enough for any relay still loading from one. */
const KEEP_OLD_MS = 24 * 3600_000;

/**
 * Every .ts file under the compiled folders, with what says it changed. Dot-files are not sources
 * (an editor's lock file, .#name.ts, is a symlink to nowhere), and a file gone between the listing
 * and its stat (an editor's atomic save) is not one either. ctime and the inode are in the stamp:
 * touch -r, cp -p or a restored backup can put back a size and an mtime, not those.
 */
function sources(root) {
  const found = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name.startsWith('.')) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) {
        let s;
        try {
          s = statSync(path);
        } catch (e) {
          if (e.code === 'ENOENT') continue;
          throw e;
        }
        if (!s.isFile()) continue;
        found.push({ path, stamp: `${relative(root, path)}\0${s.size}\0${s.mtimeMs}\0${s.ctimeMs}\0${s.ino}` });
      }
    }
  };
  for (const dir of COMPILED) if (existsSync(join(root, dir))) walk(join(root, dir));
  return found.sort((a, b) => (a.stamp < b.stamp ? -1 : 1));
}

/**
 * Where the sets are kept: node_modules/.cache in the checkout, or, where that cannot be written (a
 * read-only node_modules, a checkout of another user's), a folder of this user's own under the
 * temporary folder, as tsx kept its cache. That one is trusted only if it is this user's and nobody
 * else can write to it: whatever it holds is run.
 */
function cacheFolder(root) {
  const inCheckout = join(root, 'node_modules', '.cache', 'channel-relay');
  try {
    mkdirSync(inCheckout, { recursive: true });
    accessSync(inCheckout, constants.W_OK);
    return inCheckout;
  } catch {
    // Below.
  }
  const uid = process.getuid?.();
  const own = join(tmpdir(), `channel-relay-${uid ?? 'user'}`);
  mkdirSync(own, { recursive: true, mode: 0o700 });
  const s = lstatSync(own);
  if (!s.isDirectory() || (uid !== undefined && (s.uid !== uid || (s.mode & 0o022) !== 0))) {
    throw new Error(`${inCheckout} cannot be written, and ${own} is not a folder of this user's own that only they can write to`);
  }
  return own;
}

/** esbuild's errors as one line: file:line:column: text, each. */
function described(errors) {
  return errors.map((m) => (m.location ? `${m.location.file}:${m.location.line}:${m.location.column}: ${m.text}` : m.text)).join('; ');
}

/**
 * Compiles `files` into `outdir`. A file esbuild cannot read that relay never loads (a syntax error
 * in a script being written under tools/) stops nothing, as when tsx compiled each file on its load:
 * it is left out. One that relay's modules import, at once or when a command runs, is the failure.
 */
async function compile(root, files, outdir) {
  const { build } = await import('esbuild');
  const options = { absWorkingDir: root, format: 'esm', platform: 'node', target: 'node20', logLevel: 'silent' };
  // Stack traces can name the .ts lines (bin/relay.js says when they are read); the maps point at
  // the checkout's files rather than copy them, a set is about 1 MB of files rather than 2.8.
  const compileAll = (entryPoints) => build({ ...options, entryPoints, outdir, outbase: root, sourcemap: 'linked', sourcesContent: false });
  try {
    await compileAll(files);
    return;
  } catch (e) {
    const broken = new Set((e?.errors ?? []).map((m) => m.location?.file).filter((f) => f !== undefined).map((f) => resolve(root, f)));
    if (broken.size === 0) throw e;
    // What relay loads, the graph from its entry with the dynamic imports, read as a bundle (not
    // written): it fails, naming the file and line, only if a broken file is in it.
    await build({ ...options, entryPoints: [join(root, 'tools', 'relay-cli.ts')], bundle: true, packages: 'external', write: false }).catch((r) => {
      throw new Error(described(r?.errors ?? [{ text: String(r) }]));
    });
    await compileAll(files.filter((f) => !broken.has(f)));
  }
}

/**
 * The folder holding the compiled checkout (compiled now if these sources have not been), whose
 * tools/relay-cli.js is the `relay` command. `esbuildVersion` is part of the name: a new compiler
 * compiles again.
 */
export async function compiledCheckout(root, esbuildVersion) {
  // dist/ is made if missing (`rm -rf dist` included): the console's build writes through the link.
  // A checkout that cannot be written (another user's) goes without.
  try {
    mkdirSync(join(root, 'dist'), { recursive: true });
  } catch {
    // Not linked, then.
  }
  const files = sources(root);
  const linked = LINKED.filter((name) => existsSync(join(root, name)));
  const hash = createHash('sha256').update(`${esbuildVersion}\n${process.version}\n${root}\n${linked.join(',')}\n`);
  for (const f of files) hash.update(`${f.stamp}\n`);
  const cache = cacheFolder(root);
  const dir = join(cache, `cli-${hash.digest('hex').slice(0, 16)}`);
  if (existsSync(join(dir, COMPLETE))) return dir;

  const building = `${dir}.${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    await compile(
      root,
      files.map((f) => f.path),
      building,
    );
    for (const name of linked) symlinkSync(join(root, name), join(building, name));
    // Outside the checkout, the packages are found through a link as they are from inside it.
    if (!dir.startsWith(join(root, 'node_modules'))) symlinkSync(join(root, 'node_modules'), join(building, 'node_modules'));
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

/**
 * Sets compiled from sources that have since changed, and builds abandoned by a killed process.
 * Another process's build folder may vanish while this looks (renamed into place, or removed by the
 * loser of a race), and a set of another user's may not be removable: neither is this run's failure.
 */
function removeOld(cache, keep) {
  const now = Date.now();
  for (const name of readdirSync(cache)) {
    const path = join(cache, name);
    if (path === keep || !name.startsWith('cli-')) continue;
    try {
      if (now - lstatSync(path).mtimeMs > KEEP_OLD_MS) rmSync(path, { recursive: true, force: true });
    } catch {
      // Gone already, or not ours to remove.
    }
  }
}
