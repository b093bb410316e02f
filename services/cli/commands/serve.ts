// relay serve ingress|gateway|all: one deployable per process, configured by the environment.
import { Argument, type Command } from 'commander';
import { startRelayServer } from '../../server.js';
import { runUntilSignalled } from '../../signals.js';
import type { ServiceKind } from '../../core/config.js';

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('run a service: ingress (POST), gateway (GET streams) or all (both on one port)')
    .addArgument(new Argument('<service>').choices(['ingress', 'gateway', 'all']))
    .action(async (service: ServiceKind) => {
      const server = await startRelayServer({ service });
      await runUntilSignalled(server);
    });
}
