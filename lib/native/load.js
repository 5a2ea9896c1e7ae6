'use strict';
// Loads the native addon through napi-rs's generated loader (binding.js: lib/native first, then
// the platform package). When nothing loads, napi-rs's own message points at an npm bug that is
// rarely the cause; replace it with what is missing on this machine and the two ways to fix it.

const { describePlatform } = require('./platform.js');

/**
 * @param {unknown} cause
 * @returns {Error & { code: string }}
 */
function addonNotFound(cause) {
  const p = describePlatform();
  const install = p.hasPrebuilt
    ? `install the prebuilt package: npm install ${p.packageName}@${p.version} ` +
      '(it is an optional dependency of quickrealm: installs with --omit=optional, --no-optional ' +
      'or a lockfile made on another platform leave it out)'
    : `there is no prebuilt package for ${p.abi} (prebuilt: ${p.prebuiltAbis.join(', ')})`;
  const message =
    `ADDON_NOT_FOUND: quickrealm's native addon for ${p.abi} could not be loaded. Either ${install}, ` +
    'or build it from source: install Rust from https://rustup.rs and run npm rebuild quickrealm.' +
    `\nWhat the loader reported: ${cause instanceof Error ? cause.message : String(cause)}`;
  return Object.assign(new Error(message, { cause }), { code: 'ADDON_NOT_FOUND' });
}

/** @type {typeof import('./binding.js')} */
let binding;
try {
  binding = require('./binding.js');
} catch (cause) {
  throw addonNotFound(cause);
}

module.exports = binding;
