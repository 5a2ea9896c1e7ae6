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

use super::files::{lock, LoadFailure, ModuleRecord, SharedFiles};
use super::guest_errors::{guest_error, load_error, syntax_error};
use super::resolve::{
    self, is_typescript, SHIM_FS, SHIM_FS_PROMISES, SHIM_OS, SHIM_PATH, WORKSPACE_PREFIX,
};
use super::shims::ShimModule;
use super::typescript;

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
