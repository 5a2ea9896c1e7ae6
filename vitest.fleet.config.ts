import { defineConfig } from 'vitest/config';

// The fleet suite: run by scripts/test-fleet.js under Node 24 (pg-boss 12 requires Node 22+),
// against one throwaway PostgreSQL cluster started by the global setup for the whole run.
export default defineConfig({
  test: {
    include: ['__test__/fleet/**/*.spec.ts'],
    // Native addon errors must keep their prototypes: forks, not vmThreads.
    pool: 'forks',
    globalSetup: ['__test__/fleet/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
