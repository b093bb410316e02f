// The system programs that development, tests and benchmarks run (nats-server, pushpin, nginx...):
// finding them, and installing the Debian package on a machine without one. Installing happens only
// as root with apt-get; anyone else is told by the caller what to run instead.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

// One attempt per package and process: callers that start several nodes must not run apt-get
// again for each after it failed once.
const attempted = new Map<string, boolean>();

/**
 * `apt-get install -y <name>` (with an `apt-get update` first when the package lists are stale),
 * when running as root where apt-get exists. True when the install succeeded; false when it failed
 * or could not be tried: the caller then says how to install it by hand.
 */
export function aptInstall(name: string): boolean {
  const known = attempted.get(name);
  if (known !== undefined) return known;
  let ok = false;
  if (process.getuid?.() === 0 && existsSync('/usr/bin/apt-get')) {
    process.stderr.write(`${name} is missing; installing the Debian package (apt-get install -y ${name})...\n`);
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    const install = (): boolean => spawnSync('apt-get', ['install', '-y', '-qq', name], { stdio: 'inherit', env }).status === 0;
    ok = install();
    if (!ok) {
      spawnSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
      ok = install();
    }
  }
  attempted.set(name, ok);
  return ok;
}

/** Where a program is: on the PATH, else the first of `fallbacks` that exists (sbin is not on every PATH). */
export function commandPath(name: string, fallbacks: readonly string[] = []): string | null {
  const r = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  if (r.status === 0 && r.stdout.trim() !== '') return r.stdout.trim();
  return fallbacks.find((p) => existsSync(p)) ?? null;
}
