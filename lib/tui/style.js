'use strict';
// Colours for the chat screen, as plain SGR codes. With colour off (NO_COLOR set, or output
// that is not a terminal) every style is the identity, so no escape code is ever written.

const { escapeControls } = require('../log-lines.js');

/**
 * @typedef {(text: string) => string} Paint
 * @typedef {{ enabled: boolean, dim: Paint, bold: Paint, red: Paint, green: Paint, yellow: Paint, cyan: Paint, magenta: Paint }} Style
 */

/**
 * @param {number} open
 * @param {number} close
 * @returns {Paint}
 */
const sgr = (open, close) => (text) => (text === '' ? '' : `\u001b[${open}m${text}\u001b[${close}m`);

/** @type {Paint} */
const plain = (text) => text;

/**
 * @param {boolean} enabled
 * @returns {Style}
 */
function createStyle(enabled) {
  if (!enabled) {
    return { enabled, dim: plain, bold: plain, red: plain, green: plain, yellow: plain, cyan: plain, magenta: plain };
  }
  return {
    enabled,
    dim: sgr(2, 22),
    bold: sgr(1, 22),
    red: sgr(31, 39),
    green: sgr(32, 39),
    yellow: sgr(33, 39),
    cyan: sgr(36, 39),
    magenta: sgr(35, 39),
  };
}

/**
 * Whether to colour `stream`: a terminal, and NO_COLOR unset or empty (https://no-color.org).
 * @param {{ isTTY?: boolean }} stream
 * @param {Record<string, string | undefined>} env
 */
function colorWanted(stream, env) {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  return stream.isTTY === true;
}

/**
 * Untrusted text (model output, tool results with guest console output) made safe to print:
 * control characters other than newline and tab are shown as `\u001b`-style escapes, so they
 * cannot move the cursor, recolour or clear the screen.
 * @param {string} text
 */
const safeText = (text) => escapeControls(text);

/**
 * `text` on one line, at most `max` characters (an ellipsis marks the cut).
 * @param {string} text
 * @param {number} max
 */
function oneLine(text, max) {
  const flat = safeText(text.replace(/\s*\n\s*/g, ' ⏎ ').replace(/\t/g, ' ')).trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

module.exports = { createStyle, colorWanted, safeText, oneLine };
