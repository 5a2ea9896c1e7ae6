//! The module resolver and loader of a realm with workspace access: ES modules served from the
//! run's view of the workspace (TypeScript compiled with oxc on the way in) and the shim
//! modules.
//!
//! Module code is compiled by the host through the loader; guest code still has no way to
//! compile strings.

use std::panic::{catch_unwind, AssertUnwindSafe};

use rquickjs::loader::{ImportAttributes, Loader, Resolver};
use rquickjs::module::Declared;
use rquickjs::{Ctx, Module, Runtime};

use super::commonjs::{is_commonjs, CommonJsModule};
use super::files::{lock, LoadFailure, ModuleRecord, SharedFiles};
use super::guest_errors::{guest_error, load_error, syntax_error};
use super::resolve::{
    self, is_typescript, SHIM_FS, SHIM_FS_PROMISES, SHIM_OS, SHIM_PATH, WORKSPACE_PREFIX,
};
use super::shims::ShimModule;
use super::typescript::{self, PositionMap};

/// Most modules one run may load.
pub const MAX_MODULES: usize = 2_000;
/// Largest module source, in bytes.
pub const MAX_MODULE_BYTES: usize = 4 << 20;

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
        if let Some(shim) = declare_shim(ctx, name) {
            return shim;
        }
        let Some(rel) = name.strip_prefix(WORKSPACE_PREFIX) else {
            return Err(load_error(
                ctx,
                name,
                format!("Cannot load module '{name}'"),
            ));
        };
        let (text, is_entry) = read_module_source(&self.files, name)
            .map_err(|message| load_error(ctx, name, message))?;
        let commonjs = is_commonjs(lock(&self.files).fs.overlay(), rel, &text);
        if commonjs {
            return Module::declare_def::<CommonJsModule, _>(ctx.clone(), name);
        }
        let (code, map) = if is_typescript(name) {
            match typescript::transpile_guarded(name, &text) {
                Ok(t) => (t.code, Some(t.map)),
                Err(e) => {
                    self.remember(name, text, None, Some((e.line, e.column)));
                    return Err(syntax_error(ctx, &e.message));
                }
            }
        } else {
            (text.clone(), None)
        };
        self.remember(name, text, map, None);
        self.declare(ctx, name, rel, code, is_entry)
    }

    /// Keeps the module's original text (and TypeScript map) to place errors later. A module
    /// that did not compile at `failed_at` is the load failure to report; otherwise the
    /// previous failure is forgotten, since imports are resolved (and may fail) while the
    /// module compiles.
    fn remember(
        &self,
        name: &str,
        source: String,
        map: Option<PositionMap>,
        failed_at: Option<(u32, u32)>,
    ) {
        let mut files = lock(&self.files);
        files.failure = failed_at.map(|(line, column)| LoadFailure::Compile {
            file: name.to_string(),
            line: Some(line),
            column: Some(column),
        });
        files
            .modules
            .insert(name.to_string(), ModuleRecord { source, map });
    }

    /// Compiles the module and sets its `import.meta` (`url`, `filename`, `dirname`, `main`).
    fn declare<'js>(
        &self,
        ctx: &Ctx<'js>,
        name: &str,
        rel: &str,
        code: String,
        is_entry: bool,
    ) -> rquickjs::Result<Module<'js, Declared>> {
        let module = Module::declare(ctx.clone(), name, code).inspect_err(|_| {
            let mut files = lock(&self.files);
            if files.failure.is_none() {
                files.failure = Some(LoadFailure::Compile {
                    file: name.to_string(),
                    line: None,
                    column: None,
                });
            }
        })?;
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
}

/// A workspace module's source text (without a byte order mark) and whether it is the entry,
/// within the per-run module count and size limits.
pub(super) fn read_module_source(
    files: &SharedFiles,
    name: &str,
) -> Result<(String, bool), String> {
    let rel = name.strip_prefix(WORKSPACE_PREFIX).unwrap_or(name);
    let (bytes, is_entry) = {
        let mut files = lock(files);
        files.loaded += 1;
        if files.loaded > MAX_MODULES {
            return Err(format!(
                "Cannot load {name}: a run may load at most {MAX_MODULES} modules"
            ));
        }
        let read = files.fs.overlay().read(rel).map(<[u8]>::to_vec);
        (read, files.entry.as_deref() == Some(name))
    };
    let bytes = bytes.map_err(|e| format!("Cannot load {name}: {}", e.message))?;
    if bytes.len() > MAX_MODULE_BYTES {
        return Err(format!(
            "Cannot load {name}: it is {} bytes; modules may be at most {MAX_MODULE_BYTES}",
            bytes.len()
        ));
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        format!(
            "Cannot load {name}: it is not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })?;
    Ok(match text.strip_prefix('\u{feff}') {
        Some(rest) => (rest.to_string(), is_entry),
        None => (text, is_entry),
    })
}

/// Keeps a CommonJS module's text, to place errors in it later.
pub(super) fn remember_source(files: &SharedFiles, name: &str, source: &str) {
    lock(files).modules.insert(
        name.to_string(),
        ModuleRecord {
            source: source.to_string(),
            map: None,
        },
    );
}

/// Declares the shim module `name`, if it names one.
fn declare_shim<'js>(
    ctx: &Ctx<'js>,
    name: &str,
) -> Option<rquickjs::Result<Module<'js, Declared>>> {
    let ctx = ctx.clone();
    Some(match name {
        SHIM_FS => Module::declare_def::<ShimModule<0>, _>(ctx, name),
        SHIM_FS_PROMISES => Module::declare_def::<ShimModule<1>, _>(ctx, name),
        SHIM_PATH => Module::declare_def::<ShimModule<2>, _>(ctx, name),
        SHIM_OS => Module::declare_def::<ShimModule<3>, _>(ctx, name),
        _ => return None,
    })
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
