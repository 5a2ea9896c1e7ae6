#!/usr/bin/env node
'use strict';
// Runs the Rust unit tests for the host triple, so they share build artifacts with
// `napi build --platform` (which always passes an explicit --target).
const { spawnSync } = require('node:child_process');
const { hostTriple } = require('./rust-host.js');

const r = spawnSync('cargo', ['test', '--lib', '--target', hostTriple(), ...process.argv.slice(2)], {
  stdio: 'inherit',
});
process.exit(r.status ?? 1);
