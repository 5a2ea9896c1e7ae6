'use strict';
// quickrealm/console: the review console (DESIGN §9). Re-exports only.

const { createConsole } = require('./handler.js');
const { toNodeListener } = require('./node.js');

module.exports = { createConsole, toNodeListener };
