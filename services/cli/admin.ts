// The CLI's connection to the mesh: the same NATS configuration as the services (from the
// environment), the same stores, and a clear sentence when NATS cannot be reached.

import { AuditLog, currentActor } from '../core/audit.js';
import type { AuditRecord } from '../../schemas/records.js';
import { BanStore } from '../core/bans.js';
import { loadConfig, type RelayConfig } from '../core/config.js';
import { KeyStore } from '../core/keys.js';
import { createLogger, type Logger } from '../core/logger.js';
import { maskServerList } from '../core/secret-shapes.js';
import { openNatsContext, type NatsContext } from '../core/nats.js';
import { NatsSetupError } from '../core/nats-refusal.js';
import { CliError } from './cli-error.js';

export interface Admin {
  config: RelayConfig;
  logger: Logger;
  nats: NatsContext;
  keys: KeyStore;
  bans: BanStore;
  audit: AuditLog;
  /**
   * Records what the operator just did. The action has happened either way: when the record cannot
   * be written the command says so and exits 1, so the gap in the trail is never silent.
   */
  audited(entry: Omit<AuditRecord, 'at' | 'actor'>): Promise<void>;
  close(): Promise<void>;
}

export interface AdminOptions {
  keys?: boolean;
  bans?: boolean;
  /** The configuration, when the command has loaded it already. */
  config?: RelayConfig;
}

export async function openAdmin(options: AdminOptions = {}): Promise<Admin> {
  const config = options.config ?? loadConfig('all');
  // The CLI's own output is its result; NATS chatter goes to stderr only when asked for.
  const logger = createLogger({ level: process.env['LOG_LEVEL'] ?? 'warn', pretty: false, destination: process.stderr });
  let nats: NatsContext;
  try {
    nats = await openNatsContext(config, 'relay-cli', logger, { failFast: true, role: 'cli' });
  } catch (e) {
    // A setting that does not fit the servers (TLS, credentials, permissions) is its own sentence.
    if (e instanceof NatsSetupError) throw new CliError(e.message);
    const shown = maskServerList(config.nats.servers);
    // The NATS client ignores user:password@ in a URL, so such a server answers "Authorization Violation".
    const hint = shown !== config.nats.servers.join(', ') ? ' Credentials inside NATS_URL are not used: set NATS_USER and NATS_PASSWORD, or NATS_TOKEN.' : '';
    throw new CliError(`Cannot reach NATS at ${shown} (set NATS_URL): ${e instanceof Error ? e.message : String(e)}.${hint}`);
  }
  const keys = new KeyStore(nats.js, nats.buckets.keys, logger, nats.credentials.keys);
  const bans = new BanStore(nats.js, nats.buckets.bans, logger, null, nats.credentials);
  await Promise.all([options.keys ? keys.start() : undefined, options.bans ? bans.start() : undefined]);
  const audit = new AuditLog(nats.js);
  return {
    config,
    logger,
    nats,
    keys,
    bans,
    audit,
    async audited(entry) {
      try {
        await audit.record({ actor: currentActor(), ...entry });
      } catch (e) {
        throw new CliError(`${entry.action} ${entry.target} was done, but its audit record could not be written: ${e instanceof Error ? e.message : String(e)}.`);
      }
    },
    async close() {
      await Promise.all([keys.stop(), bans.stop()]);
      await nats.nc.drain().catch(() => undefined);
    },
  };
}

export async function withAdmin<T>(options: AdminOptions, fn: (admin: Admin) => Promise<T>): Promise<T> {
  const admin = await openAdmin(options);
  try {
    return await fn(admin);
  } finally {
    await admin.close();
  }
}
