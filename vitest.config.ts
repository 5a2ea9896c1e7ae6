import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['__test__/**/*.spec.ts'],
    // The fleet suite runs on Node 24 with its own PostgreSQL cluster: scripts/test-fleet.js.
    exclude: [...configDefaults.exclude, '__test__/fleet/**'],
    // Native addon errors must keep their prototypes: forks, not vmThreads.
    pool: 'forks',
    // `gc()` on demand, so tests of host memory growth measure what a call keeps, not garbage.
    execArgv: ['--expose-gc'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
