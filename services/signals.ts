// How a relay process ends: SIGTERM or SIGINT starts the graceful shutdown (drain, release, close),
// a second signal exits at once. Every process that runs a RelayServer (`relay serve`, the
// development relay of `npm start`) ends this way, so it lives with the services.
import type { Logger } from './core/logger.js';

/** A running service: the relay (server.ts) or the admin service (admin/admin-server.ts). */
export interface Service {
  logger: Logger;
  close(): Promise<void>;
}

const EXIT_GRACE_MS = 2000;

/** Runs until SIGTERM/SIGINT, then shuts down gracefully; `onStopped` runs after the server has closed. */
export async function runUntilSignalled(server: Service, onStopped?: () => Promise<void>): Promise<void> {
  await new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (signal: NodeJS.Signals): void => {
      if (stopping) {
        server.logger.warn({ signal }, 'second signal: exiting now');
        process.exit(1);
      }
      stopping = true;
      server.logger.info({ signal }, 'shutting down gracefully');
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
