// relay serve ingress|gateway|all: one deployable per process, configured by the environment.
import { Argument, type Command } from 'commander';
import { startRelayServer, type RelayServer } from '../../server.js';
import type { ServiceKind } from '../../core/config.js';

const EXIT_GRACE_MS = 2000;

/** Runs until SIGTERM/SIGINT, then shuts down gracefully (drain, release, close). */
export async function runUntilSignalled(server: RelayServer, onStopped?: () => Promise<void>): Promise<void> {
  await new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (signal: NodeJS.Signals): void => {
      if (stopping) {
        server.core.logger.warn({ signal }, 'second signal: exiting now');
        process.exit(1);
      }
      stopping = true;
      server.core.logger.info({ signal }, 'shutting down gracefully');
      void server
        .close()
        .then(() => onStopped?.())
        .finally(() => {
          resolve();
          // Everything is closed; whatever still holds the event loop (a library's stray timer)
          // must not keep a stopped service alive. Unref'd: a clean exit does not wait for it.
          setTimeout(() => process.exit(process.exitCode ?? 0), EXIT_GRACE_MS).unref();
        });
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
}

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
