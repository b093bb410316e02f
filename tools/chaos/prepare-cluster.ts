// Bringing the NATS cluster to what the relay processes expect, before any of them starts: the
// event log and every bucket at their settings (R3), and the API key the campaign's clients use.
// The relays only check what exists (issue 26), so this runs `relay setup`'s work first, as an
// operator deploying the mesh would.

import { loadConfig } from '../../services/core/config.js';
import { KeyStore, type CreatedKey } from '../../services/core/keys.js';
import { createLogger } from '../../services/core/logger.js';
import { openNatsContext } from '../../services/core/nats.js';
import { setUpFromConfig } from '../../services/core/nats-setup.js';

/** Scopes that send and hear everything on a channel (no bridge grant: readers hear only their DMs). */
const SCOPES = ['irc.connection.establish', 'irc.messages.send', 'irc.messages.receive'];

/** `env`: the relays' environment, with NATS_URL reaching the nodes directly (around the proxies). */
export async function prepareCluster(env: Record<string, string>): Promise<CreatedKey> {
  const config = loadConfig('all', env);
  const quiet = createLogger({ level: 'warn', pretty: false });
  await setUpFromConfig(config, quiet);
  const ctx = await openNatsContext(config, 'chaos-setup', quiet, { role: 'cli' });
  try {
    return await new KeyStore(ctx.js, ctx.buckets.keys, quiet).create({ scopes: SCOPES, label: 'npm run chaos' });
  } finally {
    await ctx.nc.drain();
  }
}
