#!/usr/bin/env node
'use strict';
// `npm run test:fleet [-- <vitest arguments, e.g. a file filter>]`: the fleet suite
// (__test__/fleet) under Node 24, which pg-boss 12 requires, against one throwaway PostgreSQL
// cluster the suite starts and stops itself. Node 24 is installed from the npm registry by
// scripts/node-runtime.js; the rest of the suite keeps running on the machine's Node.

const { spawnSync } = require('node:child_process');
const { join } = require('node:path');
const { nodeBinary } = require('./node-runtime.js');

const FLEET_NODE_MAJOR = 24;
const root = join(__dirname, '..');

nodeBinary(FLEET_NODE_MAJOR).then(
  (node) => {
    const built = spawnSync(process.execPath, [join(__dirname, 'ensure-built.js')], { cwd: root, stdio: 'inherit' });
    if (built.status !== 0) process.exit(built.status ?? 1);
    const vitest = join(root, 'node_modules', 'vitest', 'vitest.mjs');
    const args = [vitest, 'run', '--config', 'vitest.fleet.config.ts', ...process.argv.slice(2)];
    const run = spawnSync(node, args, { cwd: root, stdio: 'inherit' });
    process.exit(run.status ?? 1);
  },
  (e) => {
    console.error(`test-fleet: ${e instanceof Error ? e.message : e}`);
    process.exit(1);
  },
);
