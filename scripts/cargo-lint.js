#!/usr/bin/env node
'use strict';
// Lints the Rust code: `cargo fmt --check`, then clippy over every target with warnings as
// errors. Clippy runs for the host triple, so it shares build artifacts with
// `napi build --platform` (which always passes an explicit --target).
const { spawnSync } = require('node:child_process');
const { hostTriple } = require('./rust-host.js');

/** @param {string[]} args */
function cargo(args) {
  const r = spawnSync('cargo', args, { stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

cargo(['fmt', '--all', '--', '--check']);
cargo(['clippy', '--all-targets', '--target', hostTriple(), '--', '-D', 'warnings']);
