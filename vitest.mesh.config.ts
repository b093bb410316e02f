import { defineConfig } from 'vitest/config';

// The multi-process mesh suite: three nats-server nodes and several relay processes per file, so
// files run one at a time to keep a two-core machine from starving them.
export default defineConfig({
  test: {
    include: ['test/mesh/**/*.test.ts'],
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 120_000,
    teardownTimeout: 60_000,
    reporters: ['default', './test/summary-reporter.ts'],
  },
});
