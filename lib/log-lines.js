'use strict';
// Guest console lines shown on the host's console (`console: 'inherit'`). Guest text is
// untrusted: terminal control sequences in it (ESC, OSC, BEL, carriage returns...) could
// retitle or clear the terminal, write the clipboard on some terminals, or forge log lines, so
// every control character except newline and tab is printed as a visible escape.

/** @typedef {{ level: 'log' | 'info' | 'warn' | 'error' | 'debug', message: string }} LogLine */

// C0 controls but \t and \n, DEL, and the C1 controls (U+0080–U+009F, 8-bit CSI/OSC).
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/**
 * Text as a terminal may show it: control characters become `\u001b`-style escapes.
 * @param {string} text
 */
function escapeControls(text) {
  return text.replace(CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * Prints captured lines on the host console at their level.
 * @param {readonly LogLine[]} lines
 */
function printLogs(lines) {
  for (const { level, message } of lines) console[level](escapeControls(message));
}

module.exports = { escapeControls, printLogs };
