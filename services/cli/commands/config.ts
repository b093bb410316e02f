// relay config check ingress|gateway|admin|all: the effective configuration, secrets masked; non-zero
// exit when the environment would not start the service.
import { Argument, type Command } from 'commander';
import { ConfigError } from '../../core/config/config-error.js';
import { SERVICE_KINDS, type ServiceKind } from '../../core/config/service-kinds.js';
import { CliError } from '../cli-error.js';
import { printJson, printTable } from '../output.js';

export function registerConfig(program: Command): void {
  const config = program.command('config').description('inspect the configuration a service would start with');
  config
    .command('check')
    .description('print the effective configuration (secrets masked); exit 2 listing every problem')
    // Every service the schema knows, so a new deployable (the admin service) is checkable at once.
    .addArgument(new Argument('<service>').choices(SERVICE_KINDS))
    .option('--json', 'print [{"name","value","description"}]')
    .option('--offline', 'do not ask NATS what it holds')
    .action(async (service: ServiceKind, opts: { json?: boolean; offline?: boolean }) => {
      // Loaded when it runs: `relay --help` does not load the schemas and their validator.
      const { describeConfig, loadConfig } = await import('../../core/config.js');
      let config;
      try {
        config = loadConfig(service);
      } catch (e) {
        if (e instanceof ConfigError) throw new CliError(e.message, 2);
        throw e;
      }
      const rows = describeConfig(config);
      if (opts.json) return printJson(rows);
      printTable(rows.map((r) => ({ variable: r.name, value: r.value, meaning: r.description })), ['variable', 'value', 'meaning'], '');
      process.stdout.write(`\nThe ${service} configuration is valid.\n`);
      if (opts.offline) return;
      const { natsReport } = await import('../nats-report.js');
      const report = await natsReport(config);
      process.stdout.write(`${report.lines.join('\n')}\n`);
      // The configuration is fine, but this service would not start against what NATS holds.
      if (!report.ok) process.exitCode = 1;
    });
}
