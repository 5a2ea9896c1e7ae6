'use strict';
// The tools of the reference MCP filesystem server (@modelcontextprotocol/server-filesystem)
// over a ZipWorkspace: the same names, arguments and result texts, and Node's `fs` error messages
// where the server passes those on. The workspace root is the one allowed directory, `/`; paths
// may be absolute (`/src/a.js`), relative to the root, or start with `~/` (the workspace's own
// form). Results name paths in their absolute form, as the server names real paths.
//
// Not offered: `read_media_file` (its answer is a base64 image or audio block, which a text tool
// result cannot carry). Where the workspace has no such fact, `get_file_info` reports the last
// change for created, modified and accessed, and permissions 644 for files and 755 for folders.
// `move_file` refuses an existing destination, as the server's description promises (its code
// would replace a file).

const { ErrorCode } = require('../../errors.js');
const path = require('node:path').posix;
const { ZipWorkspace } = require('../../workspace.js');
const { BoundedLines, changed, fail, MAX_CONTENT } = require('../toolset.js');
const { GlobMatcher, LineIndex, twoFilesPatch } = require('../../native/load.js');
const { walk } = require('./listing.js');
const { quoted } = require('./text.js');
const { asOneEntry } = require('./history.js');

/**
 * @typedef {import('../../index.js').ZipWorkspace} Workspace
 * @typedef {import('../index.js').ToolDefinitionInput} Tool
 * @typedef {import('../index.js').ToolAnnotations} ToolAnnotations
 * @typedef {import('../index.js').ToolResult} ToolResult
 * @typedef {import('../index.js').JsonSchema} JsonSchema
 * @typedef {import('../index.js').ToolInputSchema} ToolInputSchema
 */

const ALLOWED = '/';

/** @type {ToolAnnotations} */
const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true };

/**
 * A Node-style file system error message: `ENOENT: no such file or directory, open '/a'`.
 * @param {'ENOENT' | 'EISDIR' | 'ENOTDIR' | 'EEXIST' | 'EINVAL'} code
 * @param {string} operation
 * @param {string} [target] left out where Node leaves it out (reading a directory)
 */
function fsError(code, operation, target) {
  const text = {
    ENOENT: 'no such file or directory',
    EISDIR: 'illegal operation on a directory',
    ENOTDIR: 'not a directory',
    EEXIST: 'file already exists',
    EINVAL: 'invalid argument',
  }[code];
  return fail(
    code === 'ENOENT' ? ErrorCode.NotFound : code,
    `${code}: ${text}, ${operation}${target ? ` ${target}` : ''}`,
  );
}

/**
 * Sizes as the server prints them: `0 B`, `512 B`, `1.50 KB`.
 * @param {number} bytes
 */
function formatSize(bytes) {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  if (bytes === 0) return '0 B';
  const i = Math.floor(Math.log(bytes) / Math.log(1024));
  if (i <= 0) return `${bytes} B`;
  const unit = Math.min(i, units.length - 1);
  return `${(bytes / 1024 ** unit).toFixed(2)} ${units[unit]}`;
}

/** Longest path read_multiple_files repeats before a file's text or error, or a success message echoes. */
const MAX_SHOWN_PATH = 1024;

/**
 * A path as an answer repeats it: at most MAX_SHOWN_PATH characters.
 * @param {string} requested
 */
const shownPath = (requested) =>
  requested.length > MAX_SHOWN_PATH ? `${requested.slice(0, MAX_SHOWN_PATH)}…` : requested;

/**
 * The note ending a listing cut at the answer size.
 * @param {number} left entries not shown
 * @param {string} how what to ask for instead
 */
const leftOutNote = (left, how) => `[${left} more entries not shown: the answer is full; ${how}]`;

/** Most bytes of the diff edit_file answers with; a longer one is cut after whole lines. */
const MAX_DIFF_BYTES = 64 * 1024;

/**
 * @param {Workspace} ws
 * @returns {Tool[]}
 */
function filesystemTools(ws) {
  /**
   * The absolute form of a requested path.
   * @param {string} requested
   */
  function absolute(requested) {
    const home = requested === '~' ? '/' : requested.startsWith('~/') ? `/${requested.slice(2)}` : requested;
    return path.resolve(ALLOWED, home);
  }

  /**
   * Refuses paths the workspace does not accept (its hidden history folder).
   * @param {string} abs
   */
  function inside(abs) {
    try {
      ZipWorkspace.displayPath(abs);
    } catch {
      throw fail(ErrorCode.PathInvalid, `Access denied - path outside allowed directories: ${abs} not in ${ALLOWED}`);
    }
    return abs;
  }

  /** @param {string} abs */
  const kindOf = (abs) => (ws.exists(abs) ? ws.stat(abs).kind : null);

  /**
   * Checks a requested path as the server does: inside the allowed directory, and if it does not
   * exist, its parent must. Returns the absolute path.
   * @param {string} requested
   */
  function validate(requested) {
    const abs = inside(absolute(requested));
    if (kindOf(abs) !== null) return abs;
    const parent = path.dirname(abs);
    if (kindOf(parent) === null) throw fail(ErrorCode.NotFound, `Parent directory does not exist: ${parent}`);
    return abs;
  }

  /**
   * @param {string} abs
   * @param {string} operation
   */
  function requireDir(abs, operation) {
    const kind = kindOf(abs);
    if (kind === null) throw fsError('ENOENT', operation, `'${abs}'`);
    if (kind !== 'dir') throw fsError('ENOTDIR', operation, `'${abs}'`);
  }

  /** @param {string} abs */
  function readFileBytes(abs) {
    const kind = kindOf(abs);
    if (kind === null) {
      if (kindOf(path.dirname(abs)) === 'file') throw fsError('ENOTDIR', 'open', `'${abs}'`);
      throw fsError('ENOENT', 'open', `'${abs}'`);
    }
    if (kind === 'dir') throw fsError('EISDIR', 'read');
    return ws.readFile(abs);
  }

  /** @param {string} abs */
  const readFileText = (abs) => readFileBytes(abs).toString('utf8');

  /**
   * read_multiple_files' answer, built within MAX_CONTENT characters: a file is decoded only as
   * far as the room left, and once the answer is full the remaining paths are not read (the
   * same large file asked for a hundred times was decoded and held a hundred times).
   * @param {string[]} paths
   */
  function readMultiple(paths) {
    /** @type {string[]} */
    const parts = [];
    let room = MAX_CONTENT;
    for (const [i, requested] of paths.entries()) {
      if (room <= 0) {
        parts.push(`[${paths.length - i} more files not read: the answer is full; read them in another call]`);
        break;
      }
      const shown = shownPath(requested);
      let part;
      try {
        const bytes = readFileBytes(validate(requested));
        const text = bytes.toString('utf8', 0, Math.min(bytes.length, room));
        const cut =
          bytes.length > room
            ? `\n[... cut off after ${room} of ${bytes.length} bytes; read it with read_text_file]`
            : '';
        part = `${shown}:\n${text}${cut}\n`;
      } catch (e) {
        const message = e instanceof Error ? e.message : String(e);
        part = `${shown}: Error - ${message.length > MAX_SHOWN_PATH * 2 ? `${message.slice(0, MAX_SHOWN_PATH * 2)}…` : message}`;
      }
      parts.push(part);
      room -= part.length;
    }
    return parts.join('\n---\n');
  }

  /**
   * @param {{ path: string, head?: number, tail?: number }} args
   * @returns {string}
   */
  function readTextFile(args) {
    const abs = validate(args.path);
    if (args.head && args.tail)
      throw fail(ErrorCode.InvalidInput, 'Cannot specify both head and tail parameters simultaneously');
    if (!args.head && !args.tail) return readFileText(abs);
    if (kindOf(abs) !== 'file') readFileBytes(abs); // the file's own failures (missing, a folder)
    // Only the lines shown are read out of the file, at most the answer's size of them.
    if (args.tail) {
      // The server counts the empty piece after a final newline as a line when tailing.
      const { totalLines, finalNewline: endsWithNewline } = ws.readLines(abs, 1, null, { maxBytes: 0 });
      if (totalLines === 0) return '';
      const count = Math.ceil(args.tail) - (endsWithNewline ? 1 : 0);
      if (count <= 0) return '';
      const from = Math.max(1, totalLines - count + 1);
      const r = ws.readLines(abs, from, totalLines, { maxBytes: MAX_CONTENT, keep: 'last' });
      const note = !r.truncated
        ? ''
        : r.lineCut
          ? `[only the first ${MAX_CONTENT} bytes of line ${r.start} fit in the answer]\n`
          : `[${r.start - from} earlier lines not shown: the answer is full; ask for a shorter tail]\n`;
      return `${note}${r.lines.join('\n')}${endsWithNewline ? '\n' : ''}`;
    }
    const count = Math.ceil(/** @type {number} */ (args.head));
    if (count <= 0) return '';
    const r = ws.readLines(abs, 1, count, { maxBytes: MAX_CONTENT });
    const note = r.truncated ? `\n[cut off after line ${r.end}: the answer is full; ask for fewer lines]` : '';
    return `${r.lines.join('\n')}${note}`;
  }

  /**
   * @param {{ path: string, edits: { oldText: string, newText: string }[], dryRun?: boolean }} args
   * @returns {ToolResult}
   */
  function editFile(args) {
    const abs = validate(args.path);
    const original = readFileText(abs).replace(/\r\n/g, '\n');
    let text = original;
    for (const edit of args.edits) {
      const oldText = edit.oldText.replace(/\r\n/g, '\n');
      const newText = edit.newText.replace(/\r\n/g, '\n');
      if (text.includes(oldText)) {
        text = text.replace(oldText, () => newText);
        continue;
      }
      // Otherwise match whole lines ignoring their surrounding whitespace, and re-indent the
      // new lines from the first matched line's indentation.
      const oldLines = oldText.split('\n');
      const lines = text.split('\n');
      const i = new LineIndex(text).findBlock(oldLines, 0, null, 'surrounding');
      const matched = i !== -1;
      if (matched) {
        const indent = lines[i].match(/^\s*/)?.[0] ?? '';
        const replacement = newText.split('\n').map((line, j) => {
          if (j === 0) return indent + line.trimStart();
          const oldIndent = oldLines[j]?.match(/^\s*/)?.[0] ?? '';
          const newIndent = line.match(/^\s*/)?.[0] ?? '';
          if (!oldIndent || !newIndent) return line;
          return indent + ' '.repeat(Math.max(0, newIndent.length - oldIndent.length)) + line.trimStart();
        });
        lines.splice(i, oldLines.length, ...replacement);
        text = lines.join('\n');
      }
      if (!matched) throw fail(ErrorCode.NoMatch, `Could not find exact match for edit:\n${quoted(edit.oldText)}`);
    }
    const diff = twoFilesPatch(abs, original, text, MAX_DIFF_BYTES);
    let fence = '```';
    while (diff.text.includes(fence)) fence += '`';
    const cut = diff.truncated ? `[diff cut off after ${MAX_DIFF_BYTES} bytes]\n` : '';
    const content = `${fence}diff\n${diff.text}${fence}\n${cut}\n`;
    if (args.dryRun) return { ok: true, content };
    return changed(content, ws.writeFile(abs, text));
  }

  /**
   * @param {string} abs
   * @param {string[]} excludePatterns
   * @returns {unknown[]}
   */
  function tree(abs, excludePatterns) {
    requireDir(abs, 'scandir');
    // The server's rule for directory_tree: a pattern without `*` also matches the entry's
    // name anywhere and everything below it.
    const excluded = new GlobMatcher(excludePatterns, true);
    /** @typedef {{ name: string, type: 'file' | 'directory' | 'truncated', children?: TreeEntry[] }} TreeEntry */
    /** @type {TreeEntry[]} */
    const root = [];
    /** @type {Map<string, TreeEntry[]>} */
    const childrenOf = new Map([['', root]]);
    // The tree is built within the answer's size: each entry is charged what it adds to the
    // indented JSON (a little more), and once the budget is spent the rest is only counted.
    let room = MAX_CONTENT - 256;
    let left = 0;
    /** @type {string | null} */
    let skippedBelow = null;
    for (const entry of walk(ws, abs)) {
      if (skippedBelow !== null && entry.rel.startsWith(skippedBelow)) continue;
      skippedBelow = null;
      // A folder left out takes its contents with it.
      if (excluded.isMatch(entry.rel)) {
        if (entry.kind === 'dir') skippedBelow = `${entry.rel}/`;
        continue;
      }
      const parent = entry.rel.includes('/') ? entry.rel.slice(0, entry.rel.lastIndexOf('/')) : '';
      const siblings = childrenOf.get(parent);
      const indent = 4 * entry.depth;
      const cost = 6 * indent + 64 + Buffer.byteLength(JSON.stringify(entry.name));
      if (!siblings || cost > room) {
        left += 1;
        room = -1;
        continue;
      }
      room -= cost;
      /** @type {TreeEntry} */
      const node = { name: entry.name, type: entry.kind === 'dir' ? 'directory' : 'file' };
      if (entry.kind === 'dir') {
        node.children = [];
        childrenOf.set(entry.rel, node.children);
      }
      siblings.push(node);
    }
    if (left > 0) {
      root.push({
        name: leftOutNote(left, 'show a sub-folder or leave folders out with excludePatterns'),
        type: 'truncated',
      });
    }
    return root;
  }

  /**
   * @param {{ path: string, pattern: string, excludePatterns?: string[] }} args
   * @returns {string}
   */
  function searchFiles(args) {
    const abs = validate(args.path);
    requireDir(abs, 'scandir');
    const match = new GlobMatcher([args.pattern]);
    const excluded = new GlobMatcher(args.excludePatterns ?? []);
    const results = new BoundedLines();
    // A folder left out takes its contents with it; the walk lists them right after it, so one
    // prefix is enough and each entry is looked at once.
    /** @type {string | null} */
    let skippedBelow = null;
    for (const entry of walk(ws, abs)) {
      if (skippedBelow !== null && entry.rel.startsWith(skippedBelow)) continue;
      skippedBelow = null;
      if (excluded.isMatch(entry.rel)) {
        if (entry.kind === 'dir') skippedBelow = `${entry.rel}/`;
        continue;
      }
      if (match.isMatch(entry.rel)) results.add(path.join(abs, entry.rel));
    }
    if (results.lines.length === 0) return 'No matches found';
    const note = results.full ? `\n${leftOutNote(results.left, 'narrow the pattern or the path')}` : '';
    return `${results.text()}${note}`;
  }

  /**
   * @param {{ source: string, destination: string }} args
   * @returns {ToolResult}
   */
  function moveFile(args) {
    const from = validate(args.source);
    const to = validate(args.destination);
    const rename = `'${from}' -> '${to}'`;
    const kind = kindOf(from);
    if (kind === null) throw fsError('ENOENT', 'rename', rename);
    const moved = `Successfully moved ${shownPath(args.source)} to ${shownPath(args.destination)}`;
    if (from === to) return changed(moved, null);
    if (kindOf(to) !== null) throw fsError('EEXIST', 'rename', rename);
    if (kindOf(path.dirname(to)) !== 'dir') throw fsError('ENOTDIR', 'rename', rename);
    if (to.startsWith(`${from}/`) || from === '/') throw fsError('EINVAL', 'rename', rename);
    const { historyId } = asOneEntry(ws, (edit) => edit.move(from, to));
    return changed(moved, historyId);
  }

  /**
   * @param {{ path: string }} args
   * @returns {string}
   */
  function fileInfo(args) {
    const abs = validate(args.path);
    if (kindOf(abs) === null) throw fsError('ENOENT', 'stat', `'${abs}'`);
    const stat = ws.stat(abs);
    const when = new Date(stat.mtime);
    const info = {
      size: stat.size,
      created: when,
      modified: when,
      accessed: when,
      isDirectory: stat.kind === 'dir',
      isFile: stat.kind === 'file',
      permissions: stat.kind === 'dir' ? '755' : '644',
    };
    return Object.entries(info)
      .map(([key, value]) => `${key}: ${value}`)
      .join('\n');
  }

  /**
   * @param {string} description
   * @returns {JsonSchema}
   */
  const pathArg = (description) => ({ type: 'string', description });

  /** @type {ToolInputSchema} */
  const readTextFileSchema = {
    type: 'object',
    properties: {
      path: pathArg('File to read.'),
      tail: { type: 'number', description: 'If provided, returns only the last N lines of the file' },
      head: { type: 'number', description: 'If provided, returns only the first N lines of the file' },
    },
    required: ['path'],
  };

  /** @type {Tool[]} */
  const tools = [
    {
      name: 'read_file',
      description: 'Read a whole file as text. Deprecated: use read_text_file.',
      inputSchema: readTextFileSchema,
      annotations: READ_ONLY,
      handler: readTextFile,
    },
    {
      name: 'read_text_file',
      description:
        'Read a file as text, whatever its extension. Pass head to get only its first N lines, or tail for ' +
        'its last N lines (not both). Only works within allowed directories.',
      inputSchema: readTextFileSchema,
      annotations: READ_ONLY,
      handler: readTextFile,
    },
    {
      name: 'read_multiple_files',
      description:
        'Read several files in one call; each file comes back after its path, and a file that cannot be ' +
        'read gives an error line without stopping the others. Only works within allowed directories.',
      inputSchema: {
        type: 'object',
        properties: {
          paths: {
            type: 'array',
            items: { type: 'string' },
            minItems: 1,
            description: 'Paths of the files to read, each within the allowed directories.',
          },
        },
        required: ['paths'],
      },
      annotations: READ_ONLY,
      /** @param {{ paths: string[] }} args */
      handler(args) {
        return readMultiple(args.paths);
      },
    },
    {
      name: 'write_file',
      description:
        'Create a file, or replace the whole content of an existing one without asking. Only works within ' +
        'allowed directories.',
      inputSchema: {
        type: 'object',
        properties: { path: pathArg('File to write.'), content: { type: 'string' } },
        required: ['path', 'content'],
      },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
      /** @param {{ path: string, content: string }} args */
      handler(args) {
        const abs = validate(args.path);
        const kind = kindOf(abs);
        if (kind === 'dir') throw fsError('EISDIR', 'open', `'${abs}'`);
        if (kind === null && kindOf(path.dirname(abs)) !== 'dir') throw fsError('ENOTDIR', 'open', `'${abs}'`);
        return changed(`Successfully wrote to ${shownPath(args.path)}`, ws.writeFile(abs, args.content));
      },
    },
    {
      name: 'edit_file',
      description:
        'Edit a text file: each edit replaces the exact text oldText with newText (lines that differ only in ' +
        'indentation also match). Returns a git-style diff of the changes; with dryRun the file is left ' +
        'unchanged. Only works within allowed directories.',
      inputSchema: {
        type: 'object',
        properties: {
          path: pathArg('File to edit.'),
          edits: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                oldText: { type: 'string', description: 'Text to search for - must match exactly' },
                newText: { type: 'string', description: 'Text to replace with' },
              },
              required: ['oldText', 'newText'],
            },
          },
          dryRun: { type: 'boolean', default: false, description: 'Preview changes using git-style diff format' },
        },
        required: ['path', 'edits'],
      },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
      handler: editFile,
    },
    {
      name: 'create_directory',
      description:
        'Create a directory, with any missing parents; an existing directory is fine. Only works within ' +
        'allowed directories.',
      inputSchema: { type: 'object', properties: { path: pathArg('Directory to create.') }, required: ['path'] },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
      /** @param {{ path: string }} args */
      handler(args) {
        // Nested folders are created in one call, as the server's description promises (its path
        // check would refuse a missing grandparent), so only the path itself is checked.
        const abs = inside(absolute(args.path));
        for (let at = abs; at !== '/'; at = path.dirname(at)) {
          if (kindOf(at) === 'file') throw fsError(at === abs ? 'EEXIST' : 'ENOTDIR', 'mkdir', `'${abs}'`);
        }
        return changed(`Successfully created directory ${shownPath(args.path)}`, ws.mkdir(abs, { recursive: true }));
      },
    },
    {
      name: 'list_directory',
      description:
        'List the entries of a directory, one per line, each marked [FILE] or [DIR]. Only works within allowed ' +
        'directories.',
      inputSchema: { type: 'object', properties: { path: pathArg('Directory to list.') }, required: ['path'] },
      annotations: READ_ONLY,
      /** @param {{ path: string }} args */
      handler(args) {
        const abs = validate(args.path);
        requireDir(abs, 'scandir');
        const listing = new BoundedLines();
        for (const e of walk(ws, abs, 1)) listing.add(`${e.kind === 'dir' ? '[DIR]' : '[FILE]'} ${e.name}`);
        const note = listing.full ? `\n${leftOutNote(listing.left, 'list a sub-folder or use search_files')}` : '';
        return `${listing.text()}${note}`;
      },
    },
    {
      name: 'list_directory_with_sizes',
      description:
        'List the entries of a directory with the size of each file, marked [FILE] or [DIR], followed by ' +
        'totals. Only works within allowed directories.',
      inputSchema: {
        type: 'object',
        properties: {
          path: pathArg('Directory to list.'),
          sortBy: {
            type: 'string',
            enum: ['name', 'size'],
            default: 'name',
            description: 'Sort entries by name or size',
          },
        },
        required: ['path'],
      },
      annotations: READ_ONLY,
      /** @param {{ path: string, sortBy?: 'name' | 'size' }} args */
      handler(args) {
        const abs = validate(args.path);
        requireDir(abs, 'scandir');
        const entries = walk(ws, abs, 1);
        const sorted = [...entries].sort((a, b) =>
          args.sortBy === 'size' ? b.size - a.size : a.name.localeCompare(b.name),
        );
        const files = entries.filter((e) => e.kind === 'file');
        const listing = new BoundedLines(MAX_CONTENT - 1024);
        for (const e of sorted) {
          if (listing.full) {
            listing.left += 1;
            continue;
          }
          const size = e.kind === 'dir' ? '' : formatSize(e.size).padStart(10);
          listing.add(`${e.kind === 'dir' ? '[DIR]' : '[FILE]'} ${e.name.padEnd(30)} ${size}`);
        }
        return [
          ...listing.lines,
          ...(listing.full ? [leftOutNote(listing.left, 'list a sub-folder or use search_files')] : []),
          '',
          `Total: ${files.length} files, ${entries.length - files.length} directories`,
          `Combined size: ${formatSize(files.reduce((sum, e) => sum + e.size, 0))}`,
        ].join('\n');
      },
    },
    {
      name: 'directory_tree',
      description:
        "A recursive view of a directory as JSON: each entry has 'name' and 'type' ('file' or 'directory'), " +
        "and directories have a 'children' array (possibly empty). Indented with 2 spaces. A tree too large " +
        "for one answer ends with an entry of type 'truncated' whose name says how many entries were left " +
        'out. Only works within allowed directories.',
      inputSchema: {
        type: 'object',
        properties: {
          path: pathArg('Directory to show.'),
          excludePatterns: { type: 'array', items: { type: 'string' }, default: [] },
        },
        required: ['path'],
      },
      annotations: READ_ONLY,
      /** @param {{ path: string, excludePatterns?: string[] }} args */
      handler(args) {
        return JSON.stringify(tree(validate(args.path), args.excludePatterns ?? []), null, 2);
      },
    },
    {
      name: 'move_file',
      description:
        'Move or rename a file or directory, also into another directory. Fails if the destination exists. ' +
        'Source and destination must be within allowed directories.',
      inputSchema: {
        type: 'object',
        properties: { source: { type: 'string' }, destination: { type: 'string' } },
        required: ['source', 'destination'],
      },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
      handler: moveFile,
    },
    {
      name: 'search_files',
      description:
        "Find files and directories whose path below `path` matches a glob pattern: '*.ext' matches entries " +
        "directly in it, '**/*.ext' at any depth. Returns full paths. Only searches within allowed directories.",
      inputSchema: {
        type: 'object',
        properties: {
          path: pathArg('Directory to search.'),
          pattern: { type: 'string' },
          excludePatterns: { type: 'array', items: { type: 'string' }, default: [] },
        },
        required: ['path', 'pattern'],
      },
      annotations: READ_ONLY,
      handler: searchFiles,
    },
    {
      name: 'get_file_info',
      description:
        'Metadata of a file or directory: size, times, type and permissions, without reading it. Only works ' +
        'within allowed directories.',
      inputSchema: { type: 'object', properties: { path: pathArg('File or directory.') }, required: ['path'] },
      annotations: READ_ONLY,
      handler: fileInfo,
    },
    {
      name: 'list_allowed_directories',
      description: 'The directories this server may access; everything below them is accessible too.',
      inputSchema: { type: 'object', properties: {} },
      annotations: READ_ONLY,
      handler() {
        return `Allowed directories:\n${ALLOWED}`;
      },
    },
  ];
  return tools;
}

module.exports = { filesystemTools, formatSize };
