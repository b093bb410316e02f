// relay serve ingress|gateway|admin|all: one deployable per process, configured by the environment.
import { Argument, type Command } from 'commander';
import { SERVICE_KINDS, type ServiceKind } from '../../core/config/service-kinds.js';

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('run a service: ingress (POST), gateway (GET streams), admin (console and admin API, own port) or all (ingress and gateway on one port)')
    .addArgument(new Argument('<service>').choices(SERVICE_KINDS))
    .action(async (service: ServiceKind) => {
      // Loaded when it runs: the other commands, and --help, do not load the servers.
      const { runUntilSignalled } = await import('../../signals.js');
      const server =
        service === 'admin'
          ? await (await import('../../admin/admin-server.js')).startAdminServer()
          : await (await import('../../server.js')).startRelayServer({ service });
      await runUntilSignalled(server);
    });
}
