//! Host values to and from `Data`, the engine's neutral value tree: reading options' `data`
//! and live values' primitives, and building results. Results are built with define semantics
//! for `__proto__`, so no host prototype is touched.

use super::raw::{Host, Raw};
use crate::engine::marshal::{BytesKind, CopyBudget, CopyLimits, Data, Path, TypedArrayKind};
/// The `data` record given as JSON text is parsed and charged by the engine.
pub use crate::engine::read_data_text;
use napi::sys;

/// Largest bigint copied from the host, in 64-bit words (the engine's cap, 64 Kibit).
pub const MAX_BIGINT_WORDS: usize = crate::engine::marshal::MAX_BIGINT_BITS / 64;

/// N-API's typed array types and the kinds they stand for (N-API has no Float16Array).
const NAPI_TYPED_ARRAYS: [(sys::napi_typedarray_type, TypedArrayKind); 11] = [
    (sys::TypedarrayType::int8_array, TypedArrayKind::Int8),
    (sys::TypedarrayType::uint8_array, TypedArrayKind::Uint8),
    (
        sys::TypedarrayType::uint8_clamped_array,
        TypedArrayKind::Uint8Clamped,
    ),
    (sys::TypedarrayType::int16_array, TypedArrayKind::Int16),
    (sys::TypedarrayType::uint16_array, TypedArrayKind::Uint16),
    (sys::TypedarrayType::int32_array, TypedArrayKind::Int32),
    (sys::TypedarrayType::uint32_array, TypedArrayKind::Uint32),
    (sys::TypedarrayType::float32_array, TypedArrayKind::Float32),
    (sys::TypedarrayType::float64_array, TypedArrayKind::Float64),
    (
        sys::TypedarrayType::bigint64_array,
        TypedArrayKind::BigInt64,
    ),
    (
        sys::TypedarrayType::biguint64_array,
        TypedArrayKind::BigUint64,
    ),
];

fn kind_of_napi_type(t: sys::napi_typedarray_type) -> Option<TypedArrayKind> {
    NAPI_TYPED_ARRAYS
        .into_iter()
        .find(|(n, _)| *n == t)
        .map(|(_, k)| k)
}

/// The N-API type for a kind; a kind N-API lacks crosses as its raw bytes (a Uint8Array).
fn napi_type_of_kind(k: TypedArrayKind) -> (sys::napi_typedarray_type, TypedArrayKind) {
    NAPI_TYPED_ARRAYS
        .into_iter()
        .find(|(_, kind)| *kind == k)
        .unwrap_or((sys::TypedarrayType::uint8_array, TypedArrayKind::Uint8))
}

/// Copies a host value into `Data`, refusing functions, symbols and oversized input. Objects
/// are numbered in pre-order as they are first reached; a later reference to one is a
/// `Data::Ref` (see `engine::marshal`), so shared parts and cycles keep their shape.
pub struct HostReader {
    host: Host,
    budget: CopyBudget,
    /// Nesting depth of the value being read (a `Ref` adds none).
    depth: usize,
    /// A host `Map` from each object read to its number, with its `get` and `set`: host
    /// identity, without a linear search.
    seen: Option<(Raw, Raw, Raw)>,
    /// How many objects were numbered so far.
    objects: usize,
    map_ctor: Option<Raw>,
    set_ctor: Option<Raw>,
    array_from: Option<Raw>,
}

impl HostReader {
    pub fn new(host: Host, limits: CopyLimits) -> Self {
        HostReader {
            host,
            budget: CopyBudget::new(limits),
            depth: 0,
            seen: None,
            objects: 0,
            map_ctor: None,
            set_ctor: None,
            array_from: None,
        }
    }

    fn ctor(&mut self, name: &str) -> Result<Raw, String> {
        let slot = match name {
            "Map" => &mut self.map_ctor,
            _ => &mut self.set_ctor,
        };
        if let Some(c) = slot {
            return Ok(*c);
        }
        let c = self.host.global_named(name)?;
        *slot = Some(c);
        Ok(c)
    }

    fn array_from(&mut self, v: Raw) -> Result<Raw, String> {
        let from = match self.array_from {
            Some(f) => f,
            None => {
                let array = self.host.global_named("Array")?;
                let f = self.host.get_named(array, "from")?;
                self.array_from = Some(f);
                f
            }
        };
        let this = self.host.undefined()?;
        self.host.call(this, from, &[v])
    }

    /// The identity map, made on the first object read.
    fn seen(&mut self) -> Result<(Raw, Raw, Raw), String> {
        if let Some(s) = self.seen {
            return Ok(s);
        }
        let ctor = self.ctor("Map")?;
        let h = self.host;
        let map = h.new_instance(ctor, &[])?;
        let proto = h.get_named(ctor, "prototype")?;
        let s = (map, h.get_named(proto, "get")?, h.get_named(proto, "set")?);
        self.seen = Some(s);
        Ok(s)
    }

    /// The number of `v` when it was read before; otherwise numbers it and returns `None`.
    fn number_object(&mut self, v: Raw) -> Result<Option<usize>, String> {
        let h = self.host;
        let (map, get, set) = self.seen()?;
        let known = h.call(map, get, &[v])?;
        if h.type_of(known) == sys::ValueType::napi_number {
            return Ok(Some(h.number(known)? as usize));
        }
        h.call(map, set, &[v, h.create_number(self.objects as f64)?])?;
        self.objects += 1;
        Ok(None)
    }

    pub fn read(&mut self, v: Raw, path: &Path) -> Result<Data, String> {
        let h = self.host;
        let depth = self.depth;
        match h.type_of(v) {
            // Every value counts, holes of sparse arrays included: a `new Array(2 ** 32 - 1)`
            // must hit the value cap, not walk four billion holes.
            sys::ValueType::napi_undefined => {
                self.budget.node(0, depth, path)?;
                Ok(Data::Undefined)
            }
            sys::ValueType::napi_null => {
                self.budget.node(0, depth, path)?;
                Ok(Data::Null)
            }
            sys::ValueType::napi_boolean => {
                self.budget.node(1, depth, path)?;
                Ok(Data::Bool(h.boolean(v)?))
            }
            sys::ValueType::napi_number => {
                self.budget.node(8, depth, path)?;
                Ok(Data::Number(h.number(v)?))
            }
            sys::ValueType::napi_string => {
                let t = h.text(v)?;
                self.budget.node(t.byte_len(), depth, path)?;
                Ok(Data::String(t))
            }
            sys::ValueType::napi_bigint => {
                let (negative, mut words) = h.bigint_words(v)?;
                if words.len() > MAX_BIGINT_WORDS {
                    return Err(format!(
                        "{path} is a bigint of more than {} bits",
                        MAX_BIGINT_WORDS * 64
                    ));
                }
                self.budget.node(words.len() * 8, depth, path)?;
                // One form for every value: no high zero words, and zero is unsigned.
                while words.last() == Some(&0) {
                    words.pop();
                }
                let negative = negative && !words.is_empty();
                Ok(Data::BigInt { negative, words })
            }
            sys::ValueType::napi_symbol => {
                Err(format!("{path} is a symbol, which cannot be copied"))
            }
            sys::ValueType::napi_function => Err(format!(
                "{path} is a function, which cannot be copied (pass live values through `globals`)"
            )),
            sys::ValueType::napi_object | sys::ValueType::napi_external => {
                if let Some(n) = self.number_object(v)? {
                    // A repeated reference costs one value, not a second copy.
                    self.budget.node(8, depth, path)?;
                    return Ok(Data::Ref(n));
                }
                self.budget.node(16, depth, path)?;
                self.depth += 1;
                let out = self.read_object(v, path);
                self.depth -= 1;
                out
            }
            other => Err(format!("{path} has an unsupported type ({other})")),
        }
    }

    fn read_object(&mut self, v: Raw, path: &Path) -> Result<Data, String> {
        let h = self.host;
        if h.is_array(v) {
            let n = h.array_length(v)?;
            let mut items = Vec::with_capacity(n.min(4096) as usize);
            for i in 0..n {
                let item = h.element(v, i)?;
                items.push(self.read(item, &Path::Index(path, i as usize))?);
            }
            return Ok(Data::Array(items));
        }
        if h.is_date(v) {
            return Ok(Data::Date(h.date_value(v)?));
        }
        if h.is_typed_array(v) {
            let depth = self.depth;
            let budget = &mut self.budget;
            let mut kind = TypedArrayKind::Uint8;
            let (_, bytes) = h.typed_array(v, |t, len| {
                kind = kind_of_napi_type(t)
                    .ok_or_else(|| format!("{path} is an unsupported typed array"))?;
                let bytes = len * kind.element_bytes();
                budget.node(bytes, depth, path)?;
                Ok(bytes)
            })?;
            return Ok(Data::Bytes(BytesKind::Typed(kind), bytes));
        }
        if h.is_array_buffer(v) {
            let depth = self.depth;
            let budget = &mut self.budget;
            let bytes = h.array_buffer(v, |len| budget.node(len, depth, path))?;
            return Ok(Data::Bytes(BytesKind::ArrayBuffer, bytes));
        }
        if h.is_data_view(v) {
            return Err(format!(
                "{path} is a DataView, which cannot be copied; pass its buffer"
            ));
        }
        let map_ctor = self.ctor("Map")?;
        if h.instance_of(v, map_ctor) {
            let entries = self.array_from(v)?;
            let n = h.array_length(entries)?;
            let mut out = Vec::with_capacity(n as usize);
            for i in 0..n {
                let pair = h.element(entries, i)?;
                let p = Path::MapEntry(path, i as usize);
                let k = self.read(h.element(pair, 0)?, &p)?;
                let val = self.read(h.element(pair, 1)?, &p)?;
                out.push((k, val));
            }
            return Ok(Data::Map(out));
        }
        let set_ctor = self.ctor("Set")?;
        if h.instance_of(v, set_ctor) {
            let items = self.array_from(v)?;
            let n = h.array_length(items)?;
            let mut out = Vec::with_capacity(n as usize);
            for i in 0..n {
                out.push(self.read(h.element(items, i)?, &Path::SetItem(path, i as usize))?);
            }
            return Ok(Data::Set(out));
        }
        let keys = h.own_keys(v)?;
        let mut entries = Vec::with_capacity(keys.len());
        for k in keys {
            let name = h.string(k)?;
            let item = h.property(v, k)?;
            let d = self.read(item, &Path::Key(path, &name))?;
            entries.push((name, d));
        }
        Ok(Data::Object(entries))
    }
}

/// Builds a host value from `Data` (its `Ref`s count from its own root).
pub fn write(h: Host, d: &Data) -> Result<Raw, String> {
    HostWriter {
        host: h,
        made: Vec::new(),
    }
    .write(d)
}

/// Builds host values, remembering every container it made so that `Ref`s resolve to them.
struct HostWriter {
    host: Host,
    made: Vec<Raw>,
}

impl HostWriter {
    /// Registers a new container before its children are written (cycles point back to it).
    fn made(&mut self, v: Raw) -> Raw {
        self.made.push(v);
        v
    }

    fn write(&mut self, d: &Data) -> Result<Raw, String> {
        let h = self.host;
        match d {
            Data::Undefined => h.undefined(),
            Data::Null => h.null(),
            Data::Bool(b) => h.create_bool(*b),
            Data::Number(n) => h.create_number(*n),
            Data::String(t) => h.create_text(t),
            // N-API is given at least one word.
            Data::BigInt { negative, words } if words.is_empty() => {
                h.create_bigint(*negative, &[0])
            }
            Data::BigInt { negative, words } => h.create_bigint(*negative, words),
            Data::Ref(n) => self
                .made
                .get(*n)
                .copied()
                .ok_or_else(|| "a reference to a value not copied yet".into()),
            Data::Array(items) => {
                let arr = h.create_array(items.len())?;
                self.made(arr);
                for (i, item) in items.iter().enumerate() {
                    h.set_element(arr, i as u32, self.write(item)?)?;
                }
                Ok(arr)
            }
            Data::Object(entries) => {
                let obj = h.create_object()?;
                self.made(obj);
                for (k, v) in entries {
                    h.set_own(obj, k, self.write(v)?)?;
                }
                Ok(obj)
            }
            Data::Date(ms) => Ok(self.made(h.create_date(*ms)?)),
            Data::Map(entries) => {
                let map = h.new_instance(h.global_named("Map")?, &[])?;
                self.made(map);
                let set = h.get_named(map, "set")?;
                for (k, v) in entries {
                    let (k, v) = (self.write(k)?, self.write(v)?);
                    h.call(map, set, &[k, v])?;
                }
                Ok(map)
            }
            Data::Set(items) => {
                let set = h.new_instance(h.global_named("Set")?, &[])?;
                self.made(set);
                let add = h.get_named(set, "add")?;
                for v in items {
                    let v = self.write(v)?;
                    h.call(set, add, &[v])?;
                }
                Ok(set)
            }
            Data::Bytes(kind, bytes) => {
                let buffer = h.create_array_buffer(bytes)?;
                let v = match kind {
                    BytesKind::ArrayBuffer => buffer,
                    BytesKind::Typed(k) => {
                        let (t, kind) = napi_type_of_kind(*k);
                        h.create_typed_array(t, bytes.len() / kind.element_bytes(), buffer)?
                    }
                };
                Ok(self.made(v))
            }
        }
    }
}
