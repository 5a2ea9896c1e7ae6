#!/usr/bin/env node
'use strict';
// `node scripts/smoke.js [major ...]` (default 22 24 26): the package as users on each current
// Node get it. Packs the tarballs once (`npm run pack -- --debug`), then for each Node major
// installs that Node's official binary (scripts/node-runtime.js, into .runtimes/), installs the
// tarballs and the MCP SDK into a fresh project with npm running on that Node, and runs
// scripts/smoke/check.mjs there with it. Prints each version's result and wall time; exits 1
// when any fails.

const { execFileSync, spawnSync } = require('node:child_process');
const { copyFileSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { dirname, join, resolve } = require('node:path');
const { nodeBinary } = require('./node-runtime.js');

const ROOT = resolve(__dirname, '..');
const DEFAULT_MAJORS = ['22', '24', '26'];
/** The MCP SDK version the project tests with: the smoke client and the server's peer. */
const SDK_VERSION = require(join(ROOT, 'package.json')).devDependencies['@modelcontextprotocol/sdk'];

/** npm's own entry script, so npm can run on the Node under test (its binary package has no npm). */
function npmCli() {
  const candidates = [
    process.env.npm_execpath,
    join(dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js'),
  ];
  try {
    const which = execFileSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).trim();
    if (which) candidates.push(join(dirname(realpathSync(which)), 'npm-cli.js'));
  } catch {}
  const found = candidates.find((c) => c?.endsWith('npm-cli.js') && existsSync(c));
  if (!found) throw new Error('smoke: cannot find npm-cli.js to run npm with another Node');
  return found;
}

/**
 * @param {string} node
 * @param {string} dir
 * @param {{ main: string, platform: string }} tarballs
 */
function smokeOn(node, dir, tarballs) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'smoke', version: '1.0.0', private: true }));
  copyFileSync(join(__dirname, 'smoke', 'check.mjs'), join(dir, 'check.mjs'));
  const install = spawnSync(
    node,
    [
      npmCli(),
      'install',
      '--no-audit',
      '--no-fund',
      '--prefer-offline',
      tarballs.main,
      tarballs.platform,
      `@modelcontextprotocol/sdk@${SDK_VERSION}`,
    ],
    // npm's child processes (install scripts) run on the same Node.
    { cwd: dir, encoding: 'utf8', env: { ...process.env, PATH: `${dirname(node)}:${process.env.PATH}` } },
  );
  if (install.status !== 0) throw new Error(`npm install failed:\n${install.stdout}\n${install.stderr}`);
  const r = spawnSync(node, ['check.mjs'], { cwd: dir, encoding: 'utf8', timeout: 120_000 });
  if (r.status !== 0) throw new Error(`${r.stdout}\n${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}');
}

async function main() {
  const majors = process.argv.slice(2).length ? process.argv.slice(2) : DEFAULT_MAJORS;
  const work = mkdtempSync(join(tmpdir(), 'quickrealm-smoke-'));
  let failed = false;
  try {
    const packStart = Date.now();
    const tarballs = JSON.parse(
      execFileSync(process.execPath, [join(__dirname, 'pack.js'), '--debug', '--out', join(work, 'dist')], {
        cwd: ROOT,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
      }),
    );
    console.log(JSON.stringify({ smoke: 'packed', seconds: (Date.now() - packStart) / 1000 }));
    for (const major of majors) {
      const start = Date.now();
      try {
        const node = await nodeBinary(major);
        const result = smokeOn(node, join(work, `node-${major}`), tarballs);
        console.log(JSON.stringify({ smoke: 'passed', major, ...result, seconds: (Date.now() - start) / 1000 }));
      } catch (e) {
        failed = true;
        console.log(JSON.stringify({ smoke: 'failed', major, seconds: (Date.now() - start) / 1000 }));
        console.error(e instanceof Error ? e.message : e);
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  if (failed) process.exitCode = 1;
}

main().catch((e) => {
  console.error(e instanceof Error ? e.stack : e);
  process.exitCode = 1;
});
