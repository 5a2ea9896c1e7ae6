#!/usr/bin/env node
'use strict';
// A throwaway PostgreSQL cluster for tests and benchmarks: `initdb` in a temporary folder, the
// server on a free port of 127.0.0.1 with its socket in that folder, durability off (the data is
// thrown away). The server refuses to run as root, so as root the folder is handed to the
// `postgres` user and the server runs as that user.
//
// As a module: `const cluster = await startCluster()` → { url, port, dir, stop(), restart(), pgCtl() }.
// As a command: `node scripts/pg-cluster.js` starts one, prints its URL and stops it on Ctrl-C.

const { execFile, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { promisify } = require('node:util');

const run = promisify(execFile);

const hasServer = (/** @type {string} */ dir) =>
  fs.existsSync(path.join(dir, 'initdb')) && fs.existsSync(path.join(dir, 'pg_ctl'));

/** The folder holding initdb and pg_ctl, or null when PostgreSQL is not installed. */
function findBinDir() {
  const candidates = [];
  try {
    candidates.push(
      execFileSync('pg_config', ['--bindir'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim(),
    );
  } catch {
    // pg_config comes with the client package; the server may still be in the Debian folders.
  }
  const debian = '/usr/lib/postgresql';
  if (fs.existsSync(debian)) {
    const versions = fs
      .readdirSync(debian)
      .filter((v) => /^\d+$/.test(v))
      .sort((a, b) => Number(b) - Number(a));
    for (const v of versions) candidates.push(path.join(debian, v, 'bin'));
  }
  return candidates.find(hasServer) ?? null;
}

/** A port nobody listens on now (the server takes it a moment later). */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;

/**
 * Runs a PostgreSQL program, as the `postgres` user when this process is root.
 * @param {string} binary
 * @param {string[]} args
 */
async function runPg(binary, args) {
  const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', binary, ...args]] : [binary, args];
  try {
    return await run(file, argv, { maxBuffer: 16 * 1024 * 1024 });
  } catch (e) {
    const err = /** @type {Error & { stderr?: string, stdout?: string }} */ (e);
    throw new Error(`${path.basename(binary)} ${args.join(' ')} failed: ${err.stderr || err.stdout || err.message}`);
  }
}

/**
 * @typedef {{ url: string, port: number, dir: string, startMs: number,
 *   stop(): Promise<void>, restart(options?: { mode?: 'immediate' | 'fast' }): Promise<void>,
 *   pgCtl(args: string[]): Promise<{ stdout: string, stderr: string }> }} Cluster
 */

/**
 * Starts a throwaway cluster; `stop()` shuts it down and removes its folder.
 * @param {{ dir?: string, binDir?: string }} [options] `dir`: the (new or empty) folder to keep it in, a
 *   temporary one by default; `binDir`: where initdb and pg_ctl are (QUICKREALM_PG_BINDIR, else found)
 * @returns {Promise<Cluster>}
 */
async function startCluster(options = {}) {
  const started = performance.now();
  const binDir = options.binDir ?? process.env.QUICKREALM_PG_BINDIR ?? findBinDir();
  if (!binDir || !hasServer(binDir)) {
    const where = binDir ? `in ${binDir}` : 'through pg_config --bindir or in /usr/lib/postgresql/*/bin';
    throw new Error(
      `PostgreSQL is not installed: its server programs (initdb, pg_ctl) were not found ${where}; ` +
        'install the Debian package `postgresql` (.ci/run does) or set QUICKREALM_PG_BINDIR',
    );
  }
  const dir = options.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'quickrealm-pg-'));
  fs.mkdirSync(dir, { recursive: true });
  const data = path.join(dir, 'data');
  if (asRoot) await run('chown', ['-R', 'postgres:postgres', dir]);
  const initdb = path.join(binDir, 'initdb');
  const pgCtlBinary = path.join(binDir, 'pg_ctl');
  try {
    await runPg(initdb, ['--no-sync', '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', '-D', data]);
  } catch (e) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  const port = await freePort();
  const serverOptions = [
    `-p ${port}`,
    `-k ${dir}`,
    '-c listen_addresses=127.0.0.1',
    // No fsync: the machine does not crash under a test, only the server does. Commits still wait
    // for their WAL write (synchronous_commit stays on), so `restart({ mode: 'immediate' })`
    // loses no acknowledged transaction, as a real server's crash would not.
    '-c fsync=off',
    '-c full_page_writes=off',
    '-c max_connections=200',
  ].join(' ');
  const log = path.join(dir, 'server.log');
  /** @param {string[]} args */
  const pgCtl = (args) => runPg(pgCtlBinary, ['-D', data, ...args]);
  const start = () => pgCtl(['-w', '-t', '60', '-l', log, '-o', serverOptions, 'start']);
  try {
    await start();
  } catch (e) {
    const tail = fs.existsSync(log) ? fs.readFileSync(log, 'utf8').slice(-2000) : '';
    fs.rmSync(dir, { recursive: true, force: true });
    throw new Error(`${/** @type {Error} */ (e).message}\n${tail}`);
  }
  let stopped = false;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    dir,
    startMs: Math.round(performance.now() - started),
    pgCtl,
    async restart({ mode = 'fast' } = {}) {
      if (mode !== 'fast' && mode !== 'immediate')
        throw new TypeError(`restart: mode is fast or immediate, not ${mode}`);
      await pgCtl(['-w', '-m', mode, 'stop']);
      await start();
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      try {
        await pgCtl(['-w', '-m', 'immediate', 'stop']);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

module.exports = { startCluster, findBinDir };

if (require.main === module) {
  startCluster().then(
    (cluster) => {
      console.log(`${cluster.url}  (started in ${cluster.startMs} ms; Ctrl-C stops it and removes ${cluster.dir})`);
      const stop = () => cluster.stop().then(() => process.exit(0));
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
      setInterval(() => {}, 1 << 30);
    },
    (e) => {
      console.error(e instanceof Error ? e.message : e);
      process.exit(1);
    },
  );
}
