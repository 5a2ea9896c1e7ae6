'use strict';
// Tools for models over a ZipWorkspace, in the neutral form (see ./toolset.js): reading,
// writing, patching, listing, searching and running files, each answering with compact text.
// Failures come back as `{ ok: false, code, content: 'ERROR CODE: message' }` plus a hint.

const { ErrorCode, formatForModel, invalidInput } = require('../errors.js');
const {
  BoundedLines,
  MAX_CONTENT,
  clip,
  createToolSet,
  fail,
  isPlainObject,
  restrictToolSet,
} = require('./toolset.js');

// The workspace's own path display (`~/a/b`), so tools show paths exactly as errors do.
const { ZipWorkspace: NativeWorkspace } = require('../native/load.js');

/** Bytes of hits and context one fs_search answer is built from (the size of a tool result). */
const SEARCH_ANSWER_BYTES = 64 * 1024;

/**
 * @typedef {import('../index.js').ZipWorkspace} ZipWorkspace
 * @typedef {import('../index.js').ExecOptions} ExecOptions
 * @typedef {import('./index.js').ToolParameterSchema} ToolParameterSchema
 * @typedef {import('./index.js').ToolResult} ToolResult
 * @typedef {import('./index.js').ToolSet} ToolSet
 * @typedef {import('./index.js').ToolAnnotations} ToolAnnotations
 * @typedef {import('./index.js').WorkspaceToolName} WorkspaceToolName
 * @typedef {import('./index.js').WorkspaceToolsOptions} WorkspaceToolsOptions
 * @typedef {{ name: WorkspaceToolName, description: string, inputSchema: ToolParameterSchema & { type: 'object' }, annotations: ToolAnnotations }} WorkspaceToolDefinition
 */

/** Lines `fs_read_lines` returns when `end` is not given. */
const DEFAULT_LINE_WINDOW = 200;
/** Entries `fs_list` shows before cutting the listing. */
const MAX_LIST_ENTRIES = 1000;
/** Patched lines `fs_patch_lines` echoes back. */
const MAX_ECHO_LINES = 20;

const PATH_CONVENTION =
  'Paths are inside the workspace and written like ~/src/app.js (~/ is the workspace root; ' +
  'src/app.js and /src/app.js mean the same).';
const LINE_CONVENTION = 'Line numbers are 1-based and ranges are inclusive: start 2, end 3 means lines 2 and 3.';

/**
 * @param {string} what
 * @returns {ToolParameterSchema}
 */
const pathParam = (what) => ({ type: 'string', minLength: 1, description: `${what}, e.g. ~/src/app.js` });

/** Reads only: calling twice changes nothing. */
const READ = Object.freeze({ readOnlyHint: true, destructiveHint: false, idempotentHint: true });

/** @returns {WorkspaceToolDefinition[]} */
function definitions() {
  return [
    {
      name: 'fs_read',
      annotations: { ...READ },
      description:
        `Read a whole text file from the workspace. ${PATH_CONVENTION} ` +
        'Large files are cut off; use fs_read_lines to read them in parts.',
      inputSchema: {
        type: 'object',
        properties: { path: pathParam('File to read') },
        required: ['path'],
        additionalProperties: false,
      },
    },
    {
      name: 'fs_read_lines',
      annotations: { ...READ },
      description:
        `Read a range of lines from a text file; each line comes back prefixed with its number. ${LINE_CONVENTION} ` +
        `Without end, ${DEFAULT_LINE_WINDOW} lines are returned; an end past the last line is fine. ` +
        `The answer also tells how many lines the file has. ${PATH_CONVENTION}`,
      inputSchema: {
        type: 'object',
        properties: {
          path: pathParam('File to read'),
          start: { type: 'integer', minimum: 1, description: 'First line to return (1-based). Default 1.' },
          end: { type: 'integer', minimum: 1, description: 'Last line to return (inclusive).' },
        },
        required: ['path'],
        additionalProperties: false,
      },
    },
    {
      name: 'fs_write',
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
      description:
        'Create or replace a whole text file; missing parent folders are created. ' +
        `To change part of an existing file, prefer fs_patch_lines. ${PATH_CONVENTION}`,
      inputSchema: {
        type: 'object',
        properties: {
          path: pathParam('File to write'),
          content: { type: 'string', description: 'The complete new contents of the file.' },
        },
        required: ['path', 'content'],
        additionalProperties: false,
      },
    },
    {
      name: 'fs_patch_lines',
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
      description:
        `Replace lines start..end of a text file with new text. ${LINE_CONVENTION} ` +
        'To insert without removing anything, use end = start - 1 (start = line count + 1 appends). ' +
        'An empty replacement deletes the lines. For safety pass expected: the exact current text of the ' +
        'lines being replaced, as read with fs_read_lines but without the line-number prefixes; if the file ' +
        `changed, nothing is written and the current text is returned. ${PATH_CONVENTION}`,
      inputSchema: {
        type: 'object',
        properties: {
          path: pathParam('File to patch'),
          start: { type: 'integer', minimum: 1, description: 'First line to replace (1-based).' },
          end: { type: 'integer', minimum: 0, description: 'Last line to replace (inclusive); start - 1 to insert.' },
          replacement: { type: 'string', description: 'New text for the range, lines separated by \\n.' },
          expected: { type: 'string', description: 'Current text of lines start..end, checked before writing.' },
        },
        required: ['path', 'start', 'end', 'replacement'],
        additionalProperties: false,
      },
    },
    {
      name: 'fs_list',
      annotations: { ...READ },
      description:
        'List a folder: one entry per line, folders end with /, files show their size in bytes. ' +
        `Set recursive to list everything below the folder. ${PATH_CONVENTION}`,
      inputSchema: {
        type: 'object',
        properties: {
          path: { type: 'string', description: 'Folder to list. Default ~/ (the root).' },
          recursive: { type: 'boolean', description: 'Also list the contents of sub-folders. Default false.' },
        },
        required: [],
        additionalProperties: false,
      },
    },
    {
      name: 'fs_stat',
      annotations: { ...READ },
      description: `Tell whether a path is a file or a folder, its size and when it last changed. ${PATH_CONVENTION}`,
      inputSchema: {
        type: 'object',
        properties: { path: pathParam('File or folder') },
        required: ['path'],
        additionalProperties: false,
      },
    },
    {
      name: 'fs_mkdir',
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
      description: `Create a folder and any missing parent folders; an existing folder is fine. ${PATH_CONVENTION}`,
      inputSchema: {
        type: 'object',
        properties: { path: pathParam('Folder to create') },
        required: ['path'],
        additionalProperties: false,
      },
    },
    {
      name: 'fs_delete',
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
      description:
        'Delete a file or a folder. A folder that still has entries needs recursive: true. ' +
        `Every change is recorded in the workspace history and can be undone by the user. ${PATH_CONVENTION}`,
      inputSchema: {
        type: 'object',
        properties: {
          path: pathParam('File or folder to delete'),
          recursive: { type: 'boolean', description: 'Delete a folder with everything in it. Default false.' },
        },
        required: ['path'],
        additionalProperties: false,
      },
    },
    {
      name: 'fs_search',
      annotations: { ...READ },
      description:
        'Search text files for a literal, case-sensitive string (not a regular expression). Each hit is ' +
        'shown as path:line:column: text, with context lines as path-line- text; hits are separated by --. ' +
        `Binary files are skipped. ${PATH_CONVENTION}`,
      inputSchema: {
        type: 'object',
        properties: {
          query: { type: 'string', minLength: 1, description: 'The exact text to find.' },
          path: { type: 'string', description: 'Folder or file to search. Default ~/ (everything).' },
          context: {
            type: 'integer',
            minimum: 0,
            maximum: 20,
            description: 'Lines shown before and after each hit. Default 1.',
          },
          maxResults: { type: 'integer', minimum: 1, maximum: 1000, description: 'Most hits to return. Default 50.' },
        },
        required: ['query'],
        additionalProperties: false,
      },
    },
    {
      name: 'js_exec',
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
      description:
        'Run a .js, .mjs or .ts file from the workspace as an ES module. Relative imports and the fs, ' +
        'fs/promises, path and os modules work (fs reads and writes the workspace); nothing else can be ' +
        "imported. Returns the exit code, stdout and stderr. The run's file changes are kept only if it " +
        `succeeds. ${PATH_CONVENTION}`,
      inputSchema: {
        type: 'object',
        properties: {
          path: pathParam('Entry file to run'),
          argv: { type: 'array', items: { type: 'string' }, description: 'Arguments, seen as process.argv.slice(2).' },
          env: {
            type: 'object',
            additionalProperties: { type: 'string' },
            description: 'Environment variables, seen as process.env.',
          },
          timeoutMs: { type: 'integer', minimum: 1, description: 'Wall-clock limit for the run in milliseconds.' },
        },
        required: ['path'],
        additionalProperties: false,
      },
    },
  ];
}

// ----- text helpers -----

/** @param {number | null | undefined} id */
const historyNote = (id) => (id === null || id === undefined ? 'no change' : `history #${id}`);

/** @type {Record<string, string | null>} */
const HINTS = {
  NOT_FOUND: 'Check the path with fs_list.',
  PATH_INVALID: 'Paths look like ~/dir/file.txt and stay inside the workspace.',
  RANGE: 'Line numbers are 1-based and inclusive; fs_read_lines tells how many lines the file has.',
  CONFLICT: 'The file changed: read the lines again with fs_read_lines and retry with their current text as expected.',
  NOT_TEXT: 'The file is binary and cannot be shown as text.',
  IS_A_DIRECTORY: 'The path is a folder; use fs_list to see what it holds.',
  NOT_A_DIRECTORY: 'A file is in the way; check the path with fs_list.',
  NOT_EMPTY: 'Pass recursive: true to delete the folder with everything in it.',
  EXISTS: 'Something already exists at that path.',
  QUOTA: 'The workspace is full; delete files that are no longer needed.',
  INVALID_INPUT: 'Check the arguments against the tool definition.',
};

/**
 * @param {number} start the first line's number
 * @param {string[]} lines
 */
function numbered(start, lines) {
  const width = String(start + Math.max(lines.length - 1, 0)).length;
  return lines.map((l, i) => `${String(start + i).padStart(width)}| ${l}`).join('\n');
}

// ----- the tools -----

/**
 * One function per tool but js_exec; each gets arguments already checked against its schema.
 * @satisfies {Record<Exclude<WorkspaceToolName, 'js_exec'>, (ws: ZipWorkspace, args: never) => string>}
 */
const handlers = {
  /**
   * @param {ZipWorkspace} ws
   * @param {{ path: string }} args
   */
  fs_read(ws, { path }) {
    const text = ws.readText(path);
    if (text.length === 0) return `${NativeWorkspace.displayPath(path)} is empty (0 bytes)`;
    return clip(text, 'read the rest with fs_read_lines');
  },

  /**
   * @param {ZipWorkspace} ws
   * @param {{ path: string, start?: number, end?: number }} args
   */
  fs_read_lines(ws, { path, start = 1, end }) {
    const last = end === undefined ? start + DEFAULT_LINE_WINDOW - 1 : end;
    // Only the answer's size of line text crosses from the file, however many lines are asked for.
    const r = ws.readLines(path, start, last, { maxBytes: MAX_CONTENT });
    // Lines come back with invalid UTF-8 replaced; refuse binary files like fs_read does.
    if (r.lines.some((l) => l.includes('\uFFFD'))) ws.readText(path);
    if (r.totalLines === 0) return `${NativeWorkspace.displayPath(path)} is empty (0 lines)`;
    // The numbers take room too: lines are added while the answer has room for them.
    const width = String(r.start + Math.max(r.lines.length - 1, 0)).length;
    const shown = new BoundedLines();
    let whole = 0;
    for (const [i, line] of r.lines.entries()) {
      if (!shown.add(`${String(r.start + i).padStart(width)}| ${line}`, { cut: true })) break;
      whole += 1;
    }
    const cutLine = r.lineCut || shown.lines.length > whole;
    const lastShown = r.start + shown.lines.length - 1;
    const head = `${NativeWorkspace.displayPath(path)} lines ${r.start}-${lastShown} of ${r.totalLines}`;
    const more = cutLine
      ? `\n[line ${r.start} is cut off after about ${MAX_CONTENT} bytes; it is longer than one answer]`
      : lastShown < r.totalLines
        ? `\n[${r.totalLines - lastShown} more lines; continue with start ${lastShown + 1}${r.truncated || shown.full ? ' (the answer is full)' : ''}]`
        : '';
    return `${head}\n${shown.text()}${more}`;
  },

  /**
   * @param {ZipWorkspace} ws
   * @param {{ path: string, content: string }} args
   */
  fs_write(ws, { path, content }) {
    const id = ws.writeFile(path, content);
    return `wrote ${Buffer.byteLength(content)} bytes to ${NativeWorkspace.displayPath(path)} (${historyNote(id)})`;
  },

  /**
   * @param {ZipWorkspace} ws
   * @param {{ path: string, start: number, end: number, replacement: string, expected?: string }} args
   */
  fs_patch_lines(ws, { path, start, end, replacement, expected }) {
    const r = ws.patchLines(path, start, end, replacement, expected === undefined ? undefined : { expected });
    const what =
      r.removed === 0
        ? `inserted ${r.inserted} line${r.inserted === 1 ? '' : 's'} at line ${r.start}`
        : `replaced lines ${start}-${end} (${r.removed} removed, ${r.inserted} inserted)`;
    let text = `patched ${NativeWorkspace.displayPath(path)}: ${what}; the file now has ${r.totalLines} lines (${historyNote(r.historyId)})`;
    if (r.inserted > 0) {
      const shownCount = Math.min(r.inserted, MAX_ECHO_LINES);
      const lines = ws.readLines(path, r.start, r.start + shownCount - 1);
      text += `\n${numbered(lines.start, lines.lines)}`;
      if (r.inserted > shownCount) text += `\n[${r.inserted - shownCount} more inserted lines not shown]`;
    }
    return text;
  },

  /**
   * @param {ZipWorkspace} ws
   * @param {{ path?: string, recursive?: boolean }} args
   */
  fs_list(ws, { path = '~', recursive = false }) {
    const entries = ws.list(path, { recursive });
    if (entries.length === 0) return `${NativeWorkspace.displayPath(path)} is empty`;
    // At most MAX_LIST_ENTRIES lines and the answer's size, whichever comes first.
    const listing = new BoundedLines(MAX_CONTENT - 256);
    for (const e of entries.slice(0, MAX_LIST_ENTRIES)) {
      const line =
        e.kind === 'dir'
          ? `${NativeWorkspace.displayPath(e.path)}/`
          : `${NativeWorkspace.displayPath(e.path)} (${e.size} bytes)`;
      if (!listing.add(line)) break;
    }
    const left = entries.length - listing.lines.length;
    if (left > 0) listing.lines.push(`[${left} more entries not shown; list a sub-folder]`);
    return listing.text();
  },

  /**
   * @param {ZipWorkspace} ws
   * @param {{ path: string }} args
   */
  fs_stat(ws, { path }) {
    const s = ws.stat(path);
    const where = NativeWorkspace.displayPath(s.path);
    if (s.kind === 'dir') {
      return s.mtime ? `${where}: folder, modified ${new Date(s.mtime).toISOString()}` : `${where}: folder`;
    }
    const modified = s.mtime ? `, modified ${new Date(s.mtime).toISOString()}` : '';
    return `${where}: file, ${s.size} bytes${modified}`;
  },

  /**
   * @param {ZipWorkspace} ws
   * @param {{ path: string }} args
   */
  fs_mkdir(ws, { path }) {
    const id = ws.mkdir(path, { recursive: true });
    return id === null
      ? `${NativeWorkspace.displayPath(path)} already exists`
      : `created folder ${NativeWorkspace.displayPath(path)} (${historyNote(id)})`;
  },

  /**
   * @param {ZipWorkspace} ws
   * @param {{ path: string, recursive?: boolean }} args
   */
  fs_delete(ws, { path, recursive = false }) {
    const id = ws.delete(path, { recursive });
    return `deleted ${NativeWorkspace.displayPath(path)} (${historyNote(id)})`;
  },

  /**
   * @param {ZipWorkspace} ws
   * @param {{ query: string, path?: string, context?: number, maxResults?: number }} args
   */
  fs_search(ws, { query, path = '~', context = 1, maxResults = 50 }) {
    // The answer's byte budget is the tool result's size: hits and context past it are never built.
    const r = ws.search(query, { path, context, maxResults, maxBytes: SEARCH_ANSWER_BYTES });
    if (r.matches.length === 0) {
      // The query is quoted short: it may be megabytes long.
      const shown =
        query.length > 200
          ? `${JSON.stringify(query.slice(0, 200))}… (${query.length} characters)`
          : JSON.stringify(query);
      return `no matches for ${shown} in ${NativeWorkspace.displayPath(path)} (${r.filesSearched} text files searched)`;
    }
    const blocks = r.matches.map((m) => {
      const p = NativeWorkspace.displayPath(m.path);
      /** @type {string[]} */
      const out = [];
      for (const [i, t] of m.before.entries()) out.push(`${p}-${m.line - m.before.length + i}- ${t}`);
      out.push(`${p}:${m.line}:${m.column}: ${m.text}`);
      for (const [i, t] of m.after.entries()) out.push(`${p}-${m.line + 1 + i}- ${t}`);
      return out.join('\n');
    });
    const n = r.matches.length;
    const summary = r.truncated
      ? `${n} matches shown; there are more: narrow the path or the query, use less context or raise maxResults`
      : `${n} match${n === 1 ? '' : 'es'}`;
    return clip(`${blocks.join(context > 0 ? '\n--\n' : '\n')}\n[${summary}]`, 'narrow the search');
  },
};

/**
 * js_exec: runs through `ws.exec`, which a workspace-like object may lack.
 * @param {ZipWorkspace} ws
 * @param {{ path: string, argv?: string[], env?: Record<string, string>, timeoutMs?: number }} args
 * @param {AbortSignal | undefined} signal
 * @returns {Promise<ToolResult>}
 */
async function execTool(ws, { path, argv, env, timeoutMs }, signal) {
  if (typeof ws.exec !== 'function') {
    throw fail(ErrorCode.Unavailable, 'running code is not available in this workspace');
  }
  /** @type {ExecOptions} */
  const options = {};
  if (argv !== undefined) options.argv = argv;
  if (env !== undefined) options.env = env;
  if (timeoutMs !== undefined) options.timeoutMs = timeoutMs;
  if (signal !== undefined) options.signal = signal;
  const r = await ws.exec(path, options);
  if (!r || typeof r !== 'object') throw fail(ErrorCode.Internal, 'exec returned no result');
  const parts = [`exit code ${r.exitCode ?? (r.ok ? 0 : 1)}`];
  if (r.stdout) parts.push(`--- stdout ---\n${r.stdout}`);
  if (r.stderr) parts.push(`--- stderr ---\n${r.stderr}`);
  if (r.error) {
    const e = r.error;
    if (typeof e === 'object') {
      parts.push(`--- error ---\n${formatForModel(e, { code: true })}`);
    } else {
      parts.push(`--- error ---\n${String(e)}`);
    }
  }
  if (!r.stdout && !r.stderr && !r.error) parts.push('(no output)');
  const content = clip(parts.join('\n'), 'print less output');
  if (r.ok) return { ok: true, content };
  const code =
    r.error && typeof r.error === 'object' && typeof r.error.code === 'string' ? r.error.code : ErrorCode.ExecFailed;
  return { ok: false, code, content };
}

/**
 * The workspace tools over `ws` as a ToolSet, optionally restricted.
 *
 * `dispatch(name, args, { signal })` takes the arguments as an object or a JSON string and
 * resolves to a ToolResult; it never rejects. An aborted `signal` stops a running `js_exec`
 * (`CANCELLED`, or `TIMEOUT` for `AbortSignal.timeout()`) and refuses a call not yet started.
 * @param {ZipWorkspace} ws
 * @param {WorkspaceToolsOptions} [options]
 * @returns {ToolSet}
 */
function workspaceTools(ws, options = {}) {
  if (ws === null || typeof ws !== 'object' || typeof ws.readText !== 'function') {
    throw invalidInput('workspaceTools() takes a ZipWorkspace');
  }
  if (!isPlainObject(options)) throw invalidInput('workspaceTools() options must be an object');
  const set = createToolSet(
    definitions().map((def) => ({
      ...def,
      // The set validates arguments against inputSchema before a handler runs, which is what
      // makes these casts hold.
      handler:
        def.name === 'js_exec'
          ? (/** @type {Record<string, unknown>} */ args, /** @type {{ signal?: AbortSignal }} */ { signal }) =>
              execTool(ws, /** @type {Parameters<typeof execTool>[1]} */ (args), signal)
          : (/** @type {Record<string, unknown>} */ args) =>
              /** @type {Record<string, (ws: ZipWorkspace, args: Record<string, unknown>) => string>} */ (
                /** @type {unknown} */ (handlers)
              )[def.name](ws, args),
    })),
    { hints: HINTS },
  );
  return restrictToolSet(set, options);
}

module.exports = { workspaceTools, definitions };
