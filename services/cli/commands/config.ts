// relay config check ingress|gateway|admin|all: the effective configuration, secrets masked; non-zero
// exit when the environment would not start the service.
import { Argument, type Command } from 'commander';
import { ConfigError, ENV_SCHEMAS, describeConfig, loadConfig, type ServiceKind } from '../../core/config.js';
import { CliError } from '../admin.js';
import { natsReport } from '../nats-report.js';
import { printJson, printTable } from '../output.js';

export function registerConfig(program: Command): void {
  const config = program.command('config').description('inspect the configuration a service would start with');
  config
    .command('check')
    .description('print the effective configuration (secrets masked); exit 2 listing every problem')
    // Every service the schema knows, so a new deployable (the admin service) is checkable at once.
    .addArgument(new Argument('<service>').choices(Object.keys(ENV_SCHEMAS)))
    .option('--json', 'print [{"name","value","description"}]')
    .option('--offline', 'do not ask NATS what it holds')
    .action(async (service: ServiceKind, opts: { json?: boolean; offline?: boolean }) => {
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
      const report = await natsReport(config);
      process.stdout.write(`${report.lines.join('\n')}\n`);
      // The configuration is fine, but this service would not start against what NATS holds.
      if (!report.ok) process.exitCode = 1;
    });
}
