// A production install as the image has it, built here without a registry: package.json, the
// compiled dist/, and node_modules holding only what package-lock.json marks as a runtime
// dependency (copied, not linked: a link would resolve back into the checkout, which has every
// development dependency). A checkout's bin/ and tools/ may be added, as a checkout pruned with
// `npm prune --omit=dev` after a build keeps them.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

interface LockEntry {
  dev?: boolean;
  link?: boolean;
}

/** The top-level node_modules folders a `npm ci --omit=dev` would install (nested ones come along). */
export function productionPackages(): string[] {
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };
  return Object.entries(lock.packages)
    .filter(([path, entry]) => /^node_modules\/(?:@[^/]+\/)?[^/@]+$/.test(path) && entry.dev !== true && entry.link !== true)
    .map(([path]) => path);
}

export interface ProductionInstall {
  dir: string;
  /** The compiled entry point, dist/services/cli/main.js. */
  entry: string;
  remove(): void;
}

export function createProductionInstall(options: { checkoutFiles?: string[] } = {}): ProductionInstall {
  const dir = mkdtempSync(join(tmpdir(), 'relay-production-'));
  execFileSync('npx', ['--no-install', 'tsc', '-p', join(ROOT, 'tsconfig.build.json'), '--outDir', join(dir, 'dist')], { cwd: ROOT, stdio: 'pipe' });
  for (const file of ['package.json', ...(options.checkoutFiles ?? [])]) cpSync(join(ROOT, file), join(dir, file), { recursive: true });
  for (const pkg of productionPackages()) cpSync(join(ROOT, pkg), join(dir, pkg), { recursive: true });
  return {
    dir,
    entry: join(dir, 'dist', 'services', 'cli', 'main.js'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
