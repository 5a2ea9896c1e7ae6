'use strict';
// OpenAI's `apply_patch` tool over a ZipWorkspace: operations `{ type: 'create_file' |
// 'update_file' | 'delete_file', path, diff }` with V4A diffs, as the Responses API's
// apply_patch_call carries them. The V4A rules and the results (`Created <path>`, `Updated
// <path>`, `Deleted <path>`, `Cannot update missing file: <path>`) follow OpenAI's own V4A code and
// its example editor.
//
// V4A in short: a create_file diff is the new file, every line prefixed with `+`. An update_file
// diff is a series of sections; each may start with `@@ <line>` anchors that move the search to
// just after a line equal to the anchor (e.g. a function header), then lists lines prefixed with
// ' ' (context), '-' (removed) and '+' (added). Context and removed lines must appear in the file,
// in order, after the previous section; `*** End of File` pins a section to the end of the file.
// Matching is exact first, then ignoring trailing whitespace, then ignoring surrounding whitespace.
//
// A call takes one operation (`operation`, as an apply_patch_call holds it) or several
// (`operations`); either way it is all or nothing: every operation is worked out first, and only
// if all succeed are the files written, as one history entry.
//
// Where this differs from the example editor, on purpose: deleting a missing file is an error
// (the example ignores it), and errors name the path and the first context line that does not
// match instead of the SDK's bare `Invalid Context <n>`.

const { ErrorCode } = require('../../errors.js');
const { ZipWorkspace } = require('../../workspace.js');
const { changed, fail, ToolFailure } = require('../toolset.js');
const { LineIndex } = require('../../native/load.js');
const { lineEnding } = require('./text.js');

/**
 * @typedef {import('../../index.js').ZipWorkspace} Workspace
 * @typedef {import('../index.js').ToolDefinitionInput} Tool
 * @typedef {import('../index.js').ToolResult} ToolResult
 * @typedef {{ type: 'create_file' | 'update_file' | 'delete_file', path: string, diff?: string }} PatchOperation
 * @typedef {{ at: number, removed: string[], added: string[] }} Change
 */

const END_PATCH = '*** End Patch';
const END_OF_FILE = '*** End of File';
const FILE_HEADERS = ['*** Update File:', '*** Delete File:', '*** Add File:'];

/**
 * The diff's lines, without a final empty line.
 * @param {string} diff
 */
function diffLines(diff) {
  const lines = diff.split(/\r?\n/);
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/**
 * The content a create_file diff describes.
 * @param {string} path
 * @param {string} diff
 */
function createdContent(path, diff) {
  /** @type {string[]} */
  const out = [];
  for (const line of diffLines(diff)) {
    if (line.startsWith(END_PATCH) || FILE_HEADERS.some((h) => line.startsWith(h))) break;
    if (!line.startsWith('+')) {
      throw fail(
        ErrorCode.PatchInvalid,
        `Invalid Add File Line in the diff for ${path}: every line must start with '+', got: ${line}`,
      );
    }
    out.push(line.slice(1));
  }
  return out.join('\n');
}

/**
 * Applies an update_file diff to `text`.
 * @param {string} path shown in errors
 * @param {string} text
 * @param {string} diff
 */
function updatedContent(path, text, diff) {
  const eol = lineEnding(text);
  const input = eol === '\r\n' ? text.replace(/\r\n/g, '\n') : text;
  // The split keeps an empty last element after a final newline, so edits keep it.
  const lines = input.split('\n');
  // Lines are found through an index of the file (linear in the lines scanned; exact, then
  // ignoring trailing whitespace, then surrounding whitespace).
  const index = new LineIndex(input);
  const patch = diffLines(diff);
  /** @type {Change[]} */
  const changes = [];
  let at = 0;
  let cursor = 0;
  let section = 0;
  while (at < patch.length && !patch[at].startsWith(END_PATCH) && !FILE_HEADERS.some((h) => patch[at].startsWith(h))) {
    if (patch[at] === END_OF_FILE) {
      at++;
      continue;
    }
    section++;
    // Anchors: `@@ text` lines move the cursor past a line equal to the text.
    /** @type {string[]} */
    const anchors = [];
    let anchorLines = 0;
    while (at < patch.length && (patch[at] === '@@' || patch[at].startsWith('@@ '))) {
      const anchor = patch[at].slice(3);
      if (anchor.trim()) anchors.push(anchor);
      anchorLines++;
      at++;
    }
    if (anchorLines === 0 && cursor !== 0) {
      throw fail(
        ErrorCode.PatchInvalid,
        `Invalid Line in the diff for ${path}: expected a section starting with @@, got: ${patch[at]}`,
      );
    }
    for (const [i, anchor] of anchors.entries()) {
      let found = -1;
      for (const how of /** @type {const} */ (['exact', 'surrounding'])) {
        // An anchor already passed still counts (the section searches on from the cursor),
        // except for the inner anchors of a nested `@@ class` / `@@ method` pair.
        const first = index.findLine(anchor, 0, how);
        if (i === 0 && first !== -1 && first < cursor) {
          found = cursor;
          break;
        }
        const next = index.findLine(anchor, cursor, how);
        if (next !== -1) {
          found = next + 1;
          break;
        }
      }
      if (found === -1 && anchors.length > 1) {
        throw fail(
          ErrorCode.PatchMismatch,
          `Could not apply the update to ${path}: the anchor line was not found: ${anchor}`,
        );
      }
      if (found !== -1) cursor = found;
    }
    // The section body: context, removed and added lines.
    /** @type {string[]} */
    const expected = [];
    /** @type {Change[]} */
    const sectionChanges = [];
    /** @type {Change | null} */
    let open = null;
    const start = at;
    while (at < patch.length) {
      const raw = patch[at];
      if (raw.startsWith('@@') || raw.startsWith(END_PATCH) || raw === END_OF_FILE || raw === '***') break;
      if (FILE_HEADERS.some((h) => raw.startsWith(h))) break;
      if (raw.startsWith('***')) throw fail(ErrorCode.PatchInvalid, `Invalid Line in the diff for ${path}: ${raw}`);
      at++;
      const line = raw === '' ? ' ' : raw;
      const kind = line[0];
      const body = line.slice(1);
      if (kind === ' ') {
        open = null;
        expected.push(body);
      } else if (kind === '-' || kind === '+') {
        if (!open) {
          open = { at: expected.length, removed: [], added: [] };
          sectionChanges.push(open);
        }
        if (kind === '-') {
          // A removal after additions in the same run still removes from the original here.
          open.removed.push(body);
          expected.push(body);
        } else {
          open.added.push(body);
        }
      } else {
        throw fail(
          ErrorCode.PatchInvalid,
          `Invalid Line in the diff for ${path}: every line of a section must start with ' ', '-' or '+', got: ${raw}`,
        );
      }
    }
    const atEnd = patch[at] === END_OF_FILE;
    if (at === start && !atEnd) {
      throw fail(ErrorCode.PatchInvalid, `Invalid diff for ${path}: section ${section} has no lines`);
    }
    // Find the section's context in the file.
    let matchAt = -1;
    if (atEnd) {
      // The empty line after a final newline is not part of the text the section must end.
      const end = lines.length > 1 && lines[lines.length - 1] === '' ? lines.length - 1 : lines.length;
      matchAt = index.findBlock(expected, Math.max(0, end - expected.length), end);
      if (matchAt === -1) matchAt = index.findBlock(expected, Math.min(cursor, end), end);
    } else {
      matchAt = index.findBlock(expected, cursor);
    }
    if (matchAt === -1) {
      throw fail(
        ErrorCode.PatchMismatch,
        `Could not apply the update to ${path}: section ${section} does not match the file.\n` +
          `First line that does not match: ${expected[Math.min(index.matchingPrefix(expected, cursor), expected.length - 1)]}\n` +
          `Expected these lines (context and removed lines), in order, at or after line ${cursor + 1}:\n${expected.join('\n')}`,
      );
    }
    for (const change of sectionChanges) changes.push({ ...change, at: change.at + matchAt });
    cursor = matchAt + expected.length;
  }
  // Apply the changes from the top; they cannot overlap, as each section starts past the last.
  // Copied line by line: spreading a slice of a large file into push() overflows the stack.
  /** @type {string[]} */
  const out = [];
  let from = 0;
  for (const change of changes) {
    for (let i = from; i < change.at; i++) out.push(lines[i]);
    for (const line of change.added) out.push(line);
    from = change.at + change.removed.length;
  }
  for (let i = from; i < lines.length; i++) out.push(lines[i]);
  return out.join(eol);
}

/**
 * What each touched path will hold (null: deleted), by its display form, in the order first
 * touched.
 * @typedef {Map<string, { path: string, content: string | null }>} Plan
 */

/**
 * The kind of `op.path` once the operations planned so far are applied.
 * @param {Workspace} ws
 * @param {Plan} planned
 * @param {string} key
 * @param {string} path
 * @returns {'file' | 'dir' | null}
 */
function plannedKind(ws, planned, key, path) {
  const entry = planned.get(key);
  if (entry) return entry.content === null ? null : 'file';
  return ws.exists(path) ? ws.stat(path).kind : null;
}

/**
 * Plans a create_file: refused over a folder, or where a file stands in for a parent folder
 * (which would only fail while writing).
 * @param {Workspace} ws
 * @param {Plan} planned
 * @param {string} key
 * @param {PatchOperation} op
 */
function planCreate(ws, planned, key, op) {
  if (op.diff === undefined)
    throw fail(ErrorCode.InvalidInput, `The create_file operation for ${op.path} needs a diff`);
  if (plannedKind(ws, planned, key, op.path) === 'dir') {
    throw fail(ErrorCode.IsADirectory, `Cannot create ${op.path}: it is a directory`);
  }
  for (let parent = key.replace(/\/[^/]*$/, ''); parent !== '~'; parent = parent.replace(/\/[^/]*$/, '')) {
    const plannedParent = planned.get(parent);
    const isFile = plannedParent
      ? plannedParent.content !== null
      : ws.exists(parent) && ws.stat(parent).kind === 'file';
    if (isFile) throw fail(ErrorCode.NotADirectory, `Cannot create ${op.path}: ${parent} is a file`);
  }
  planned.set(key, { path: op.path, content: createdContent(op.path, op.diff) });
  return `Created ${op.path}`;
}

/**
 * Plans an update_file over the file as the operations before it leave it.
 * @param {Workspace} ws
 * @param {Plan} planned
 * @param {string} key
 * @param {PatchOperation} op
 */
function planUpdate(ws, planned, key, op) {
  if (op.diff === undefined)
    throw fail(ErrorCode.InvalidInput, `The update_file operation for ${op.path} needs a diff`);
  const kind = plannedKind(ws, planned, key, op.path);
  if (kind === null) throw fail(ErrorCode.NotFound, `Cannot update missing file: ${op.path}`);
  if (kind === 'dir') throw fail(ErrorCode.IsADirectory, `Cannot update ${op.path}: it is a directory`);
  const earlier = planned.get(key);
  const current = earlier ? /** @type {string} */ (earlier.content) : ws.readText(op.path);
  planned.set(key, { path: op.path, content: updatedContent(op.path, current, op.diff) });
  return `Updated ${op.path}`;
}

/**
 * Plans a delete_file.
 * @param {Workspace} ws
 * @param {Plan} planned
 * @param {string} key
 * @param {PatchOperation} op
 */
function planDelete(ws, planned, key, op) {
  const kind = plannedKind(ws, planned, key, op.path);
  if (kind === null) throw fail(ErrorCode.NotFound, `Cannot delete missing file: ${op.path}`);
  if (kind === 'dir') throw fail(ErrorCode.IsADirectory, `Cannot delete ${op.path}: it is a directory`);
  planned.set(key, { path: op.path, content: null });
  return `Deleted ${op.path}`;
}

/** @type {Record<PatchOperation['type'], typeof planCreate>} */
const PLANNERS = { create_file: planCreate, update_file: planUpdate, delete_file: planDelete };

/**
 * Works every operation out before anything is written; a failure names the operation and
 * leaves the workspace untouched.
 * @param {Workspace} ws
 * @param {PatchOperation[]} operations
 * @returns {{ planned: Plan, done: string[] }}
 */
function plan(ws, operations) {
  /** @type {Plan} */
  const planned = new Map();
  /** @type {string[]} */
  const done = [];
  for (const [i, op] of operations.entries()) {
    try {
      let key;
      try {
        key = ZipWorkspace.displayPath(op.path);
      } catch (e) {
        throw fail(ErrorCode.PathInvalid, `Invalid path ${op.path}: ${e instanceof Error ? e.message : e}`);
      }
      done.push((PLANNERS[op.type] ?? planDelete)(ws, planned, key, op));
    } catch (err) {
      if (operations.length === 1) throw err;
      const code = err instanceof ToolFailure ? err.code : ErrorCode.PatchFailed;
      const message = err instanceof Error ? err.message : String(err);
      throw fail(
        code,
        `Operation ${i + 1} of ${operations.length} (${op.type} ${op.path}) failed: ${message}\nNo operation was applied.`,
      );
    }
  }
  return { planned, done };
}

/**
 * Writes what `planned` says; returns the id of the last entry recorded.
 * @param {Workspace} ws
 * @param {Plan} planned
 */
function writePlanned(ws, planned) {
  /** @type {number | null} */
  let id = null;
  for (const { path, content } of planned.values()) {
    if (content === null) {
      if (ws.exists(path)) id = ws.delete(path);
    } else {
      id = ws.writeFile(path, content);
    }
  }
  return id;
}

/**
 * @param {Workspace} ws
 * @param {PatchOperation[]} operations
 * @returns {ToolResult}
 */
function apply(ws, operations) {
  const { planned, done } = plan(ws, operations);
  // One file keeps the entry its write records (`write ~/a.py`); several are one batch.
  const historyId =
    planned.size === 1
      ? writePlanned(ws, planned)
      : ws.batch(`apply_patch ${planned.size} files`, (w) => void writePlanned(w, planned));
  return changed(done.join('\n'), historyId);
}

/**
 * @param {Workspace} ws
 * @returns {Tool}
 */
function applyPatchTool(ws) {
  /** @type {import('../index.js').JsonSchema} */
  const operationSchema = {
    type: 'object',
    properties: {
      type: {
        type: 'string',
        enum: ['create_file', 'update_file', 'delete_file'],
        description: 'create_file: a new file; update_file: change an existing file; delete_file: remove a file.',
      },
      path: { type: 'string', minLength: 1, description: 'Path of the file, relative to the workspace root.' },
      diff: {
        type: 'string',
        description:
          'V4A diff. create_file: the content, each line prefixed with +. update_file: sections of context ' +
          "(' '), removed ('-') and added ('+') lines, each optionally led by an @@ anchor line. Not used by delete_file.",
      },
    },
    required: ['type', 'path'],
    additionalProperties: false,
  };

  return {
    name: 'apply_patch',
    description:
      'Create, update or delete files in the workspace with V4A diffs. Give one operation, or several in ' +
      '`operations` to apply together: if any fails, none is applied. For update_file, show 3 lines of ' +
      "context around each change (' ' prefix), removed lines with '-', added lines with '+', and use " +
      '`@@ <line>` (e.g. `@@ def main():`) to point at the enclosing block when the context is not unique.',
    inputSchema: {
      type: 'object',
      properties: {
        operation: operationSchema,
        operations: {
          type: 'array',
          minItems: 1,
          items: operationSchema,
          description: 'Several operations, in order.',
        },
      },
      additionalProperties: false,
    },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
    /**
     * @param {{ operation?: PatchOperation, operations?: PatchOperation[] }} args
     * @returns {ToolResult}
     */
    handler(args) {
      if ((args.operation === undefined) === (args.operations === undefined)) {
        throw fail(
          ErrorCode.InvalidInput,
          'Invalid arguments for apply_patch: give exactly one of `operation` or `operations`',
        );
      }
      return apply(ws, args.operation ? [args.operation] : /** @type {PatchOperation[]} */ (args.operations));
    },
  };
}

module.exports = { applyPatchTool, updatedContent, createdContent };
