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

/// File extensions that load as modules.
pub const MODULE_EXTENSIONS: &[&str] = &["ts", "mts", "js", "mjs"];

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

const AVAILABLE: &str = "only relative imports of workspace files (like './util.js') and the \
     built-in modules fs, fs/promises, path and os can be imported";

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

fn has_module_extension(p: &str) -> bool {
    let name = wpath::file_name(p);
    match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => MODULE_EXTENSIONS.contains(&ext),
        _ => false,
    }
}

/// Resolves `specifier` imported by the module `base` to a module name: a shim name or
/// `~/path` of an existing workspace file.
pub fn resolve(view: &Overlay, base: &str, specifier: &str) -> Result<String, Refusal> {
    let importer = shown_importer(base);
    if let Some(shim) = shim_name(specifier) {
        return Ok(shim.to_string());
    }
    let refuse = |why: String| refused(specifier, &importer, why);
    if let Some(why) = not_importable(specifier) {
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
    if !has_module_extension(&target) && is_file(view, &target) {
        return Err(refuse(format!(
            "{} is not a module; only .js, .mjs, .ts and .mts files can be imported",
            display(&target)
        )));
    }
    let candidates = candidates(&target);
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

/// Why `specifier` cannot name a workspace module, if it cannot: only relative paths can.
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
        format!("packages cannot be installed or imported here; {AVAILABLE}")
    })
}

/// The files an import of `target` may name, in the order they are tried: the file itself
/// (and for `.js`/`.mjs` the TypeScript file of the same name), or without an extension
/// `target.ts`, `.js`, `.mjs`, then `target/index.ts`, `target/index.js`.
fn candidates(target: &str) -> Vec<String> {
    if has_module_extension(target) {
        let mut found = vec![target.to_string()];
        if let Some(stem) = target.strip_suffix(".js") {
            found.push(format!("{stem}.ts"));
        } else if let Some(stem) = target.strip_suffix(".mjs") {
            found.push(format!("{stem}.mts"));
        }
        return found;
    }
    let mut found: Vec<String> = Vec::new();
    if !target.is_empty() {
        found.extend(["ts", "js", "mjs"].map(|ext| format!("{target}.{ext}")));
    }
    found.extend(["index.ts", "index.js"].map(|index| wpath::join(target, index)));
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
