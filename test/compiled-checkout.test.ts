// `relay` in a checkout runs the TypeScript sources compiled into node_modules/.cache, one folder per
// set of sources (bin/compiled-checkout.js). Each test builds a small checkout of its own (bin/ as
// shipped, esbuild linked in, a tools/relay-cli.ts that shows what it ran) and runs it as a process.
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const roots: string[] = [];

/** A checkout whose `relay` prints the word services/word.ts exports, and its package's name. */
function checkout(word: string): string {
  const root = mkdtempSync(join(tmpdir(), 'checkout-'));
  roots.push(root);
  cpSync(join(REPO, 'bin'), join(root, 'bin'), { recursive: true });
  mkdirSync(join(root, 'node_modules'));
  symlinkSync(join(REPO, 'node_modules', 'esbuild'), join(root, 'node_modules', 'esbuild'));
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'a-checkout', type: 'module' }));
  mkdirSync(join(root, 'services'));
  mkdirSync(join(root, 'tools'));
  setWord(root, word);
  writeFileSync(
    join(root, 'tools', 'relay-cli.ts'),
    [
      "import { readFileSync } from 'node:fs';",
      "import type { Word } from '../services/word.js';",
      "import { word } from '../services/word.js';",
      'const said: Word = word;',
      "if (process.argv[2] === 'fail') throw new Error('failed on purpose');",
      "const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { name: string };",
      'process.stdout.write(`${said} ${pkg.name}\\n`);',
    ].join('\n'),
  );
  return root;
}

function setWord(root: string, word: string): void {
  const file = join(root, 'services', 'word.ts');
  writeFileSync(file, `export type Word = string;\nexport const word: Word = '${word}';\n`);
  // A later time than the first version, as an editor's save has, even within the same millisecond.
  const later = new Date(Date.now() + roots.length * 1000 + Math.random() * 1000);
  utimesSync(file, later, later);
}

function relay(root: string, args: string[] = [], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [join(root, 'bin', 'relay.js'), ...args], { env: { ...process.env, ...env } }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : -1, stdout, stderr });
    });
  });
}

/** The folders in the checkout's cache: compiled sets, and anything a build left behind. */
function cached(root: string): string[] {
  return readdirSync(join(root, 'node_modules', '.cache', 'channel-relay'));
}

afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

describe('relay in a checkout', () => {
  it('runs the checkout\'s sources, and after one is changed runs the change', async () => {
    const root = checkout('first');
    expect(await relay(root)).toMatchObject({ code: 0, stdout: 'first a-checkout\n' });
    expect(await relay(root)).toMatchObject({ code: 0, stdout: 'first a-checkout\n' });
    expect(cached(root)).toHaveLength(1);

    setWord(root, 'second');
    expect(await relay(root)).toMatchObject({ code: 0, stdout: 'second a-checkout\n' });
    // The first set stays for a relay still running from it; a day later it is removed.
    expect(cached(root)).toHaveLength(2);
  });

  it('started many times at once, every run works and one compiled set is left, nothing half-built', async () => {
    const root = checkout('together');
    const runs = await Promise.all(Array.from({ length: 6 }, () => relay(root)));
    for (const r of runs) expect(r).toMatchObject({ code: 0, stdout: 'together a-checkout\n' });
    expect(cached(root)).toHaveLength(1);
    expect(cached(root)[0]).toMatch(/^cli-[0-9a-f]{16}$/);
  });

  it('two builds of one set in one process, each past the check before either renames, both answer the one folder', async () => {
    const root = checkout('raced');
    const script = [
      `const { compiledCheckout } = await import(${JSON.stringify(join(root, 'bin', 'compiled-checkout.js'))});`,
      `const dirs = await Promise.all([compiledCheckout(${JSON.stringify(root)}, 'v'), compiledCheckout(${JSON.stringify(root)}, 'v')]);`,
      'process.stdout.write(JSON.stringify(dirs));',
    ].join('\n');
    const out = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, ['--input-type=module', '-e', script], (err, stdout) => (err === null ? resolve(stdout) : reject(new Error(err.message)))),
    );
    const [a, b] = JSON.parse(out) as [string, string];
    expect(a).toBe(b);
    expect(cached(root)).toEqual([a.split('/').pop()]);
  });

  it('a failure shows the .ts line at LOG_LEVEL=debug', async () => {
    const root = checkout('unused');
    const r = await relay(root, ['fail'], { LOG_LEVEL: 'debug' });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/tools\/relay-cli\.ts:5/);
  });

  it('without esbuild and without dist/ it says what to run, exit 1', async () => {
    const root = checkout('unused');
    rmSync(join(root, 'node_modules', 'esbuild'));
    const r = await relay(root);
    expect(r).toMatchObject({ code: 1, stdout: '' });
    expect(r.stderr).toBe('relay: esbuild (a development dependency) is not installed and dist/ is absent; run npm ci, or npm run build.\n');
  });

  it('an edit that keeps the file\'s size and time (touch -r, cp -p, a 1 s clock) runs the edit', async () => {
    const root = checkout('alpha');
    expect(await relay(root)).toMatchObject({ code: 0, stdout: 'alpha a-checkout\n' });
    const file = join(root, 'services', 'word.ts');
    const before = statSync(file);
    setWord(root, 'omega');
    utimesSync(file, before.atime, before.mtime);
    expect(statSync(file)).toMatchObject({ size: before.size, mtimeMs: before.mtimeMs });
    expect(await relay(root)).toMatchObject({ code: 0, stdout: 'omega a-checkout\n' });
  });

  it('a checkout moved elsewhere, its node_modules with it, reads its own files, not the old place\'s', async () => {
    const root = checkout('moved');
    expect(await relay(root)).toMatchObject({ code: 0, stdout: 'moved a-checkout\n' });
    const moved = `${root}-moved`;
    roots.push(moved);
    renameSync(root, moved);
    writeFileSync(join(moved, 'package.json'), JSON.stringify({ name: 'the-moved-checkout', type: 'module' }));
    expect(await relay(moved)).toMatchObject({ code: 0, stdout: 'moved the-moved-checkout\n' });
  });

  it('an editor\'s lock file (.#word.ts, a symlink to nowhere) and a stray entry in the cache stop nothing', async () => {
    const root = checkout('locked');
    expect(await relay(root)).toMatchObject({ code: 0, stdout: 'locked a-checkout\n' });
    symlinkSync('user@host.1234:1700000000', join(root, 'services', '.#word.ts'));
    // What another process's build folder is when it vanishes between the listing and the look at it.
    symlinkSync(join(root, 'nowhere'), join(root, 'node_modules', '.cache', 'channel-relay', 'cli-vanished.1-ab'));
    setWord(root, 'unlocked');
    expect(await relay(root)).toMatchObject({ code: 0, stdout: 'unlocked a-checkout\n' });
  });

  it('a syntax error in a file relay does not load does not stop it; in one it loads, relay says where in one sentence', async () => {
    const root = checkout('whole');
    writeFileSync(join(root, 'tools', 'scratch.ts'), 'export const half = ;\n');
    expect(await relay(root)).toMatchObject({ code: 0, stdout: 'whole a-checkout\n' });
    // The command's own file broken: it fails, naming the file and line.
    writeFileSync(join(root, 'services', 'word.ts'), "export const word = 'broken\n");
    const r = await relay(root);
    expect(r).toMatchObject({ code: 1, stdout: '' });
    expect(r.stderr).toMatch(/^relay: the checkout's TypeScript could not be compiled: services\/word\.ts:1:\d+: Unterminated string literal\n$/);
  });

  it('dist/ removed after the sources were compiled is there again for what writes through it (the console build)', async () => {
    const root = checkout('built');
    expect(await relay(root)).toMatchObject({ code: 0, stdout: 'built a-checkout\n' });
    rmSync(join(root, 'dist'), { recursive: true, force: true });
    await relay(root);
    expect(statSync(join(root, 'dist')).isDirectory()).toBe(true);
  });

  it('where node_modules/.cache cannot be written, relay still runs (compiled into a folder of the user\'s own)', async () => {
    const root = checkout('elsewhere');
    // A file where the folder would go: as refused as a read-only node_modules, and root cannot bypass it.
    writeFileSync(join(root, 'node_modules', '.cache'), '');
    // A package of the checkout's is found from the folder elsewhere too.
    mkdirSync(join(root, 'node_modules', 'a-dependency'));
    writeFileSync(join(root, 'node_modules', 'a-dependency', 'package.json'), JSON.stringify({ name: 'a-dependency', type: 'module', main: 'index.js' }));
    writeFileSync(join(root, 'node_modules', 'a-dependency', 'index.js'), "export const suffix = '';\n");
    writeFileSync(join(root, 'tools', 'dependency.ts'), "import { suffix } from 'a-dependency';\nexport const used: string = suffix;\n");
    writeFileSync(join(root, 'tools', 'relay-cli.ts'), `import './dependency.js';\n${readFileSync(join(root, 'tools', 'relay-cli.ts'), 'utf8')}`);
    const tmp = mkdtempSync(join(tmpdir(), 'relay-tmp-'));
    roots.push(tmp);
    expect(await relay(root, [], { TMPDIR: tmp })).toMatchObject({ code: 0, stdout: 'elsewhere a-checkout\n' });
  });
});

