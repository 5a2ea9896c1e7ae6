//! `util.inspect`: how one value shows. Objects go through `formatted` (Node's `formatRaw`) in
//! named steps: its shape (kind, braces, base text and keys), the entries of what it holds,
//! its key entries, the circular reference mark, and the layout (`groups.rs`).

use super::raw::{class, PromiseState};
use super::{ffi, qjs, raw, text_of, Formatter, Parts, TypedArrayKind};
use super::{MAX_CHAIN, MAX_NESTING, MIN_LINE_WIDTH, POLL_UNITS};
use rquickjs::{Object, Value};

impl<'a, 'js> Formatter<'a, 'js> {
    pub(super) fn value(&mut self, v: &Value<'js>, depth: usize) -> String {
        if self.full() {
            return String::new();
        }
        if ffi::poll_interrupts(self.ctx, POLL_UNITS).is_err() {
            self.stopped = true;
            return String::new();
        }
        // Every value shown takes at least its separator: shared objects nested many times
        // (printed once per path) stop once the line would be full.
        self.spent = self.spent.saturating_add(2);
        match v.as_object() {
            Some(obj) => self.object(obj, depth),
            None => self.primitive(v, true),
        }
    }

    /// A primitive as inspect shows it (strings quoted, and split over lines when `split`
    /// allows and they are long).
    pub(super) fn primitive(&mut self, v: &Value<'js>, split: bool) -> String {
        let s = if v.is_undefined() {
            "undefined".into()
        } else if v.is_null() {
            "null".into()
        } else if let Some(b) = v.as_bool() {
            b.to_string()
        } else if let Some(n) = v.as_number() {
            self.number_text(n)
        } else if v.is_big_int() {
            raw::to_display_string(self.ctx, v).unwrap_or_default() + "n"
        } else if v.is_string() {
            let s = self.text(v);
            self.string(&s, split)
        } else if let Some(sym) = v.as_symbol() {
            let desc = sym.description().ok().and_then(|d| text_of(self.ctx, &d));
            let desc = desc.map(|t| t.to_lossy()).unwrap_or_default();
            format!("Symbol({desc})")
        } else {
            "[unknown]".into()
        };
        self.spend(&s);
        s
    }

    /// A string quoted as inspect does, cut at `max_string_length` UTF-16 units and split after
    /// its newlines when too long for the line.
    pub(super) fn string(&self, s: &str, split: bool) -> String {
        let units = utf16_len(s);
        let (s, trailer) = if units > self.opts.max_string_length {
            let cut = utf16_prefix(s, self.opts.max_string_length);
            let rest = units - utf16_len(cut);
            let plural = if rest > 1 { "s" } else { "" };
            (cut, format!("... {rest} more character{plural}"))
        } else {
            (s, String::new())
        };
        let len = utf16_len(s);
        if split
            && len > MIN_LINE_WIDTH
            && len + self.indentation + 4 > self.opts.break_length
            && s.contains('\n')
        {
            let join = format!(" +\n{}", " ".repeat(self.indentation + 2));
            let parts: Vec<String> = s.split_inclusive('\n').map(quote).collect();
            return parts.join(&join) + &trailer;
        }
        quote(s) + &trailer
    }

    /// Follows a proxy to what it wraps (no trap runs); a revoked proxy stays as it is.
    pub(super) fn unwrap_proxy(&self, obj: &Object<'js>) -> Object<'js> {
        let mut cur = obj.clone();
        for _ in 0..MAX_CHAIN {
            match raw::proxy_target(self.ctx, cur.as_value()).and_then(|t| t.into_object()) {
                Some(t) => cur = t,
                None => break,
            }
        }
        cur
    }

    pub(super) fn object(&mut self, obj: &Object<'js>, depth: usize) -> String {
        let obj = self.unwrap_proxy(obj);
        if raw::is_proxy(obj.as_value()) {
            return "<Revoked Proxy>".into();
        }
        let id = raw::identity(obj.as_value());
        if self.seen.contains(&id) {
            let n = match self.circular.iter().position(|&c| c == id) {
                Some(i) => i + 1,
                None => {
                    self.circular.push(id);
                    self.circular.len()
                }
            };
            return format!("[Circular *{n}]");
        }
        self.formatted(&obj, depth)
    }

    /// Node's `formatRaw`: the value's kind decides its base text, braces and entries.
    fn formatted(&mut self, obj: &Object<'js>, depth: usize) -> String {
        let ctor = self.constructor_name(obj);
        let tag = self.to_string_tag(obj, ctor.as_deref());
        let too_deep = depth as f64 > self.opts.depth || depth >= MAX_NESTING;
        let Shape {
            mut parts,
            body,
            keys,
        } = match self.shape(obj, ctor.as_deref(), &tag, too_deep) {
            Opening::Whole(text) => return text,
            Opening::Open(shape) => shape,
        };
        if too_deep {
            return too_deep_name(ctor.as_deref(), &tag);
        }
        let depth = depth + 1;
        self.seen.push(raw::identity(obj.as_value()));
        self.current_depth = depth;
        self.body_entries(obj, body, depth, &mut parts.entries);
        self.key_entries(obj, &keys, depth, &mut parts.entries);
        self.seen.pop();
        self.mark_reference(obj, &mut parts);
        self.reduce(parts, depth, obj)
    }

    /// Step 1 of `formatted`: what kind of container the object is.
    fn shape(
        &mut self,
        obj: &Object<'js>,
        ctor: Option<&str>,
        tag: &str,
        too_deep: bool,
    ) -> Opening<'js> {
        let v = obj.as_value();
        let cls = raw::class_id(v);
        if raw::is_plain_array(v) {
            self.array_shape(obj, ctor, tag)
        } else if cls == class::MAP || cls == class::SET {
            self.collection_shape(obj, cls == class::MAP, ctor, tag, too_deep)
        } else if let Some(kind) = raw::typed_array_kind(v) {
            self.typed_shape(obj, kind, ctor, tag)
        } else {
            self.object_shape(obj, cls, ctor, tag, too_deep)
        }
    }

    fn array_shape(&mut self, obj: &Object<'js>, ctor: Option<&str>, tag: &str) -> Opening<'js> {
        let len = self.array_length(obj);
        let keys = self.extra_keys(obj, len);
        let prefix = if ctor == Some("Array") && tag.is_empty() {
            String::new()
        } else {
            prefix(ctor, tag, "Array", &format!("({len})"))
        };
        let mut parts = Parts::new(format!("{prefix}["), "]");
        if len == 0 && keys.is_empty() {
            return Opening::Whole(format!("{}]", parts.open));
        }
        parts.array_like = true;
        Opening::open(parts, Body::Array(len), keys)
    }

    fn collection_shape(
        &mut self,
        obj: &Object<'js>,
        is_map: bool,
        ctor: Option<&str>,
        tag: &str,
        too_deep: bool,
    ) -> Opening<'js> {
        let limit = self.opts.max_array_length;
        let (items, size) = if too_deep {
            (Vec::new(), self.collection_size(obj, is_map))
        } else {
            self.collection(obj, is_map, limit)
        };
        let keys = self.keys(obj, false);
        let fallback = if is_map { "Map" } else { "Set" };
        let prefix = prefix(ctor, tag, fallback, &format!("({size})"));
        if size == 0 && keys.is_empty() {
            return Opening::Whole(format!("{prefix}{{}}"));
        }
        let parts = Parts::new(format!("{prefix}{{"), "}");
        Opening::open(parts, Body::Collection(items, size, is_map), keys)
    }

    fn typed_shape(
        &mut self,
        obj: &Object<'js>,
        kind: TypedArrayKind,
        ctor: Option<&str>,
        tag: &str,
    ) -> Opening<'js> {
        let cap = self
            .opts
            .max_array_length
            .saturating_mul(kind.element_bytes());
        let (bytes, whole) =
            raw::view_bytes_capped(self.ctx, obj.as_value(), cap).unwrap_or_default();
        let len = whole / kind.element_bytes();
        let keys = self.extra_keys(obj, len);
        let prefix = prefix(ctor, tag, kind.constructor_name(), &format!("({len})"));
        let mut parts = Parts::new(format!("{prefix}["), "]");
        if len == 0 && keys.is_empty() {
            return Opening::Whole(format!("{}]", parts.open));
        }
        parts.array_like = true;
        Opening::open(parts, Body::Typed(kind, bytes, len), keys)
    }

    /// Every other object: a base text (functions, regular expressions, dates, errors, boxed
    /// primitives) or braces around what it holds; with no keys to show, the base alone.
    fn object_shape(
        &mut self,
        obj: &Object<'js>,
        cls: u32,
        ctor: Option<&str>,
        tag: &str,
        too_deep: bool,
    ) -> Opening<'js> {
        let v = obj.as_value();
        let mut keys = self.keys(obj, cls == class::STRING);
        let mut parts = Parts::new("{".into(), "}");
        let mut body = Body::Plain;
        if cls == class::ARGUMENTS || cls == class::MAPPED_ARGUMENTS {
            parts.open = "[Arguments] {".into();
            if keys.is_empty() {
                return Opening::Whole("[Arguments] {}".into());
            }
        } else if ctor == Some("Object") && !v.is_function() && !special(cls, v) {
            if !tag.is_empty() {
                parts.open = format!("{}{{", prefix(ctor, tag, "Object", ""));
            }
            if keys.is_empty() {
                return Opening::Whole(format!("{}}}", parts.open));
            }
        } else if v.is_function() {
            parts.base = self.function_base(obj, ctor, tag);
            if keys.is_empty() {
                return Opening::Whole(parts.base);
            }
        } else if cls == class::REGEXP {
            parts.base = self.regexp_base(obj, ctor, tag);
            if keys.is_empty() || too_deep {
                return Opening::Whole(parts.base);
            }
        } else if cls == class::DATE {
            parts.base = self.date_base(obj, ctor, tag);
            if keys.is_empty() {
                return Opening::Whole(parts.base);
            }
        } else if raw::is_error(v) {
            parts.base = self.error(obj, ctor, tag, &mut keys);
            if keys.is_empty() {
                return Opening::Whole(parts.base);
            }
        } else if raw::is_array_buffer(v) {
            let (bytes, whole) = raw::view_bytes_capped(self.ctx, v, 50).unwrap_or_default();
            parts.open = format!("{}{{", prefix(ctor, tag, "ArrayBuffer", ""));
            body = Body::Buffer(bytes, whole);
        } else if raw::promise_state(self.ctx, v).is_some() {
            parts.open = format!("{}{{", prefix(ctor, tag, "Promise", ""));
            body = Body::Promise;
        } else if cls == class::WEAKMAP || cls == class::WEAKSET {
            let fallback = if cls == class::WEAKMAP {
                "WeakMap"
            } else {
                "WeakSet"
            };
            parts.open = format!("{}{{", prefix(ctor, tag, fallback, ""));
            body = Body::Weak;
        } else if cls == class::DATAVIEW {
            parts.open = format!("{}{{", prefix(ctor, tag, "DataView", ""));
            body = Body::DataView;
        } else if let Some(base) = self.boxed(obj, cls, ctor, tag) {
            parts.base = base;
            if keys.is_empty() {
                return Opening::Whole(parts.base);
            }
        } else {
            let p = prefix(ctor, tag, "Object", "");
            if keys.is_empty() {
                return Opening::Whole(format!("{p}{{}}"));
            }
            parts.open = format!("{p}{{");
        }
        Opening::open(parts, body, keys)
    }

    /// Step 2 of `formatted`: the entries of what the container holds.
    fn body_entries(
        &mut self,
        obj: &Object<'js>,
        body: Body<'js>,
        depth: usize,
        out: &mut Vec<String>,
    ) {
        match body {
            Body::Plain => {}
            Body::Array(len) => self.array_items(obj, len, depth, out),
            Body::Typed(kind, bytes, len) => self.typed_items(kind, &bytes, len, out),
            Body::Collection(items, size, is_map) => {
                self.collection_items(&items, size, is_map, depth, out)
            }
            Body::Buffer(bytes, whole) => buffer_entries(&bytes, whole, out),
            Body::Promise => {
                let entry = self.promise_entry(obj, depth);
                out.push(entry);
            }
            Body::Weak => out.push("<items unknown>".into()),
            Body::DataView => self.data_view_entries(obj, depth, out),
        }
    }

    /// Map entries as `k => v`, Set values as they are, and `... more items` past the limit.
    fn collection_items(
        &mut self,
        items: &[Value<'js>],
        size: usize,
        is_map: bool,
        depth: usize,
        out: &mut Vec<String>,
    ) {
        self.indentation += 2;
        let shown = if is_map { items.len() / 2 } else { items.len() };
        for i in 0..shown {
            if self.full() {
                break;
            }
            let entry = if is_map {
                let k = self.value(&items[2 * i], depth);
                let v = self.value(&items[2 * i + 1], depth);
                format!("{k} => {v}")
            } else {
                self.value(&items[i], depth)
            };
            out.push(entry);
        }
        self.indentation -= 2;
        if size > shown {
            out.push(more_items(size - shown));
        }
    }

    /// `<pending>`, the fulfilled value, or `<rejected> reason`.
    fn promise_entry(&mut self, obj: &Object<'js>, depth: usize) -> String {
        match raw::promise_state(self.ctx, obj.as_value()) {
            Some(PromiseState::Fulfilled(r)) => self.nested(&r, depth),
            Some(PromiseState::Rejected(r)) => {
                let s = self.nested(&r, depth);
                format!("<rejected> {s}")
            }
            _ => "<pending>".into(),
        }
    }

    fn data_view_entries(&mut self, obj: &Object<'js>, depth: usize, out: &mut Vec<String>) {
        for name in ["byteLength", "byteOffset", "buffer"] {
            let shown = match self.call_intrinsic(class::DATAVIEW, name, obj) {
                Some(v) => self.nested(&v, depth),
                None => "undefined".into(),
            };
            out.push(format!("{name}: {shown}"));
        }
    }

    /// Step 3 of `formatted`: one `key: value` entry per key shown.
    fn key_entries(
        &mut self,
        obj: &Object<'js>,
        keys: &[Value<'js>],
        depth: usize,
        out: &mut Vec<String>,
    ) {
        for key in keys {
            if self.full() {
                break;
            }
            let entry = self.property(obj, key, depth, false);
            out.push(entry);
        }
    }

    /// Step 4 of `formatted`: `<ref *N>` in front of an object found to be circular.
    fn mark_reference(&self, obj: &Object<'js>, parts: &mut Parts) {
        let id = raw::identity(obj.as_value());
        if let Some(i) = self.circular.iter().position(|&c| c == id) {
            let reference = format!("<ref *{}>", i + 1);
            parts.base = if parts.base.is_empty() {
                reference
            } else {
                format!("{reference} {}", parts.base)
            };
        }
    }

    /// A value one level in, indented under its container.
    fn nested(&mut self, v: &Value<'js>, depth: usize) -> String {
        self.indentation += 2;
        let s = self.value(v, depth);
        self.indentation -= 2;
        s
    }

    /// One `key: value` entry (or just the value, for an array item).
    pub(super) fn property(
        &mut self,
        obj: &Object<'js>,
        key: &Value<'js>,
        depth: usize,
        item: bool,
    ) -> String {
        let desc = raw::own_descriptor(self.ctx, obj, key);
        let enumerable = desc
            .as_ref()
            .is_none_or(|d| d.flags & qjs::JS_PROP_ENUMERABLE as i32 != 0);
        let shown = match desc {
            Some(d) if d.flags & qjs::JS_PROP_GETSET as i32 != 0 => {
                match (d.getter.is_undefined(), d.setter.is_undefined()) {
                    (false, false) => "[Getter/Setter]".into(),
                    (false, true) => "[Getter]".into(),
                    (true, false) => "[Setter]".into(),
                    (true, true) => "undefined".into(),
                }
            }
            Some(d) => self.nested(&d.value, depth),
            None => "undefined".into(),
        };
        if item {
            return shown;
        }
        let name = if let Some(sym) = key.as_symbol() {
            let desc = sym.description().ok().and_then(|d| text_of(self.ctx, &d));
            format!(
                "[Symbol({})]",
                desc.map(|t| t.to_lossy()).unwrap_or_default()
            )
        } else {
            let k = self.text(key);
            if k == "__proto__" {
                "['__proto__']".into()
            } else if !enumerable {
                format!("[{k}]")
            } else if is_identifier(&k) {
                k
            } else {
                quote(&k)
            }
        };
        self.spend(&name);
        format!("{name}: {shown}")
    }

    /// Array items, holes shown as `<N empty items>`, cut after `max_array_length` entries.
    pub(super) fn array_items(
        &mut self,
        obj: &Object<'js>,
        len: usize,
        depth: usize,
        out: &mut Vec<String>,
    ) {
        let max = self.opts.max_array_length.min(len);
        let mut index = 0;
        while index < len && out.len() < max {
            if self.full() {
                return;
            }
            if self.own_index(obj, index).is_some() {
                let key = Value::new_number(self.ctx.clone(), index as f64);
                out.push(self.property(obj, &key, depth, true));
                index += 1;
                continue;
            }
            // A hole: the next index present comes from the own keys (a sparse array keeps
            // only the keys it has).
            let next = self.next_index(obj, index).unwrap_or(len).min(len);
            let holes = next - index;
            out.push(format!("<{holes} empty item{}>", plural(holes)));
            index = next;
        }
        if index < len && !self.full() {
            out.push(more_items(len - index));
        }
    }

    /// The smallest own index property of `obj` above `from`.
    pub(super) fn next_index(&self, obj: &Object<'js>, from: usize) -> Option<usize> {
        let keys = raw::own_keys(self.ctx, obj, false, false)?;
        keys.iter()
            .filter_map(|k| {
                let s = k.as_string()?.to_string().ok()?;
                let n: usize = s.parse().ok()?;
                (n.to_string() == s && n > from).then_some(n)
            })
            .min()
    }

    /// Typed array items from the first bytes of its view (`len` items in all).
    pub(super) fn typed_items(
        &mut self,
        kind: TypedArrayKind,
        bytes: &[u8],
        len: usize,
        out: &mut Vec<String>,
    ) {
        let size = kind.element_bytes();
        let shown = len.min(self.opts.max_array_length).min(bytes.len() / size);
        for i in 0..shown {
            let b = &bytes[i * size..(i + 1) * size];
            let text = match kind {
                TypedArrayKind::Uint8Clamped | TypedArrayKind::Uint8 => b[0].to_string(),
                TypedArrayKind::Int8 => (b[0] as i8).to_string(),
                TypedArrayKind::Int16 => i16::from_le_bytes([b[0], b[1]]).to_string(),
                TypedArrayKind::Uint16 => u16::from_le_bytes([b[0], b[1]]).to_string(),
                TypedArrayKind::Int32 => i32::from_le_bytes([b[0], b[1], b[2], b[3]]).to_string(),
                TypedArrayKind::Uint32 => u32::from_le_bytes([b[0], b[1], b[2], b[3]]).to_string(),
                TypedArrayKind::BigInt64 => {
                    format!("{}n", i64::from_le_bytes(b.try_into().unwrap_or_default()))
                }
                TypedArrayKind::BigUint64 => {
                    format!("{}n", u64::from_le_bytes(b.try_into().unwrap_or_default()))
                }
                TypedArrayKind::Float16 => {
                    self.number_text(f16_to_f64(u16::from_le_bytes([b[0], b[1]])))
                }
                TypedArrayKind::Float32 => {
                    self.number_text(f32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64)
                }
                TypedArrayKind::Float64 => {
                    self.number_text(f64::from_le_bytes(b.try_into().unwrap_or_default()))
                }
            };
            self.spend(&text);
            out.push(text);
        }
        if len > shown {
            out.push(more_items(len - shown));
        }
    }
}

/// What a container holds besides its own keys, read before its entries are formatted.
enum Body<'js> {
    Plain,
    Array(usize),
    Typed(TypedArrayKind, Vec<u8>, usize),
    /// Items (Map keys and values interleaved), the collection's size, whether a Map.
    Collection(Vec<Value<'js>>, usize, bool),
    /// The first bytes and the whole length.
    Buffer(Vec<u8>, usize),
    Promise,
    Weak,
    DataView,
}

/// An object about to be formatted: its braces and base text, what it holds, the keys shown.
struct Shape<'js> {
    parts: Parts,
    body: Body<'js>,
    keys: Vec<Value<'js>>,
}

/// The first step's answer: the whole text already (nothing inside to show), or a shape to
/// fill.
enum Opening<'js> {
    Whole(String),
    Open(Shape<'js>),
}

impl<'js> Opening<'js> {
    fn open(parts: Parts, body: Body<'js>, keys: Vec<Value<'js>>) -> Self {
        Opening::Open(Shape { parts, body, keys })
    }
}

/// `[Name]` for an object below the depth shown (a null-prototype object without brackets).
fn too_deep_name(ctor: Option<&str>, tag: &str) -> String {
    let name = prefix(ctor, tag, "Object", "");
    let name = name.trim_end();
    if ctor.is_some() {
        format!("[{name}]")
    } else {
        name.to_string()
    }
}

/// An ArrayBuffer's first bytes in hex and its length.
fn buffer_entries(bytes: &[u8], whole: usize, out: &mut Vec<String>) {
    let mut hex: Vec<String> = bytes.iter().map(|b| format!("{b:02x}")).collect();
    if whole > bytes.len() {
        let rest = whole - bytes.len();
        hex.push(format!("... {rest} more byte{}", plural(rest)));
    }
    out.push(format!("[Uint8Contents]: <{}>", hex.join(" ")));
    out.push(format!("byteLength: {whole}"));
}

/// Objects whose kind prints specially even when their constructor is `Object`.
pub(super) fn special(cls: u32, v: &Value<'_>) -> bool {
    matches!(
        cls,
        class::REGEXP
            | class::DATE
            | class::NUMBER
            | class::STRING
            | class::BOOLEAN
            | class::SYMBOL
            | class::BIG_INT
            | class::WEAKMAP
            | class::WEAKSET
    ) || raw::is_error(v)
        || raw::is_array_buffer(v)
}

/// Node's `getPrefix`: `Name(size) [tag] `, or `[fallback(size): null prototype] `.
pub(super) fn prefix(ctor: Option<&str>, tag: &str, fallback: &str, size: &str) -> String {
    match ctor {
        None if !tag.is_empty() && tag != fallback => {
            format!("[{fallback}{size}: null prototype] [{tag}] ")
        }
        None => format!("[{fallback}{size}: null prototype] "),
        Some(c) if !tag.is_empty() && tag != c => format!("{c}{size} [{tag}] "),
        Some(c) => format!("{c}{size} "),
    }
}

pub(super) fn plural(n: usize) -> &'static str {
    if n > 1 {
        "s"
    } else {
        ""
    }
}

pub(super) fn more_items(n: usize) -> String {
    format!("... {n} more item{}", plural(n))
}

pub(super) fn is_identifier(k: &str) -> bool {
    let mut chars = k.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Quotes a string as inspect does: single quotes, or double quotes when it holds a single
/// quote, or backticks when it holds both (and no `${`); control characters escaped.
pub(super) fn quote(s: &str) -> String {
    let mut q = '\'';
    if s.contains('\'') {
        if !s.contains('"') {
            q = '"';
        } else if !s.contains('`') && !s.contains("${") {
            q = '`';
        }
    }
    let mut out = String::with_capacity(s.len() + 2);
    out.push(q);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\\' => out.push_str("\\\\"),
            c if c == q => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || (0x7f..0xa0).contains(&(c as u32)) => {
                out.push_str(&format!("\\x{:02X}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push(q);
    out
}

pub(super) fn utf16_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

/// The longest prefix of `s` of at most `max` UTF-16 units.
pub(super) fn utf16_prefix(s: &str, max: usize) -> &str {
    let mut units = 0;
    for (i, c) in s.char_indices() {
        units += c.len_utf16();
        if units > max {
            return &s[..i];
        }
    }
    s
}

pub(super) fn f16_to_f64(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = (h >> 10) & 0x1f;
    let frac = (h & 0x3ff) as f64;
    sign * match exp {
        0 => frac * 2f64.powi(-24),
        0x1f if frac == 0.0 => f64::INFINITY,
        0x1f => f64::NAN,
        e => (1.0 + frac / 1024.0) * 2f64.powi(e as i32 - 15),
    }
}
