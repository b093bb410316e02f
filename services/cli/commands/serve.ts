// relay serve ingress|gateway|admin|all: one deployable per process, configured by the environment.
import { Argument, type Command } from 'commander';
import { startAdminServer } from '../../admin/admin-server.js';
import { startRelayServer } from '../../server.js';
import { runUntilSignalled } from '../../signals.js';

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('run a service: ingress (POST), gateway (GET streams), admin (console and admin API, own port) or all (ingress and gateway on one port)')
    .addArgument(new Argument('<service>').choices(['ingress', 'gateway', 'admin', 'all']))
    .action(async (service: 'ingress' | 'gateway' | 'admin' | 'all') => {
      const server = service === 'admin' ? await startAdminServer() : await startRelayServer({ service });
      await runUntilSignalled(server);
    });
}
