// @channel-relay/client as npm packs it for its users (issue 21: the tarball named no licence and
// carried none). `npm pack --dry-run` lists exactly what would be published.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

interface Packed {
  name: string;
  files: Array<{ path: string }>;
}

describe('npm pack of the client library', () => {
  it('declares the repository’s licence and ships its LICENSE file, identical to the repository’s', () => {
    const [packed] = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '-w', '@channel-relay/client'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })) as Packed[];
    expect(packed?.name).toBe('@channel-relay/client');
    expect(packed?.files.map((f) => f.path)).toContain('LICENSE');
    const own = JSON.parse(readFileSync(`${ROOT}clients/typescript/package.json`, 'utf8')) as { license?: string };
    const root = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { license?: string };
    expect(own.license).toBe(root.license);
    expect(readFileSync(`${ROOT}clients/typescript/LICENSE`, 'utf8')).toBe(readFileSync(`${ROOT}LICENSE`, 'utf8'));
  });
});
