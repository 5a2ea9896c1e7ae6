#!/usr/bin/env node
'use strict';
// `npm run test:property -- --runs 500 [--seed <n>] [vitest arguments]`: the property suite with
// more runs per property than `npm test` gives it (QUICKREALM_PROPERTY_RUNS, default 6).

const { spawnSync } = require('node:child_process');
const { join } = require('node:path');

const args = process.argv.slice(2);
const env = { ...process.env };
const rest = [];
for (let i = 0; i < args.length; i++) {
  const [flag, inline] = args[i].split('=', 2);
  if (flag === '--runs' || flag === '--seed') {
    const value = inline ?? args[++i];
    if (!/^\d+$/.test(value ?? '')) {
      console.error(`${flag} takes a whole number`);
      process.exit(2);
    }
    env[flag === '--runs' ? 'QUICKREALM_PROPERTY_RUNS' : 'QUICKREALM_PROPERTY_SEED'] = value;
  } else {
    rest.push(args[i]);
  }
}
const vitest = join(__dirname, '..', 'node_modules', 'vitest', 'vitest.mjs');
const run = spawnSync(process.execPath, [vitest, 'run', '__test__/property', ...rest], { stdio: 'inherit', env });
process.exit(run.status ?? 1);
