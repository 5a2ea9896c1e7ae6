'use strict';
// Sessions: the host-controlled loop over a workspace (DESIGN §4.1).

const { Session } = require('./session.js');
const { SessionManager, FolderStore } = require('./manager.js');
const { policies } = require('./policy.js');
const { sessionTools, describeTurn } = require('./tools.js');
const { operationContext } = require('./turn.js');
const { inspectSnapshot } = require('./inspect.js');

module.exports = {
  Session,
  SessionManager,
  FolderStore,
  policies,
  sessionTools,
  describeTurn,
  operationContext,
  inspectSnapshot,
};
