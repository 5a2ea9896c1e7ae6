'use strict';
// A session snapshot is a zip archive of stored parts: `session.json` (id, status, turns, env,
// policy, budget limits, pending approvals), `ledger.json` (budget use, audit log with its head,
// journal), `world.zip` (the world with its history) and, with proposals, `staged.zip` and `staged-origin.zip`. With a key, `signature`
// holds an HMAC-SHA256 over the digests of all of them: a store that is not trusted cannot
// change the policy, the approvals, the budget or the world without the restore noticing.

const ZipWorkspace = /** @type {typeof import('../index.js').ZipWorkspace} */ (
  /** @type {unknown} */ (require('../workspace.js').ZipWorkspace)
);
const { createHash, createHmac, timingSafeEqual } = require('node:crypto');
const { packArchive, unpackArchive } = require('../native/load.js');
const { sessionError } = require('./errors.js');

const FORMAT = 'quickrealm-session';
const VERSION = 1;

/** Six parts at most, and no more bytes than three worlds at their largest with history. */
const MAX_PARTS = 6;
const MAX_SNAPSHOT_BYTES = 4 * 1024 ** 3;
/** A world (with its history) as large as a workspace's own quota lets it grow. */
const WORLD_LIMITS = { maxEntryBytes: 256 * 1024 ** 2, maxTotalBytes: 1024 ** 3 };

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
  /** @type {Map<string, Uint8Array>} */
  const files = new Map([
    ['session.json', Buffer.from(JSON.stringify({ format: FORMAT, version: VERSION, ...parts.meta }))],
    ['ledger.json', Buffer.from(parts.ledger)],
    ['world.zip', parts.world],
  ]);
  if (parts.staged) files.set('staged.zip', parts.staged);
  if (parts.stagedOrigin) files.set('staged-origin.zip', parts.stagedOrigin);
  if (key !== undefined) files.set('signature', Buffer.from(signature(key, (name) => files.get(name) ?? null)));
  // Stored, not deflated, and outside any workspace quota: snapshots are written after every
  // turn, deflating a large world costs hundreds of milliseconds, and a world may be as large as
  // its own quota allows. A host that wants them small compresses the bytes itself.
  return packArchive(
    [...files].map(([name, data]) => ({ name, data: Buffer.from(data.buffer, data.byteOffset, data.byteLength) })),
  );
}

/**
 * @param {unknown} bytes
 * @param {Uint8Array | string} [key] the snapshot must carry a valid signature made with it
 */
function decodeSnapshot(bytes, key) {
  if (!(bytes instanceof Uint8Array)) {
    throw sessionError('INVALID_INPUT', 'Session.restore(bytes): bytes must be a Uint8Array', TypeError);
  }
  /** @type {Map<string, Buffer>} */
  let files;
  try {
    const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    files = new Map(unpackArchive(view, MAX_PARTS, MAX_SNAPSHOT_BYTES).map((e) => [e.name, e.data]));
  } catch (e) {
    throw sessionError('INVALID_INPUT', `not a session snapshot: ${e instanceof Error ? e.message : e}`);
  }
  /** @param {string} name */
  const file = (name) => files.get(name) ?? null;
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
  if (!metaBytes || !ledger || !world) {
    throw sessionError('INVALID_INPUT', 'not a session snapshot: session.json, ledger.json or world.zip is missing');
  }
  let meta;
  try {
    meta = JSON.parse(metaBytes.toString('utf8'));
  } catch {
    throw sessionError('INVALID_INPUT', 'not a session snapshot: session.json is not JSON');
  }
  if (meta === null || meta.format !== FORMAT || meta.version !== VERSION) {
    throw sessionError(
      'INVALID_INPUT',
      `not a session snapshot of this version (format ${meta?.format}, version ${meta?.version})`,
    );
  }
  /** @param {Buffer | null} zip */
  const open = (zip) => {
    if (!zip) return null;
    try {
      return ZipWorkspace.fromZip(zip, WORLD_LIMITS);
    } catch (e) {
      throw sessionError('INVALID_INPUT', `the snapshot's world cannot be read: ${e instanceof Error ? e.message : e}`);
    }
  };
  return {
    meta,
    ledger: ledger.toString('utf8'),
    world: /** @type {import('../index.js').ZipWorkspace} */ (open(world)),
    staged: open(file('staged.zip')),
    stagedOrigin: open(file('staged-origin.zip')),
  };
}

module.exports = { encodeSnapshot, decodeSnapshot };
