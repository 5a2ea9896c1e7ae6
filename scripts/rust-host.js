'use strict';
// The host target triple, as `rustc -vV` reports it. Cargo commands run with an explicit
// `--target <host>` so they share build artifacts with `napi build --platform`, which always
// passes one (without it, cargo keeps a second, target-less copy of every artifact).
const { execFileSync } = require('node:child_process');

/** @returns {string} the host triple; exits the process when rustc cannot tell it */
function hostTriple() {
  const host = execFileSync('rustc', ['-vV'], { encoding: 'utf8' })
    .split('\n')
    .find((l) => l.startsWith('host: '))
    ?.slice('host: '.length)
    .trim();
  if (!host) {
    console.error('could not determine the host target triple from `rustc -vV`');
    process.exit(1);
  }
  return host;
}

module.exports = { hostTriple };
