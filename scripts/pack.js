#!/usr/bin/env node
'use strict';
// `npm run pack [-- --debug] [-- --out <dir>]`: the two tarballs a release publishes for this
// machine, made the way the release flow makes them: the main package (JavaScript, types, the
// Rust sources for a from-source install, optionalDependencies on every platform package) and
// this platform's package (npm/<platform>/ with the addon placed in it, as `napi artifacts`
// places the binaries built by the release workflow). Prints the two paths as JSON.
//
// --debug packs the debug build (stripped of debug info when `strip` is available) so tests do
// not need a release build; without it the release build is packed, built first when missing.

const { spawnSync } = require('node:child_process');
const { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join, resolve } = require('node:path');
const { parseArgs } = require('node:util');
const { describePlatform } = require('../lib/native/platform.js');

const root = resolve(__dirname, '..');
const { values } = parseArgs({
  options: { debug: { type: 'boolean', default: false }, out: { type: 'string', default: join(root, 'dist') } },
});
const out = resolve(/** @type {string} */ (values.out));
const platform = describePlatform();
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/**
 * @param {string} cmd
 * @param {string[]} args
 * @param {string} cwd
 */
function check(cmd, args, cwd) {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.error?.message ?? `exit ${r.status}`})`);
  return r.stdout;
}

/**
 * `npm pack` of a folder into `out`; returns the tarball's path.
 * @param {string} dir
 */
function pack(dir) {
  const [info] = JSON.parse(check(npm, ['pack', '--json', '--pack-destination', out], dir));
  return join(out, info.filename);
}

if (!platform.hasPrebuilt) throw new Error(`quickrealm publishes no package for ${platform.abi}`);
const addon = join(root, 'lib', 'native', platform.addonFile);
// A debug pack uses whatever build is in place (`npm test` just made one); a release pack
// always rebuilds in release mode so a stale debug build is never published.
if (values.debug ? !existsSync(addon) : true) {
  check(npm, ['run', values.debug ? 'build:debug' : 'build'], root);
}
mkdirSync(out, { recursive: true });

const staging = mkdtempSync(join(tmpdir(), 'quickrealm-pack-'));
try {
  const platformDir = join(staging, platform.packageName);
  cpSync(join(root, 'npm', platform.abi), platformDir, { recursive: true });
  const placed = join(platformDir, platform.addonFile);
  copyFileSync(addon, placed);
  if (values.debug) spawnSync('strip', ['--strip-debug', placed], { stdio: 'ignore' });
  const platformTarball = pack(platformDir);
  const mainTarball = pack(root);
  process.stdout.write(
    `${JSON.stringify(
      {
        main: mainTarball,
        platform: platformTarball,
        platformPackage: platform.packageName,
        addonBytes: statSync(placed).size,
      },
      null,
      2,
    )}\n`,
  );
} finally {
  rmSync(staging, { recursive: true, force: true });
}
