//! The wire protocol between the guest half (`guest.js`) and the host: what a handle
//! stands for, how guest values are tagged on their way out and host values on their way in,
//! property keys, host failures, and the byte and depth caps of a crossing. The guest half
//! learns every encoding from `protocol_object`; no literal is shared by convention.

use super::super::marshal::{text_of, to_guest, BytesKind, Data};
use super::super::raw;
use rquickjs::{Array, Ctx, Exception, IntoJs, Object, Value};

/// Deepest guest value the membrane copies into the host.
pub const MAX_OUTGOING_DEPTH: u32 = 128;
/// Keys the traps answer from the guest side and never forward: they would lead to host
/// prototypes or host constructors.
pub(super) const BLOCKED_KEYS: [&str; 10] = [
    "__proto__",
    "constructor",
    "prototype",
    "caller",
    "callee",
    "arguments",
    "__defineGetter__",
    "__defineSetter__",
    "__lookupGetter__",
    "__lookupSetter__",
];

// ----- the wire protocol -----
// The guest half and this module agree on these encodings only through `protocol_object`, which
// hands the guest half a frozen copy of the tables below; no literal is shared by convention.

/// What a host handle stands for; decides the shape of the guest proxy. `Method` is the wire
/// kind of [`FromHost::Method`]: a method token, never a handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefKind {
    Object = 0,
    Function = 1,
    Array = 2,
    Promise = 3,
    Method = 4,
    /// Not a handle: copied data (bytes) that is already a guest value.
    Data = 5,
}

impl RefKind {
    const ALL: [RefKind; 6] = [
        RefKind::Object,
        RefKind::Function,
        RefKind::Array,
        RefKind::Promise,
        RefKind::Method,
        RefKind::Data,
    ];

    pub(super) fn name(self) -> &'static str {
        match self {
            RefKind::Object => "object",
            RefKind::Function => "function",
            RefKind::Array => "array",
            RefKind::Promise => "promise",
            RefKind::Method => "method",
            RefKind::Data => "data",
        }
    }
}

/// The tag of a guest value the guest half encodes for the host (`[tag, body]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ToHostTag {
    Ref,
    Callback,
    Date,
    Array,
    Set,
    Object,
    Map,
    Bytes,
}

impl ToHostTag {
    const ALL: [ToHostTag; 8] = [
        ToHostTag::Ref,
        ToHostTag::Callback,
        ToHostTag::Date,
        ToHostTag::Array,
        ToHostTag::Set,
        ToHostTag::Object,
        ToHostTag::Map,
        ToHostTag::Bytes,
    ];

    /// The short form that travels (one character: encoded once per value).
    pub(super) fn code(self) -> &'static str {
        match self {
            ToHostTag::Ref => "r",
            ToHostTag::Callback => "f",
            ToHostTag::Date => "d",
            ToHostTag::Array => "a",
            ToHostTag::Set => "s",
            ToHostTag::Object => "o",
            ToHostTag::Map => "m",
            ToHostTag::Bytes => "b",
        }
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            ToHostTag::Ref => "ref",
            ToHostTag::Callback => "callback",
            ToHostTag::Date => "date",
            ToHostTag::Array => "array",
            ToHostTag::Set => "set",
            ToHostTag::Object => "object",
            ToHostTag::Map => "map",
            ToHostTag::Bytes => "bytes",
        }
    }

    pub(super) fn from_code(code: &str) -> Option<ToHostTag> {
        ToHostTag::ALL.into_iter().find(|t| t.code() == code)
    }
}

/// How the host answers `desc` (does an own property exist, and is it enumerable).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Presence {
    Absent = 0,
    Enumerable = 1,
    Hidden = 2,
}

impl Presence {
    const ALL: [Presence; 3] = [Presence::Absent, Presence::Enumerable, Presence::Hidden];

    pub(super) fn name(self) -> &'static str {
        match self {
            Presence::Absent => "absent",
            Presence::Enumerable => "enumerable",
            Presence::Hidden => "hidden",
        }
    }

    pub(super) fn of(described: Option<bool>) -> Presence {
        match described {
            None => Presence::Absent,
            Some(true) => Presence::Enumerable,
            Some(false) => Presence::Hidden,
        }
    }
}

/// The frozen protocol object the guest half reads its encodings from.
pub(super) fn protocol_object<'js>(ctx: &Ctx<'js>) -> rquickjs::Result<Object<'js>> {
    let frozen = |o: Object<'js>| -> rquickjs::Result<Object<'js>> {
        raw::freeze(ctx, &o);
        Ok(o)
    };
    let tags = Object::new(ctx.clone())?;
    for t in ToHostTag::ALL {
        tags.set(t.name(), t.code())?;
    }
    let kinds = Object::new(ctx.clone())?;
    for k in RefKind::ALL {
        kinds.set(k.name(), k as u32)?;
    }
    let presence = Object::new(ctx.clone())?;
    for p in Presence::ALL {
        presence.set(p.name(), p as u32)?;
    }
    let protocol = Object::new(ctx.clone())?;
    protocol.set("tag", frozen(tags)?)?;
    protocol.set("kind", frozen(kinds)?)?;
    protocol.set("presence", frozen(presence)?)?;
    protocol.set("maxDepth", MAX_OUTGOING_DEPTH)?;
    let blocked = Array::new(ctx.clone())?;
    for (i, k) in BLOCKED_KEYS.into_iter().enumerate() {
        blocked.set(i, k)?;
    }
    protocol.set("blocked", frozen(blocked.into_object())?)?;
    frozen(protocol)
}

/// A host value arriving in the guest: copied primitives, a handle to a live host object, or a
/// method token.
#[derive(Debug, Clone, PartialEq)]
pub enum FromHost {
    Prim(Data),
    Ref(u32, RefKind),
    /// A method of a host built-in prototype (`Array.prototype.map`), read from a host object.
    /// The function itself never crosses: the guest gets a stand-in that asks the host to call
    /// method `token` on a host object the guest holds ([`HostBridge::call_method`]).
    Method(u32),
}

/// A guest value leaving for the host.
#[derive(Debug, Clone, PartialEq)]
pub enum ToHost {
    Prim(Data),
    /// A proxy the guest received earlier: the same host object goes back.
    Ref(u32),
    /// A guest function; the host gets a function that calls back into the guest.
    Callback(u32),
    Array(Vec<ToHost>),
    Object(Vec<(String, ToHost)>),
    Date(f64),
    Map(Vec<(ToHost, ToHost)>),
    Set(Vec<ToHost>),
}

/// A property key as the host sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Key {
    Name(String),
    /// A well-known symbol by name: iterator, asyncIterator, toPrimitive, toStringTag.
    Symbol(String),
}

/// A host exception, reduced to what may reach the guest.
#[derive(Debug, Clone, PartialEq)]
pub struct HostFailure {
    pub name: String,
    pub message: String,
}

impl HostFailure {
    pub fn new(name: &str, message: impl Into<String>) -> Self {
        HostFailure {
            name: name.into(),
            message: message.into(),
        }
    }
}

pub type HostResult<T> = Result<T, HostFailure>;

pub fn from_host_to_guest<'js>(ctx: &Ctx<'js>, v: &FromHost) -> rquickjs::Result<Value<'js>> {
    match v {
        FromHost::Prim(d) => {
            let v = to_guest(ctx, d)?;
            if !v.is_object() {
                return Ok(v);
            }
            // Copied data that is an object travels tagged, so it is not taken for a handle.
            tagged(ctx, v, RefKind::Data as u32)
        }
        FromHost::Ref(id, kind) => tagged(ctx, id.into_js(ctx)?, *kind as u32),
        FromHost::Method(token) => tagged(ctx, token.into_js(ctx)?, RefKind::Method as u32),
    }
}

/// `[value, kind]`: how a handle, a method token or copied object data travels to the guest half.
pub(super) fn tagged<'js>(
    ctx: &Ctx<'js>,
    value: Value<'js>,
    kind: u32,
) -> rquickjs::Result<Value<'js>> {
    let a = Array::new(ctx.clone())?;
    a.set(0, value)?;
    a.set(1, kind)?;
    Ok(a.into_value())
}

pub(super) fn tag_items<'js>(arr: &Array<'js>) -> rquickjs::Result<Vec<Value<'js>>> {
    (0..arr.len()).map(|i| arr.get(i)).collect()
}

/// A typed array or ArrayBuffer the guest passes to the host, copied as the same kind of view
/// over a copy of its bytes (a detached or out-of-bounds view is a TypeError).
pub(super) fn guest_bytes<'js>(ctx: &Ctx<'js>, v: &Value<'js>) -> rquickjs::Result<Data> {
    let kind = match raw::typed_array_kind(v) {
        Some(kind) => BytesKind::Typed(kind),
        None if raw::is_array_buffer(v) => BytesKind::ArrayBuffer,
        None => {
            return Err(Exception::throw_type(
                ctx,
                "only typed arrays and ArrayBuffers cross to the host as bytes",
            ))
        }
    };
    match raw::view_bytes(ctx, v) {
        Some(bytes) => Ok(Data::Bytes(kind, bytes)),
        None => Err(Exception::throw_type(
            ctx,
            "a detached or out-of-bounds buffer cannot be passed to the host",
        )),
    }
}

/// Most bytes (strings, typed arrays, 16 per value) one crossing may copy to the host: a guest
/// that passes one buffer many times must not multiply it in host memory.
pub const MAX_OUTGOING_BYTES: usize = 64 << 20;

/// Decodes the tagged form produced by the guest half's `out()`.
pub fn to_host_from_guest<'js>(ctx: &Ctx<'js>, v: &Value<'js>) -> rquickjs::Result<ToHost> {
    decode(ctx, v, &mut { MAX_OUTGOING_BYTES })
}

/// Decodes every value of one crossing (a call's arguments) under one byte budget.
pub(super) fn to_host_all<'js>(
    ctx: &Ctx<'js>,
    values: &[Value<'js>],
) -> rquickjs::Result<Vec<ToHost>> {
    let mut budget = MAX_OUTGOING_BYTES;
    values.iter().map(|v| decode(ctx, v, &mut budget)).collect()
}

/// Takes `n` bytes from a crossing's budget, or throws a RangeError in the guest.
pub(super) fn charge(ctx: &Ctx<'_>, budget: &mut usize, n: usize) -> rquickjs::Result<()> {
    match budget.checked_sub(n) {
        Some(left) => {
            *budget = left;
            Ok(())
        }
        None => Err(Exception::throw_range(
            ctx,
            &format!(
                "a value passed to the host is larger than {} MiB",
                MAX_OUTGOING_BYTES >> 20
            ),
        )),
    }
}

pub(super) fn decode<'js>(
    ctx: &Ctx<'js>,
    v: &Value<'js>,
    budget: &mut usize,
) -> rquickjs::Result<ToHost> {
    charge(ctx, budget, 16)?;
    if let Some(arr) = v.as_array() {
        let tag: String = arr.get(0)?;
        let body: Value = arr.get(1)?;
        let list = || -> rquickjs::Result<Vec<Value<'js>>> {
            body.as_array()
                .map(tag_items)
                .unwrap_or_else(|| Ok(Vec::new()))
        };
        let num = || body.as_number().unwrap_or(0.0);
        let tag = ToHostTag::from_code(&tag).ok_or(rquickjs::Error::Unknown)?;
        return Ok(match tag {
            ToHostTag::Ref => ToHost::Ref(num() as u32),
            ToHostTag::Callback => ToHost::Callback(num() as u32),
            ToHostTag::Date => ToHost::Date(num()),
            ToHostTag::Bytes => {
                let bytes = guest_bytes(ctx, &body)?;
                if let Data::Bytes(_, b) = &bytes {
                    charge(ctx, budget, b.len())?;
                }
                ToHost::Prim(bytes)
            }
            ToHostTag::Array => ToHost::Array(
                list()?
                    .iter()
                    .map(|x| decode(ctx, x, budget))
                    .collect::<Result<_, _>>()?,
            ),
            ToHostTag::Set => ToHost::Set(
                list()?
                    .iter()
                    .map(|x| decode(ctx, x, budget))
                    .collect::<Result<_, _>>()?,
            ),
            ToHostTag::Object => {
                let mut entries = Vec::new();
                for pair in list()? {
                    let pair = pair.as_array().cloned().ok_or(rquickjs::Error::Unknown)?;
                    let k: Value = pair.get(0)?;
                    let k = text_of(ctx, &k).map(|t| t.to_lossy()).unwrap_or_default();
                    charge(ctx, budget, k.len())?;
                    entries.push((k, decode(ctx, &pair.get(1)?, budget)?));
                }
                ToHost::Object(entries)
            }
            ToHostTag::Map => {
                let mut entries = Vec::new();
                for pair in list()? {
                    let pair = pair.as_array().cloned().ok_or(rquickjs::Error::Unknown)?;
                    entries.push((
                        decode(ctx, &pair.get(0)?, budget)?,
                        decode(ctx, &pair.get(1)?, budget)?,
                    ));
                }
                ToHost::Map(entries)
            }
        });
    }
    // Primitives only reach here.
    if v.is_undefined() {
        return Ok(ToHost::Prim(Data::Undefined));
    }
    if v.is_null() {
        return Ok(ToHost::Prim(Data::Null));
    }
    if let Some(b) = v.as_bool() {
        return Ok(ToHost::Prim(Data::Bool(b)));
    }
    if let Some(n) = v.as_number() {
        return Ok(ToHost::Prim(Data::Number(n)));
    }
    if v.is_string() {
        let text = text_of(ctx, v).ok_or(rquickjs::Error::Unknown)?;
        charge(ctx, budget, text.byte_len())?;
        return Ok(ToHost::Prim(Data::String(text)));
    }
    if v.is_big_int() {
        let (negative, words) = super::super::marshal::bigint_words(ctx, v).map_err(|why| {
            Exception::throw_range(ctx, &format!("a value passed to the host {why}"))
        })?;
        return Ok(ToHost::Prim(Data::BigInt { negative, words }));
    }
    Ok(ToHost::Prim(Data::Undefined))
}

pub(super) fn key_of(name: String, is_symbol: u32) -> Key {
    if is_symbol == 1 {
        Key::Symbol(name)
    } else {
        Key::Name(name)
    }
}

pub(super) fn throw_failure<'js>(ctx: &Ctx<'js>, f: HostFailure) -> rquickjs::Error {
    let ctor_name = match f.name.as_str() {
        "TypeError" | "RangeError" | "SyntaxError" | "ReferenceError" | "EvalError"
        | "URIError" => f.name.as_str(),
        _ => "Error",
    };
    let build = || -> rquickjs::Result<Value<'js>> {
        let ctor: rquickjs::function::Constructor = ctx.globals().get(ctor_name)?;
        let e: Object = ctor.construct((f.message.as_str(),))?;
        if ctor_name != f.name {
            raw::define_data(
                ctx,
                &e,
                "name",
                rquickjs::String::from_str(ctx.clone(), &f.name)?.into_value(),
            );
        }
        Ok(e.into_value())
    };
    match build() {
        Ok(v) => ctx.throw(v),
        Err(e) => e,
    }
}
