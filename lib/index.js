'use strict';
// The public entry point: re-exports each layer's surface; no logic lives here.

const { run, runSync, configure, poolStats, realmStats, copyOf } = require('./run.js');
const { createSandboxExecutor } = require('./executor.js');
const { ZipWorkspace } = require('./workspace.js');
const { ErrorCode } = require('./errors.js');
const { StatefulComponent, ComponentGroup, StateType, Permission, compose } = require('./component/index.js');
const {
  Session,
  SessionManager,
  FolderStore,
  policies,
  sessionTools,
  describeTurn,
  operationContext,
} = require('./session/index.js');
const { configureTelemetry } = require('./telemetry/index.js');
const { createRepl, restoreRepl } = require('./repl/index.js');

module.exports = {
  run,
  runSync,
  configure,
  poolStats,
  realmStats,
  copyOf,
  ErrorCode,
  createSandboxExecutor,
  ZipWorkspace,
  ...require('./tools/index.js'),
  StatefulComponent,
  ComponentGroup,
  StateType,
  Permission,
  compose,
  Session,
  SessionManager,
  FolderStore,
  policies,
  sessionTools,
  describeTurn,
  operationContext,
  configureTelemetry,
  createRepl,
  restoreRepl,
};
