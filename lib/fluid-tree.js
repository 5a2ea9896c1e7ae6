'use strict';
// Loads @fluidframework/tree, an optional peer dependency, on first use. The package is ES
// modules only; Node.js 20.19+ and 22.12+ require() an ES module synchronously, and it is the
// same module instance that `import` gives the application, so node classes and schema match.

const { QuickrealmError } = require('./errors.js');

/** @typedef {typeof import('@fluidframework/tree/alpha')} FluidTree */

const PACKAGE = '@fluidframework/tree';
const ENTRY = '@fluidframework/tree/alpha';

/** @type {FluidTree | undefined} */
let loaded;

/**
 * The `@fluidframework/tree/alpha` namespace; throws a QuickrealmError (code INVALID_INPUT)
 * naming the package when it is not installed or this Node.js cannot require() it.
 * @returns {FluidTree}
 */
function loadFluidTree() {
  if (loaded) return loaded;
  try {
    loaded = /** @type {FluidTree} */ (require(ENTRY));
  } catch (e) {
    const error = /** @type {NodeJS.ErrnoException} */ (e);
    if (error?.code === 'MODULE_NOT_FOUND' && String(error.message).includes(`'${ENTRY}'`)) {
      throw new QuickrealmError(
        'INVALID_INPUT',
        `INVALID_INPUT: quickrealm/tree needs the optional peer dependency ${PACKAGE} (3.1.0 or later), which is not installed: npm install ${PACKAGE}`,
      );
    }
    if (error?.code === 'ERR_REQUIRE_ESM') {
      throw new QuickrealmError(
        'INVALID_INPUT',
        `INVALID_INPUT: quickrealm/tree loads ${PACKAGE}, an ES-module-only package, with require(); this needs Node.js 20.19+ or 22.12+`,
      );
    }
    throw e;
  }
  return loaded;
}

/**
 * The namespace when the package can be loaded, otherwise null (for checks that only matter
 * when the package is in use).
 * @returns {FluidTree | null}
 */
function fluidTreeIfInstalled() {
  try {
    return loadFluidTree();
  } catch {
    return null;
  }
}

module.exports = { loadFluidTree, fluidTreeIfInstalled };
