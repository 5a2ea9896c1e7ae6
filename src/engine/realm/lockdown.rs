//! Lockdown: freezing everything reachable from the global object, and the intrinsics only
//! reachable through syntax, before guest code runs.

use super::super::{ffi, raw};
use super::INTERNAL_FILENAME_C;
use rquickjs::{Ctx, Object, Value};
use std::collections::HashSet;

/// How lockdown reaches one object from an earlier one (or from a root).
#[derive(Debug, Clone, PartialEq)]
enum Edge {
    /// The n-th hidden intrinsic (see `HIDDEN_INTRINSICS`).
    Hidden(usize),
    /// The global object's own property.
    Global(Key),
    Value(usize, Key),
    Getter(usize, Key),
    Setter(usize, Key),
    Proto(usize),
}

#[derive(Debug, Clone, PartialEq)]
enum Key {
    Name(String),
    /// A well-known symbol, by its name on `Symbol`.
    Symbol(&'static str),
}

const WELL_KNOWN_SYMBOLS: &[&str] = &[
    "iterator",
    "asyncIterator",
    "hasInstance",
    "isConcatSpreadable",
    "match",
    "matchAll",
    "replace",
    "search",
    "species",
    "split",
    "toPrimitive",
    "toStringTag",
    "unscopables",
    "dispose",
    "asyncDispose",
];

/// Realms whose object graphs before lockdown are built by the same code, and so have the same
/// shape: with or without the console profile's globals, with or without the membrane's guest
/// half. Realms with an extension (workspace access, exec) are always walked in full.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Shape {
    pub with_console: bool,
    pub live: bool,
}

impl Shape {
    fn index(self) -> usize {
        usize::from(self.with_console) * 2 + usize::from(self.live)
    }
}

/// Per shape, the discovery order of the first realm's walk, replayed by every later realm of
/// that shape: one lookup per object instead of reading every property descriptor again.
static PLANS: [std::sync::OnceLock<Option<Vec<Edge>>>; 4] = [
    std::sync::OnceLock::new(),
    std::sync::OnceLock::new(),
    std::sync::OnceLock::new(),
    std::sync::OnceLock::new(),
];

/// How a property key is recorded: by name, or as a well-known symbol (`None` otherwise).
fn key_of<'js>(k: &Value<'js>, symbols: &[(Value<'js>, &'static str)]) -> Option<Key> {
    if let Some(s) = k.as_string() {
        return s.to_string().ok().map(Key::Name);
    }
    symbols
        .iter()
        .find(|(v, _)| v == k)
        .map(|(_, n)| Key::Symbol(n))
}

fn key_value<'js>(
    ctx: &Ctx<'js>,
    key: &Key,
    symbols: &[(Value<'js>, &'static str)],
) -> Option<Value<'js>> {
    match key {
        Key::Name(n) => rquickjs::String::from_str(ctx.clone(), n)
            .ok()
            .map(|s| s.into_value()),
        Key::Symbol(name) => symbols
            .iter()
            .find(|(_, n)| n == name)
            .map(|(v, _)| v.clone()),
    }
}

fn well_known_symbols<'js>(ctx: &Ctx<'js>) -> Vec<(Value<'js>, &'static str)> {
    let Ok(symbol) = ctx.globals().get::<_, Object>("Symbol") else {
        return Vec::new();
    };
    WELL_KNOWN_SYMBOLS
        .iter()
        .filter_map(|n| {
            symbol
                .get::<_, Value>(*n)
                .ok()
                .filter(|v| v.is_symbol())
                .map(|v| (v, *n))
        })
        .collect()
}

/// Walks everything reachable and returns the objects in discovery order with how each was
/// reached (`None` for an edge that cannot be replayed, e.g. a non-well-known symbol key).
fn discover<'js>(ctx: &Ctx<'js>, hidden: &[Value<'js>]) -> (Vec<Object<'js>>, Option<Vec<Edge>>) {
    let global = ctx.globals();
    let symbols = well_known_symbols(ctx);
    let mut seen: HashSet<usize> = HashSet::new();
    seen.insert(raw::identity(global.as_value()));
    let mut objects: Vec<Object<'js>> = Vec::new();
    let mut edges: Option<Vec<Edge>> = Some(Vec::new());
    let mut add = |v: &Value<'js>,
                   edge: Option<Edge>,
                   objects: &mut Vec<Object<'js>>,
                   edges: &mut Option<Vec<Edge>>| {
        if let Some(o) = v.as_object() {
            if seen.insert(raw::identity(v)) {
                objects.push(o.clone());
                match (edges.as_mut(), edge) {
                    (Some(list), Some(e)) => list.push(e),
                    _ => *edges = None,
                }
            }
        }
    };
    for (i, v) in hidden.iter().enumerate() {
        add(v, Some(Edge::Hidden(i)), &mut objects, &mut edges);
    }
    for key in raw::own_keys(ctx, &global, true, false).unwrap_or_default() {
        if let Some(d) = raw::own_descriptor(ctx, &global, &key) {
            let k = key_of(&key, &symbols);
            add(
                &d.value,
                k.clone().map(Edge::Global),
                &mut objects,
                &mut edges,
            );
            if !d.getter.is_undefined() || !d.setter.is_undefined() {
                edges = None; // the global has no accessors today; replay only handles data
                add(&d.getter, None, &mut objects, &mut edges);
                add(&d.setter, None, &mut objects, &mut edges);
            }
        }
    }
    let mut i = 0;
    while i < objects.len() {
        let obj = objects[i].clone();
        for key in raw::own_keys(ctx, &obj, true, false).unwrap_or_default() {
            if let Some(d) = raw::own_descriptor(ctx, &obj, &key) {
                let k = key_of(&key, &symbols);
                add(
                    &d.value,
                    k.clone().map(|k| Edge::Value(i, k)),
                    &mut objects,
                    &mut edges,
                );
                add(
                    &d.getter,
                    k.clone().map(|k| Edge::Getter(i, k)),
                    &mut objects,
                    &mut edges,
                );
                add(
                    &d.setter,
                    k.map(|k| Edge::Setter(i, k)),
                    &mut objects,
                    &mut edges,
                );
            }
        }
        if let Some(p) = obj.get_prototype() {
            add(p.as_value(), Some(Edge::Proto(i)), &mut objects, &mut edges);
        }
        i += 1;
    }
    (objects, edges)
}

/// Resolves a recorded plan in this realm; None if the realm does not match it.
fn replay<'js>(ctx: &Ctx<'js>, hidden: &[Value<'js>], plan: &[Edge]) -> Option<Vec<Object<'js>>> {
    let global = ctx.globals();
    let symbols = well_known_symbols(ctx);
    let mut objects: Vec<Object<'js>> = Vec::with_capacity(plan.len());
    let part = |obj: &Object<'js>, key: &Key, which: u8| -> Option<Value<'js>> {
        let k = key_value(ctx, key, &symbols)?;
        let d = raw::own_descriptor(ctx, obj, &k)?;
        Some(match which {
            0 => d.value,
            1 => d.getter,
            _ => d.setter,
        })
    };
    for edge in plan {
        let v = match edge {
            Edge::Hidden(i) => hidden.get(*i)?.clone(),
            // Data properties by name: a plain property read, no key string, no descriptor.
            Edge::Global(Key::Name(n)) => raw::get_named(ctx, &global, n)?,
            Edge::Value(p, Key::Name(n)) => raw::get_named(ctx, objects.get(*p)?, n)?,
            Edge::Global(k) => part(&global, k, 0)?,
            Edge::Value(p, k) => part(objects.get(*p)?, k, 0)?,
            Edge::Getter(p, k) => part(objects.get(*p)?, k, 1)?,
            Edge::Setter(p, k) => part(objects.get(*p)?, k, 2)?,
            Edge::Proto(p) => objects.get(*p)?.get_prototype()?.into_value(),
        };
        objects.push(v.into_object()?);
    }
    Some(objects)
}

/// Freezes every object reachable from the global object (and the intrinsics that are only
/// reachable through syntax), then makes the global's own bindings read-only. The global object
/// itself stays extensible so guest code can declare top-level names.
///
/// The first realm of the process walks every property; later realms replay the discovery
/// order it recorded, which visits the same objects (the walk-based test proves it).
///
/// Realms with a known [`Shape`] record or replay the plan of that shape; a realm without one
/// (extra globals from an extension) is walked in full.
/// Returns the identities of the objects it froze (see [`freeze_added`]).
pub(crate) fn lockdown<'js>(ctx: &Ctx<'js>, shape: Option<Shape>) -> rquickjs::Result<Vec<usize>> {
    let Some(shape) = shape else {
        return lockdown_by_walk(ctx);
    };
    let plan = &PLANS[shape.index()];
    let hidden = hidden_intrinsics(ctx)?;
    let planned = plan
        .get()
        .and_then(|p| p.as_ref())
        .and_then(|plan| replay(ctx, &hidden, plan));
    let objects = match planned {
        Some(objects) => objects,
        None => {
            let (objects, edges) = discover(ctx, &hidden);
            let _ = plan.set(edges);
            objects
        }
    };
    lockdown_objects(ctx, &objects)
}

/// The generic walk alone, without a recorded plan.
fn lockdown_by_walk<'js>(ctx: &Ctx<'js>) -> rquickjs::Result<Vec<usize>> {
    let (objects, _) = discover(ctx, &hidden_intrinsics(ctx)?);
    lockdown_objects(ctx, &objects)
}

/// The intrinsics listed by `HIDDEN_INTRINSICS`, in this realm.
fn hidden_intrinsics<'js>(ctx: &Ctx<'js>) -> rquickjs::Result<Vec<Value<'js>>> {
    raw::eval_helper(ctx, HIDDEN_INTRINSICS, INTERNAL_FILENAME_C)?.get()
}

fn lockdown_objects<'js>(ctx: &Ctx<'js>, objects: &[Object<'js>]) -> rquickjs::Result<Vec<usize>> {
    freeze_all(ctx, objects)?;
    let global = ctx.globals();
    let keys = raw::own_keys(ctx, &global, true, false).unwrap_or_default();
    freeze_bindings(ctx, &keys);
    Ok(objects
        .iter()
        .map(|o| raw::identity(o.as_value()))
        .collect())
}

fn freeze_all<'js>(ctx: &Ctx<'js>, objects: &[Object<'js>]) -> rquickjs::Result<()> {
    for obj in objects {
        if !raw::freeze(ctx, obj) {
            return Err(ctx.throw(ctx.catch()));
        }
        ffi::mark_hardened(ctx, obj);
    }
    Ok(())
}

/// Makes the global object's data bindings named by `keys` read-only.
fn freeze_bindings<'js>(ctx: &Ctx<'js>, keys: &[Value<'js>]) {
    let global = ctx.globals();
    for key in keys {
        if let Some(d) = raw::own_descriptor(ctx, &global, key) {
            if d.getter.is_undefined() && d.setter.is_undefined() {
                if let Some(name) = key.as_string().and_then(|s| s.to_string().ok()) {
                    raw::define_frozen(ctx, &global, &name, d.value);
                }
            }
        }
    }
}

/// Locks down globals added after lockdown (an extension's, installed in a context derived from
/// a template or once live globals are bound): freezes every object they reach, as lockdown
/// does, then makes the bindings read-only. Objects in `frozen` (what lockdown froze, with
/// everything they reach), the global object (it stays extensible) and proxies (live host
/// values, which must stay live) are not walked.
pub(crate) fn freeze_added<'js>(
    ctx: &Ctx<'js>,
    added: &[Value<'js>],
    frozen: &HashSet<usize>,
) -> rquickjs::Result<usize> {
    let global = ctx.globals();
    let mut seen: HashSet<usize> = HashSet::new();
    seen.insert(raw::identity(global.as_value()));
    let mut objects: Vec<Object<'js>> = Vec::new();
    let mut add = |v: &Value<'js>, objects: &mut Vec<Object<'js>>| {
        if let Some(o) = v.as_object() {
            let id = raw::identity(v);
            if !v.is_proxy() && !frozen.contains(&id) && seen.insert(id) {
                objects.push(o.clone());
            }
        }
    };
    for key in added {
        if let Some(d) = raw::own_descriptor(ctx, &global, key) {
            add(&d.value, &mut objects);
            add(&d.getter, &mut objects);
            add(&d.setter, &mut objects);
        }
    }
    let mut i = 0;
    while i < objects.len() {
        let obj = objects[i].clone();
        for key in raw::own_keys(ctx, &obj, true, false).unwrap_or_default() {
            if let Some(d) = raw::own_descriptor(ctx, &obj, &key) {
                add(&d.value, &mut objects);
                add(&d.getter, &mut objects);
                add(&d.setter, &mut objects);
            }
        }
        if let Some(p) = obj.get_prototype() {
            add(p.as_value(), &mut objects);
        }
        i += 1;
    }
    freeze_all(ctx, &objects)?;
    freeze_bindings(ctx, added);
    Ok(objects.len())
}

/// Intrinsics that no property path from the global object leads to: they are only reachable
/// through syntax or by calling built-ins, so lockdown names them explicitly.
const HIDDEN_INTRINSICS: &str = r#"(() => {
  'use strict';
  const P = Object.getPrototypeOf;
  const gen = function* () {};
  const agen = async function* () {};
  const arrIt = [][Symbol.iterator]();
  const out = [
    P(async function () {}), P(gen), P(agen), P(P(gen())), P(P(agen())), P(P(P(agen()))),
    P(arrIt), P(P(arrIt)), P(new Map().entries()), P(new Set().values()),
    P(''[Symbol.iterator]()), P(/a/[Symbol.matchAll]('')), P(Int8Array),
    (function () { return Object.getOwnPropertyDescriptor(arguments, 'callee').get; })(),
  ];
  if (typeof Iterator === 'function') {
    out.push(Iterator, P(Iterator.prototype.map.call(arrIt, (x) => x)));
    out.push(P(Iterator.from({ next() { return { done: true }; } })));
    if (typeof Iterator.concat === 'function') out.push(P(Iterator.concat([])));
  }
  // Realms of the standard profile: iterators of the web APIs.
  if (typeof URLSearchParams === 'function') out.push(P(new URLSearchParams().keys()));
  return out;
})()"#;

/// Counts objects the generic walk reaches that are not frozen (tests use it to prove that the
/// replayed plan misses nothing).
#[cfg(test)]
pub(crate) fn unfrozen_reachable<'js>(ctx: &Ctx<'js>) -> rquickjs::Result<usize> {
    let (objects, _) = discover(ctx, &hidden_intrinsics(ctx)?);
    let object: Object = ctx.globals().get("Object")?;
    let is_frozen: rquickjs::Function = object.get("isFrozen")?;
    let mut n = 0;
    for o in objects {
        if !is_frozen.call::<_, bool>((o,))? {
            n += 1;
        }
    }
    Ok(n)
}
