// vendor/rquickjs-sys must be exactly the upstream crate plus vendor/rquickjs-sys/patches: a C
// edit without a patch file, or a patch file that no longer matches the tree, fails here.
// (scripts/vendor-quickjs.sh re-vendors; `scripts/vendor-quickjs.sh --check` compares against
// the crate in ~/.cargo/registry when it is there.)
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const VENDORED = join(__dirname, '..', 'vendor', 'rquickjs-sys');
const PATCHES = join(VENDORED, 'patches');
/** Files of ours in the vendored tree, not upstream's. */
const OURS = ['patches', 'README.md', 'pristine.sha256'];

function listFiles(dir: string, prefix = '.'): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const rel = `${prefix}/${entry.name}`;
    if (prefix === '.' && OURS.includes(entry.name)) continue;
    if (entry.isDirectory()) out.push(...listFiles(join(dir, entry.name), rel));
    else out.push(rel);
  }
  return out;
}

function patchFiles(): string[] {
  return readdirSync(PATCHES)
    .filter((f) => f.endsWith('.patch'))
    .sort();
}

describe('vendor/rquickjs-sys', () => {
  it('patch files are numbered in order, one per concern, each with a header', () => {
    const names = patchFiles();
    expect(names.length).toBeGreaterThan(0);
    names.forEach((name, i) => {
      expect(name).toMatch(new RegExp(`^${String(i + 1).padStart(4, '0')}-[a-z0-9-]+\\.patch$`));
      const text = readFileSync(join(PATCHES, name), 'utf8');
      const header = text.slice(0, text.indexOf('\ndiff --git '));
      expect(header, name).toMatch(/^# \S/);
      expect(header, name).toMatch(/^# What: /m);
      expect(header, name).toMatch(/^# Why: /m);
      expect(header, name).toMatch(/^# Upstreamable: /m);
    });
  });

  it("the vendor README's list names every patch with its title", () => {
    const readme = readFileSync(join(VENDORED, 'README.md'), 'utf8');
    const listed = [...readme.matchAll(/^\| \[\d{4}\]\(patches\/([^)]+)\) \| (.+?) \|/gm)];
    expect(listed.map((m) => m[1])).toEqual(patchFiles());
    for (const [, name, title] of listed) {
      const first = readFileSync(join(PATCHES, name), 'utf8').split('\n')[0];
      expect(title.startsWith(first.slice(2)), name).toBe(true);
    }
  });

  it('equals the pristine crate plus the patches, nothing else', () => {
    const work = mkdtempSync(join(tmpdir(), 'quickrealm-vendor-'));
    try {
      const tree = join(work, 'rquickjs-sys');
      for (const rel of listFiles(VENDORED)) cpSync(join(VENDORED, rel), join(tree, rel));
      // Undo the patches, last first: each must reverse exactly (no fuzz).
      for (const name of patchFiles().reverse()) {
        const r = spawnSync(
          'patch',
          [
            '-R',
            '-p1',
            '-F0',
            '--batch',
            '--no-backup-if-mismatch',
            '--reject-file=-',
            '-d',
            tree,
            '-i',
            join(PATCHES, name),
          ],
          { encoding: 'utf8' },
        );
        if (r.error) throw new Error(`cannot run patch(1): ${r.error.message}`);
        expect(r.status, `${name} does not reverse cleanly:\n${r.stdout}${r.stderr}`).toBe(0);
      }
      const expected = new Map(
        readFileSync(join(VENDORED, 'pristine.sha256'), 'utf8')
          .trim()
          .split('\n')
          .map((line) => {
            const m = /^([0-9a-f]{64}) {2}(.+)$/.exec(line);
            if (!m) throw new Error(`bad pristine.sha256 line: ${line}`);
            return [m[2], m[1]] as const;
          }),
      );
      const actual = new Map(
        listFiles(tree).map(
          (rel) =>
            [
              rel,
              createHash('sha256')
                .update(readFileSync(join(tree, rel)))
                .digest('hex'),
            ] as const,
        ),
      );
      const differing = [...new Set([...expected.keys(), ...actual.keys()])]
        .filter((rel) => expected.get(rel) !== actual.get(rel))
        .sort();
      expect(differing, 'files that differ from upstream without a patch saying so').toEqual([]);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });
});
