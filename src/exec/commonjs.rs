//! CommonJS modules in a workspace: `require` of workspace files (`.js`, `.cjs`, `.json`) and
//! of the `fs`/`path`/`os` shims, `module.exports`, and ES modules importing CommonJS ones
//! (`default` is `module.exports`, its own keys are named exports). The bookkeeping (cache,
//! cycles, `require.main`) is guest code in `commonjs.js`; resolving, reading and compiling
//! files is done here, under the run's access rules and module limits.
//!
//! A module imported by an ES module runs when the importer is linked, before any ES module
//! of the graph is evaluated; that is how its named exports are known exactly (Node guesses
//! them by scanning the source and runs the module later).

use std::cell::RefCell;
use std::collections::HashMap;

use rquickjs::context::EvalOptions;
use rquickjs::module::{Declarations, Exports, ModuleDef};
use rquickjs::{Ctx, Function, JsLifetime, Object, Value};

use super::files::{lock, SharedFiles};
use super::guest_errors::{guest_error, load_error};
use super::resolve::{self, package_json, Kind, SHIM_FS, SHIM_FS_PROMISES, SHIM_OS, SHIM_PATH};
use super::shims::Shims;
use crate::engine::realm::INTERNAL_FILENAME;
use crate::workspace::path as wpath;
use crate::workspace::Overlay;

const COMMONJS_JS: &str = include_str!("commonjs.js");
/// What wraps a CommonJS file's code; it stays on the first line, so line numbers are kept.
const WRAPPER_HEAD: &str = "(function (exports, require, module, __filename, __dirname) {";
const WRAPPER_TAIL: &str = "\n})";

/// The realm's CommonJS machinery, for the loader.
struct CommonJs<'js> {
    load: Function<'js>,
    files: SharedFiles,
    /// Named exports declared for each CommonJS module an ES module imported.
    declared: RefCell<HashMap<String, Vec<String>>>,
}

// SAFETY: `CommonJs` holds only a `Function<'js>` of one context (and plain data); changing
// `'js` to `'to` changes that handle, which is what `JsLifetime` asks of the type.
unsafe impl<'js> JsLifetime<'js> for CommonJs<'js> {
    type Changed<'to> = CommonJs<'to>;
}

/// Whether a workspace file holds CommonJS: `.cjs` always; `.js` when the nearest
/// `package.json` says `"type": "commonjs"`, or, without a type, when the code has no
/// `import`/`export` and uses `require`, `module.exports` or `exports.` (Node's detection).
pub fn is_commonjs(view: &Overlay, rel: &str, source: &str) -> bool {
    if rel.ends_with(".cjs") {
        return true;
    }
    if !rel.ends_with(".js") {
        return false;
    }
    let mut dir = wpath::parent(rel);
    while let Some(d) = dir {
        if let Some(pkg) = package_json(view, d) {
            match pkg.get("type").and_then(|t| t.as_str()) {
                Some("commonjs") => return true,
                Some("module") => return false,
                _ => break,
            }
        }
        dir = wpath::parent(d);
    }
    let uses_commonjs = source.contains("require(")
        || source.contains("module.exports")
        || source.contains("exports.");
    uses_commonjs && !has_module_syntax(source)
}

/// Whether the code has ES module syntax (`import`/`export` declarations, `import.meta`).
fn has_module_syntax(source: &str) -> bool {
    let allocator = oxc_allocator::Allocator::default();
    let parsed = oxc_parser::Parser::new(&allocator, source, oxc_span::SourceType::mjs()).parse();
    parsed.module_record.has_module_syntax
}

/// Installs `require` support in a realm with workspace files; returns a `require` for code
/// that is not a module (function and script mode), relative to the workspace root.
/// The shims must be installed first.
pub fn install_commonjs<'js>(
    ctx: &Ctx<'js>,
    files: &SharedFiles,
) -> rquickjs::Result<Function<'js>> {
    let ops = native_ops(ctx, files)?;
    let mut opts = EvalOptions::default();
    opts.filename = Some(INTERNAL_FILENAME.into());
    opts.strict = true;
    let build: Function = ctx.eval_with_options(COMMONJS_JS, opts)?;
    let made: Object = build.call((ops,))?;
    let load: Function = made.get("load")?;
    let make_require: Function = made.get("makeRequire")?;
    ctx.store_userdata(CommonJs {
        load,
        files: files.clone(),
        declared: RefCell::new(HashMap::new()),
    })
    .map_err(|_| rquickjs::Error::new_loading_message("require", "already installed"))?;
    make_require.call(("~/",))
}

/// Throws a guest error with a Node error code.
fn throw_coded<'js>(ctx: &Ctx<'js>, code: &str, message: &str) -> rquickjs::Error {
    match guest_error(ctx, false, code, message, &[]) {
        Ok(e) => ctx.throw(e),
        Err(e) => e,
    }
}

fn native_ops<'js>(ctx: &Ctx<'js>, files: &SharedFiles) -> rquickjs::Result<Object<'js>> {
    let ops = Object::new(ctx.clone())?;
    let f = files.clone();
    let resolve = move |ctx: Ctx<'js>, from: String, id: String| -> rquickjs::Result<String> {
        let found = {
            let files = lock(&f);
            resolve::resolve_as(files.fs.overlay(), &from, &id, Kind::Require)
        };
        found.map_err(|refusal| {
            let message = refusal
                .message
                .replace("Cannot import", "Cannot require")
                .replace("imported from", "required from");
            let code = if refusal.code == "ERR_MODULE_NOT_FOUND" {
                "MODULE_NOT_FOUND"
            } else {
                refusal.code
            };
            throw_coded(&ctx, code, &message)
        })
    };
    ops.set("resolve", Function::new(ctx.clone(), resolve)?)?;
    // Read from the context, never captured: a closure of a guest function holding guest
    // objects would be a cycle the collector cannot see, and the runtime could not be freed.
    let shim = move |ctx: Ctx<'js>, name: String| -> Option<Object<'js>> {
        let shims = ctx.userdata::<Shims<'js>>()?;
        match name.as_str() {
            SHIM_FS => Some(shims.fs.clone()),
            SHIM_FS_PROMISES => Some(shims.promises.clone()),
            SHIM_PATH => Some(shims.path.clone()),
            SHIM_OS => Some(shims.os.clone()),
            _ => None,
        }
    };
    ops.set("shim", Function::new(ctx.clone(), shim)?)?;
    let f = files.clone();
    let text = move |ctx: Ctx<'js>, name: String| -> rquickjs::Result<String> {
        super::loader::read_module_source(&f, &name)
            .map(|(text, _)| text)
            .map_err(|message| load_error(&ctx, &name, message))
    };
    ops.set("text", Function::new(ctx.clone(), text)?)?;
    let f = files.clone();
    let compile = move |ctx: Ctx<'js>, name: String| -> rquickjs::Result<Function<'js>> {
        compile_module(&ctx, &f, &name)
    };
    ops.set("compile", Function::new(ctx.clone(), compile)?)?;
    Ok(ops)
}

/// Reads a CommonJS file and compiles it as a function of the five CommonJS bindings; an ES
/// module is refused (`require` cannot run one here).
fn compile_module<'js>(
    ctx: &Ctx<'js>,
    files: &SharedFiles,
    name: &str,
) -> rquickjs::Result<Function<'js>> {
    let (source, _) = super::loader::read_module_source(files, name)
        .map_err(|message| load_error(ctx, name, message))?;
    let rel = name.strip_prefix(resolve::WORKSPACE_PREFIX).unwrap_or(name);
    let commonjs = {
        let files = lock(files);
        is_commonjs(files.fs.overlay(), rel, &source)
    };
    let plain_script = rel.ends_with(".js") && !has_module_syntax(&source);
    if !commonjs && !plain_script {
        return Err(throw_coded(
            ctx,
            "ERR_REQUIRE_ESM",
            &format!("require() of the ES module {name} is not supported here; import it instead"),
        ));
    }
    super::loader::remember_source(files, name, &source);
    let mut code = String::with_capacity(WRAPPER_HEAD.len() + source.len() + WRAPPER_TAIL.len());
    code.push_str(WRAPPER_HEAD);
    code.push_str(&source);
    code.push_str(WRAPPER_TAIL);
    let mut opts = EvalOptions::default();
    opts.filename = Some(name.to_string());
    opts.strict = false;
    ctx.eval_with_options(code, opts)
}

/// A CommonJS file imported by an ES module: `default` is its `module.exports`, and every own
/// enumerable key that is a valid name is also a named export.
pub(super) struct CommonJsModule;

fn exports_of<'js>(ctx: &Ctx<'js>, name: &str) -> rquickjs::Result<Value<'js>> {
    let cjs = ctx
        .userdata::<CommonJs<'js>>()
        .ok_or_else(|| rquickjs::Error::new_loading_message(name, "CommonJS is not installed"))?;
    let is_main = lock(&cjs.files).entry.as_deref() == Some(name);
    cjs.load.call((name, is_main))
}

fn is_export_name(key: &str) -> bool {
    let mut chars = key.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$');
    first_ok && chars.all(|c| c.is_alphanumeric() || c == '_' || c == '$') && key != "default"
}

impl ModuleDef for CommonJsModule {
    fn declare<'js>(decl: &Declarations<'js>) -> rquickjs::Result<()> {
        let ctx = decl.module().ctx().clone();
        let name: String = decl.module().name()?;
        let exports = exports_of(&ctx, &name)?;
        let mut names = Vec::new();
        if let Some(obj) = exports.as_object() {
            for key in obj.keys::<String>() {
                let key = key?;
                if is_export_name(&key) {
                    names.push(key);
                }
            }
        }
        decl.declare("default")?;
        for key in &names {
            decl.declare(key.as_str())?;
        }
        if let Some(cjs) = ctx.userdata::<CommonJs<'js>>() {
            cjs.declared.borrow_mut().insert(name, names);
        }
        Ok(())
    }

    fn evaluate<'js>(ctx: &Ctx<'js>, exports: &Exports<'js>) -> rquickjs::Result<()> {
        let name: String = exports.module().name()?;
        let value = exports_of(ctx, &name)?;
        let names = ctx
            .userdata::<CommonJs<'js>>()
            .and_then(|cjs| cjs.declared.borrow().get(&name).cloned())
            .unwrap_or_default();
        for key in names {
            let v: Value = match value.as_object() {
                Some(obj) => obj.get(key.as_str())?,
                None => Value::new_undefined(ctx.clone()),
            };
            exports.export(key, v)?;
        }
        exports.export("default", value)?;
        Ok(())
    }
}
