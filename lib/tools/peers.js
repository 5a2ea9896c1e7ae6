'use strict';
// Optional peer dependencies, loaded when a converter first needs them.

const { ErrorCode } = require('../errors.js');

/**
 * Loads an optional peer package, or throws an Error (code MODULE_NOT_FOUND) saying which
 * package to install for what.
 * @param {string} specifier
 * @param {string} pkg the npm package name to install
 * @param {string} forWhat the function that needs it
 * @returns {any}
 */
function loadPeer(specifier, pkg, forWhat) {
  try {
    return require(specifier);
  } catch (e) {
    const code = e && typeof e === 'object' && 'code' in e ? e.code : undefined;
    if (code !== ErrorCode.ModuleNotFound && code !== 'ERR_PACKAGE_PATH_NOT_EXPORTED') throw e;
    const err = new Error(
      `${forWhat} needs the optional peer dependency '${pkg}', which is not installed: npm install ${pkg}`,
      { cause: e },
    );
    Object.assign(err, { code: ErrorCode.ModuleNotFound });
    throw err;
  }
}

module.exports = { loadPeer };
