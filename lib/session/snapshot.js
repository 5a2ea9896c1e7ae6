'use strict';
// A session snapshot is a zip archive (written by the workspace's own exporter, without
// history): `session.json` (id, status, turns, env, policy, budget limits, pending approvals),
// `ledger.json` (budget use, audit log with its head, journal), `world.zip` (the world with its
// history) and, with proposals, `staged.zip` and `staged-origin.zip`. With a key, `signature`
// holds an HMAC-SHA256 over the digests of all of them: a store that is not trusted cannot
// change the policy, the approvals, the budget or the world without the restore noticing.

const ZipWorkspace = /** @type {typeof import('../index.js').ZipWorkspace} */ (
  /** @type {unknown} */ (require('../workspace.js').ZipWorkspace)
);
const { createHash, createHmac, timingSafeEqual } = require('node:crypto');
const { sessionError } = require('./errors.js');

const FORMAT = 'quickrealm-session';
const VERSION = 1;
/** Five entries at most; each part within the workspace's own limits (64 MiB per file). */
const SNAPSHOT_LIMITS = { maxEntries: 8 };

/**
 * @typedef {{ meta: any, ledger: string, world: Buffer, staged: Buffer | null, stagedOrigin: Buffer | null }} SnapshotParts
 */

const PARTS = ['session.json', 'ledger.json', 'world.zip', 'staged.zip', 'staged-origin.zip'];

/**
 * The HMAC of the snapshot's parts (absent ones included as absent).
 * @param {Uint8Array | string} key
 * @param {(name: string) => Uint8Array | null} part
 */
function signature(key, part) {
  const mac = createHmac('sha256', key);
  for (const name of PARTS) {
    const bytes = part(name);
    mac.update(`${name}\n${bytes ? createHash('sha256').update(bytes).digest('hex') : '-'}\n`);
  }
  return mac.digest('hex');
}

/**
 * @param {SnapshotParts} parts
 * @param {Uint8Array | string} [key] signs the snapshot
 * @returns {Buffer}
 */
function encodeSnapshot(parts, key) {
  const box = new ZipWorkspace();
  try {
    box.writeFile('session.json', JSON.stringify({ format: FORMAT, version: VERSION, ...parts.meta }));
    box.writeFile('ledger.json', parts.ledger);
    box.writeFile('world.zip', parts.world);
    if (parts.staged) box.writeFile('staged.zip', parts.staged);
    if (parts.stagedOrigin) box.writeFile('staged-origin.zip', parts.stagedOrigin);
    if (key !== undefined)
      box.writeFile(
        'signature',
        signature(key, (name) => (box.exists(name) ? box.readFile(name) : null)),
      );
    // Stored, not deflated: snapshots are written after every turn, and deflating a large world
    // costs hundreds of milliseconds; a host that wants them small compresses the bytes itself.
    return box.toZip({ history: false, compress: false });
  } finally {
    box.dispose();
  }
}

/**
 * @param {unknown} bytes
 * @param {Uint8Array | string} [key] the snapshot must carry a valid signature made with it
 */
function decodeSnapshot(bytes, key) {
  if (!(bytes instanceof Uint8Array))
    throw sessionError('INVALID_INPUT', 'Session.restore(bytes): bytes must be a Uint8Array', TypeError);
  let box;
  try {
    box = ZipWorkspace.fromZip(bytes, SNAPSHOT_LIMITS);
  } catch (e) {
    throw sessionError('INVALID_INPUT', `not a session snapshot: ${e instanceof Error ? e.message : e}`);
  }
  try {
    /** @param {string} name */
    const file = (name) => (box.exists(name) ? box.readFile(name) : null);
    if (key !== undefined) {
      const expected = Buffer.from(signature(key, file));
      const given = file('signature');
      if (!given || given.length !== expected.length || !timingSafeEqual(given, expected)) {
        throw sessionError(
          'SNAPSHOT_TAMPERED',
          given
            ? 'the snapshot was changed after it was signed (or signed with another key)'
            : 'the snapshot is not signed',
        );
      }
    }
    const metaBytes = file('session.json');
    const ledger = file('ledger.json');
    const world = file('world.zip');
    if (!metaBytes || !ledger || !world)
      throw sessionError('INVALID_INPUT', 'not a session snapshot: session.json, ledger.json or world.zip is missing');
    const meta = JSON.parse(metaBytes.toString('utf8'));
    if (meta.format !== FORMAT || meta.version !== VERSION) {
      throw sessionError(
        'INVALID_INPUT',
        `not a session snapshot of this version (format ${meta.format}, version ${meta.version})`,
      );
    }
    const open = (/** @type {Buffer | null} */ zip) => (zip ? ZipWorkspace.fromZip(zip) : null);
    return {
      meta,
      ledger: ledger.toString('utf8'),
      world: /** @type {import('../index.js').ZipWorkspace} */ (open(world)),
      staged: open(file('staged.zip')),
      stagedOrigin: open(file('staged-origin.zip')),
    };
  } finally {
    box.dispose();
  }
}

module.exports = { encodeSnapshot, decodeSnapshot };
