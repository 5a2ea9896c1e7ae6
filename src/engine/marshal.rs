//! Copying data into and out of a realm, with caps on depth, nodes and bytes.
//!
//! `Data` is the engine's neutral value tree: the napi layer converts host values to and from it,
//! and this module converts it to and from guest values. Objects are built with
//! define-own-property semantics, so keys like `__proto__` are plain data on both sides.
//!
//! Copies keep the shape of the object graph (structured-clone style): containers (arrays,
//! objects, maps, sets, dates, byte buffers) are numbered in the order a copy first reaches them
//! (pre-order), and a later reference to one already copied is `Data::Ref(number)`. Readers
//! number the containers they create in the same order, so shared parts stay shared and cycles
//! are rebuilt; a container exists before its children are filled, so a `Ref` always points back.

use super::{bigint, ffi, raw};
use rquickjs::{Array, Ctx, Object, Value};
use std::collections::HashMap;

/// Largest bigint copied between realm and host (64 Kibit magnitude).
pub const MAX_BIGINT_BITS: usize = 65_536;

/// A guest bigint's sign and magnitude (little-endian 64-bit words), refusing sizes past
/// [`MAX_BIGINT_BITS`].
pub(crate) fn bigint_words<'js>(
    ctx: &Ctx<'js>,
    v: &Value<'js>,
) -> Result<(bool, Vec<u64>), String> {
    // Sized before any conversion: `BigInt.asIntN` is linear, and the realm's `BigInt` is
    // frozen, so no guest code runs here.
    let fits = || -> rquickjs::Result<bool> {
        let bigint: Object = ctx.globals().get("BigInt")?;
        let as_int_n: rquickjs::Function = bigint.get("asIntN")?;
        let clipped: Value = as_int_n.call((MAX_BIGINT_BITS as f64 + 1.0, v.clone()))?;
        Ok(raw::strict_equal(ctx, &clipped, v))
    };
    match fits() {
        Ok(true) => {}
        Ok(false) => return Err(format!("is a bigint of more than {MAX_BIGINT_BITS} bits")),
        Err(_) => return Err("is an unreadable bigint".into()),
    }
    let hex = || -> rquickjs::Result<Value<'js>> {
        let bigint: Object = ctx.globals().get("BigInt")?;
        let proto: Object = bigint.get("prototype")?;
        let to_string: rquickjs::Function = proto.get("toString")?;
        to_string.call((rquickjs::function::This(v.clone()), 16))
    };
    hex()
        .ok()
        .and_then(|t| text_of(ctx, &t))
        .and_then(|t| bigint::hex_to_words(&t.to_lossy()))
        .ok_or_else(|| "is an unreadable bigint".into())
}

/// A guest bigint from a sign and magnitude, through hexadecimal text.
fn guest_bigint<'js>(
    ctx: &Ctx<'js>,
    negative: bool,
    words: &[u64],
) -> rquickjs::Result<Value<'js>> {
    let bigint: Object = ctx.globals().get("BigInt")?;
    let ctor: rquickjs::Function = ctx.globals().get("BigInt")?;
    if !negative || words.iter().all(|w| *w == 0) {
        return ctor.call((format!("0x{}", bigint::words_to_hex(words)),));
    }
    // `BigInt("-0x..")` is a syntax error: the negated value is written in two's complement
    // and read back as a signed integer of that width.
    let wide = bigint::negated_words(words);
    let unsigned: Value = ctor.call((format!("0x{}", bigint::words_to_hex(&wide)),))?;
    let as_int_n: rquickjs::Function = bigint.get("asIntN")?;
    as_int_n.call(((wide.len() * 64) as f64, unsigned))
}

/// A string that is valid UTF-8, or exact UTF-16 when it holds lone surrogates.
#[derive(Debug, Clone, PartialEq)]
pub enum Text {
    Utf8(String),
    Utf16(Vec<u16>),
}

impl Text {
    pub fn byte_len(&self) -> usize {
        match self {
            Text::Utf8(s) => s.len(),
            Text::Utf16(u) => u.len() * 2,
        }
    }
    pub(crate) fn to_lossy(&self) -> String {
        match self {
            Text::Utf8(s) => s.clone(),
            Text::Utf16(u) => String::from_utf16_lossy(u),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BytesKind {
    ArrayBuffer,
    Typed(TypedArrayKind),
}

pub use super::raw::TypedArrayKind;

#[derive(Debug, Clone, PartialEq)]
pub enum Data {
    Undefined,
    Null,
    Bool(bool),
    Number(f64),
    /// Sign and magnitude as little-endian 64-bit words (N-API's form; zero is no words).
    BigInt {
        negative: bool,
        words: Vec<u64>,
    },
    String(Text),
    Array(Vec<Data>),
    Object(Vec<(String, Data)>),
    Date(f64),
    Map(Vec<(Data, Data)>),
    Set(Vec<Data>),
    Bytes(BytesKind, Vec<u8>),
    /// Another reference to the n-th container of the copy, counted in pre-order from 0.
    Ref(usize),
}

impl Data {
    pub(crate) fn str(s: impl Into<String>) -> Data {
        Data::String(Text::Utf8(s.into()))
    }
}

#[derive(Debug, Clone, Copy)]
pub struct CopyLimits {
    pub max_depth: usize,
    pub max_nodes: usize,
    pub max_bytes: usize,
}

impl Default for CopyLimits {
    fn default() -> Self {
        CopyLimits {
            max_depth: 256,
            max_nodes: 1_000_000,
            max_bytes: 64 << 20,
        }
    }
}

/// Tracks what a copy has used so far against its caps.
pub struct CopyBudget {
    limits: CopyLimits,
    nodes: usize,
    bytes: usize,
}

impl CopyBudget {
    pub fn new(limits: CopyLimits) -> Self {
        CopyBudget {
            limits,
            nodes: 0,
            bytes: 0,
        }
    }

    pub fn node(&mut self, bytes: usize, depth: usize, path: &Path) -> Result<(), String> {
        self.nodes += 1;
        self.bytes = self.bytes.saturating_add(bytes);
        if depth > self.limits.max_depth {
            return Err(format!(
                "nesting deeper than {} levels at {}",
                self.limits.max_depth,
                path.render()
            ));
        }
        if self.nodes > self.limits.max_nodes {
            return Err(format!("more than {} values", self.limits.max_nodes));
        }
        if self.bytes > self.limits.max_bytes {
            return Err(format!("more than {} bytes", self.limits.max_bytes));
        }
        Ok(())
    }
}

/// Where a value sits in a copy, for error messages; made into text only when one is reported.
#[derive(Clone, Copy)]
pub enum Path<'p> {
    Root(&'p str),
    Key(&'p Path<'p>, &'p str),
    Index(&'p Path<'p>, usize),
    MapEntry(&'p Path<'p>, usize),
    SetItem(&'p Path<'p>, usize),
}

impl Path<'_> {
    pub fn render(&self) -> String {
        match *self {
            Path::Root(root) => root.to_string(),
            Path::Key(parent, key) => child_path(&parent.render(), key),
            Path::Index(parent, i) => format!("{}[{i}]", parent.render()),
            Path::MapEntry(parent, i) => format!("{}<entry {i}>", parent.render()),
            Path::SetItem(parent, i) => format!("{}<item {i}>", parent.render()),
        }
    }
}

impl std::fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.render())
    }
}

pub fn child_path(path: &str, key: &str) -> String {
    if path.len() > 200 {
        return path.to_string();
    }
    if !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
        && !key.starts_with(|c: char| c.is_ascii_digit())
    {
        format!("{path}.{key}")
    } else {
        format!("{path}[{key:?}]")
    }
}

// ---------------------------------------------------------------------------------------------
// Data -> guest

/// Copies one value into the realm (its `Ref`s count from its own root).
pub(crate) fn to_guest<'js>(ctx: &Ctx<'js>, data: &Data) -> rquickjs::Result<Value<'js>> {
    GuestWriter::new(ctx).write(data)
}

/// Builds guest values from `Data`, remembering every container it made so that `Ref`s
/// resolve to them. One writer per copy: values written by the same writer share one numbering.
pub(crate) struct GuestWriter<'a, 'js> {
    ctx: &'a Ctx<'js>,
    made: Vec<Value<'js>>,
}

impl<'a, 'js> GuestWriter<'a, 'js> {
    pub(crate) fn new(ctx: &'a Ctx<'js>) -> Self {
        GuestWriter {
            ctx,
            made: Vec::new(),
        }
    }

    /// Registers a new container before its children are written (cycles point back to it).
    fn made(&mut self, v: Value<'js>) -> Value<'js> {
        self.made.push(v.clone());
        v
    }

    fn fail(&self, why: &str) -> rquickjs::Error {
        match rquickjs::String::from_str(self.ctx.clone(), why) {
            Ok(s) => self.ctx.throw(s.into_value()),
            Err(e) => e,
        }
    }

    pub(crate) fn write(&mut self, data: &Data) -> rquickjs::Result<Value<'js>> {
        let ctx = self.ctx;
        Ok(match data {
            Data::Undefined => Value::new_undefined(ctx.clone()),
            Data::Null => Value::new_null(ctx.clone()),
            Data::Bool(b) => Value::new_bool(ctx.clone(), *b),
            Data::Number(n) => Value::new_number(ctx.clone(), *n),
            Data::BigInt { negative, words } => guest_bigint(ctx, *negative, words)?,
            Data::String(Text::Utf8(s)) => rquickjs::String::from_str(ctx.clone(), s)?.into_value(),
            Data::String(Text::Utf16(u)) => {
                raw::new_string_utf16(ctx, u).ok_or(rquickjs::Error::Unknown)?
            }
            Data::Ref(n) => match self.made.get(*n) {
                Some(v) => v.clone(),
                None => return Err(self.fail("a reference to a value not copied yet")),
            },
            Data::Array(items) => {
                let arr = Array::new(ctx.clone())?;
                self.made(arr.clone().into_value());
                for (i, item) in items.iter().enumerate() {
                    arr.set(i, self.write(item)?)?;
                }
                arr.into_value()
            }
            Data::Object(entries) => {
                let obj = Object::new(ctx.clone())?;
                self.made(obj.clone().into_value());
                for (k, v) in entries {
                    let gv = self.write(v)?;
                    if !raw::define_data(ctx, &obj, k, gv) {
                        return Err(self.fail("define failed"));
                    }
                }
                obj.into_value()
            }
            Data::Date(ms) => {
                let date = raw::new_date(ctx, *ms).ok_or(rquickjs::Error::Unknown)?;
                self.made(date)
            }
            Data::Map(entries) => {
                let ctor: rquickjs::function::Constructor = ctx.globals().get("Map")?;
                let map: Object = ctor.construct(())?;
                self.made(map.clone().into_value());
                let set: rquickjs::Function = map.get("set")?;
                for (k, v) in entries {
                    let (k, v) = (self.write(k)?, self.write(v)?);
                    set.call::<_, Value>((rquickjs::function::This(map.clone()), k, v))?;
                }
                map.into_value()
            }
            Data::Set(items) => {
                let ctor: rquickjs::function::Constructor = ctx.globals().get("Set")?;
                let set_obj: Object = ctor.construct(())?;
                self.made(set_obj.clone().into_value());
                let add: rquickjs::Function = set_obj.get("add")?;
                for v in items {
                    let v = self.write(v)?;
                    add.call::<_, Value>((rquickjs::function::This(set_obj.clone()), v))?;
                }
                set_obj.into_value()
            }
            Data::Bytes(kind, bytes) => {
                let ab = rquickjs::ArrayBuffer::new_copy(ctx.clone(), bytes.as_slice())?;
                let v = match kind {
                    BytesKind::ArrayBuffer => ab.into_value(),
                    BytesKind::Typed(k) => {
                        let ctor: rquickjs::function::Constructor =
                            ctx.globals().get(k.constructor_name())?;
                        ctor.construct((ab,))?
                    }
                };
                self.made(v)
            }
        })
    }
}

// ---------------------------------------------------------------------------------------------
// guest -> Data

/// Why a guest value could not be copied out.
#[derive(Debug)]
pub(crate) enum CopyOutError {
    /// A structural problem (caps, unreadable values); the message says where.
    Invalid(String),
    /// Guest code (a getter or proxy trap) threw, or the engine stopped it.
    Guest(rquickjs::Error),
}

impl From<rquickjs::Error> for CopyOutError {
    fn from(e: rquickjs::Error) -> Self {
        CopyOutError::Guest(e)
    }
}

/// The text of a guest string (`None` for any other value).
pub(crate) fn text_of<'js>(ctx: &Ctx<'js>, v: &Value<'js>) -> Option<Text> {
    let s = v.as_string()?;
    match s.to_string() {
        Ok(s) => Some(Text::Utf8(s)),
        Err(_) => raw::string_utf16(ctx, v).map(Text::Utf16),
    }
}

/// Reads `obj[key]` as text when it is a string (lone surrogates replaced); `None` when it is
/// not a string or reading it threw.
pub(crate) fn string_prop<'js>(ctx: &Ctx<'js>, obj: &Object<'js>, key: &str) -> Option<String> {
    let v: Value = obj.get(key).ok()?;
    text_of(ctx, &v).map(|t| t.to_lossy())
}

pub(crate) struct Copier<'a, 'js> {
    ctx: &'a Ctx<'js>,
    budget: CopyBudget,
    /// Nesting depth of the value being copied (a `Ref` adds none).
    depth: usize,
    /// Object identity -> its number in the copy.
    seen: HashMap<usize, usize>,
    /// Every object copied, held so that no identity is freed and reused while the copy runs
    /// (a getter may return a fresh object each time).
    held: Vec<Value<'js>>,
}

impl<'a, 'js> Copier<'a, 'js> {
    pub(crate) fn new(ctx: &'a Ctx<'js>, limits: CopyLimits) -> Self {
        Copier {
            ctx,
            budget: CopyBudget::new(limits),
            depth: 0,
            seen: HashMap::new(),
            held: Vec::new(),
        }
    }

    /// Copies a value; functions and symbols become `Undefined` (and are skipped as properties).
    pub(crate) fn copy(&mut self, v: &Value<'js>, path: &Path) -> Result<Data, CopyOutError> {
        // Copying out is part of the run: the deadline and an abort stop it too.
        ffi::poll_interrupts(self.ctx, 1)?;
        let depth = self.depth;
        if let Some(b) = v.as_bool() {
            self.budget
                .node(1, depth, path)
                .map_err(CopyOutError::Invalid)?;
            return Ok(Data::Bool(b));
        }
        if let Some(n) = v.as_number() {
            self.budget
                .node(8, depth, path)
                .map_err(CopyOutError::Invalid)?;
            return Ok(Data::Number(n));
        }
        if v.is_undefined() || v.is_function() || v.is_symbol() {
            return Ok(Data::Undefined);
        }
        if v.is_null() {
            return Ok(Data::Null);
        }
        if v.is_string() {
            let t = text_of(self.ctx, v).ok_or(CopyOutError::Invalid(format!(
                "unreadable string at {path}"
            )))?;
            self.budget
                .node(t.byte_len(), depth, path)
                .map_err(CopyOutError::Invalid)?;
            return Ok(Data::String(t));
        }
        if v.is_big_int() {
            let (negative, words) = bigint_words(self.ctx, v)
                .map_err(|why| CopyOutError::Invalid(format!("{path} {why}")))?;
            self.budget
                .node(words.len() * 8, depth, path)
                .map_err(CopyOutError::Invalid)?;
            return Ok(Data::BigInt { negative, words });
        }
        let Some(obj) = v.as_object() else {
            return Ok(Data::Undefined);
        };
        let id = raw::identity(v);
        if let Some(&n) = self.seen.get(&id) {
            // A repeated reference costs one value, not a second copy.
            self.budget
                .node(8, depth, path)
                .map_err(CopyOutError::Invalid)?;
            return Ok(Data::Ref(n));
        }
        self.budget
            .node(16, depth, path)
            .map_err(CopyOutError::Invalid)?;
        self.seen.insert(id, self.held.len());
        self.held.push(v.clone());
        self.depth += 1;
        let out = self.copy_object(obj, v, path);
        self.depth -= 1;
        out
    }

    fn copy_object(
        &mut self,
        obj: &Object<'js>,
        v: &Value<'js>,
        path: &Path,
    ) -> Result<Data, CopyOutError> {
        let ctx = self.ctx;
        if raw::is_date(v) {
            let get_time: rquickjs::Function = obj.get("getTime")?;
            let ms: f64 = get_time.call((rquickjs::function::This(obj.clone()),))?;
            return Ok(Data::Date(ms));
        }
        let bytes_kind = match raw::typed_array_kind(v) {
            Some(kind) => Some(BytesKind::Typed(kind)),
            None => raw::is_array_buffer(v).then_some(BytesKind::ArrayBuffer),
        };
        if let Some(kind) = bytes_kind {
            let bytes = raw::view_bytes(ctx, v).ok_or(CopyOutError::Invalid(format!(
                "detached or out-of-bounds buffer at {path}"
            )))?;
            self.budget
                .node(bytes.len(), self.depth, path)
                .map_err(CopyOutError::Invalid)?;
            return Ok(Data::Bytes(kind, bytes));
        }
        if raw::is_map(v) || raw::is_set(v) {
            let is_map = raw::is_map(v);
            let entries = self.collection_entries(obj, is_map)?;
            if is_map {
                let mut out = Vec::with_capacity(entries.len() / 2);
                let mut it = entries.into_iter();
                let mut i = 0usize;
                while let (Some(k), Some(val)) = (it.next(), it.next()) {
                    let p = Path::MapEntry(path, i);
                    out.push((self.copy(&k, &p)?, self.copy(&val, &p)?));
                    i += 1;
                }
                return Ok(Data::Map(out));
            }
            let mut out = Vec::with_capacity(entries.len());
            for (i, item) in entries.iter().enumerate() {
                out.push(self.copy(item, &Path::SetItem(path, i))?);
            }
            return Ok(Data::Set(out));
        }
        if raw::is_error(v) {
            let name = string_prop(ctx, obj, "name").unwrap_or_else(|| "Error".into());
            let message = string_prop(ctx, obj, "message").unwrap_or_default();
            return Ok(Data::Object(vec![
                ("name".into(), Data::str(name)),
                ("message".into(), Data::str(message)),
            ]));
        }
        if v.is_array() || (v.is_proxy() && raw::is_array_value(ctx, v)) {
            let len: Value = obj.get("length")?;
            let len = len.as_number().unwrap_or(0.0);
            if !(0.0..=self.budget.limits.max_nodes as f64).contains(&len) {
                return Err(CopyOutError::Invalid(format!(
                    "an array of {len} elements at {path}"
                )));
            }
            let mut items = Vec::with_capacity((len as usize).min(4096));
            for i in 0..len as usize {
                let item: Value = obj.get(i as u32)?;
                let d = self.copy(&item, &Path::Index(path, i))?;
                items.push(
                    if matches!(d, Data::Undefined) && (item.is_function() || item.is_symbol()) {
                        Data::Null
                    } else {
                        d
                    },
                );
            }
            return Ok(Data::Array(items));
        }
        let keys = raw::own_keys(ctx, obj, false, true).ok_or_else(|| match ctx.catch() {
            e if e.is_exception() || e.is_undefined() => {
                CopyOutError::Invalid(format!("unreadable keys at {path}"))
            }
            e => CopyOutError::Guest(ctx.throw(e)),
        })?;
        let mut entries = Vec::with_capacity(keys.len());
        for key in keys {
            let Some(name) = text_of(ctx, &key).map(|t| t.to_lossy()) else {
                continue;
            };
            let item: Value = obj.get(key)?;
            if item.is_function() || item.is_symbol() {
                continue;
            }
            let d = self.copy(&item, &Path::Key(path, &name))?;
            entries.push((name, d));
        }
        Ok(Data::Object(entries))
    }

    /// Map entries as a flat [k0, v0, k1, v1, ...] list, or Set values, read through the
    /// realm's own (frozen) iteration methods.
    fn collection_entries(
        &mut self,
        obj: &Object<'js>,
        is_map: bool,
    ) -> Result<Vec<Value<'js>>, CopyOutError> {
        let ctx = self.ctx;
        let ctor_name = if is_map { "Map" } else { "Set" };
        let ctor: Object = ctx.globals().get(ctor_name)?;
        let proto: Object = ctor.get("prototype")?;
        let for_each: rquickjs::Function = proto.get("forEach")?;
        Ok(collect_entries(ctx, obj, &for_each, is_map, usize::MAX)?.0)
    }
}

/// A Map's entries as `[k0, v0, k1, v1, ...]` or a Set's values, at most `limit` of them, and
/// how many there are, read by calling `for_each` (the realm's own `forEach` of that class).
pub(crate) fn collect_entries<'js>(
    ctx: &Ctx<'js>,
    obj: &Object<'js>,
    for_each: &rquickjs::Function<'js>,
    is_map: bool,
    limit: usize,
) -> rquickjs::Result<(Vec<Value<'js>>, usize)> {
    let collected = Array::new(ctx.clone())?;
    let sink = collected.clone();
    let count = std::rc::Rc::new(std::cell::Cell::new(0usize));
    let counter = count.clone();
    let push = rquickjs::Function::new(
        ctx.clone(),
        move |value: Value<'js>, key: Value<'js>| -> rquickjs::Result<()> {
            let n = counter.get();
            counter.set(n + 1);
            if n >= limit {
                return Ok(());
            }
            let at = sink.len();
            if is_map {
                sink.set(at, key)?;
                sink.set(at + 1, value)?;
            } else {
                sink.set(at, value)?;
            }
            Ok(())
        },
    )?;
    for_each.call::<_, ()>((rquickjs::function::This(obj.clone()), push))?;
    let mut out = Vec::with_capacity(collected.len());
    for i in 0..collected.len() {
        out.push(collected.get(i)?);
    }
    Ok((out, count.get()))
}
