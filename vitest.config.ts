import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/mesh/**', 'node_modules/**'],
    // Every file starts its own nats-server and relay; two workers match the two cores here.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    teardownTimeout: 30_000,
    reporters: ['default', './test/summary-reporter.ts'],
  },
});
