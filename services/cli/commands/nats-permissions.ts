// relay nats-permissions: the NATS users of the relay's roles, for the servers' configuration
// (infra/nats/permissions.conf is this command's output without regions). With REGIONS, each region's
// servers need their own file: a region's ingress may write only to its region's log.
import type { Command } from 'commander';
import { ConfigError } from '../../core/config/config-error.js';
import { CliError } from '../cli-error.js';

export function registerNatsPermissions(program: Command): void {
  program
    .command('nats-permissions')
    .description("print the NATS users of the relay's roles, each allowed only what it does, for nats-server's `include` (with REGIONS: one region's servers)")
    .option('--region <name>', 'with REGIONS, the region whose servers load the file (default: REGION)')
    .action(async (opts: { region?: string }) => {
      // Loaded when it runs: `relay --help` does not load the schemas and their validator.
      const { loadConfig } = await import('../../core/config.js');
      const { quoted } = await import('../../core/config/wording.js');
      const { natsLayout } = await import('../../core/nats-layout.js');
      const { permissionsFile } = await import('../../core/nats-permissions-file.js');
      let config;
      try {
        config = loadConfig('all');
      } catch (e) {
        if (e instanceof ConfigError) throw new CliError(e.message, 2);
        throw e;
      }
      const regions = config.regions;
      if (regions === null) {
        if (opts.region !== undefined) throw new CliError('--region is for a mesh with regions, and REGIONS is not set: without it every server loads the same file.', 2);
        process.stdout.write(permissionsFile(natsLayout(config), null));
        return;
      }
      const region = opts.region ?? regions.here;
      if (region === null) throw new CliError(`With REGIONS, each region's servers load their own file: name the region with --region (one of ${regions.all.join(', ')}), or set REGION.`, 2);
      if (!regions.all.includes(region)) throw new CliError(`--region is ${quoted(region, 40)}, which is not one of REGIONS (${regions.all.join(', ')}).`, 2);
      process.stdout.write(permissionsFile(natsLayout(config), { name: region, all: regions.all }));
    });
}
