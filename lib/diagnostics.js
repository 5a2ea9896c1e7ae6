'use strict';
// Observability through node:diagnostics_channel: every run and workspace exec publishes on
// `quickrealm:run:start` ({ id, kind, mode, sourceBytes, live, workspace } or, for exec,
// { id, kind: 'exec', entryPath }) and `quickrealm:run:end` ({ id, kind, ok, code, stats }).
// Nothing is built or published while no one subscribes; source text and values are never
// published.

const dc = require('node:diagnostics_channel');

const started = dc.channel('quickrealm:run:start');
const ended = dc.channel('quickrealm:run:end');
let nextId = 1;

/**
 * Announces a run; returns its id (0 when no one listens).
 * @param {() => Record<string, unknown>} describe what the run is, built only when someone listens
 * @returns {number}
 */
function runStarted(describe) {
  if (!started.hasSubscribers && !ended.hasSubscribers) return 0;
  const id = nextId++;
  if (started.hasSubscribers) started.publish({ id, ...describe() });
  return id;
}

/**
 * Announces the end of run `id` with its outcome.
 * @param {number} id
 * @param {string} kind
 * @param {{ ok: boolean, error?: { code: string } | null, stats?: unknown }} result
 */
function runEnded(id, kind, result) {
  if (id === 0 || !ended.hasSubscribers) return;
  ended.publish({ id, kind, ok: result.ok, code: result.error?.code ?? null, stats: result.stats });
}

module.exports = { runStarted, runEnded };
