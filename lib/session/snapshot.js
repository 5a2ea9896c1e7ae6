'use strict';
// A session snapshot is a zip archive of stored parts: `session.json` (id, status, turns, env,
// policy, budget limits, pending approvals), `ledger.json` (budget use, audit log with its head,
// journal), `world.zip` (the world with its history), with proposals `staged.zip` and
// `staged-origin.zip`, and `binding.json`: what the snapshot is (the session id, the store version
// it was saved as, and its purpose: `store` for a SessionManager's stored state, `export` for
// `Session#snapshot()`). A session with `persistState` adds `state.bin`: its realm state as the
// engine sealed it; its `session.json` says version 2 (`persistState`, `stateSeal`), so a reader
// that would drop the state refuses the snapshot instead. With a key, `signature` holds an
// HMAC-SHA256 over the digests of all of them: a store that is not trusted cannot change the
// policy, the approvals, the budget, the world or the state, nor serve a snapshot as another
// session, as a later version or for another purpose, without the restore noticing
// (SNAPSHOT_TAMPERED).

// The world and the proposals are exported into the archive and opened from it natively: their
// bytes cross the boundary once, as the archive.

const { ErrorCode } = require('../errors.js');
const { createHmac, timingSafeEqual } = require('node:crypto');
const binding = require('../native/load.js');
const PackageWorkspace = require('../workspace.js').ZipWorkspace;
const { sessionError } = require('./errors.js');

const FORMAT = 'quickrealm-session';
/** Version 1: sessions without persistent state; version 2 adds it (and is written only with it). */
const VERSION = 1;
const VERSION_WITH_STATE = 2;

/** Eight parts at most, and no more bytes than three worlds at their largest with history. */
const MAX_PARTS = 8;
const MAX_SNAPSHOT_BYTES = 4 * 1024 ** 3;
/** A world (with its history) as large as a workspace's own quota lets it grow. */
const WORLD_LIMITS = { maxEntryBytes: 256 * 1024 ** 2, maxTotalBytes: 1024 ** 3 };

/** What a snapshot is for: a SessionManager's stored state, or `Session#snapshot()` handed to the host. */
const PURPOSES = ['store', 'export'];

/**
 * @typedef {{ id: string, version: number | null, purpose: 'store' | 'export' }} SnapshotBinding
 * @typedef {import('../index.js').ZipWorkspace} ZipWorkspace
 * @typedef {{ meta: any, ledger: string, world: ZipWorkspace, staged: ZipWorkspace | null,
 *   stagedOrigin: ZipWorkspace | null, binding?: SnapshotBinding, state?: Uint8Array | null }} SnapshotParts
 */

const PARTS = [
  'binding.json',
  'session.json',
  'ledger.json',
  'world.zip',
  'staged.zip',
  'staged-origin.zip',
  'state.bin',
];
/** Parts the signature names only when they are there, so snapshots signed before they existed still verify. */
const NEWER_PARTS = new Set(['state.bin']);
/** Names the signature scheme, so a signature of an older layout never verifies as this one. */
const SIGNATURE_SCHEME = 'quickrealm-session-signature/2';

/**
 * The HMAC of the snapshot's parts (absent ones included as absent), over their SHA-256 digests
 * (computed natively, where the bytes are).
 * @param {Uint8Array | string} key
 * @param {{ name: string, sha256: string }[]} digests
 */
function signature(key, digests) {
  const byName = new Map(digests.map((d) => [d.name, d.sha256]));
  const mac = createHmac('sha256', key);
  mac.update(`${SIGNATURE_SCHEME}\n`);
  for (const name of PARTS) {
    if (NEWER_PARTS.has(name) && !byName.has(name)) continue;
    mac.update(`${name}\n${byName.get(name) ?? '-'}\n`);
  }
  return mac.digest('hex');
}

/**
 * @param {SnapshotParts} parts
 * @param {Uint8Array | string} [key] signs the snapshot
 * @returns {Buffer}
 */
function encodeSnapshot(parts, key) {
  const version = parts.meta.persistState ? VERSION_WITH_STATE : VERSION;
  /** @type {{ name: string, data: Buffer }[]} */
  const entries = [
    { name: 'session.json', data: Buffer.from(JSON.stringify({ format: FORMAT, version, ...parts.meta })) },
    { name: 'ledger.json', data: Buffer.from(parts.ledger) },
  ];
  if (parts.state) {
    entries.push({ name: 'state.bin', data: Buffer.isBuffer(parts.state) ? parts.state : Buffer.from(parts.state) });
  }
  // Sessions always bind their snapshots; a bare archive (as the benchmark packs) has none and
  // is refused wherever a binding is checked with a key.
  if (parts.binding) entries.push({ name: 'binding.json', data: Buffer.from(JSON.stringify(parts.binding)) });
  // Stored, not deflated, and outside any workspace quota: snapshots are written after every
  // turn, deflating a large world costs hundreds of milliseconds, and a world may be as large as
  // its own quota allows. A host that wants them small compresses the bytes itself.
  // The binding declares the native class; lib/workspace.js adds `dispose` to the same objects.
  const packer = binding.SnapshotPacker.start(
    entries,
    /** @type {any} */ (parts.world),
    /** @type {any} */ (parts.staged ?? undefined),
    /** @type {any} */ (parts.stagedOrigin ?? undefined),
  );
  if (key !== undefined) packer.add('signature', Buffer.from(signature(key, packer.digests())));
  return packer.finish();
}

/**
 * The snapshot's binding, refused (SNAPSHOT_TAMPERED) unless it is what the reader expects.
 * Snapshots written before bindings existed have none; they are read without this check only
 * when no key is given (with a key the signature covers the binding, so it must be there).
 * @param {Buffer | null} bytes
 * @param {{ id?: string, version?: number, purpose: 'store' | 'export' }} expected
 * @param {string} metaId the id inside session.json
 * @param {boolean} signed
 */
function checkBinding(bytes, expected, metaId, signed) {
  if (!bytes) {
    if (signed) throw sessionError(ErrorCode.SnapshotTampered, 'the snapshot does not say which session it is for');
    return;
  }
  /** @type {SnapshotBinding} */
  let binding;
  try {
    binding = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw sessionError(ErrorCode.SnapshotTampered, 'the snapshot binding is not JSON');
  }
  const { id, version, purpose } = binding ?? {};
  if (typeof id !== 'string' || !PURPOSES.includes(purpose) || !(version === null || Number.isSafeInteger(version))) {
    throw sessionError(ErrorCode.SnapshotTampered, 'the snapshot binding is malformed');
  }
  if (id !== metaId)
    throw sessionError(ErrorCode.SnapshotTampered, `the snapshot is bound to session ${id} but holds ${metaId}`);
  if (expected.id !== undefined && id !== expected.id) {
    throw sessionError(ErrorCode.SnapshotTampered, `the snapshot is of session ${id}, not of session ${expected.id}`);
  }
  if (purpose !== expected.purpose) {
    throw sessionError(
      ErrorCode.SnapshotTampered,
      purpose === 'export'
        ? 'the snapshot is an export (Session#snapshot), not a stored state: a store serves only what it saved'
        : 'the snapshot is a stored state of a SessionManager, not an export: load it through its manager',
    );
  }
  if (expected.version !== undefined && version !== expected.version) {
    throw sessionError(
      ErrorCode.SnapshotTampered,
      `the snapshot was saved as version ${version} of session ${id} but the store serves it as version ${expected.version}: an older snapshot was written back`,
    );
  }
}

/**
 * @param {unknown} bytes
 * @param {Uint8Array | string} [key] the snapshot must carry a valid signature made with it
 * @param {{ id?: string, version?: number, purpose: 'store' | 'export' }} [expected] what the
 *   snapshot must be bound to (default: an export of any session)
 */
function decodeSnapshot(bytes, key, expected = { purpose: 'export' }) {
  if (!(bytes instanceof Uint8Array)) {
    throw sessionError(ErrorCode.InvalidInput, 'Session.restore(bytes): bytes must be a Uint8Array', TypeError);
  }
  /** @type {import('../native/binding.js').SnapshotReader} */
  let reader;
  try {
    const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    reader = binding.SnapshotReader.open(view, MAX_PARTS, MAX_SNAPSHOT_BYTES);
  } catch (e) {
    const err = /** @type {{ code?: string, message?: string }} */ (e);
    throw sessionError(
      ErrorCode.InvalidInput,
      `not a session snapshot: ${err?.code ? `${err.code}: ` : ''}${err?.message ?? e}`,
    );
  }
  /** @param {string} name */
  const file = (name) => reader.bytes(name) ?? null;
  if (key !== undefined) {
    const expected = Buffer.from(signature(key, reader.digests()));
    const given = file('signature');
    if (!given || given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw sessionError(
        ErrorCode.SnapshotTampered,
        given
          ? 'the snapshot was changed after it was signed (or signed with another key)'
          : 'the snapshot is not signed',
      );
    }
  }
  const metaBytes = file('session.json');
  const ledger = file('ledger.json');
  if (!metaBytes || !ledger || !reader.has('world.zip')) {
    throw sessionError(
      ErrorCode.InvalidInput,
      'not a session snapshot: session.json, ledger.json or world.zip is missing',
    );
  }
  let meta;
  try {
    meta = JSON.parse(metaBytes.toString('utf8'));
  } catch {
    throw sessionError(ErrorCode.InvalidInput, 'not a session snapshot: session.json is not JSON');
  }
  if (meta === null || meta.format !== FORMAT || (meta.version !== VERSION && meta.version !== VERSION_WITH_STATE)) {
    throw sessionError(
      ErrorCode.InvalidInput,
      `not a session snapshot of this version (format ${meta?.format}, version ${meta?.version})`,
    );
  }
  /** @param {string} name */
  const open = (name) => {
    try {
      const world = reader.workspace(name, WORLD_LIMITS.maxEntryBytes, WORLD_LIMITS.maxTotalBytes);
      // Opened natively, given the package's class (`dispose`, diagnostics), as `fork()` does.
      return world ? Object.setPrototypeOf(world, PackageWorkspace.prototype) : null;
    } catch (e) {
      throw sessionError(
        ErrorCode.InvalidInput,
        `the snapshot's world cannot be read: ${e instanceof Error ? e.message : e}`,
      );
    }
  };
  checkBinding(file('binding.json'), expected, meta.id, key !== undefined);
  // Only version 2 has a state (a signed version 1 snapshot with one added does not verify).
  const state = meta.version === VERSION_WITH_STATE ? file('state.bin') : null;
  return {
    meta,
    state,
    ledger: ledger.toString('utf8'),
    world: /** @type {ZipWorkspace} */ (/** @type {unknown} */ (open('world.zip'))),
    staged: open('staged.zip'),
    stagedOrigin: open('staged-origin.zip'),
  };
}

module.exports = { encodeSnapshot, decodeSnapshot };
