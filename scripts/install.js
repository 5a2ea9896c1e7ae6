#!/usr/bin/env node
'use strict';
// npm's `install` step for quickrealm. Users normally get a prebuilt binary through the optional
// platform package (quickrealm-<platform>) and this script does nothing. When no binary loads,
// it builds the addon from the Rust sources shipped in the package, or stops with a message
// that says what is missing, instead of letting the first `require` fail later.
//
// Environment:
//   QUICKREALM_BUILD_PROFILE  cargo profile for a source build: `release` (default) or `dev`/`debug`
//   CARGO_TARGET_DIR          where cargo builds (default: target/ inside the package, removed after)
//   CARGO_BUILD_TARGET        a target triple to build for (cargo's own variable; default: the host)
//   CARGO                     the cargo binary to use (default: `cargo` on PATH)

const { spawnSync } = require('node:child_process');
const { copyFileSync, existsSync, mkdirSync, rmSync } = require('node:fs');
const { join, resolve } = require('node:path');
const { describePlatform } = require('../lib/native/platform.js');

const root = resolve(__dirname, '..');
const log = (/** @type {string} */ line) => process.stderr.write(`quickrealm: ${line}\n`);

/** A developer checkout builds with `npm run build:debug`; only installed copies act here. */
function isOwnCheckout() {
  return process.env.INIT_CWD !== undefined && resolve(process.env.INIT_CWD) === root;
}

/** @returns {unknown} why the addon does not load, or undefined when it does */
function loadFailure() {
  // In a child: a failed dlopen can leave state behind, and this process must stay clean.
  const r = spawnSync(process.execPath, ['-e', "require('./lib/native/load.js')"], { cwd: root, encoding: 'utf8' });
  return r.status === 0 ? undefined : (r.stderr || `exit ${r.status}`).trim();
}

/** @returns {string} */
function cargoCommand() {
  return process.env.CARGO || 'cargo';
}

function hasCargo() {
  const r = spawnSync(cargoCommand(), ['--version'], { encoding: 'utf8' });
  return r.status === 0;
}

/** The file cargo writes for a cdylib named quickrealm on this OS. */
function cdylibName() {
  if (process.platform === 'win32') return 'quickrealm.dll';
  if (process.platform === 'darwin') return 'libquickrealm.dylib';
  return 'libquickrealm.so';
}

function buildFromSource() {
  const platform = describePlatform();
  const requested = process.env.QUICKREALM_BUILD_PROFILE || 'release';
  const profile = requested === 'debug' ? 'dev' : requested;
  const ownTargetDir = !process.env.CARGO_TARGET_DIR;
  const targetDir = process.env.CARGO_TARGET_DIR || join(root, 'target');
  log(
    `building the native addon for ${platform.abi} from source with cargo (profile ${profile}); ` +
      'this takes several minutes on a small machine',
  );
  const r = spawnSync(
    cargoCommand(),
    ['build', '--lib', '--locked', '--profile', profile, '--manifest-path', join(root, 'Cargo.toml')],
    { cwd: root, stdio: 'inherit', env: { ...process.env, CARGO_TARGET_DIR: targetDir } },
  );
  if (r.status !== 0) {
    log(`cargo build failed (${r.error ? r.error.message : `exit ${r.status}`}); the output above says why.`);
    return false;
  }
  const triple = process.env.CARGO_BUILD_TARGET;
  const profileDir = profile === 'dev' ? 'debug' : profile;
  const built = triple ? join(targetDir, triple, profileDir, cdylibName()) : join(targetDir, profileDir, cdylibName());
  mkdirSync(join(root, 'lib', 'native'), { recursive: true });
  copyFileSync(built, join(root, 'lib', 'native', platform.addonFile));
  // Intermediate build files run to hundreds of megabytes; an installed package keeps only the addon.
  if (ownTargetDir) rmSync(targetDir, { recursive: true, force: true });
  return true;
}

function main() {
  if (isOwnCheckout()) return 0;
  const failure = loadFailure();
  if (failure === undefined) return 0;
  const platform = describePlatform();
  const why = platform.hasPrebuilt
    ? `the prebuilt package ${platform.packageName} is not installed (optional dependencies left out?)`
    : `there is no prebuilt package for ${platform.abi}`;
  if (!existsSync(join(root, 'Cargo.toml'))) {
    log(`${why}, and this copy has no Rust sources to build from.`);
    return 1;
  }
  if (!hasCargo()) {
    log(
      `${why}, and the Rust toolchain was not found (no \`${cargoCommand()}\` on PATH). ` +
        'Install it from https://rustup.rs and run `npm rebuild quickrealm`, ' +
        (platform.hasPrebuilt
          ? `or install ${platform.packageName}@${platform.version} (do not omit optional dependencies).`
          : `or use a platform with a prebuilt package (${platform.prebuiltAbis.join(', ')}).`),
    );
    return 1;
  }
  log(`${why}.`);
  if (!buildFromSource()) return 1;
  const after = loadFailure();
  if (after !== undefined) {
    log(`the addon built from source does not load:\n${String(after)}`);
    return 1;
  }
  log('the native addon was built from source and loads.');
  return 0;
}

process.exitCode = main();
