// The operator's `relay setup`, for a test's nats-server: every stream and bucket created and given
// the settings in `env` (STREAM_*, KV_REPLICAS, CLAIM_TTL, ...), as the services now expect to find.

import { loadConfig } from '../../services/core/config.js';
import { createLogger } from '../../services/core/logger.js';
import { natsLayout } from '../../services/core/nats-layout.js';
import { setUpFromConfig, type SetupOutcome } from '../../services/core/nats-setup.js';

/** The variables `relay setup` reads (the sources of the layout's limits). */
export const SETUP_VARIABLES: ReadonlySet<string> = new Set(
  natsLayout(loadConfig('all', {})).flatMap((plan) => Object.values(plan.sources)),
);

export function setUpNats(natsUrl: string, env: Record<string, string> = {}): Promise<SetupOutcome[]> {
  return setUpFromConfig(loadConfig('all', { ...env, NATS_URL: natsUrl }), createLogger({ level: 'warn', pretty: false }));
}
