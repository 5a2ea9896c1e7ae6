'use strict';
// The quickrealm command-line tool; bin/quickrealm.js calls `main`.
//
//   quickrealm run   < request.json   deny-by-default snippet runner (JSON on stdin), see ./run.js
//   quickrealm exec  < request.json   run a file of a zipped workspace (JSON on stdin), see ./exec.js

const { EXIT_FAILED, EXIT_INVALID, fail } = require('./io.js');
const { commandRun } = require('./run.js');
const { commandExec } = require('./exec.js');

const USAGE = 'usage: quickrealm run < request.json | quickrealm exec < request.json';

/**
 * @param {string[]} argv the arguments after the script name
 * @returns {void | Promise<void>}
 */
function dispatch(argv) {
  const [command] = argv;
  if (command === 'run') return commandRun();
  if (command === 'exec') return commandExec();
  if (command === '--help' || command === '-h') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  fail('INVALID_INPUT', command ? `unknown command '${command}'. ${USAGE}` : USAGE, EXIT_INVALID);
}

/**
 * Runs one command; the outcome is written to stdout/stderr and `process.exitCode`. A bug in a
 * command is reported as INTERNAL, never as an unhandled rejection.
 * @param {string[]} argv the arguments after the script name
 * @returns {Promise<void>}
 */
function main(argv) {
  return Promise.resolve()
    .then(() => dispatch(argv))
    .catch((e) => {
      fail('INTERNAL', `quickrealm bug: ${e?.message ? e.message : String(e)}`, EXIT_FAILED);
    });
}

module.exports = { main, USAGE };
