// The `relay` command: operations on the mesh (keys, bans, streams, replay) and the services.
import { Command } from 'commander';
import { ConfigError } from '../core/config.js';
import { RELAY_VERSION } from '../core/version.js';
import { NatsServerMissing } from '../dev/nats-process.js';
import { CliError } from './admin.js';
import { registerBans } from './commands/bans.js';
import { registerConfig } from './commands/config.js';
import { registerDev } from './commands/dev.js';
import { registerKeys } from './commands/keys.js';
import { registerReplay } from './commands/replay.js';
import { registerServe } from './commands/serve.js';
import { registerStats } from './commands/stats.js';
import { registerStreams } from './commands/streams.js';

// `relay ... | head` closes the pipe early; that is not an error.
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') process.exit(0);
  throw e;
});

const program = new Command();
program
  .name('relay')
  .description('Channel relay: run the services and operate the mesh. NATS is found through NATS_URL (default nats://127.0.0.1:4222).')
  .version(RELAY_VERSION)
  .showHelpAfterError();

registerKeys(program);
registerBans(program);
registerStreams(program);
registerStats(program);
registerReplay(program);
registerServe(program);
registerDev(program);
registerConfig(program);

try {
  await program.parseAsync(process.argv);
} catch (e) {
  if (e instanceof CliError) {
    process.stderr.write(`relay: ${e.message}\n`);
    process.exit(e.exitCode);
  }
  if (e instanceof ConfigError) {
    process.stderr.write(`relay: ${e.message}\n`);
    process.exit(2);
  }
  if (e instanceof NatsServerMissing) {
    process.stderr.write(`relay: ${e.message}\n`);
    process.exit(3);
  }
  throw e;
}
