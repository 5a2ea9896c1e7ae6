#!/usr/bin/env node
'use strict';
// Builds the native addon when no build for this platform is present yet. `napi build` writes
// the addon next to its generated loader, in lib/native/.
const { existsSync, readdirSync } = require('node:fs');
const { join } = require('node:path');
const { spawnSync } = require('node:child_process');

const root = join(__dirname, '..');
const native = join(root, 'lib', 'native');
const built = existsSync(native) && readdirSync(native).some((f) => f.startsWith('quickrealm.') && f.endsWith('.node'));
if (built && existsSync(join(native, 'binding.js'))) process.exit(0);

console.error('quickrealm: building the native addon (first run only)...');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const r = spawnSync(npm, ['run', 'build:debug'], { cwd: root, stdio: 'inherit' });
process.exit(r.status ?? 1);
