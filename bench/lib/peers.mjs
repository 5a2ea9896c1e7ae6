// Lazy loaders for the engines under test. Every loader caches its result;
// a failed load turns into NA so only the affected rows print n/a.

import fs from 'node:fs';
import { createRequire } from 'node:module';
import { NA } from './measure.mjs';

const require = createRequire(import.meta.url);
// Resolves like a require() issued from bench/run.mjs, so '..' is the package root.
const benchRequire = createRequire(new URL('../run.mjs', import.meta.url));
const cache = new Map();

function once(key, fn) {
  if (!cache.has(key)) cache.set(key, fn());
  return cache.get(key);
}

const firstLine = (e) => String(e && e.message ? e.message : e).split('\n')[0];

// ---------------------------------------------------------------- quickrealm

/**
 * The package under test, loaded from the repository root (CommonJS).
 * QUICKREALM_PATH overrides the location (e.g. to try a prebuilt copy).
 */
export function quickrealm() {
  return once('quickrealm', () => {
    const target = process.env.QUICKREALM_PATH || '..';
    try {
      return { mod: benchRequire(target), error: null };
    } catch (e) {
      const hint = e && e.code === 'MODULE_NOT_FOUND' ? ' (is the addon built?)' : '';
      return { mod: null, error: `load failed: ${firstLine(e)}${hint}` };
    }
  });
}

/** Returns the module or throws NA when it, or any named function, is missing. */
export function needQuickrealm(...fns) {
  const q = quickrealm();
  if (!q.mod) throw new NA(q.error);
  for (const f of fns) {
    if (typeof q.mod[f] !== 'function') throw new NA(`quickrealm has no ${f}()`);
  }
  return q.mod;
}

/** Unwraps a quickrealm result, throwing NA with the guest error when !ok. */
export function qrValue(r, what = 'run') {
  if (!r || typeof r !== 'object') throw new NA(`${what}: unexpected result ${typeof r}`);
  if (r.ok !== true) {
    const e = r.error;
    const msg = e == null ? 'ok=false' : typeof e === 'string' ? e : e.message || e.name || JSON.stringify(e);
    throw new NA(`${what}: ${msg}`);
  }
  return r.value;
}

// ------------------------------------------------------------------- peers

export function isolatedVm() {
  return once('ivm', () => {
    try {
      return require('isolated-vm');
    } catch (e) {
      return new NA(`isolated-vm: ${firstLine(e)}`);
    }
  });
}

export function needIvm() {
  const flags = [...process.execArgv, ...(process.env.NODE_OPTIONS || '').split(/\s+/)];
  if (!flags.includes('--no-node-snapshot')) {
    throw new NA('isolated-vm needs node --no-node-snapshot');
  }
  const m = isolatedVm();
  if (m instanceof NA) throw m;
  return m;
}

export async function needQuickJS() {
  const r = await once('qjs', async () => {
    try {
      const m = await import('quickjs-emscripten');
      return { m, QuickJS: await m.getQuickJS() };
    } catch (e) {
      return new NA(`quickjs-emscripten: ${firstLine(e)}`);
    }
  });
  if (r instanceof NA) throw r;
  return r;
}

let locked = false;
/** Imports SES and calls lockdown() once. Only ever run after all other rows. */
export async function needSes() {
  const r = await once('ses', async () => {
    try {
      await import('ses');
      if (!locked) {
        // Keep console and error behaviour quiet; defaults otherwise.
        globalThis.lockdown({ consoleTaming: 'unsafe', errorTaming: 'unsafe', overrideTaming: 'moderate' });
        locked = true;
      }
      return { Compartment: globalThis.Compartment, harden: globalThis.harden };
    } catch (e) {
      return new NA(`ses: ${firstLine(e)}`);
    }
  });
  if (r instanceof NA) throw r;
  return r;
}

export async function needFluid() {
  const r = await once('fluid', async () => {
    try {
      const tree = await import('@fluidframework/tree');
      const beta = await import('@fluidframework/tree/beta');
      return { tree, beta };
    } catch (e) {
      return new NA(`@fluidframework/tree: ${firstLine(e)}`);
    }
  });
  if (r instanceof NA) throw r;
  return r;
}

export function versions() {
  const v = {};
  for (const name of ['ses', 'quickjs-emscripten', 'isolated-vm', '@fluidframework/tree']) {
    try {
      const p = new URL(`../node_modules/${name}/package.json`, import.meta.url);
      v[name] = JSON.parse(fs.readFileSync(p, 'utf8')).version;
    } catch {
      v[name] = 'not installed';
    }
  }
  return v;
}
