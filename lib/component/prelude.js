'use strict';
// The guest side of a component script: a prelude that installs each public state as a global
// and enforces its permission inside the realm, and the wrapper that keeps the model's script
// on its own lines.
//
// The source sent to `run` (in script mode) is
//
//     {(<prelude>)(<length>, __quickrealm_component_script); async function __quickrealm_component_script() {<script>
//     }}
//
// all of the prelude on line 1 before the script, so the script's lines keep their numbers and
// only columns on line 1 move (the host shifts them back). The script is a function declared
// in a block outside the prelude's scope, so nothing the prelude binds is visible to it and its
// name is no global. The prelude's call
// is the first statement the engine runs; everything of the script comes after it in the source,
// and a declaration runs no code, so the prelude can refuse a script that closes its function
// early (its text is then not exactly the script) before any of the script runs.
//
// What the prelude enforces is for the model's benefit: clear errors at the line that broke a
// rule. The boundary is on the host: values of `w` states never enter the realm, `r` states are
// never read back, and only `rw` drafts and `w` write logs come out, as copied data.

const { SPEC_GLOBAL, SCRIPT_FUNCTION, componentPrelude } = require('./guest.js');

/** The prelude function as one line of source. */
const PRELUDE_FUNCTION = componentPrelude
  .toString()
  .split('\n')
  .map((line) => line.trim())
  .join(' ');
const DECLARATION = `async function ${SCRIPT_FUNCTION}() {`;
const SUFFIX = '\n}';
const BLOCK_END = '}';

/**
 * The source `run` executes for a model's script (in script mode), and how many characters
 * precede the script on line 1.
 * @param {string} script
 * @returns {{ source: string, offset: number }}
 */
function wrapScript(script) {
  // The declaration's text: `async function <name>() {` + script + `\n}`.
  const declarationLength = DECLARATION.length + script.length + SUFFIX.length;
  const prefix = `{(${PRELUDE_FUNCTION})(${declarationLength}, ${SCRIPT_FUNCTION}); ${DECLARATION}`;
  return { source: prefix + script + SUFFIX + BLOCK_END, offset: prefix.length };
}

module.exports = { SPEC_GLOBAL, SCRIPT_FUNCTION, wrapScript };
