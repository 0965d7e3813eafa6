import { defineConfig } from 'vitest/config';

// Two projects: unit tests need nothing running; integration tests share one real Pulsar broker,
// started once per run by test/support/global-broker.ts (or taken from PULSAR_URL).
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          environment: 'node',
          // A unit test's timeout only catches a hang: none is a bound on time. vitest's 5 s default was too short
          // on a loaded machine (load 20+ on 2 cores) for tests that start a worker thread through tsx or run a
          // fast-check property, which then failed for no fault of the code.
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/support/global-broker.ts', 'test/support/global-brokers.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          // One broker, two cores: files run one after another so timing-sensitive tests stay honest.
          fileParallelism: false,
        },
      },
    ],
  },
});
