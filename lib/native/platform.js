'use strict';
// Which prebuilt package serves this machine, named as napi-rs names its per-platform packages
// (`quickrealm-linux-x64-gnu`, ...), and the file name of the addon inside it. Shared by the
// loader (to say what is missing) and the install script (to decide whether to build).

const { name: PACKAGE_NAME, version: PACKAGE_VERSION, napi } = require('../../package.json');

/** The Rust targets with a prebuilt package, from package.json's `napi.targets`. */
const PREBUILT_TARGETS = /** @type {string[]} */ (napi.targets);

/** @returns {'gnu' | 'musl'} */
function linuxLibc() {
  // Node's diagnostic report names the glibc it runs on; musl builds leave the field out.
  const report = /** @type {{ header?: { glibcVersionRuntime?: string } } | undefined} */ (
    typeof process.report?.getReport === 'function' ? process.report.getReport() : undefined
  );
  return report?.header?.glibcVersionRuntime ? 'gnu' : 'musl';
}

/**
 * This machine in napi-rs's naming: `linux-x64-gnu`, `darwin-arm64`, `win32-x64-msvc`, ...
 * @returns {string}
 */
function platformArchAbi() {
  const base = `${process.platform}-${process.arch}`;
  if (process.platform === 'linux') return `${base}-${linuxLibc()}`;
  if (process.platform === 'win32') return `${base}-msvc`;
  return base;
}

/**
 * The Rust target triple napi-rs maps to a platform-arch-abi name, or undefined when quickrealm
 * publishes no binary for it.
 * @param {string} abi
 * @returns {string | undefined}
 */
function prebuiltTargetFor(abi) {
  /** @type {Record<string, string>} */
  const byAbi = {
    'linux-x64-gnu': 'x86_64-unknown-linux-gnu',
    'linux-x64-musl': 'x86_64-unknown-linux-musl',
    'linux-arm64-gnu': 'aarch64-unknown-linux-gnu',
    'darwin-x64': 'x86_64-apple-darwin',
    'darwin-arm64': 'aarch64-apple-darwin',
    'win32-x64-msvc': 'x86_64-pc-windows-msvc',
  };
  const target = byAbi[abi];
  return target !== undefined && PREBUILT_TARGETS.includes(target) ? target : undefined;
}

/** Everything the loader and the installer need to know about this machine. */
function describePlatform() {
  const abi = platformArchAbi();
  return {
    abi,
    /** The optional dependency that carries this machine's binary. */
    packageName: `${PACKAGE_NAME}-${abi}`,
    version: PACKAGE_VERSION,
    /** The addon's file name, in the platform package and in lib/native/. */
    addonFile: `${PACKAGE_NAME}.${abi}.node`,
    hasPrebuilt: prebuiltTargetFor(abi) !== undefined,
    prebuiltAbis: Object.freeze(
      ['linux-x64-gnu', 'linux-x64-musl', 'linux-arm64-gnu', 'darwin-x64', 'darwin-arm64', 'win32-x64-msvc'].filter(
        (a) => prebuiltTargetFor(a) !== undefined,
      ),
    ),
  };
}

module.exports = { describePlatform };
