'use strict';
// The `--operations <module>` of `quickrealm worker` and `quickrealm mcp`: a CommonJS or ES
// module exporting the host operations (as `operations`, or as its default export), and
// optionally `snapshotKey` and command-specific settings.

const path = require('node:path');
const { pathToFileURL } = require('node:url');

/** @param {unknown} e */
const messageOf = (e) => (e instanceof Error ? e.message : String(e));

/**
 * Loads the module; a module that cannot be loaded or exports no operations throws an Error
 * whose message says which.
 * @param {string} file
 * @returns {Promise<{ operations: Record<string, unknown>, module: Record<string, any> }>}
 */
async function loadOperationsModule(file) {
  let loaded;
  try {
    loaded = await import(pathToFileURL(path.resolve(file)).href);
  } catch (e) {
    throw new Error(`cannot load --operations ${file}: ${messageOf(e)}`);
  }
  const module = loaded.default && typeof loaded.default === 'object' && !loaded.operations ? loaded.default : loaded;
  const operations = module.operations ?? module.default;
  if (!operations || typeof operations !== 'object')
    throw new Error(`--operations ${file} must export \`operations\` (an object of operations)`);
  return { operations, module };
}

module.exports = { loadOperationsModule };
