'use strict';
// The CommonJS entry of quickrealm/tree (types in tree.d.ts): re-exports only.

const { createContext } = require('./tree-context.js');

module.exports = { createContext };
