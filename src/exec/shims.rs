//! The `fs`, `fs/promises`, `path` and `os` shim modules of a realm: native operations over the
//! run's [`FsHost`](super::fs::FsHost), wrapped by `shims.js`, frozen, and served to the loader
//! as modules whose default export is the shim object and whose named exports are its keys.

use rquickjs::module::{Declarations, Exports, ModuleDef};
use rquickjs::{Array, Ctx, Function, JsLifetime, Object, TypedArray, Value};

use super::encoding::{decode, encode};
use super::files::{lock, RealmFiles, SharedFiles};
use super::fs::{FsError, WriteMode};
use super::guest_errors::{guest_error, throw_fs, throw_uncatchable};
use crate::engine::raw;
use crate::engine::realm::INTERNAL_FILENAME;

const SHIMS_JS: &str = include_str!("shims.js");

/// The frozen shim objects of a realm.
#[derive(Clone)]
pub struct Shims<'js> {
    pub fs: Object<'js>,
    pub promises: Object<'js>,
    pub path: Object<'js>,
    pub os: Object<'js>,
}

// SAFETY: `Shims` holds only `Object<'js>` handles of one context; changing `'js` to `'to`
// changes every one of them, which is what `JsLifetime` asks of the type.
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
pub(super) struct ShimModule<const K: usize>;

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
