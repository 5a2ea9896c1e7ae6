'use strict';
// quickrealm/console: the review console (DESIGN §9), and the read-only snapshot inspection it
// shows sessions with. Re-exports only.

const { createConsole } = require('./handler.js');
const { toNodeListener } = require('./node.js');
const { inspectSnapshot } = require('../session/inspect.js');

module.exports = { createConsole, toNodeListener, inspectSnapshot };
