'use strict';
// Folder walks the dialects print: depth-first, entries of each folder sorted by name, each
// folder right before its contents (the order `find` and `tree` show on a sorted file system).

/** @typedef {import('../../index.js').ZipWorkspace} ZipWorkspace */

/**
 * @typedef {object} WalkEntry
 * @property {string} rel path below the walked folder, `/`-separated (`src/app.js`)
 * @property {string} name last segment
 * @property {'file' | 'dir'} kind
 * @property {number} size bytes (0 for folders)
 * @property {number} depth 1 for the folder's own entries
 */

/**
 * Everything below `dir`, at most `maxDepth` levels deep.
 * @param {ZipWorkspace} ws
 * @param {string} dir a workspace path of a folder
 * @param {number} [maxDepth]
 * @returns {WalkEntry[]}
 */
function walk(ws, dir, maxDepth = Number.POSITIVE_INFINITY) {
  const base = ws.stat(dir).path;
  const prefix = base === '' ? '' : `${base}/`;
  /** @type {Map<string, WalkEntry[]>} children by parent rel ('' for the walked folder) */
  const children = new Map();
  for (const entry of ws.list(dir, { recursive: true })) {
    const rel = entry.path.slice(prefix.length);
    const cut = rel.lastIndexOf('/');
    const parent = cut === -1 ? '' : rel.slice(0, cut);
    const item = {
      rel,
      name: rel.slice(cut + 1),
      kind: entry.kind,
      size: entry.size,
      depth: rel.split('/').length,
    };
    const list = children.get(parent);
    if (list) list.push(item);
    else children.set(parent, [item]);
  }
  /** @type {WalkEntry[]} */
  const out = [];
  /** @param {string} parent */
  const visit = (parent) => {
    const list = (children.get(parent) ?? []).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const item of list) {
      if (item.depth > maxDepth) continue;
      out.push(item);
      if (item.kind === 'dir') visit(item.rel);
    }
  };
  visit('');
  return out;
}

module.exports = { walk };
