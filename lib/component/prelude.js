'use strict';
// The guest side of a component script: a prelude that installs each public state as a global
// and enforces its permission inside the realm, and the wrapper that keeps the model's script
// on its own lines.
//
// The source sent to `run` is
//
//     return (<prelude>)(<length>, async () => {<script>
//     });
//
// all of the prelude on line 1 before the script, so the script's lines keep their numbers and
// only columns on line 1 move (the host shifts them back). The script is an arrow function
// created outside the prelude's scope, so nothing the prelude binds is visible to it, and the
// prelude refuses an arrow whose text is not exactly the script: a script that closes the
// arrow and writes declarations beside the prelude never runs.
//
// What the prelude enforces is for the model's benefit: clear errors at the line that broke a
// rule. The boundary is on the host: values of `w` states never enter the realm, `r` states are
// never read back, and only `rw` drafts and `w` write logs come out, as copied data.

const { SPEC_GLOBAL, componentPrelude } = require('./guest.js');

/** The prelude function as one line of source. */
const PRELUDE_FUNCTION = componentPrelude
  .toString()
  .split('\n')
  .map((line) => line.trim())
  .join(' ');
const ARROW_START = 'async () => {';
const SUFFIX = '\n});';

/**
 * The source `run` executes for a model's script, and how many characters precede the script
 * on line 1.
 * @param {string} script
 * @returns {{ source: string, offset: number }}
 */
function wrapScript(script) {
  // The arrow's text: `async () => {` + script + `\n}`.
  const arrowLength = ARROW_START.length + script.length + 2;
  const prefix = `return (${PRELUDE_FUNCTION})(${arrowLength}, ${ARROW_START}`;
  return { source: prefix + script + SUFFIX, offset: prefix.length };
}

module.exports = { SPEC_GLOBAL, wrapScript };
