// What `relay config check` says of the NATS the configuration reaches: which guarantee an
// acknowledged POST has there (the line every service logs at start), or what would stop the
// service (a stream `relay setup` has not made). NATS out of reach is said, not a failure: the
// configuration may be checked on a host that cannot reach it.

import type { RelayConfig } from '../core/config.js';
import { maskServerList } from '../core/secret-shapes.js';
import { durabilityStatement } from '../core/durability.js';
import { createLogger } from '../core/logger.js';
import { NatsSetupError } from '../core/nats-refusal.js';
import { openNatsContext } from '../core/nats.js';

export interface NatsReport {
  /** False when NATS holds something that would stop the service. */
  ok: boolean;
  lines: string[];
}

export async function natsReport(config: RelayConfig): Promise<NatsReport> {
  const quiet = createLogger({ level: 'silent', pretty: false });
  try {
    const nats = await openNatsContext(config, 'relay-config-check', quiet, { failFast: true, ...(config.service === 'all' ? { role: 'cli' as const } : {}) });
    await nats.nc.close();
    const d = nats.findings.durability;
    return { ok: true, lines: [d === null ? 'NATS: reached.' : `NATS: ${durabilityStatement(d)}`] };
  } catch (e) {
    if (e instanceof NatsSetupError) return { ok: false, lines: [`NATS: ${e.message}`] };
    // Only the addresses, masked: a connection error may quote what it was given.
    return { ok: true, lines: [`NATS: not reached at ${maskServerList(config.nats.servers)}; each service logs the guarantee in force when it starts.`] };
  }
}
