// The committed NATS permission files, as `relay nats-permissions` prints them: infra/nats/permissions.conf
// for a mesh without regions, and one per region of the three-region example (infra/nats/regions/).
// Written by generate-nats-permissions.ts; test/unit/nats-permission-files.test.ts keeps them current.
import { loadConfig } from '../services/core/config.js';
import { natsLayout } from '../services/core/nats-layout.js';
import { permissionsFile } from '../services/core/nats-permissions-file.js';

/** The regions of the example in infra/nats/regions/ and docs/REGIONS.md. */
export const EXAMPLE_REGIONS = ['eu', 'us', 'ap'] as const;

/** Each file's path under the repository, and its text. */
export function permissionFiles(): Record<string, string> {
  const files: Record<string, string> = { 'infra/nats/permissions.conf': permissionsFile(natsLayout(loadConfig('all', {})), null) };
  const layout = natsLayout(loadConfig('all', { REGIONS: EXAMPLE_REGIONS.join(',') }));
  for (const region of EXAMPLE_REGIONS) files[`infra/nats/regions/${region}/permissions.conf`] = permissionsFile(layout, { name: region, all: EXAMPLE_REGIONS });
  return files;
}
