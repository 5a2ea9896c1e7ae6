#!/usr/bin/env bash
# Re-vendors rquickjs-sys (QuickJS-ng) into vendor/rquickjs-sys and applies our patches.
#
#   scripts/vendor-quickjs.sh [--check] [CRATE_DIR]
#
# CRATE_DIR is an unpacked rquickjs-sys crate; by default the one cargo keeps in
# ~/.cargo/registry/src/*/rquickjs-sys-$VERSION. Without --check the vendored tree is replaced
# by the pristine crate (less the parts listed in EXCLUDE), its file hashes are recorded in
# vendor/rquickjs-sys/pristine.sha256, and every vendor/rquickjs-sys/patches/NNNN-*.patch is
# applied in order with `patch -p1`; a patch that does not apply cleanly stops the script.
# With --check nothing is written: the result is built in a temporary directory and compared
# with the vendored tree, so a C edit without a patch file (or a stale patch) shows up.
set -euo pipefail

VERSION=0.14.0
# Never used on the targets we build (vendor/ and wasm-shim/ serve wasm32-unknown-unknown only;
# build.rs needs them only there), the extraction marker, and the crate README (ours replaces it).
EXCLUDE=(vendor wasm-shim .cargo-ok README.md)
# Ours, kept across re-vendoring.
OURS=(patches README.md pristine.sha256)

root=$(cd "$(dirname "$0")/.." && pwd)
dest="$root/vendor/rquickjs-sys"

check=0
if [[ "${1:-}" == "--check" ]]; then
  check=1
  shift
fi

src=${1:-}
if [[ -z "$src" ]]; then
  for d in "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/rquickjs-sys-"$VERSION"; do
    [[ -d "$d" ]] && src=$d
  done
fi
if [[ -z "$src" || ! -f "$src/build.rs" || ! -f "$src/quickjs/quickjs.c" ]]; then
  echo "vendor-quickjs: no rquickjs-sys $VERSION crate found (give its directory as an argument," >&2
  echo "or run 'cargo fetch' against the registry version first)" >&2
  exit 1
fi
if ! grep -q "^version = \"$VERSION\"" "$src/Cargo.toml"; then
  echo "vendor-quickjs: $src is not rquickjs-sys $VERSION" >&2
  exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out="$work/rquickjs-sys"
mkdir -p "$out"

# 1. The pristine crate, less what we leave out.
excludes=()
for e in "${EXCLUDE[@]}"; do excludes+=(--exclude="./$e"); done
(cd "$src" && tar -cf - "${excludes[@]}" .) | (cd "$out" && tar -xf -)
(cd "$out" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) >"$work/pristine.sha256"

# 2. Our files.
for f in "${OURS[@]}"; do
  [[ "$f" == pristine.sha256 ]] && continue
  [[ -e "$dest/$f" ]] && cp -R "$dest/$f" "$out/"
done
cp "$work/pristine.sha256" "$out/pristine.sha256"

# 3. The patches, in order; any failure is fatal.
shopt -s nullglob
for p in "$out"/patches/[0-9][0-9][0-9][0-9]-*.patch; do
  echo "vendor-quickjs: applying $(basename "$p")"
  if ! patch -p1 --forward --batch --no-backup-if-mismatch --reject-file=- -d "$out" <"$p" >"$work/patch.log" 2>&1; then
    cat "$work/patch.log" >&2
    echo "vendor-quickjs: FAILED: $(basename "$p") does not apply; refresh it against the pristine crate" >&2
    exit 1
  fi
  if grep -qi "offset\|fuzz" "$work/patch.log"; then
    cat "$work/patch.log" >&2
    echo "vendor-quickjs: FAILED: $(basename "$p") applies only with offset/fuzz; refresh it" >&2
    exit 1
  fi
done

if [[ $check == 1 ]]; then
  if diff -r "$out" "$dest" >"$work/diff.log"; then
    echo "vendor-quickjs: vendor/rquickjs-sys equals rquickjs-sys $VERSION + patches"
    exit 0
  fi
  cat "$work/diff.log" >&2
  echo "vendor-quickjs: vendor/rquickjs-sys differs from rquickjs-sys $VERSION + patches" >&2
  exit 1
fi

rm -rf "$dest"
mkdir -p "$(dirname "$dest")"
cp -R "$out" "$dest"
echo "vendor-quickjs: vendored rquickjs-sys $VERSION from $src into vendor/rquickjs-sys"
