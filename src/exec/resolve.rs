//! Module specifier resolution over a workspace view.
//!
//! Allowed: the shim modules (`fs`, `fs/promises`, `path`, `os`, also under `node:`) and
//! relative specifiers (`./x`, `../x`) that stay inside the workspace and name a `.js`, `.mjs`,
//! `.ts` or `.mts` file. Extension-less specifiers try `.ts`, `.js`, `.mjs`, `/index.ts`,
//! `/index.js`; a `.js` specifier also finds the `.ts` file of the same name (the TypeScript
//! ESM convention). Everything else is refused with a message that names the specifier. Paths
//! go through the run's access rules like every other read.

use crate::workspace::path::{self as wpath, display};
use crate::workspace::{AccessOp, Overlay, Presence, Refused};

/// Module names of the shims, as the loader sees them.
pub const SHIM_FS: &str = "node:fs";
pub const SHIM_FS_PROMISES: &str = "node:fs/promises";
pub const SHIM_PATH: &str = "node:path";
pub const SHIM_OS: &str = "node:os";

/// Prefix of every workspace module name (`~/src/a.ts`).
pub const WORKSPACE_PREFIX: &str = "~/";

/// File extensions that load as modules (`.cjs` as CommonJS).
pub const MODULE_EXTENSIONS: &[&str] = &["ts", "mts", "js", "mjs", "cjs"];
/// File extensions `require` loads (`.json` as data).
const REQUIRE_EXTENSIONS: &[&str] = &["js", "cjs", "mjs", "ts", "mts", "json"];

/// Who asks: an `import` (ES modules) or a `require` call (CommonJS). They differ in the file
/// names tried and in the conditions read from a package's `exports`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Import,
    Require,
}

/// Whether a module name is TypeScript.
pub fn is_typescript(name: &str) -> bool {
    name.ends_with(".ts") || name.ends_with(".mts")
}

/// The shim a specifier names, if any (`fs` and `node:fs` are the same module).
pub fn shim_name(specifier: &str) -> Option<&'static str> {
    let bare = specifier.strip_prefix("node:").unwrap_or(specifier);
    Some(match bare {
        "fs" => SHIM_FS,
        "fs/promises" => SHIM_FS_PROMISES,
        "path" | "path/posix" => SHIM_PATH,
        "os" => SHIM_OS,
        _ => return None,
    })
}

/// Node's built-in modules that this sandbox does not provide (for a clearer refusal).
const NODE_BUILTINS: &[&str] = &[
    "assert",
    "async_hooks",
    "buffer",
    "child_process",
    "cluster",
    "console",
    "constants",
    "crypto",
    "dgram",
    "diagnostics_channel",
    "dns",
    "domain",
    "events",
    "http",
    "http2",
    "https",
    "inspector",
    "module",
    "net",
    "perf_hooks",
    "process",
    "punycode",
    "querystring",
    "readline",
    "repl",
    "sqlite",
    "stream",
    "string_decoder",
    "sys",
    "test",
    "timers",
    "tls",
    "trace_events",
    "tty",
    "url",
    "util",
    "v8",
    "vm",
    "wasi",
    "worker_threads",
    "zlib",
];

const AVAILABLE: &str = "only workspace files (relative paths like './util.js', or packages \
     in a node_modules folder of the workspace) and the built-in modules fs, fs/promises, path \
     and os can be imported";

/// Why an import was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// `ERR_MODULE_NOT_FOUND` for missing files, `ERR_IMPORT_REFUSED` otherwise.
    pub code: &'static str,
    pub message: String,
}

fn refused(specifier: &str, importer: &str, why: impl AsRef<str>) -> Refusal {
    Refusal {
        code: "ERR_IMPORT_REFUSED",
        message: format!(
            "Cannot import '{specifier}' from {importer}: {}",
            why.as_ref()
        ),
    }
}

/// The folder (normalized) that relative imports of `base` resolve against. Names that are
/// not workspace modules (a run's own source, say) sit at the root.
fn base_dir(base: &str) -> String {
    match base.strip_prefix(WORKSPACE_PREFIX) {
        Some(rest) => wpath::parent(rest).unwrap_or("").to_string(),
        None => String::new(),
    }
}

fn shown_importer(base: &str) -> String {
    if base.is_empty() {
        "the entry point".into()
    } else {
        base.to_string()
    }
}

fn is_file(view: &Overlay, p: &str) -> bool {
    view.presence(p) == Presence::File
}

fn has_extension(p: &str, extensions: &[&str]) -> bool {
    let name = wpath::file_name(p);
    match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => extensions.contains(&ext),
        _ => false,
    }
}

fn has_module_extension(p: &str) -> bool {
    has_extension(p, MODULE_EXTENSIONS)
}

/// Resolves `specifier` imported by the module `base` to a module name: a shim name or
/// `~/path` of an existing workspace file.
pub fn resolve(view: &Overlay, base: &str, specifier: &str) -> Result<String, Refusal> {
    resolve_as(view, base, specifier, Kind::Import)
}

/// [`resolve`] for an `import` or a `require` call.
pub fn resolve_as(
    view: &Overlay,
    base: &str,
    specifier: &str,
    kind: Kind,
) -> Result<String, Refusal> {
    let importer = shown_importer(base);
    if let Some(shim) = shim_name(specifier) {
        return Ok(shim.to_string());
    }
    let refuse = |why: String| refused(specifier, &importer, why);
    if let Some(why) = not_importable(specifier) {
        if let Some((name, subpath)) = package_parts(specifier) {
            if let Some(found) = find_package(view, &base_dir(base), name, subpath, kind)? {
                return Ok(display(&found));
            }
        }
        return Err(refuse(why));
    }
    let joined = wpath::join(&base_dir(base), specifier);
    let target = view.resolve(AccessOp::Read, &joined).map_err(|r| {
        refuse(match r.why {
            Refused::Malformed => "the path leaves the workspace (or is too long)".into(),
            Refused::Hidden => "that folder is reserved for workspace history".into(),
            Refused::Denied => r.error.message,
        })
    })?;
    let loadable = match kind {
        Kind::Import => has_module_extension(&target),
        Kind::Require => has_extension(&target, REQUIRE_EXTENSIONS),
    };
    if !loadable && is_file(view, &target) {
        let what = match kind {
            Kind::Import => "only .js, .mjs, .cjs, .ts and .mts files can be imported",
            Kind::Require => "only .js, .cjs, .json and TypeScript files can be required",
        };
        return Err(refuse(format!(
            "{} is not a module; {what}",
            display(&target)
        )));
    }
    let mut candidates = candidates(&target, kind);
    if let Some(main) = package_main(view, &target, kind) {
        candidates.insert(0, main);
    }
    let allowed = |c: &&String| view.access().allows(AccessOp::Read, c);
    if let Some(found) = candidates.iter().filter(allowed).find(|c| is_file(view, c)) {
        return Ok(display(found));
    }
    let tried: Vec<String> = candidates.iter().map(|c| display(c)).collect();
    Err(Refusal {
        code: "ERR_MODULE_NOT_FOUND",
        message: format!(
            "Cannot find module '{specifier}' imported from {importer} (looked for {})",
            tried.join(", ")
        ),
    })
}

/// `name` and the subpath of a package specifier (`lodash/fp` → `lodash`, `fp`; scoped names
/// keep their scope), or `None` for anything that is not a package name.
fn package_parts(specifier: &str) -> Option<(&str, &str)> {
    if specifier.starts_with(['.', '/', '~'])
        || specifier.contains(':')
        || specifier.contains('\\')
        || specifier.contains('\0')
        || NODE_BUILTINS.contains(&specifier.split('/').next().unwrap_or(""))
    {
        return None;
    }
    let mut parts = specifier.splitn(3, '/');
    let first = parts.next()?;
    let (name_len, rest) = if first.starts_with('@') {
        let second = parts.next().filter(|s| !s.is_empty())?;
        (first.len() + 1 + second.len(), parts.next())
    } else {
        (first.len(), specifier.split_once('/').map(|(_, r)| r))
    };
    let name = &specifier[..name_len];
    let bad = |seg: &str| seg.is_empty() || seg == "." || seg == "..";
    if name.split('/').any(bad) {
        return None;
    }
    Some((name, rest.unwrap_or("")))
}

/// Looks for package `name` in `node_modules` folders from `dir` up to the workspace root, as
/// Node does, and resolves `subpath` (or the package's entry point) inside the first one found.
fn find_package(
    view: &Overlay,
    dir: &str,
    name: &str,
    subpath: &str,
    kind: Kind,
) -> Result<Option<String>, Refusal> {
    let mut at = Some(dir.to_string());
    while let Some(d) = at {
        let root = wpath::join(&wpath::join(&d, "node_modules"), name);
        let readable = view.access().allows(AccessOp::Traverse, &root);
        if readable && view.presence(&root) == Presence::Dir {
            let target = if subpath.is_empty() {
                root.clone()
            } else {
                // A subpath stays inside its package (`pkg/../../x` is not a way out).
                match view.resolve(AccessOp::Read, &wpath::join(&root, subpath)) {
                    Ok(t) if t.starts_with(&format!("{root}/")) => t,
                    _ => {
                        return Err(Refusal {
                            code: "ERR_IMPORT_REFUSED",
                            message: format!(
                                "Cannot load '{subpath}' of package '{name}': the path leaves the package"
                            ),
                        })
                    }
                }
            };
            let mut tried = Vec::new();
            if subpath.is_empty() {
                tried.extend(package_main(view, &root, kind));
            } else if let Some(mapped) = package_export(view, &root, subpath, kind) {
                tried.push(mapped);
            }
            if !has_extension(&target, REQUIRE_EXTENSIONS) || is_file(view, &target) {
                tried.extend(candidates(&target, kind));
            } else {
                tried.push(target);
            }
            let allowed = |c: &&String| view.access().allows(AccessOp::Read, c);
            return match tried.iter().filter(allowed).find(|c| is_file(view, c)) {
                Some(found) => Ok(Some(found.clone())),
                None => Err(Refusal {
                    code: "ERR_MODULE_NOT_FOUND",
                    message: format!(
                        "Cannot find '{}' in package '{name}' at {}",
                        if subpath.is_empty() {
                            "its entry point"
                        } else {
                            subpath
                        },
                        display(&root)
                    ),
                }),
            };
        }
        at = wpath::parent(&d).map(str::to_string);
    }
    Ok(None)
}

/// The `package.json` of folder `dir`, when there is a readable one that parses.
pub fn package_json(view: &Overlay, dir: &str) -> Option<serde_json::Value> {
    let p = wpath::join(dir, "package.json");
    if !view.access().allows(AccessOp::Read, &p) || !is_file(view, &p) {
        return None;
    }
    serde_json::from_slice(view.read(&p).ok()?).ok()
}

/// The file a folder's `package.json` names as its entry point (`exports` for ".", else
/// `main`), normalized; `None` when there is no such field.
fn package_main(view: &Overlay, dir: &str, kind: Kind) -> Option<String> {
    if view.presence(dir) != Presence::Dir {
        return None;
    }
    let pkg = package_json(view, dir)?;
    let entry = pkg
        .get("exports")
        .and_then(|e| export_target(e, ".", kind))
        .or_else(|| pkg.get("main").and_then(|m| m.as_str()).map(str::to_string))?;
    let joined = wpath::join(dir, entry.trim_start_matches("./"));
    view.resolve(AccessOp::Read, &joined).ok()
}

/// A package subpath mapped through its `exports` field, if it maps it.
fn package_export(view: &Overlay, dir: &str, subpath: &str, kind: Kind) -> Option<String> {
    let pkg = package_json(view, dir)?;
    let entry = export_target(pkg.get("exports")?, &format!("./{subpath}"), kind)?;
    let joined = wpath::join(dir, entry.trim_start_matches("./"));
    view.resolve(AccessOp::Read, &joined).ok()
}

/// The target an `exports` field gives for `key` (`"."` or `"./sub"`): a string, a map of
/// subpaths, or conditions (`import`/`require`, then `node`, then `default`), nested.
fn export_target(exports: &serde_json::Value, key: &str, kind: Kind) -> Option<String> {
    use serde_json::Value as J;
    match exports {
        J::String(s) if key == "." => Some(s.clone()),
        J::Object(map) if map.keys().any(|k| k.starts_with('.')) => {
            export_target(map.get(key)?, ".", kind)
        }
        J::Object(map) if key == "." => {
            let wanted = match kind {
                Kind::Import => "import",
                Kind::Require => "require",
            };
            [wanted, "node", "default"]
                .iter()
                .find_map(|c| map.get(*c).and_then(|v| export_target(v, ".", kind)))
        }
        J::Array(items) => items.iter().find_map(|v| export_target(v, key, kind)),
        _ => None,
    }
}

fn not_importable(specifier: &str) -> Option<String> {
    if specifier.is_empty() {
        return Some("the specifier is empty".into());
    }
    if specifier.contains('\0') || specifier.contains('\\') {
        return Some("module paths use '/' and cannot hold backslashes or NUL characters".into());
    }
    let relative = specifier == "."
        || specifier == ".."
        || specifier.starts_with("./")
        || specifier.starts_with("../");
    if relative {
        return None;
    }
    Some(if let Some(name) = specifier.strip_prefix("node:") {
        format!("'{name}' is not available in this sandbox; {AVAILABLE}")
    } else if NODE_BUILTINS.contains(&specifier.split('/').next().unwrap_or("")) {
        format!("'{specifier}' is a Node.js built-in module that this sandbox does not provide; {AVAILABLE}")
    } else if specifier.starts_with('/') || specifier.starts_with('~') {
        format!(
            "absolute paths cannot be imported; write a path relative to the importing file, like './{}'",
            specifier.trim_start_matches(['~', '/'])
        )
    } else if has_url_scheme(specifier) {
        format!("URL imports are not allowed; {AVAILABLE}")
    } else {
        format!(
            "no node_modules folder of the workspace holds that package, and packages cannot \
             be installed here; {AVAILABLE}"
        )
    })
}

/// The files an import of `target` may name, in the order they are tried: the file itself
/// (and for `.js`/`.mjs` the TypeScript file of the same name), or without an extension
/// `target.ts`, `.js`, `.mjs`, then `target/index.ts`, `target/index.js`.
fn candidates(target: &str, kind: Kind) -> Vec<String> {
    let exact = match kind {
        Kind::Import => has_module_extension(target),
        Kind::Require => has_extension(target, REQUIRE_EXTENSIONS),
    };
    if exact {
        let mut found = vec![target.to_string()];
        if let Some(stem) = target.strip_suffix(".js") {
            found.push(format!("{stem}.ts"));
        } else if let Some(stem) = target.strip_suffix(".mjs") {
            found.push(format!("{stem}.mts"));
        }
        return found;
    }
    let (files, indexes): (&[&str], &[&str]) = match kind {
        Kind::Import => (&["ts", "js", "mjs", "cjs"], &["index.ts", "index.js"]),
        Kind::Require => (
            &["js", "cjs", "json", "ts"],
            &["index.js", "index.cjs", "index.json", "index.ts"],
        ),
    };
    let mut found: Vec<String> = Vec::new();
    if !target.is_empty() {
        found.extend(files.iter().map(|ext| format!("{target}.{ext}")));
    }
    found.extend(indexes.iter().map(|index| wpath::join(target, index)));
    found
}

fn has_url_scheme(s: &str) -> bool {
    match s.split_once(':') {
        Some((scheme, _)) => {
            !scheme.is_empty()
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::{Workspace, WriteQuota};

    fn view() -> Overlay {
        let mut w = Workspace::new();
        for (p, body) in [
            ("main.ts", ""),
            ("lib/util.ts", ""),
            ("lib/plain.js", ""),
            ("lib/m.mjs", ""),
            ("pkg/index.ts", ""),
            ("data.json", "{}"),
            ("js/index.js", ""),
        ] {
            w.write_file(p, body.as_bytes(), true).unwrap();
        }
        w.stage(WriteQuota::default())
    }

    fn ok(base: &str, spec: &str) -> String {
        match resolve(&view(), base, spec) {
            Ok(s) => s,
            Err(e) => panic!("{spec}: {}", e.message),
        }
    }

    fn err(base: &str, spec: &str) -> Refusal {
        match resolve(&view(), base, spec) {
            Ok(s) => panic!("{spec} should be refused, got {s}"),
            Err(e) => e,
        }
    }

    #[test]
    fn relative_imports_and_extensions() {
        assert_eq!(ok("~/main.ts", "./lib/util"), "~/lib/util.ts");
        assert_eq!(ok("~/main.ts", "./lib/util.ts"), "~/lib/util.ts");
        assert_eq!(ok("~/main.ts", "./lib/util.js"), "~/lib/util.ts");
        assert_eq!(ok("~/lib/util.ts", "./plain"), "~/lib/plain.js");
        assert_eq!(ok("~/lib/util.ts", "./m"), "~/lib/m.mjs");
        assert_eq!(ok("~/lib/util.ts", "../pkg"), "~/pkg/index.ts");
        assert_eq!(ok("~/lib/util.ts", "../js"), "~/js/index.js");
        assert_eq!(ok("sandbox.js", "./main.ts"), "~/main.ts");
        assert_eq!(ok("~/lib/util.ts", "node:fs"), SHIM_FS);
        assert_eq!(ok("~/lib/util.ts", "fs/promises"), SHIM_FS_PROMISES);
        assert_eq!(ok("~/lib/util.ts", "path"), SHIM_PATH);
        assert_eq!(ok("~/lib/util.ts", "node:os"), SHIM_OS);
    }

    #[test]
    fn refusals_name_the_specifier() {
        let cases = [
            ("lodash", "packages cannot be installed"),
            ("child_process", "Node.js built-in"),
            ("node:child_process", "not available"),
            ("/abs.js", "absolute paths"),
            ("~/abs.js", "absolute paths"),
            ("file:///x.js", "URL imports"),
            ("https://x.test/m.js", "URL imports"),
            ("../../escape.js", "leaves the workspace"),
            ("../.time/log.json", "reserved"),
            ("../data.json", "not a module"),
        ];
        for (spec, why) in cases {
            let e = err("~/lib/util.ts", spec);
            assert!(
                e.message.contains(&format!("'{spec}'")) && e.message.contains(why),
                "{spec}: {}",
                e.message
            );
            assert_eq!(e.code, "ERR_IMPORT_REFUSED");
        }
        let e = err("~/main.ts", "./missing");
        assert_eq!(e.code, "ERR_MODULE_NOT_FOUND");
        assert!(e.message.contains("~/missing.ts"), "{}", e.message);
    }
}
