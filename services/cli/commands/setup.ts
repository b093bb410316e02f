// relay setup: creates the relay's streams and buckets and brings them to the operator's settings
// (STREAM_*, KV_REPLICAS, CLAIM_TTL, AUDIT_MAX_AGE, IDEMPOTENCY_MAX_BYTES), with the operator's NATS
// credentials. The services never do: they start against what exists. Safe to run again: it prints
// what it changed, or that nothing needed changing.
// What it does is in setup-mesh.ts, loaded when it runs: `relay --help` does not load the mesh's code.
import type { Command } from 'commander';

export function registerSetup(program: Command): void {
  program
    .command('setup')
    .description("create the relay's streams and buckets and apply STREAM_*, KV_REPLICAS, CLAIM_TTL, AUDIT_MAX_AGE and IDEMPOTENCY_MAX_BYTES (operator's NATS credentials)")
    .option('--dry-run', 'say what would change, change nothing')
    .option('--rebuild-feeds', "give buckets made before change feeds their feed, keeping every entry (needs a NATS user that may delete streams)")
    .option('--json', 'print {"streams":[{"stream","label","action","changes","notes"}],"durability"}')
    .action(async (opts: { dryRun?: boolean; json?: boolean; rebuildFeeds?: boolean }) => {
      await (await import('../setup-mesh.js')).setupMesh(opts);
    });
}

