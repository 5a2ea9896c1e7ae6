// Starts one throwaway PostgreSQL cluster for the fleet suite and stops it (removing its folder)
// when the run ends. Test files reach it through `inject('pgUrl')` or QUICKREALM_TEST_PG_URL and
// each makes its own database (helpers.ts: freshDatabase), so files running at once never share
// tables.
import type { TestProject } from 'vitest/node';
import { startCluster } from '../../scripts/pg-cluster.js';

declare module 'vitest' {
  export interface ProvidedContext {
    pgUrl: string;
  }
}

export default async function setup(project: TestProject) {
  const cluster = await startCluster();
  process.env.QUICKREALM_TEST_PG_URL = cluster.url;
  project.provide('pgUrl', cluster.url);
  return async () => {
    await cluster.stop();
  };
}
