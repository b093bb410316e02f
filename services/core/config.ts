// Configuration comes from the environment only. The parts, one concern each, in services/core/config/:
// schema.ts (every variable, its default and unit, once), load.ts (validate, apply defaults, report
// every problem), checks.ts (what the schema cannot say), build.ts (the RelayConfig the services
// read), describe.ts (`relay config`), wording.ts (the sentences). The .env examples are written from
// the schema by scripts/generate-env-examples.ts.

export type { RelayConfig } from './config/build.js';
export { describeConfig } from './config/describe.js';
export { ConfigError } from './config/config-error.js';
export { loadConfig } from './config/load.js';
export { ENV_SCHEMAS, envVariables, isSecretVariable, type Env, type ServiceKind } from './config/schema.js';
export { ALL_IN_ONE_HAS_NO_REGIONS, type RegionSettings } from './config/region-env.js';
