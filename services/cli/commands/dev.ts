// relay dev (npm start): the all-in-one development relay.
import type { Command } from 'commander';
import { runDevServer } from '../../dev/dev-server.js';

export function registerDev(program: Command): void {
  program
    .command('dev')
    .description('all-in-one development relay: local nats-server, offline identities, a printed key (npm start)')
    .action(async () => {
      await runDevServer();
    });
}
