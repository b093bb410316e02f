// The `relay` command: operations on the mesh (keys, bans, streams, replay) and the services. Run
// by main.ts as built into dist/, and by tools/relay-cli.ts in a checkout, which adds the
// development relay (`relay dev`, npm start) that the build does not ship.
import { Command, CommanderError } from 'commander';
// Not the config barrel: that loads the schemas and their validator, which --help does not need.
import { ConfigError } from '../core/config/config-error.js';
import { escapeControlChars } from '../core/display.js';
import { RELAY_VERSION } from '../core/version.js';
import { CliError } from './cli-error.js';
import { registerAudit } from './commands/audit.js';
import { registerBans } from './commands/bans.js';
import { registerConfig } from './commands/config.js';
import { registerDev } from './commands/dev.js';
import { registerKeys } from './commands/keys.js';
import { registerNatsPermissions } from './commands/nats-permissions.js';
import { registerReplay } from './commands/replay.js';
import { registerServe } from './commands/serve.js';
import { registerSetup } from './commands/setup.js';
import { registerStats } from './commands/stats.js';
import { registerStreams } from './commands/streams.js';
import { registerTrace } from './commands/trace.js';

/** Control characters escaped, line breaks kept (ConfigError lists one problem a line). */
function escapeLines(text: string): string {
  return text.split('\n').map(escapeControlChars).join('\n');
}

export interface CliExtensions {
  /** Runs the development relay; absent from a build, where `relay dev` says where to find it. */
  dev?: () => Promise<void>;
}

/** One sentence on stderr; it may quote an argument or a server's words, so no raw control characters. */
function fail(message: string, code: number): never {
  process.stderr.write(`relay: ${escapeLines(message)}\n`);
  process.exit(code);
}

/** Parses process.argv, runs the command, and turns its failure into a sentence and an exit code. */
export async function runRelayCli(extensions: CliExtensions = {}): Promise<void> {
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
    .showHelpAfterError()
    // Commander exits 1 on its own argument errors; the documented code for bad arguments is 2.
    // Subcommands inherit both settings, so they must come before the commands are registered.
    .exitOverride()
    // Its sentences quote what was typed ("unknown option ..."): no raw control characters either.
    .configureOutput({ outputError: (text, write) => write(escapeLines(text)) });

  registerSetup(program);
  registerKeys(program);
  registerBans(program);
  registerAudit(program);
  registerStreams(program);
  registerStats(program);
  registerReplay(program);
  registerTrace(program);
  registerNatsPermissions(program);
  registerServe(program);
  registerDev(program, extensions.dev);
  registerConfig(program);

  try {
    await program.parseAsync(process.argv);
  } catch (e) {
    // Commander has already printed its sentence (and the help); --help and --version end with 0.
    if (e instanceof CommanderError) process.exit(e.exitCode === 0 ? 0 : 2);
    if (e instanceof CliError) fail(e.message, e.exitCode);
    if (e instanceof ConfigError) fail(e.message, 2);
    // Anything else is a failure the operator cannot fix by retyping: say it in one line, and keep
    // the stack for whoever debugs it.
    const debug = ['debug', 'trace'].includes(process.env['LOG_LEVEL'] ?? '');
    if (debug && e instanceof Error && e.stack !== undefined) process.stderr.write(`${e.stack}\n`);
    fail(`${e instanceof Error ? e.message : String(e)}${debug ? '' : ' (LOG_LEVEL=debug shows where)'}`, 1);
  }
}
