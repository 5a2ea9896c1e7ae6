'use strict';
// The chat's own commands, typed as `:name args`: workspace history (list, diff, undo, redo,
// restore), help and quit. `:undo`, `:redo` and `:restore` save the zip at once.

const { safeText } = require('./style.js');

/**
 * @typedef {import('../index.js').ZipWorkspace} Workspace
 * @typedef {import('./style.js').Style} Style
 * @typedef {{ ws: Workspace, style: Style, saveZip(): string }} CommandContext
 * @typedef {{ lines: string[], quit?: boolean, note?: string }} CommandOutcome
 */

const HELP_LINES = [
  ':history [n]     the newest n workspace history entries (default 20)',
  ':diff <id>       the changes made by history entry <id>',
  ':undo [n]        undo the newest n entries (default 1) and save the zip',
  ':redo [n]        redo up to n undone entries (default 1) and save the zip',
  ':restore <id>    return the files to their state right after entry <id> and save the zip',
  ':help            this list',
  ':quit            leave (Ctrl-D too); Ctrl-C stops a running answer',
];

/** @param {number} time */
function clock(time) {
  const d = new Date(time);
  const two = (/** @type {number} */ n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
}

/**
 * A positive integer argument, or `fallback` when absent.
 * @param {string | undefined} arg
 * @param {number | undefined} fallback
 * @param {string} usage
 * @returns {number}
 */
function intArg(arg, fallback, usage) {
  if (arg === undefined) {
    if (fallback === undefined) throw new UsageError(usage);
    return fallback;
  }
  if (!/^\d+$/.test(arg) || Number(arg) < 1 || !Number.isSafeInteger(Number(arg))) throw new UsageError(usage);
  return Number(arg);
}

class UsageError extends Error {}

/**
 * Saves the zip after a history command; says so in a few words to add to the line.
 * @param {CommandContext} ctx
 */
function saveNote(ctx) {
  try {
    return ctx.style.dim(` · saved ${ctx.saveZip()}`);
  } catch (e) {
    return ctx.style.red(` · could not save the zip: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/**
 * @param {string[]} ids
 */
const idList = (ids) => ids.join(', ');

/**
 * Runs one `:command` line.
 * @param {string} line the line as typed, starting with ':'
 * @param {CommandContext} ctx
 * @returns {CommandOutcome}
 */
function runCommand(line, ctx) {
  const [name, ...args] = line.slice(1).trim().split(/\s+/);
  const { ws, style } = ctx;
  try {
    switch (name) {
      case 'help':
      case 'h':
      case '?':
        return { lines: HELP_LINES };
      case 'quit':
      case 'q':
      case 'exit':
        return { lines: [], quit: true };
      case 'history': {
        const entries = ws.history(intArg(args[0], 20, 'usage: :history [n]'));
        if (entries.length === 0) return { lines: [style.dim('no history yet')] };
        return {
          lines: entries.map((e) => {
            const more = e.pathCount > 1 ? style.dim(` (${e.pathCount} paths)`) : '';
            const compacted = e.compacted ? style.dim(' [compacted]') : '';
            return `${style.yellow(`#${e.id}`)}  ${style.dim(clock(e.time))}  ${safeText(e.op)}${more}${compacted}`;
          }),
        };
      }
      case 'diff': {
        const id = intArg(args[0], undefined, 'usage: :diff <id>');
        const diff = ws.diff(id);
        if (diff.trim() === '') return { lines: [style.dim(`entry #${id} changed no text`)] };
        return {
          lines: diff
            .replace(/\n$/, '')
            .split('\n')
            .map((l) => {
              const t = safeText(l);
              if (l.startsWith('+++') || l.startsWith('---')) return style.bold(t);
              if (l.startsWith('+')) return style.green(t);
              if (l.startsWith('-')) return style.red(t);
              if (l.startsWith('@@')) return style.cyan(t);
              return t;
            }),
        };
      }
      case 'undo':
      case 'redo': {
        const n = intArg(args[0], 1, `usage: :${name} [n]`);
        const ids = (name === 'undo' ? ws.undo(n) : ws.redo(n)).map((id) => `#${id}`);
        if (ids.length === 0) return { lines: [style.dim(`nothing to ${name}`)] };
        const did = name === 'undo' ? 'undid' : 'redid';
        return {
          lines: [`${did} ${idList(ids)}${saveNote(ctx)}`],
          note: `The user ${did} workspace history ${idList(ids)}; files may differ from what you saw.`,
        };
      }
      case 'restore': {
        const id = intArg(args[0], undefined, 'usage: :restore <id>');
        const entry = ws.restore(id);
        if (entry === null) return { lines: [style.dim(`the files are already as they were after #${id}`)] };
        return {
          lines: [`restored the files to #${id} (recorded as #${entry})${saveNote(ctx)}`],
          note: `The user restored the workspace to its state after history #${id}; files may differ from what you saw.`,
        };
      }
      default:
        return { lines: [style.red(`unknown command :${safeText(name)}`), ':help lists the commands'] };
    }
  } catch (e) {
    if (e instanceof UsageError) return { lines: [style.red(e.message)] };
    const code = /** @type {{ code?: unknown }} */ (e).code;
    const message = e instanceof Error ? e.message : String(e);
    return { lines: [style.red(`${typeof code === 'string' ? `${code}: ` : ''}${safeText(message)}`)] };
  }
}

module.exports = { runCommand, HELP_LINES };
