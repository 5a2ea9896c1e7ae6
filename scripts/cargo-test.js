#!/usr/bin/env node
'use strict';
// Runs the Rust unit tests for the host triple, so they share build artifacts with
// `napi build --platform` (which always passes an explicit --target).
const { execFileSync, spawnSync } = require('node:child_process');

const host = execFileSync('rustc', ['-vV'], { encoding: 'utf8' })
  .split('\n')
  .find((l) => l.startsWith('host: '))
  ?.slice('host: '.length)
  .trim();
if (!host) {
  console.error('could not determine the host target triple from `rustc -vV`');
  process.exit(1);
}
const r = spawnSync('cargo', ['test', '--lib', '--target', host, ...process.argv.slice(2)], { stdio: 'inherit' });
process.exit(r.status ?? 1);
