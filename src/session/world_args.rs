//! The arguments of a `world.*` call, read once from the guest into plain data: what is audited,
//! keyed for a re-run and run is the same value (a getter or proxy trap cannot show the audit
//! one thing and the workspace another). Options are read with the messages `ZipWorkspace`
//! gives for the same mistakes.

use rquickjs::{Ctx, Object, Type, Value};
use serde_json::{Map, Value as Json};
use sha2::{Digest, Sha256};

use crate::engine::marshal::TypedArrayKind;
use crate::engine::raw;
use crate::workspace::bounds::Bounds;
use crate::workspace::{WsError, WsResult};

/// Deeper values are not read (they are audited as `null`).
const MAX_DEPTH: usize = 64;
/// Values one call's arguments may hold.
const MAX_NODES: usize = 100_000;
/// Longest string an audit entry keeps whole (in UTF-16 units, as JavaScript counts).
const AUDIT_TEXT_LIMIT: usize = 4096;

/// A guest value as data.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Arg {
    Undefined,
    Null,
    Bool(bool),
    Number(f64),
    Str(String),
    /// Decimal digits, with a sign.
    BigInt(String),
    Symbol,
    /// A `Uint8Array`'s bytes.
    Bytes(Vec<u8>),
    /// Another typed array, a `DataView` or an `ArrayBuffer` (not data a world call takes).
    View,
    List(Vec<Arg>),
    Map(Vec<(String, Arg)>),
}

/// Why arguments could not be read as data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NotData {
    Function,
    Cycle,
    TooLarge,
}

impl NotData {
    pub(crate) fn message(&self, operation: &str) -> String {
        match self {
            NotData::Function => format!("{operation}: the arguments must be data (no functions)"),
            NotData::Cycle => format!("{operation}: the arguments must be data (no cycles)"),
            NotData::TooLarge => {
                format!("{operation}: the arguments hold more than {MAX_NODES} values")
            }
        }
    }
}

struct Reader<'js> {
    ctx: Ctx<'js>,
    nodes: usize,
    /// Identities of the containers being read (a value met again inside itself is a cycle).
    open: Vec<usize>,
}

impl<'js> Reader<'js> {
    fn read(&mut self, v: &Value<'js>, depth: usize) -> Result<Arg, NotData> {
        self.nodes += 1;
        if self.nodes > MAX_NODES {
            return Err(NotData::TooLarge);
        }
        Ok(match v.type_of() {
            Type::Undefined | Type::Uninitialized => Arg::Undefined,
            Type::Null => Arg::Null,
            Type::Bool => Arg::Bool(v.as_bool().unwrap_or(false)),
            Type::Int | Type::Float => Arg::Number(v.as_number().unwrap_or(f64::NAN)),
            // Lone surrogates become U+FFFD, as Node's UTF-8 encoding does.
            Type::String => Arg::Str(
                v.as_string()
                    .and_then(|s| s.to_string().ok())
                    .or_else(|| {
                        raw::string_utf16(&self.ctx, v).map(|u| String::from_utf16_lossy(&u))
                    })
                    .unwrap_or_default(),
            ),
            Type::BigInt => Arg::BigInt(raw::to_display_string(&self.ctx, v).unwrap_or_default()),
            Type::Symbol => Arg::Symbol,
            Type::Function | Type::Constructor => return Err(NotData::Function),
            _ => {
                let Some(obj) = v.as_object() else {
                    return Ok(Arg::Undefined);
                };
                if let Some(kind) = raw::typed_array_kind(v) {
                    let is_bytes = matches!(kind, TypedArrayKind::Uint8);
                    return Ok(match raw::view_bytes(&self.ctx, v) {
                        Some(bytes) if is_bytes => Arg::Bytes(bytes),
                        _ => Arg::View,
                    });
                }
                if raw::is_array_buffer(v) || raw::class_id(v) == raw::class::DATAVIEW {
                    return Ok(Arg::View);
                }
                if depth >= MAX_DEPTH {
                    return Ok(Arg::Null);
                }
                let id = raw::identity(v);
                if self.open.contains(&id) {
                    return Err(NotData::Cycle);
                }
                self.open.push(id);
                let read = self.container(obj, depth);
                self.open.pop();
                read?
            }
        })
    }

    fn container(&mut self, obj: &Object<'js>, depth: usize) -> Result<Arg, NotData> {
        let value = obj.clone().into_value();
        if raw::is_array_value(&self.ctx, &value) {
            let len: usize = obj.get::<_, f64>("length").unwrap_or(0.0).max(0.0) as usize;
            let mut items = Vec::new();
            for i in 0..len {
                let item: Value = obj.get(i as u32).unwrap_or_else(|_| {
                    let _ = self.ctx.catch();
                    Value::new_undefined(self.ctx.clone())
                });
                items.push(self.read(&item, depth + 1)?);
                if self.nodes > MAX_NODES {
                    return Err(NotData::TooLarge);
                }
            }
            return Ok(Arg::List(items));
        }
        let mut entries = Vec::new();
        for key in obj.keys::<String>() {
            let Ok(key) = key else {
                let _ = self.ctx.catch();
                continue;
            };
            let item: Value = obj.get(key.as_str()).unwrap_or_else(|_| {
                let _ = self.ctx.catch();
                Value::new_undefined(self.ctx.clone())
            });
            let item = self.read(&item, depth + 1)?;
            entries.push((key, item));
        }
        Ok(Arg::Map(entries))
    }
}

/// Reads the first `count` arguments of a call (missing ones are `undefined`).
pub(crate) fn read_args<'js>(
    ctx: &Ctx<'js>,
    given: &[Value<'js>],
    count: usize,
) -> Result<Vec<Arg>, NotData> {
    let mut reader = Reader {
        ctx: ctx.clone(),
        nodes: 0,
        open: Vec::new(),
    };
    (0..count)
        .map(|i| match given.get(i) {
            Some(v) => reader.read(v, 0),
            None => Ok(Arg::Undefined),
        })
        .collect()
}

/// A number as `JSON.stringify` writes it (`null` when not finite; no `.0` on whole ones).
pub(crate) fn number_json(n: f64) -> Json {
    if !n.is_finite() {
        Json::Null
    } else if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 {
        Json::from(n as i64)
    } else {
        serde_json::Number::from_f64(n).map_or(Json::Null, Json::Number)
    }
}

/// A long string cut as the audit log keeps it.
pub(crate) fn audit_text(s: &str) -> String {
    let units = s.encode_utf16().count();
    if units <= AUDIT_TEXT_LIMIT {
        return s.to_string();
    }
    let mut taken = 0;
    let cut = s
        .char_indices()
        .find(|(_, c)| {
            taken += c.len_utf16();
            taken > AUDIT_TEXT_LIMIT
        })
        .map_or(s.len(), |(i, _)| i);
    format!("{}…[{units} chars]", &s[..cut])
}

/// What an argument is, as `ZipWorkspace`'s messages name it.
fn describe(a: &Arg) -> &'static str {
    match a {
        Arg::Undefined => "undefined",
        Arg::Null => "null",
        Arg::Bool(_) => "a boolean",
        Arg::Number(_) => "a number",
        Arg::Str(_) => "a string",
        Arg::BigInt(_) => "a bigint",
        Arg::Symbol => "a symbol",
        Arg::List(_) => "an array",
        Arg::Bytes(_) | Arg::View | Arg::Map(_) => "an object",
    }
}

impl Arg {
    /// The value as the audit log keeps it (`None`: left out, as JSON leaves out `undefined`).
    pub(crate) fn audit(&self) -> Option<Json> {
        self.json(true)
    }

    fn json(&self, audit: bool) -> Option<Json> {
        Some(match self {
            Arg::Undefined | Arg::Symbol => return None,
            Arg::Null => Json::Null,
            Arg::Bool(b) => Json::Bool(*b),
            Arg::Number(n) => number_json(*n),
            Arg::Str(s) if audit => Json::String(audit_text(s)),
            Arg::Str(s) => Json::String(s.clone()),
            Arg::BigInt(digits) => Json::String(format!("{digits}n")),
            Arg::Bytes(b) if audit => Json::String(format!("<{} bytes>", b.len())),
            Arg::Bytes(b) => {
                let digest: String = Sha256::digest(b)
                    .iter()
                    .map(|x| format!("{x:02x}"))
                    .collect();
                serde_json::json!({ "bytes": format!("sha256:{digest}") })
            }
            Arg::View => Json::Object(Map::new()),
            Arg::List(items) => Json::Array(
                items
                    .iter()
                    .map(|i| i.json(audit).unwrap_or(Json::Null))
                    .collect(),
            ),
            Arg::Map(entries) => Json::Object(
                entries
                    .iter()
                    .filter_map(|(k, v)| v.json(audit).map(|v| (k.clone(), v)))
                    .collect(),
            ),
        })
    }
}

/// The audit text of a call's arguments: long strings cut, bytes counted, `undefined` left out.
pub(crate) fn audit_args(args: &[Arg]) -> String {
    let kept: Vec<Json> = args
        .iter()
        .filter(|a| **a != Arg::Undefined)
        .map(|a| a.audit().unwrap_or(Json::Null))
        .collect();
    Json::Array(kept).to_string()
}

/// The exact text a re-run compares (bytes by their digest), for [`super::world_key`].
pub(crate) fn key_args(args: &[Arg]) -> String {
    Json::Array(
        args.iter()
            .map(|a| a.json(false).unwrap_or(Json::Null))
            .collect(),
    )
    .to_string()
}

fn wrong_type(v: &Arg, name: &str, wanted: &str) -> WsError {
    WsError::invalid_input(format!("{name} must be {wanted}, got {}", describe(v)))
}

/// A string argument, as `name`.
pub(crate) fn string(v: &Arg, name: &str) -> WsResult<String> {
    match v {
        Arg::Str(s) => Ok(s.clone()),
        other => Err(wrong_type(other, name, "a string")),
    }
}

/// An options object whose keys must be among `allowed` (absent for `undefined` or `null`).
pub(crate) struct Options<'a> {
    entries: &'a [(String, Arg)],
    name: &'static str,
}

impl<'a> Options<'a> {
    pub(crate) fn read(v: &'a Arg, name: &'static str, allowed: &[&str]) -> WsResult<Self> {
        let entries: &[(String, Arg)] = match v {
            Arg::Undefined | Arg::Null => &[],
            Arg::Map(entries) => entries,
            Arg::Bytes(b) if b.is_empty() => &[],
            Arg::Bytes(_) => {
                return Err(WsError::invalid_input(format!(
                    "unknown {name} key '0'; expected one of: {}",
                    allowed.join(", ")
                )))
            }
            Arg::View => &[],
            other => return Err(wrong_type(other, name, "an object")),
        };
        if let Some((key, _)) = entries.iter().find(|(k, _)| !allowed.contains(&k.as_str())) {
            return Err(WsError::invalid_input(format!(
                "unknown {name} key '{key}'; expected one of: {}",
                allowed.join(", ")
            )));
        }
        Ok(Options { entries, name })
    }

    fn get(&self, key: &str) -> Option<&'a Arg> {
        self.entries
            .iter()
            .find(|(k, v)| k == key && *v != Arg::Undefined)
            .map(|(_, v)| v)
    }

    fn label(&self, key: &str) -> String {
        format!("{}.{key}", self.name)
    }

    pub(crate) fn string(&self, key: &str) -> WsResult<Option<String>> {
        self.get(key)
            .map(|v| string(v, &self.label(key)))
            .transpose()
    }

    pub(crate) fn boolean(&self, key: &str) -> WsResult<bool> {
        match self.get(key) {
            None => Ok(false),
            Some(Arg::Bool(b)) => Ok(*b),
            Some(other) => Err(wrong_type(other, &self.label(key), "a boolean")),
        }
    }

    pub(crate) fn integer(&self, key: &str, bounds: Bounds) -> WsResult<Option<u64>> {
        match self.get(key) {
            None => Ok(None),
            Some(Arg::Number(n)) => bounds.check(&self.label(key), *n).map(Some),
            Some(other) => Err(wrong_type(other, &self.label(key), "a number")),
        }
    }
}
