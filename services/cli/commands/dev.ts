// relay dev (npm start): the all-in-one development relay. It runs from a checkout only (its
// launcher installs and starts nats-server, which a build must not ship): tools/relay-cli.ts hands
// it in; without it, as in a built image, the command says where to find it.
import type { Command } from 'commander';
import { CliError } from '../cli-error.js';

export function registerDev(program: Command, run?: () => Promise<void>): void {
  program
    .command('dev')
    .description(
      run !== undefined
        ? 'all-in-one development relay: local nats-server, offline identities, a printed key (npm start)'
        : 'all-in-one development relay: runs from a source checkout (npm start), not from this build',
    )
    .action(async () => {
      if (run === undefined) {
        // Exit 2 as for any command this installation cannot take.
        throw new CliError('relay dev runs from a source checkout (npm start); a built image runs the services with relay serve ingress|gateway|all.', 2);
      }
      await run();
    });
}
