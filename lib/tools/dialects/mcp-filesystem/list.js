'use strict';
// The listing commands of the MCP filesystem dialect: list_directory,
// list_directory_with_sizes, directory_tree and search_files. Folders are walked natively
// (`ws.walk`: tree order, paths relative to the folder); every answer is built within its size.

const path = require('node:path').posix;
const { BoundedLines, MAX_CONTENT } = require('../../toolset.js');
const { GlobMatcher } = require('../../../native/load.js');
const { READ_ONLY, leftOutNote, pathArg } = require('./paths.js');

/**
 * @typedef {import('./paths.js').ServerPaths} ServerPaths
 * @typedef {import('../../index.js').ToolDefinitionInput} Tool
 * @typedef {import('../../../index.js').WorkspaceWalkEntry} WalkEntry
 * @typedef {{ name: string, type: 'file' | 'directory' | 'truncated', children?: TreeEntry[] }} TreeEntry
 */

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

/**
 * The entries below `abs` that `excluded` leaves in: a folder left out takes its contents with
 * it (the walk lists them right after it, so one prefix is enough and each entry is looked at
 * once).
 * @param {ServerPaths} fs
 * @param {string} abs
 * @param {GlobMatcher} excluded
 * @returns {Generator<WalkEntry>}
 */
function* kept(fs, abs, excluded) {
  /** @type {string | null} */
  let skippedBelow = null;
  for (const entry of fs.ws.walk(abs)) {
    if (skippedBelow !== null && entry.relative.startsWith(skippedBelow)) continue;
    skippedBelow = null;
    if (excluded.isMatch(entry.relative)) {
      if (entry.kind === 'dir') skippedBelow = `${entry.relative}/`;
      continue;
    }
    yield entry;
  }
}

/**
 * @param {ServerPaths} fs
 * @param {{ path: string }} args
 * @returns {string}
 */
function listDirectory(fs, args) {
  const abs = fs.validate(args.path);
  fs.requireDir(abs, 'scandir');
  const listing = new BoundedLines();
  for (const e of fs.ws.walk(abs, { maxDepth: 1 })) listing.add(`${e.kind === 'dir' ? '[DIR]' : '[FILE]'} ${e.name}`);
  const note = listing.full ? `\n${leftOutNote(listing.left, 'list a sub-folder or use search_files')}` : '';
  return `${listing.text()}${note}`;
}

/**
 * @param {ServerPaths} fs
 * @param {{ path: string, sortBy?: 'name' | 'size' }} args
 * @returns {string}
 */
function listDirectoryWithSizes(fs, args) {
  const abs = fs.validate(args.path);
  fs.requireDir(abs, 'scandir');
  const entries = fs.ws.walk(abs, { maxDepth: 1 });
  const sorted = [...entries].sort((a, b) => (args.sortBy === 'size' ? b.size - a.size : a.name.localeCompare(b.name)));
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
}

/**
 * The tree below a folder, built within the answer's size: each entry is charged what it adds to
 * the indented JSON (a little more), and once the budget is spent the rest is only counted.
 * @param {ServerPaths} fs
 * @param {{ path: string, excludePatterns?: string[] }} args
 * @returns {string}
 */
function directoryTree(fs, args) {
  const abs = fs.validate(args.path);
  fs.requireDir(abs, 'scandir');
  // The server's rule for directory_tree: a pattern without `*` also matches the entry's name
  // anywhere and everything below it.
  const excluded = new GlobMatcher(args.excludePatterns ?? [], true);
  /** @type {TreeEntry[]} */
  const root = [];
  /** @type {Map<string, TreeEntry[]>} */
  const childrenOf = new Map([['', root]]);
  let room = MAX_CONTENT - 256;
  let left = 0;
  for (const entry of kept(fs, abs, excluded)) {
    const parent = entry.relative.includes('/') ? entry.relative.slice(0, entry.relative.lastIndexOf('/')) : '';
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
      childrenOf.set(entry.relative, node.children);
    }
    siblings.push(node);
  }
  if (left > 0) {
    root.push({
      name: leftOutNote(left, 'show a sub-folder or leave folders out with excludePatterns'),
      type: 'truncated',
    });
  }
  return JSON.stringify(root, null, 2);
}

/**
 * @param {ServerPaths} fs
 * @param {{ path: string, pattern: string, excludePatterns?: string[] }} args
 * @returns {string}
 */
function searchFiles(fs, args) {
  const abs = fs.validate(args.path);
  fs.requireDir(abs, 'scandir');
  const match = new GlobMatcher([args.pattern]);
  const results = new BoundedLines();
  for (const entry of kept(fs, abs, new GlobMatcher(args.excludePatterns ?? []))) {
    if (match.isMatch(entry.relative)) results.add(path.join(abs, entry.relative));
  }
  if (results.lines.length === 0) return 'No matches found';
  const note = results.full ? `\n${leftOutNote(results.left, 'narrow the pattern or the path')}` : '';
  return `${results.text()}${note}`;
}

/**
 * The listing tools, by name.
 * @param {ServerPaths} fs
 * @returns {Record<string, Tool>}
 */
function listTools(fs) {
  return {
    list_directory: {
      name: 'list_directory',
      description:
        'List the entries of a directory, one per line, each marked [FILE] or [DIR]. Only works within allowed ' +
        'directories.',
      inputSchema: { type: 'object', properties: { path: pathArg('Directory to list.') }, required: ['path'] },
      annotations: READ_ONLY,
      /** @param {{ path: string }} args */
      handler: (args) => listDirectory(fs, args),
    },
    list_directory_with_sizes: {
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
      handler: (args) => listDirectoryWithSizes(fs, args),
    },
    directory_tree: {
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
      handler: (args) => directoryTree(fs, args),
    },
    search_files: {
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
      /** @param {{ path: string, pattern: string, excludePatterns?: string[] }} args */
      handler: (args) => searchFiles(fs, args),
    },
  };
}

module.exports = { listTools, formatSize };
