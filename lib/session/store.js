'use strict';
// The default session store: one file per session in a folder. Each file starts with a line
// holding the store's version of the session and a little metadata, then the snapshot bytes.
// A write takes a lock file (O_EXCL), compares versions, writes a temporary file, syncs it and
// renames it over the old one, so a reader sees the old or the new snapshot, never a torn one,
// and two processes cannot both advance one session (SESSION_CONFLICT).
//
// Beside each session file the store keeps a version record (`<id>.version`): the last version
// it wrote, renamed into place after the session file. A session file older than its record was
// rolled back (a backup or an attacker wrote an older snapshot over it) and is refused with
// SNAPSHOT_TAMPERED; with a snapshot key, the version inside the signed snapshot must also be the
// one the header claims, so editing the header does not help. The limit: whoever can write every
// file of the folder can roll back the session file and its record together; keep the folder
// where only the manager writes, or use a store whose versions live elsewhere.

const fs = require('node:fs');
const path = require('node:path');
const { ErrorCode } = require('../errors.js');
const { sessionError } = require('./errors.js');

const MAGIC = 'quickrealm-session-store/1';
const VERSION_MAGIC = 'quickrealm-session-version/1';
const LOCK_WAIT_MS = 2000;
/** The header line (magic, version, metadata) is at most this long. */
const MAX_HEADER_BYTES = 64 * 1024;
const STALE_LOCK_MS = 60_000;

/** @param {string} id */
function checkId(id) {
  if (typeof id !== 'string' || !/^[\w.-]{1,128}$/.test(id) || id.startsWith('.')) {
    throw sessionError(ErrorCode.InvalidInput, `session id ${JSON.stringify(id)} cannot name a file`, TypeError);
  }
  return id;
}

/** @param {number} ms */
function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * @param {number} pid
 */
function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return /** @type {NodeJS.ErrnoException} */ (e).code === 'EPERM';
  }
}

class FolderStore {
  /** @param {string} dir */
  constructor(dir) {
    if (typeof dir !== 'string' || dir === '')
      throw sessionError(ErrorCode.InvalidInput, 'FolderStore(dir): dir must be a path', TypeError);
    this.dir = path.resolve(dir);
    fs.mkdirSync(this.dir, { recursive: true });
  }

  /** @param {string} id */
  file(id) {
    return path.join(this.dir, `${checkId(id)}.session`);
  }

  /** @param {string} id */
  versionFile(id) {
    return path.join(this.dir, `${checkId(id)}.version`);
  }

  /**
   * The last version this store wrote of the session, from its version record (0 when there is
   * none: a store from before records, or a session never written).
   * @param {string} id
   */
  async #recorded(id) {
    let text;
    try {
      text = await fs.promises.readFile(this.versionFile(id), 'utf8');
    } catch (e) {
      if (/** @type {NodeJS.ErrnoException} */ (e).code === 'ENOENT') return 0;
      throw e;
    }
    const [magic, version] = text.trim().split(' ');
    if (magic !== VERSION_MAGIC || !/^\d+$/.test(version ?? ''))
      throw sessionError(ErrorCode.InvalidInput, `${this.versionFile(id)} is not a session version record`);
    return Number(version);
  }

  /**
   * Refuses a session file older than the version the store last wrote.
   * @param {string} id
   * @param {number} version the version in the session file's header
   */
  async #current(id, version) {
    const recorded = await this.#recorded(id);
    if (version < recorded) {
      throw sessionError(
        ErrorCode.SnapshotTampered,
        `${this.file(id)} holds version ${version} but the store last wrote version ${recorded}: it was rolled back`,
      );
    }
    return version;
  }

  /**
   * The header of a stored session, or null.
   * @param {string} id
   * @returns {Promise<{ version: number, meta: Record<string, unknown>, offset: number } | null>}
   */
  async head(id) {
    let handle;
    try {
      handle = await fs.promises.open(this.file(id), 'r');
    } catch (e) {
      if (/** @type {NodeJS.ErrnoException} */ (e).code === 'ENOENT') return null;
      throw e;
    }
    try {
      const buf = Buffer.alloc(MAX_HEADER_BYTES);
      const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
      const end = buf.subarray(0, bytesRead).indexOf(10);
      const line = end < 0 ? '' : buf.subarray(0, end).toString('utf8');
      const [magic, version, ...rest] = line.split(' ');
      if (magic !== MAGIC || !/^\d+$/.test(version ?? ''))
        throw sessionError(ErrorCode.InvalidInput, `${this.file(id)} is not a stored session`);
      const meta = JSON.parse(rest.join(' ') || '{}');
      return { version: await this.#current(id, Number(version)), meta, offset: end + 1 };
    } finally {
      await handle.close();
    }
  }

  /** @param {string} id */
  async version(id) {
    return (await this.head(id))?.version ?? null;
  }

  /**
   * @param {string} id
   * @returns {Promise<{ bytes: Buffer, version: number } | null>}
   */
  async get(id) {
    let data;
    try {
      data = await fs.promises.readFile(this.file(id));
    } catch (e) {
      if (/** @type {NodeJS.ErrnoException} */ (e).code === 'ENOENT') return null;
      throw e;
    }
    const end = data.indexOf(10);
    const [magic, version] = data.subarray(0, Math.max(end, 0)).toString('utf8').split(' ');
    if (end < 0 || magic !== MAGIC || !/^\d+$/.test(version ?? ''))
      throw sessionError(ErrorCode.InvalidInput, `${this.file(id)} is not a stored session`);
    return { bytes: data.subarray(end + 1), version: await this.#current(id, Number(version)) };
  }

  /**
   * Stores `bytes` as the next version if the stored version is still `expectedVersion` (null:
   * the session must not exist yet); otherwise SESSION_CONFLICT and nothing is written.
   * @param {string} id
   * @param {Uint8Array} bytes
   * @param {{ expectedVersion: number | null, meta?: Record<string, unknown> }} options
   * @returns {Promise<number>}
   */
  async put(id, bytes, options) {
    const target = this.file(id);
    return this.#locked(id, async () => {
      const current = await this.version(id);
      if (current !== options.expectedVersion) {
        throw sessionError(
          ErrorCode.SessionConflict,
          current === null && options.expectedVersion !== null
            ? `session ${id} was deleted from the store`
            : `session ${id} is at version ${current} in the store, not ${options.expectedVersion}: another process advanced it`,
        );
      }
      // A record left by a session file removed by hand would make the new session look rolled back.
      if (current === null) await fs.promises.rm(this.versionFile(id), { force: true });
      const next = (current ?? 0) + 1;
      const header = Buffer.from(`${MAGIC} ${next} ${JSON.stringify(options.meta ?? {})}\n`);
      if (header.length > MAX_HEADER_BYTES) {
        throw sessionError(
          ErrorCode.InvalidInput,
          `the metadata of session ${id} is larger than ${MAX_HEADER_BYTES - 100} bytes`,
          TypeError,
        );
      }
      const temp = `${target}.${process.pid}.${Date.now()}.tmp`;
      const handle = await fs.promises.open(temp, 'w');
      try {
        await handle.writeFile(Buffer.concat([header, bytes]));
        await handle.sync();
      } finally {
        await handle.close();
      }
      await fs.promises.rename(temp, target);
      // After the session file: a crash in between leaves the record behind the file (read as
      // current), never ahead of it (read as a rollback).
      const record = `${this.versionFile(id)}.${process.pid}.tmp`;
      await fs.promises.writeFile(record, `${VERSION_MAGIC} ${next}\n`);
      await fs.promises.rename(record, this.versionFile(id));
      return next;
    });
  }

  /** @param {string} id */
  async delete(id) {
    await this.#locked(id, async () => {
      await fs.promises.rm(this.file(id), { force: true });
      await fs.promises.rm(this.versionFile(id), { force: true });
    });
  }

  /** @returns {Promise<string[]>} */
  async list() {
    const names = await fs.promises.readdir(this.dir);
    return names
      .filter((n) => n.endsWith('.session'))
      .map((n) => n.slice(0, -'.session'.length))
      .sort();
  }

  /**
   * Runs `body` holding the session's lock file. A lock left by a process that died (or older
   * than a minute) is taken over.
   * @template T
   * @param {string} id
   * @param {() => Promise<T>} body
   * @returns {Promise<T>}
   */
  async #locked(id, body) {
    const lock = `${this.file(id)}.lock`;
    const deadline = Date.now() + LOCK_WAIT_MS;
    for (;;) {
      try {
        const handle = await fs.promises.open(lock, 'wx');
        await handle.writeFile(String(process.pid));
        await handle.close();
        break;
      } catch (e) {
        if (/** @type {NodeJS.ErrnoException} */ (e).code !== 'EEXIST') throw e;
        if (await this.#stale(lock)) {
          await fs.promises.rm(lock, { force: true });
          continue;
        }
        if (Date.now() > deadline)
          throw sessionError(ErrorCode.SessionConflict, `session ${id} is locked by another process`);
        await sleep(10);
      }
    }
    try {
      return await body();
    } finally {
      await fs.promises.rm(lock, { force: true });
    }
  }

  /** @param {string} lock */
  async #stale(lock) {
    try {
      const [text, stat] = await Promise.all([fs.promises.readFile(lock, 'utf8'), fs.promises.stat(lock)]);
      const pid = Number(text);
      return Date.now() - stat.mtimeMs > STALE_LOCK_MS || (Number.isInteger(pid) && pid > 0 && !alive(pid));
    } catch {
      return false;
    }
  }
}

module.exports = { FolderStore };
