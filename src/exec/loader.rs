//! Workspace modules for a realm: a resolver and loader that serve ES modules from the run's
//! view of a workspace, and the `fs`, `fs/promises`, `path` and `os` shim modules.
//!
//! - [`super::fs`]: the copy-on-write file system a run sees ([`FsHost`]), with Node-style errors.
//! - [`super::resolve`]: which specifiers may be imported, and what they name.
//! - [`super::typescript`]: TypeScript compiled with oxc, with a map back to original positions.
//!
//! Module code is compiled by the host through the loader; guest code still has no way to
//! compile strings. The shims are built once per realm, frozen, and handed to the loader
//! through the runtime's user data.

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex, MutexGuard};

use rquickjs::function::Constructor;
use rquickjs::loader::{ImportAttributes, Loader, Resolver};
use rquickjs::module::{Declarations, Declared, Exports, ModuleDef};
use rquickjs::{Array, Ctx, Function, JsLifetime, Module, Object, Runtime, TypedArray, Value};

use super::fs::{self, FsError, FsHost, WriteMode};
use super::resolve::{
    self, is_typescript, SHIM_FS, SHIM_FS_PROMISES, SHIM_OS, SHIM_PATH, WORKSPACE_PREFIX,
};
use super::typescript::{self, PositionMap};
use crate::engine::errors::ErrorInfo;
use crate::engine::raw;
use crate::engine::realm::INTERNAL_FILENAME;

/// Most modules one run may load.
pub const MAX_MODULES: usize = 2_000;
/// Largest module source, in bytes.
pub const MAX_MODULE_BYTES: usize = 4 << 20;

/// A loaded workspace module: its original text and, for TypeScript, the position map.
#[derive(Debug, Clone)]
pub struct ModuleRecord {
    pub source: String,
    pub map: Option<PositionMap>,
}

/// The last module that failed to load, to place the error it caused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadFailure {
    /// A module did not compile; the location is known for TypeScript.
    Compile {
        file: String,
        line: Option<u32>,
        column: Option<u32>,
    },
    /// An import was refused or not found.
    Import { importer: String, specifier: String },
}

/// Everything file-related of one run, shared by the loader, the shims and the caller.
#[derive(Debug)]
pub struct RealmFiles {
    pub fs: FsHost,
    pub modules: HashMap<String, ModuleRecord>,
    pub failure: Option<LoadFailure>,
    /// Set when the run must stop (`process.exit`): every later fs call is refused.
    pub halted: bool,
    /// The entry module (`import.meta.main` is true there).
    pub entry: Option<String>,
    loaded: usize,
}

pub type SharedFiles = Arc<Mutex<RealmFiles>>;

impl RealmFiles {
    pub fn new(fs: FsHost) -> Self {
        RealmFiles {
            fs,
            modules: HashMap::new(),
            failure: None,
            halted: false,
            entry: None,
            loaded: 0,
        }
    }

    pub fn shared(fs: FsHost) -> SharedFiles {
        Arc::new(Mutex::new(RealmFiles::new(fs)))
    }
}

/// Locks the run's files; a panic elsewhere never makes them unusable.
pub fn lock(files: &SharedFiles) -> MutexGuard<'_, RealmFiles> {
    files.lock().unwrap_or_else(|e| e.into_inner())
}

// ----- errors -----

/// Builds a guest error (`Error` or `TypeError`) with `code` and extra string properties.
pub fn guest_error<'js>(
    ctx: &Ctx<'js>,
    type_error: bool,
    code: &str,
    message: &str,
    extra: &[(&str, Value<'js>)],
) -> rquickjs::Result<Value<'js>> {
    let ctor: Constructor = ctx
        .globals()
        .get(if type_error { "TypeError" } else { "Error" })?;
    let err: Object = ctor.construct((message,))?;
    err.set("code", code)?;
    for (k, v) in extra {
        err.set(*k, v.clone())?;
    }
    Ok(err.into_value())
}

/// Throws an error that guest `catch` and `finally` cannot intercept. The error is built with
/// the `Error` constructor, which works after lockdown (assigning `message` to a fresh error would
/// hit the frozen `Error.prototype.message`).
pub fn throw_uncatchable<'js>(ctx: &Ctx<'js>, message: &str) -> rquickjs::Error {
    match guest_error(ctx, false, "ERR_RUN_ENDED", message, &[]) {
        Ok(v) => {
            raw::make_uncatchable(ctx, &v);
            ctx.throw(v)
        }
        Err(e) => e,
    }
}

/// Throws an fs error shaped like Node's (`errno`, `code`, `syscall`, `path`, `dest`).
pub fn throw_fs<'js>(ctx: &Ctx<'js>, e: &FsError) -> rquickjs::Error {
    let built = (|| -> rquickjs::Result<Value<'js>> {
        let text = |s: &str| rquickjs::String::from_str(ctx.clone(), s).map(|s| s.into_value());
        let mut extra = Vec::new();
        if let Some(n) = fs::errno(e.code) {
            extra.push(("errno", Value::new_int(ctx.clone(), n)));
        }
        if !e.syscall.is_empty() {
            extra.push(("syscall", text(e.syscall)?));
        }
        if let Some(p) = &e.path {
            extra.push(("path", text(p)?));
        }
        if let Some(d) = &e.dest {
            extra.push(("dest", text(d)?));
        }
        guest_error(ctx, e.type_error, e.code, &e.message, &extra)
    })();
    match built {
        Ok(v) => ctx.throw(v),
        Err(err) => err,
    }
}

// ----- text encodings -----

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Bytes as text in a Node encoding name (`utf8` replaces invalid sequences).
pub fn decode(bytes: &[u8], encoding: &str) -> String {
    match encoding {
        "latin1" => bytes.iter().map(|&b| b as char).collect(),
        "ascii" => bytes.iter().map(|&b| (b & 0x7f) as char).collect(),
        "hex" => bytes.iter().map(|b| format!("{b:02x}")).collect(),
        "base64" | "base64url" => {
            let url = encoding == "base64url";
            let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
            for chunk in bytes.chunks(3) {
                let n = (u32::from(chunk[0]) << 16)
                    | (u32::from(*chunk.get(1).unwrap_or(&0)) << 8)
                    | u32::from(*chunk.get(2).unwrap_or(&0));
                for i in 0..=chunk.len() {
                    let c = B64[((n >> (18 - 6 * i)) & 63) as usize];
                    out.push(match (url, c) {
                        (true, b'+') => '-',
                        (true, b'/') => '_',
                        (_, c) => c as char,
                    });
                }
                if !url {
                    for _ in chunk.len()..3 {
                        out.push('=');
                    }
                }
            }
            out
        }
        _ => String::from_utf8_lossy(bytes).into_owned(),
    }
}

/// Text as bytes in a Node encoding name (lenient like Node: bad input is skipped).
pub fn encode(text: &str, encoding: &str) -> Vec<u8> {
    match encoding {
        "latin1" | "ascii" => text.chars().map(|c| (c as u32 & 0xff) as u8).collect(),
        "hex" => {
            let digits: Vec<u8> = text.bytes().collect();
            let mut out = Vec::with_capacity(digits.len() / 2);
            for pair in digits.chunks_exact(2) {
                let hi = (pair[0] as char).to_digit(16);
                let lo = (pair[1] as char).to_digit(16);
                match (hi, lo) {
                    (Some(h), Some(l)) => out.push((h * 16 + l) as u8),
                    _ => break,
                }
            }
            out
        }
        "base64" | "base64url" => {
            let mut out = Vec::with_capacity(text.len() * 3 / 4);
            let (mut acc, mut bits) = (0u32, 0u32);
            for c in text.bytes() {
                let v = match c {
                    b'A'..=b'Z' => c - b'A',
                    b'a'..=b'z' => c - b'a' + 26,
                    b'0'..=b'9' => c - b'0' + 52,
                    b'+' | b'-' => 62,
                    b'/' | b'_' => 63,
                    b'=' => break,
                    _ => continue,
                };
                acc = (acc << 6) | u32::from(v);
                bits += 6;
                if bits >= 8 {
                    bits -= 8;
                    out.push((acc >> bits) as u8);
                    acc &= (1 << bits) - 1;
                }
            }
            out
        }
        _ => text.as_bytes().to_vec(),
    }
}

// ----- the shims -----

const SHIMS_JS: &str = include_str!("shims.js");

/// The frozen shim objects of a realm.
#[derive(Clone)]
pub struct Shims<'js> {
    pub fs: Object<'js>,
    pub promises: Object<'js>,
    pub path: Object<'js>,
    pub os: Object<'js>,
}

unsafe impl<'js> JsLifetime<'js> for Shims<'js> {
    type Changed<'to> = Shims<'to>;
}

/// Runs `op` on the files unless the run has been halted; fs errors become guest errors.
fn with_files<'js, T>(
    ctx: &Ctx<'js>,
    files: &SharedFiles,
    op: impl FnOnce(&mut RealmFiles) -> Result<T, FsError>,
) -> rquickjs::Result<T> {
    let result = {
        let mut guard = lock(files);
        if guard.halted {
            None
        } else {
            Some(op(&mut guard))
        }
    };
    match result {
        None => Err(throw_uncatchable(ctx, "the run has ended")),
        Some(Ok(v)) => Ok(v),
        Some(Err(e)) => Err(throw_fs(ctx, &e)),
    }
}

fn bytes_of<'js>(ctx: &Ctx<'js>, v: &Value<'js>, what: &str) -> rquickjs::Result<Vec<u8>> {
    raw::view_bytes(ctx, v).ok_or_else(|| {
        let msg = format!("The \"{what}\" argument must be a Uint8Array");
        match guest_error(ctx, true, "ERR_INVALID_ARG_TYPE", &msg, &[]) {
            Ok(e) => ctx.throw(e),
            Err(e) => e,
        }
    })
}

fn write_mode(flag: &str) -> WriteMode {
    WriteMode {
        append: flag.starts_with('a'),
        exclusive: flag.ends_with('x'),
    }
}

/// The native operations the shim code calls; each takes already-checked primitive arguments.
fn native_ops<'js>(ctx: &Ctx<'js>, files: &SharedFiles) -> rquickjs::Result<Object<'js>> {
    let ops = Object::new(ctx.clone())?;
    macro_rules! op {
        ($name:literal, $f:expr) => {
            ops.set($name, Function::new(ctx.clone(), $f)?.with_name($name)?)?;
        };
    }
    let f = files.clone();
    op!("read", move |ctx: Ctx<'js>, p: String| {
        let bytes = with_files(&ctx, &f, |r| r.fs.read(&p))?;
        TypedArray::<u8>::new(ctx.clone(), bytes).map(|a| a.into_value())
    });
    let f = files.clone();
    op!("readText", move |ctx: Ctx<'js>, p: String, enc: String| {
        let bytes = with_files(&ctx, &f, |r| r.fs.read(&p))?;
        Ok::<_, rquickjs::Error>(decode(&bytes, &enc))
    });
    let f = files.clone();
    op!("write", move |ctx: Ctx<'js>,
                       p: String,
                       data: Value<'js>,
                       enc: String,
                       flag: String| {
        let bytes = match data.as_string() {
            Some(s) => encode(&s.to_string()?, &enc),
            None => bytes_of(&ctx, &data, "data")?,
        };
        with_files(&ctx, &f, |r| r.fs.write(&p, &bytes, write_mode(&flag)))
    });
    let f = files.clone();
    op!("exists", move |ctx: Ctx<'js>, p: String| {
        with_files(&ctx, &f, |r| Ok(r.fs.exists(&p)))
    });
    let f = files.clone();
    op!("access", move |ctx: Ctx<'js>, p: String| {
        with_files(&ctx, &f, |r| r.fs.access(&p))
    });
    let f = files.clone();
    op!("realpath", move |ctx: Ctx<'js>, p: String| {
        with_files(&ctx, &f, |r| r.fs.realpath(&p))
    });
    let f = files.clone();
    op!("stat", move |ctx: Ctx<'js>, p: String| {
        let s = with_files(&ctx, &f, |r| r.fs.stat(&p))?;
        let arr = Array::new(ctx.clone())?;
        arr.set(0, s.is_dir)?;
        arr.set(1, s.size as f64)?;
        arr.set(2, s.mtime_ms as f64)?;
        Ok::<_, rquickjs::Error>(arr)
    });
    let f = files.clone();
    op!("readdir", move |ctx: Ctx<'js>,
                         p: String,
                         recursive: bool| {
        let entries = with_files(&ctx, &f, |r| r.fs.readdir(&p, recursive))?;
        let arr = Array::new(ctx.clone())?;
        for (i, (name, is_dir)) in entries.into_iter().enumerate() {
            let pair = Array::new(ctx.clone())?;
            pair.set(0, name)?;
            pair.set(1, is_dir)?;
            arr.set(i, pair)?;
        }
        Ok::<_, rquickjs::Error>(arr)
    });
    let f = files.clone();
    op!("mkdir", move |ctx: Ctx<'js>, p: String, recursive: bool| {
        with_files(&ctx, &f, |r| r.fs.mkdir(&p, recursive))
    });
    let f = files.clone();
    op!("unlink", move |ctx: Ctx<'js>, p: String| {
        with_files(&ctx, &f, |r| r.fs.unlink(&p))
    });
    let f = files.clone();
    op!("rmdir", move |ctx: Ctx<'js>, p: String, recursive: bool| {
        with_files(&ctx, &f, |r| r.fs.rmdir(&p, recursive))
    });
    let f = files.clone();
    op!("rm", move |ctx: Ctx<'js>,
                    p: String,
                    recursive: bool,
                    force: bool| {
        with_files(&ctx, &f, |r| r.fs.rm(&p, recursive, force))
    });
    let f = files.clone();
    op!("rename", move |ctx: Ctx<'js>, a: String, b: String| {
        with_files(&ctx, &f, |r| r.fs.rename(&a, &b))
    });
    let f = files.clone();
    op!("copy", move |ctx: Ctx<'js>,
                      a: String,
                      b: String,
                      exclusive: bool| {
        with_files(&ctx, &f, |r| r.fs.copy_file(&a, &b, exclusive))
    });
    op!("decode", move |ctx: Ctx<'js>,
                        bytes: Value<'js>,
                        enc: String| {
        let bytes = bytes_of(&ctx, &bytes, "bytes")?;
        Ok::<_, rquickjs::Error>(decode(&bytes, &enc))
    });
    Ok(ops)
}

/// Builds the frozen shim objects for this realm and registers them for the loader.
pub fn install_shims<'js>(ctx: &Ctx<'js>, files: &SharedFiles) -> rquickjs::Result<Shims<'js>> {
    let ops = native_ops(ctx, files)?;
    let mut opts = rquickjs::context::EvalOptions::default();
    opts.filename = Some(INTERNAL_FILENAME.into());
    opts.strict = true;
    let build: Function = ctx.eval_with_options(SHIMS_JS, opts)?;
    let built: Object = build.call((ops,))?;
    let shims = Shims {
        fs: built.get("fs")?,
        promises: built.get("promises")?,
        path: built.get("path")?,
        os: built.get("os")?,
    };
    ctx.store_userdata(shims.clone())
        .map_err(|_| rquickjs::Error::new_loading_message("node:fs", "shims already installed"))?;
    Ok(shims)
}

fn shim_object<'js, const K: usize>(ctx: &Ctx<'js>) -> rquickjs::Result<Object<'js>> {
    let shims = ctx.userdata::<Shims<'js>>().ok_or_else(|| {
        rquickjs::Error::new_loading_message("node:fs", "shims are not installed")
    })?;
    Ok(match K {
        0 => shims.fs.clone(),
        1 => shims.promises.clone(),
        2 => shims.path.clone(),
        _ => shims.os.clone(),
    })
}

/// A shim module: `default` is the shim object, and every own key is also a named export.
struct ShimModule<const K: usize>;

impl<const K: usize> ModuleDef for ShimModule<K> {
    fn declare<'js>(decl: &Declarations<'js>) -> rquickjs::Result<()> {
        let obj = shim_object::<K>(decl.module().ctx())?;
        decl.declare("default")?;
        for key in obj.keys::<String>() {
            let key = key?;
            if key != "default" {
                decl.declare(key)?;
            }
        }
        Ok(())
    }

    fn evaluate<'js>(ctx: &Ctx<'js>, exports: &Exports<'js>) -> rquickjs::Result<()> {
        let obj = shim_object::<K>(ctx)?;
        exports.export("default", obj.clone())?;
        for key in obj.keys::<String>() {
            let key = key?;
            if key != "default" {
                let v: Value = obj.get(key.as_str())?;
                exports.export(key, v)?;
            }
        }
        Ok(())
    }
}

// ----- resolver and loader -----

/// How an exec run enters its graph: a tiny bootstrap module named `name` imports `entry`.
#[derive(Debug, Clone)]
pub struct Boot {
    pub name: String,
    pub entry: String,
}

struct WorkspaceResolver {
    files: SharedFiles,
    boot: Option<Boot>,
}

impl Resolver for WorkspaceResolver {
    fn resolve<'js>(
        &mut self,
        ctx: &Ctx<'js>,
        base: &str,
        name: &str,
        _attributes: Option<ImportAttributes<'js>>,
    ) -> rquickjs::Result<String> {
        // Called from C: a panic must not unwind through it.
        catch_unwind(AssertUnwindSafe(|| self.resolve_name(ctx, base, name))).unwrap_or_else(|_| {
            Err(load_error(
                ctx,
                name,
                format!("quickrealm bug: resolving '{name}' failed"),
            ))
        })
    }
}

impl WorkspaceResolver {
    fn resolve_name<'js>(
        &mut self,
        ctx: &Ctx<'js>,
        base: &str,
        name: &str,
    ) -> rquickjs::Result<String> {
        if let Some(boot) = &self.boot {
            if base == boot.name && name == boot.entry {
                return Ok(boot.entry.clone());
            }
        }
        let resolved = {
            let mut files = lock(&self.files);
            let r = resolve::resolve(files.fs.overlay(), base, name);
            if r.is_err() {
                files.failure = Some(LoadFailure::Import {
                    importer: base.to_string(),
                    specifier: name.to_string(),
                });
            }
            r
        };
        resolved.map_err(|refusal| {
            match guest_error(ctx, false, refusal.code, &refusal.message, &[]) {
                Ok(e) => ctx.throw(e),
                Err(e) => e,
            }
        })
    }
}

struct WorkspaceLoader {
    files: SharedFiles,
}

fn load_error<'js>(ctx: &Ctx<'js>, name: &str, message: String) -> rquickjs::Error {
    match guest_error(ctx, false, "ERR_MODULE_LOAD", &message, &[]) {
        Ok(e) => ctx.throw(e),
        Err(_) => rquickjs::Error::new_loading_message(name, message),
    }
}

fn syntax_error<'js>(ctx: &Ctx<'js>, message: &str) -> rquickjs::Error {
    let built = (|| -> rquickjs::Result<Value<'js>> {
        let ctor: Constructor = ctx.globals().get("SyntaxError")?;
        ctor.construct((message,))
    })();
    match built {
        Ok(v) => ctx.throw(v),
        Err(e) => e,
    }
}

impl Loader for WorkspaceLoader {
    fn load<'js>(
        &mut self,
        ctx: &Ctx<'js>,
        name: &str,
        _attributes: Option<ImportAttributes<'js>>,
    ) -> rquickjs::Result<Module<'js, Declared>> {
        // Called from C: a panic must not unwind through it.
        catch_unwind(AssertUnwindSafe(|| self.load_module(ctx, name))).unwrap_or_else(|_| {
            Err(load_error(
                ctx,
                name,
                format!("quickrealm bug: loading {name} failed"),
            ))
        })
    }
}

impl WorkspaceLoader {
    fn load_module<'js>(
        &mut self,
        ctx: &Ctx<'js>,
        name: &str,
    ) -> rquickjs::Result<Module<'js, Declared>> {
        match name {
            SHIM_FS => return Module::declare_def::<ShimModule<0>, _>(ctx.clone(), name),
            SHIM_FS_PROMISES => return Module::declare_def::<ShimModule<1>, _>(ctx.clone(), name),
            SHIM_PATH => return Module::declare_def::<ShimModule<2>, _>(ctx.clone(), name),
            SHIM_OS => return Module::declare_def::<ShimModule<3>, _>(ctx.clone(), name),
            _ => {}
        }
        let Some(rel) = name.strip_prefix(WORKSPACE_PREFIX) else {
            return Err(load_error(
                ctx,
                name,
                format!("Cannot load module '{name}'"),
            ));
        };
        let (bytes, is_entry) = {
            let mut files = lock(&self.files);
            files.loaded += 1;
            if files.loaded > MAX_MODULES {
                drop(files);
                return Err(load_error(
                    ctx,
                    name,
                    format!("Cannot load {name}: a run may load at most {MAX_MODULES} modules"),
                ));
            }
            let read = files.fs.overlay().read(rel).map(<[u8]>::to_vec);
            (read, files.entry.as_deref() == Some(name))
        };
        let bytes = match bytes {
            Ok(b) => b,
            Err(e) => {
                return Err(load_error(
                    ctx,
                    name,
                    format!("Cannot load {name}: {}", e.message),
                ))
            }
        };
        if bytes.len() > MAX_MODULE_BYTES {
            return Err(load_error(
                ctx,
                name,
                format!(
                    "Cannot load {name}: it is {} bytes; modules may be at most {MAX_MODULE_BYTES}",
                    bytes.len()
                ),
            ));
        }
        let text = match String::from_utf8(bytes) {
            Ok(t) => t,
            Err(e) => {
                return Err(load_error(
                    ctx,
                    name,
                    format!(
                        "Cannot load {name}: it is not UTF-8 text (invalid byte at offset {})",
                        e.utf8_error().valid_up_to()
                    ),
                ))
            }
        };
        let text = text
            .strip_prefix('\u{feff}')
            .map(str::to_string)
            .unwrap_or(text);
        let (code, map) = if is_typescript(name) {
            match typescript::transpile_guarded(name, &text) {
                Ok(t) => (t.code, Some(t.map)),
                Err(e) => {
                    let mut files = lock(&self.files);
                    files.failure = Some(LoadFailure::Compile {
                        file: name.to_string(),
                        line: Some(e.line),
                        column: Some(e.column),
                    });
                    files.modules.insert(
                        name.to_string(),
                        ModuleRecord {
                            source: text,
                            map: None,
                        },
                    );
                    drop(files);
                    return Err(syntax_error(ctx, &e.message));
                }
            }
        } else {
            (text.clone(), None)
        };
        {
            let mut files = lock(&self.files);
            files
                .modules
                .insert(name.to_string(), ModuleRecord { source: text, map });
            // Imports are resolved (and may fail) while the module compiles.
            files.failure = None;
        }
        match Module::declare(ctx.clone(), name, code) {
            Ok(module) => {
                let meta = module.meta()?;
                let dir = match rel.rfind('/') {
                    Some(i) => format!("~/{}", &rel[..i]),
                    None => "~".to_string(),
                };
                meta.set("url", format!("file:///{rel}"))?;
                meta.set("filename", name)?;
                meta.set("dirname", dir)?;
                meta.set("main", is_entry)?;
                Ok(module)
            }
            Err(e) => {
                let mut files = lock(&self.files);
                if files.failure.is_none() {
                    files.failure = Some(LoadFailure::Compile {
                        file: name.to_string(),
                        line: None,
                        column: None,
                    });
                }
                Err(e)
            }
        }
    }
}

/// Installs the workspace resolver and loader on a fresh runtime.
pub fn install_loader(rt: &Runtime, files: SharedFiles, boot: Option<Boot>) {
    rt.set_loader(
        WorkspaceResolver {
            files: files.clone(),
            boot,
        },
        WorkspaceLoader { files },
    );
}

// ----- placing errors in the right file -----

/// Finds `file:line:column` of a workspace module in one stack line: `(start, end, file,
/// line, column)` with the byte range of the location text.
fn frame_location(line: &str) -> Option<(usize, usize, String, u32, u32)> {
    let start = line.find(WORKSPACE_PREFIX)?;
    let rest = &line[start..];
    let end = rest.rfind(')').unwrap_or(rest.len());
    let loc = &rest[..end];
    let (head, column) = loc.rsplit_once(':')?;
    let (file, l) = head.rsplit_once(':')?;
    let line_no = l.parse::<u32>().ok()?;
    let column = column.parse::<u32>().ok()?;
    Some((start, start + end, file.to_string(), line_no, column))
}

fn original(files: &RealmFiles, file: &str, line: u32, column: u32) -> (u32, u32) {
    match files.modules.get(file).and_then(|m| m.map.as_ref()) {
        Some(map) => map.original(line, column).unwrap_or((line, column)),
        None => (line, column),
    }
}

/// 1-based position of the first quoted occurrence of `specifier` in `source`.
fn find_specifier(source: &str, specifier: &str) -> Option<(u32, u32)> {
    ["'", "\"", "`"].iter().find_map(|q| {
        source
            .find(&format!("{q}{specifier}{q}"))
            .map(|i| typescript::line_column(source, i))
    })
}

/// Places an error of an exec run in the module it came from: sets `line`, `column` and
/// `frame` relative to that module's original source, maps TypeScript positions in the stack
/// back to the original files, and returns the module's name.
pub fn locate(files: &RealmFiles, info: &mut ErrorInfo) -> Option<String> {
    match &files.failure {
        Some(LoadFailure::Import {
            importer,
            specifier,
        }) if info.message.contains(&format!("'{specifier}'")) => {
            if let Some(rec) = files.modules.get(importer) {
                if let Some((l, c)) = find_specifier(&rec.source, specifier) {
                    *info = info.clone().at(&rec.source, l, c);
                }
                return Some(importer.clone());
            }
            return None;
        }
        Some(LoadFailure::Compile {
            file,
            line: Some(l),
            column: Some(c),
        }) if info.name == "SyntaxError" => {
            if let Some(rec) = files.modules.get(file) {
                *info = info.clone().at(&rec.source, *l, *c);
            }
            info.stack = Some(format!("    at {file}:{l}:{c}"));
            return Some(file.clone());
        }
        _ => {}
    }
    let stack = info.stack.clone()?;
    let mut first: Option<(String, u32, u32)> = None;
    let lines: Vec<String> = stack
        .lines()
        .map(|text| match frame_location(text) {
            Some((start, end, file, l, c)) => {
                let (ol, oc) = original(files, &file, l, c);
                let out = format!("{}{file}:{ol}:{oc}{}", &text[..start], &text[end..]);
                if first.is_none() && files.modules.contains_key(&file) {
                    first = Some((file, ol, oc));
                }
                out
            }
            None => text.to_string(),
        })
        .collect();
    info.stack = Some(lines.join("\n"));
    let (file, l, c) = first?;
    if let Some(rec) = files.modules.get(&file) {
        let last_line = rec.source.split('\n').count() as u32;
        let (l, c) = if l > last_line {
            let last = rec.source.rsplit('\n').next().unwrap_or("");
            (last_line, last.chars().count() as u32 + 1)
        } else {
            (l, c)
        };
        *info = info.clone().at(&rec.source, l, c);
    }
    Some(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodings_round_trip() {
        let data = b"hello, world\xff\x00";
        for enc in ["hex", "base64", "base64url", "latin1"] {
            assert_eq!(encode(&decode(data, enc), enc), data, "{enc}");
        }
        assert_eq!(decode(b"hi", "base64"), "aGk=");
        assert_eq!(decode(b"\xfb\xff", "base64url"), "-_8");
        assert_eq!(encode("aGk=", "base64"), b"hi");
        assert_eq!(encode("zz41", "hex"), b"");
        assert_eq!(decode(b"\xe2\x82", "utf8"), "\u{fffd}");
    }

    #[test]
    fn stack_locations_are_found() {
        let (s, e, file, l, c) = frame_location("    at f (~/lib/a b.ts:3:9)").unwrap();
        assert_eq!((file.as_str(), l, c), ("~/lib/a b.ts", 3, 9));
        assert_eq!(&"    at f (~/lib/a b.ts:3:9)"[s..e], "~/lib/a b.ts:3:9");
        assert!(frame_location("    at ~/main.js:1:2").is_some());
        assert!(frame_location("    at f (native)").is_none());
    }
}
