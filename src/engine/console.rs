//! Formatting of guest values for captured console output, as Node's `util.format` and
//! `util.inspect` print them.
//!
//! The printer never runs guest code: it reads own property descriptors instead of properties
//! (an accessor shows as `[Getter]`, `[Setter]` or `[Getter/Setter]`), formats a Proxy's target
//! without triggering a trap, and reaches collections, dates, regular expressions and boxed
//! primitives through the realm's own (frozen) built-ins, taken from the engine rather than from
//! the guest's globals. Its work is counted against the run's deadline and its output is capped
//! at `MAX_LINE` bytes a line.

use super::ffi;
use super::marshal::{collect_entries, text_of, TypedArrayKind};
use super::raw::{self, class, PromiseState};
use rquickjs::function::This;
use rquickjs::{qjs, Ctx, Object, Value};
use std::cell::RefCell;

/// Upper bound on one formatted console line, whatever the arguments.
pub(crate) const MAX_LINE: usize = 64 << 10;
/// Deepest nesting the printer descends into, whatever depth was asked for (it recurses on the
/// host's stack); deeper values print as `[Object]`.
const MAX_NESTING: usize = 64;
/// Longest prototype chain or proxy chain followed.
const MAX_CHAIN: usize = 256;
/// Work counted against the deadline per value printed (reading its descriptors, prototype
/// chain and keys costs about as much as that many engine steps).
const POLL_UNITS: usize = 32;
/// Longest array whose own keys are listed to find properties besides its items.
const MAX_LISTED_ITEMS: usize = 100_000;
/// Strings shorter than this are never split over lines.
const MIN_LINE_WIDTH: usize = 16;

/// The plain console methods and the level each one writes at.
pub(crate) const CONSOLE_LEVELS: [(&str, &str); 7] = [
    ("log", "log"),
    ("info", "info"),
    ("warn", "warn"),
    ("error", "error"),
    ("debug", "debug"),
    ("trace", "debug"),
    ("dir", "log"),
];

/// The longest prefix of `s` that fits in `max` bytes without splitting a character.
pub(crate) fn clip(s: &str, max: usize) -> &str {
    &s[..s.floor_char_boundary(max)]
}

/// What `util.inspect` options the printer honours.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Options {
    /// Nesting levels shown (`f64::INFINITY` for `depth: null`; -1 shows even the top level
    /// as `[Object]`).
    pub depth: f64,
    pub show_hidden: bool,
    pub max_array_length: usize,
    pub max_string_length: usize,
    pub break_length: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            depth: 2.0,
            show_hidden: false,
            max_array_length: 100,
            max_string_length: 10_000,
            break_length: 80,
        }
    }
}

/// Formats guest values into one line of at most `MAX_LINE` bytes.
pub(crate) struct Formatter<'a, 'js> {
    ctx: &'a Ctx<'js>,
    opts: Options,
    /// Identities of the objects being formatted (the path from the root).
    seen: Vec<usize>,
    /// Objects found to be circular, numbered by position (`<ref *1>`).
    circular: Vec<usize>,
    indentation: usize,
    /// The nesting level of the object formatted last (Node's `currentDepth`).
    current_depth: usize,
    /// Bytes of text produced so far; formatting stops once the line is full.
    spent: usize,
    /// The deadline or an abort interrupted formatting (the uncatchable error is pending).
    stopped: bool,
    /// Property names already made as guest strings (see `key`).
    names: RefCell<Vec<(String, Value<'js>)>>,
}

/// An `output` entry list with its braces and what kind of container produced it.
struct Parts {
    base: String,
    open: String,
    close: &'static str,
    entries: Vec<String>,
    /// Array-like: entries may be grouped into columns.
    array_like: bool,
}

impl<'a, 'js> Formatter<'a, 'js> {
    pub(crate) fn new(ctx: &'a Ctx<'js>) -> Self {
        Self::with_options(ctx, Options::default())
    }

    pub(crate) fn with_options(ctx: &'a Ctx<'js>, opts: Options) -> Self {
        Formatter {
            ctx,
            opts,
            seen: Vec::new(),
            circular: Vec::new(),
            indentation: 0,
            current_depth: 0,
            spent: 0,
            stopped: false,
            names: RefCell::new(Vec::new()),
        }
    }

    /// The result of a whole formatting call: the text clipped to the line cap, or the pending
    /// interruption.
    fn finish(&self, mut out: String) -> rquickjs::Result<String> {
        if self.stopped {
            return Err(rquickjs::Error::Exception);
        }
        out.truncate(clip(&out, MAX_LINE).len());
        Ok(out)
    }

    fn full(&self) -> bool {
        self.stopped || self.spent >= MAX_LINE
    }

    fn spend(&mut self, s: &str) {
        self.spent = self.spent.saturating_add(s.len());
    }

    /// Formats console arguments as `console.log` does (`util.format`): a first string may hold
    /// `%s %d %i %f %j %o %O %c %%`; strings print raw, other values inspected.
    pub(crate) fn format_args(mut self, args: &[Value<'js>]) -> rquickjs::Result<String> {
        let mut out = String::new();
        let mut next = 0;
        if let (Some(first), true) = (args.first(), args.len() > 1) {
            if first.is_string() {
                out = self.substitute(&self.text(first), args, &mut next);
            }
        }
        let mut join = next > 0;
        for a in &args[next..] {
            if self.full() {
                break;
            }
            if join {
                out.push(' ');
            }
            join = true;
            if a.is_string() {
                let s = self.text(a);
                self.spend(&s);
                out.push_str(&s);
            } else {
                let s = self.top(a);
                out.push_str(&s);
            }
        }
        self.finish(out)
    }

    /// `console.dir(value, options)`: one value, inspected (strings quoted) with the `depth` and
    /// `showHidden` the options give as plain data.
    pub(crate) fn dir(mut self, args: &[Value<'js>]) -> rquickjs::Result<String> {
        if let Some(options) = args.get(1).and_then(|o| o.as_object()) {
            if !raw::is_proxy(options.as_value()) {
                if let Some(depth) = self.own_data(options, "depth") {
                    if depth.is_null() {
                        self.opts.depth = f64::INFINITY;
                    } else if let Some(n) = depth.as_number() {
                        self.opts.depth = n;
                    }
                }
                if let Some(hidden) = self
                    .own_data(options, "showHidden")
                    .and_then(|v| v.as_bool())
                {
                    self.opts.show_hidden = hidden;
                }
            }
        }
        let undefined = Value::new_undefined(self.ctx.clone());
        let v = args.first().unwrap_or(&undefined);
        let out = self.top(v);
        self.finish(out)
    }

    /// Formats one value as `util.inspect` would show it.
    pub(crate) fn inspect_value(mut self, v: &Value<'js>) -> rquickjs::Result<String> {
        let out = self.top(v);
        self.finish(out)
    }

    /// Formats one value as `util.inspect` would show it; empty if formatting was interrupted.
    pub(crate) fn inspect(self, v: &Value<'js>) -> String {
        self.inspect_value(v).unwrap_or_default()
    }

    /// One top-level value: each console argument starts afresh.
    fn top(&mut self, v: &Value<'js>) -> String {
        self.seen.clear();
        self.circular.clear();
        self.indentation = 0;
        self.current_depth = 0;
        self.value(v, 0)
    }

    // ---------------------------------------------------------------------------------------
    // util.format

    /// Replaces the format specifiers of `fmt` with the arguments after it; `next` becomes the
    /// index of the first argument left over (0 when nothing was substituted).
    fn substitute(&mut self, fmt: &str, args: &[Value<'js>], next: &mut usize) -> String {
        let mut out = String::new();
        let mut used = 1;
        let mut last = 0;
        let bytes = fmt.as_bytes();
        let mut i = 0;
        while i + 1 < bytes.len() {
            if bytes[i] != b'%' {
                i += 1;
                continue;
            }
            let spec = bytes[i + 1];
            if used < args.len() {
                let arg = &args[used];
                let text = match spec {
                    b's' => Some(self.spec_string(arg)),
                    b'd' => Some(self.spec_number(arg)),
                    b'i' => Some(self.spec_int(arg)),
                    b'f' => Some(self.spec_float(arg)),
                    b'j' => Some(self.json(arg)),
                    b'o' => Some(self.with_opts(
                        Options {
                            show_hidden: true,
                            depth: 4.0,
                            ..self.opts
                        },
                        arg,
                    )),
                    b'O' => Some(self.with_opts(self.opts, arg)),
                    b'c' => Some(String::new()),
                    b'%' => {
                        out.push_str(&fmt[last..i]);
                        last = i + 1;
                        None
                    }
                    _ => None,
                };
                if let Some(text) = text {
                    out.push_str(&fmt[last..i]);
                    self.spend(&text);
                    out.push_str(&text);
                    last = i + 2;
                    used += 1;
                }
            } else if spec == b'%' {
                out.push_str(&fmt[last..i]);
                last = i + 1;
            }
            i += 2;
        }
        if last == 0 {
            *next = 0;
            return String::new();
        }
        out.push_str(&fmt[last..]);
        *next = used;
        out
    }

    fn with_opts(&mut self, opts: Options, v: &Value<'js>) -> String {
        let saved = std::mem::replace(&mut self.opts, opts);
        let s = self.top(v);
        self.opts = saved;
        s
    }

    /// `%s`: strings as they are, numbers as numbers, objects inspected one level deep.
    fn spec_string(&mut self, v: &Value<'js>) -> String {
        if v.is_string() {
            return self.text(v);
        }
        if let Some(obj) = v.as_object() {
            if v.is_function() {
                return self.function_source(obj).unwrap_or_default();
            }
            // Node calls String(value) when a user-defined toString is in reach; the printer runs
            // no guest code, so it inspects as for built-in objects.
            return self.with_opts(
                Options {
                    depth: 0.0,
                    ..self.opts
                },
                v,
            );
        }
        self.primitive(v, false)
    }

    /// The number a value converts to without running guest code (`NaN` for objects other
    /// than boxed numbers and dates).
    fn to_number(&self, v: &Value<'js>) -> Option<f64> {
        if let Some(n) = v.as_number() {
            return Some(n);
        }
        if let Some(b) = v.as_bool() {
            return Some(if b { 1.0 } else { 0.0 });
        }
        if v.is_null() {
            return Some(0.0);
        }
        if v.is_string() {
            let mut n = 0.0;
            // SAFETY: live context and a string value; converting a string runs no code.
            let rc = unsafe { qjs::JS_ToFloat64(self.ctx.as_raw().as_ptr(), &mut n, v.as_raw()) };
            return (rc == 0).then_some(n);
        }
        let obj = v.as_object()?;
        match raw::class_id(v) {
            class::NUMBER | class::DATE | class::BOOLEAN | class::STRING => {
                let p = self.boxed_value(obj)?;
                self.to_number(&p)
            }
            _ => Some(f64::NAN),
        }
    }

    fn number_text(&self, n: f64) -> String {
        if n == 0.0 && n.is_sign_negative() {
            return "-0".into();
        }
        raw::to_display_string(self.ctx, &Value::new_number(self.ctx.clone(), n))
            .unwrap_or_default()
    }

    fn spec_number(&mut self, v: &Value<'js>) -> String {
        if v.is_big_int() {
            return self.primitive(v, false);
        }
        if v.is_symbol() {
            return "NaN".into();
        }
        self.number_text(self.to_number(v).unwrap_or(f64::NAN))
    }

    /// The text `String(value)` gives for primitives, without running guest code.
    fn plain_text(&mut self, v: &Value<'js>) -> Option<String> {
        if v.is_string() {
            return Some(self.text(v));
        }
        if v.is_object() {
            return None;
        }
        Some(raw::to_display_string(self.ctx, v).unwrap_or_default())
    }

    fn spec_int(&mut self, v: &Value<'js>) -> String {
        if v.is_big_int() {
            return self.primitive(v, false);
        }
        if v.is_symbol() {
            return "NaN".into();
        }
        let n = self.plain_text(v).map_or(f64::NAN, |s| parse_int(&s));
        self.number_text(n)
    }

    fn spec_float(&mut self, v: &Value<'js>) -> String {
        if v.is_symbol() {
            return "NaN".into();
        }
        let n = self.plain_text(v).map_or(f64::NAN, |s| parse_float(&s));
        self.number_text(n)
    }

    /// `%j`: JSON text of the value's data (accessors and `toJSON` methods of guest objects are
    /// not run; a cycle prints `[Circular]` as in Node).
    fn json(&mut self, v: &Value<'js>) -> String {
        let mut out = String::new();
        let mut stack = Vec::new();
        if self.json_value(v, &mut stack, &mut out) == JsonStep::Cycle {
            return "[Circular]".into();
        }
        if out.is_empty() {
            "undefined".into()
        } else {
            out
        }
    }

    fn json_value(&mut self, v: &Value<'js>, stack: &mut Vec<usize>, out: &mut String) -> JsonStep {
        if self.full() {
            return JsonStep::Skip;
        }
        if ffi::poll_interrupts(self.ctx, POLL_UNITS).is_err() {
            self.stopped = true;
            return JsonStep::Skip;
        }
        self.spent = self.spent.saturating_add(2);
        if v.is_null() {
            out.push_str("null");
        } else if let Some(b) = v.as_bool() {
            out.push_str(if b { "true" } else { "false" });
        } else if let Some(n) = v.as_number() {
            if n == 0.0 {
                out.push('0');
            } else if n.is_finite() {
                out.push_str(&self.number_text(n));
            } else {
                out.push_str("null");
            }
        } else if v.is_string() {
            let text = serde_json::to_string(&self.text(v)).unwrap_or_default();
            self.spend(&text);
            out.push_str(&text);
        } else if v.is_big_int() {
            out.push_str(&self.primitive(v, false));
        } else if let Some(obj) = v.as_object().filter(|_| !v.is_function()) {
            let obj = self.unwrap_proxy(obj);
            if raw::class_id(obj.as_value()) == class::DATE {
                let iso = self.date_iso(&obj);
                out.push_str(&iso.map_or("null".into(), |s| format!("\"{s}\"")));
                self.spend(out);
                return JsonStep::Done;
            }
            if matches!(
                raw::class_id(obj.as_value()),
                class::NUMBER | class::STRING | class::BOOLEAN
            ) {
                if let Some(p) = self.boxed_value(&obj) {
                    return self.json_value(&p, stack, out);
                }
            }
            let id = raw::identity(obj.as_value());
            if stack.contains(&id) {
                return JsonStep::Cycle;
            }
            if stack.len() >= MAX_NESTING {
                out.push_str("null");
                return JsonStep::Done;
            }
            stack.push(id);
            let step = if raw::is_plain_array(obj.as_value()) {
                self.json_array(&obj, stack, out)
            } else {
                self.json_object(&obj, stack, out)
            };
            stack.pop();
            return step;
        } else {
            return JsonStep::Skip;
        }
        JsonStep::Done
    }

    fn json_array(
        &mut self,
        obj: &Object<'js>,
        stack: &mut Vec<usize>,
        out: &mut String,
    ) -> JsonStep {
        let len = self.array_length(obj);
        out.push('[');
        for i in 0..len {
            if self.full() {
                break;
            }
            if i > 0 {
                out.push(',');
            }
            let item = self
                .own_index(obj, i)
                .filter(|d| d.flags & qjs::JS_PROP_GETSET as i32 == 0)
                .map(|d| d.value);
            let mark = out.len();
            match item {
                Some(item) => match self.json_value(&item, stack, out) {
                    JsonStep::Cycle => return JsonStep::Cycle,
                    JsonStep::Skip => {
                        out.truncate(mark);
                        out.push_str("null");
                    }
                    JsonStep::Done => {}
                },
                None => out.push_str("null"),
            }
        }
        out.push(']');
        JsonStep::Done
    }

    fn json_object(
        &mut self,
        obj: &Object<'js>,
        stack: &mut Vec<usize>,
        out: &mut String,
    ) -> JsonStep {
        let keys = raw::own_keys(self.ctx, obj, false, true).unwrap_or_default();
        out.push('{');
        let mut first = true;
        for key in keys {
            if self.full() {
                break;
            }
            let Some(d) = raw::own_descriptor(self.ctx, obj, &key) else {
                continue;
            };
            if d.flags & qjs::JS_PROP_GETSET as i32 != 0 {
                continue;
            }
            let mark = out.len();
            if !first {
                out.push(',');
            }
            out.push_str(&serde_json::to_string(&self.text(&key)).unwrap_or_default());
            out.push(':');
            match self.json_value(&d.value, stack, out) {
                JsonStep::Cycle => return JsonStep::Cycle,
                JsonStep::Skip => out.truncate(mark),
                JsonStep::Done => first = false,
            }
        }
        out.push('}');
        JsonStep::Done
    }

    // ---------------------------------------------------------------------------------------
    // util.inspect

    fn value(&mut self, v: &Value<'js>, depth: usize) -> String {
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
    fn primitive(&mut self, v: &Value<'js>, split: bool) -> String {
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
    fn string(&self, s: &str, split: bool) -> String {
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
    fn unwrap_proxy(&self, obj: &Object<'js>) -> Object<'js> {
        let mut cur = obj.clone();
        for _ in 0..MAX_CHAIN {
            match raw::proxy_target(self.ctx, cur.as_value()).and_then(|t| t.into_object()) {
                Some(t) => cur = t,
                None => break,
            }
        }
        cur
    }

    fn object(&mut self, obj: &Object<'js>, depth: usize) -> String {
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
        let v = obj.as_value();
        let ctor = self.constructor_name(obj);
        let tag = self.to_string_tag(obj, ctor.as_deref());
        let cls = raw::class_id(v);
        let too_deep = depth as f64 > self.opts.depth || depth >= MAX_NESTING;
        let mut keys;
        let mut parts = Parts {
            base: String::new(),
            open: "{".into(),
            close: "}",
            entries: Vec::new(),
            array_like: false,
        };
        enum Body<'js> {
            Plain,
            Array(usize),
            Typed(TypedArrayKind, Vec<u8>, usize),
            Collection(Vec<Value<'js>>, usize, bool),
            Buffer(Vec<u8>, usize),
            Promise,
            Weak,
            DataView,
        }
        let mut body = Body::Plain;
        if raw::is_plain_array(v) {
            let len = self.array_length(obj);
            keys = self.extra_keys(obj, len);
            let prefix = if ctor.as_deref() == Some("Array") && tag.is_empty() {
                String::new()
            } else {
                prefix(ctor.as_deref(), &tag, "Array", &format!("({len})"))
            };
            parts.open = format!("{prefix}[");
            parts.close = "]";
            if len == 0 && keys.is_empty() {
                return format!("{}]", parts.open);
            }
            parts.array_like = true;
            body = Body::Array(len);
        } else if cls == class::MAP || cls == class::SET {
            let is_map = cls == class::MAP;
            let limit = self.opts.max_array_length;
            let (items, size) = if too_deep {
                (Vec::new(), self.collection_size(obj, is_map))
            } else {
                self.collection(obj, is_map, limit)
            };
            keys = self.keys(obj, false);
            let fallback = if is_map { "Map" } else { "Set" };
            let prefix = prefix(ctor.as_deref(), &tag, fallback, &format!("({size})"));
            if size == 0 && keys.is_empty() {
                return format!("{prefix}{{}}");
            }
            parts.open = format!("{prefix}{{");
            body = Body::Collection(items, size, is_map);
        } else if let Some(kind) = raw::typed_array_kind(v) {
            let cap = self
                .opts
                .max_array_length
                .saturating_mul(kind.element_bytes());
            let (bytes, whole) = raw::view_bytes_capped(self.ctx, v, cap).unwrap_or_default();
            let len = whole / kind.element_bytes();
            keys = self.extra_keys(obj, len);
            let prefix = prefix(
                ctor.as_deref(),
                &tag,
                kind.constructor_name(),
                &format!("({len})"),
            );
            parts.open = format!("{prefix}[");
            parts.close = "]";
            if len == 0 && keys.is_empty() {
                return format!("{}]", parts.open);
            }
            parts.array_like = true;
            body = Body::Typed(kind, bytes, len);
        } else {
            keys = self.keys(obj, cls == class::STRING);
            if cls == class::ARGUMENTS || cls == class::MAPPED_ARGUMENTS {
                parts.open = "[Arguments] {".into();
                if keys.is_empty() {
                    return "[Arguments] {}".into();
                }
            } else if ctor.as_deref() == Some("Object") && !v.is_function() && !special(cls, v) {
                if !tag.is_empty() {
                    parts.open = format!("{}{{", prefix(ctor.as_deref(), &tag, "Object", ""));
                }
                if keys.is_empty() {
                    return format!("{}}}", parts.open);
                }
            } else if v.is_function() {
                parts.base = self.function_base(obj, ctor.as_deref(), &tag);
                if keys.is_empty() {
                    return parts.base;
                }
            } else if cls == class::REGEXP {
                parts.base = self.regexp(obj);
                let p = prefix(ctor.as_deref(), &tag, "RegExp", "");
                if p != "RegExp " {
                    parts.base = format!("{p}{}", parts.base);
                }
                if keys.is_empty() || too_deep {
                    return parts.base;
                }
            } else if cls == class::DATE {
                parts.base = self.date_iso(obj).unwrap_or_else(|| "Invalid Date".into());
                let p = prefix(ctor.as_deref(), &tag, "Date", "");
                if p != "Date " {
                    parts.base = format!("{p}{}", parts.base);
                }
                if keys.is_empty() {
                    return parts.base;
                }
            } else if raw::is_error(v) {
                parts.base = self.error(obj, ctor.as_deref(), &tag, &mut keys);
                if keys.is_empty() {
                    return parts.base;
                }
            } else if raw::is_array_buffer(v) {
                let (bytes, whole) = raw::view_bytes_capped(self.ctx, v, 50).unwrap_or_default();
                let p = prefix(ctor.as_deref(), &tag, "ArrayBuffer", "");
                parts.open = format!("{p}{{");
                body = Body::Buffer(bytes, whole);
            } else if raw::promise_state(self.ctx, v).is_some() {
                parts.open = format!("{}{{", prefix(ctor.as_deref(), &tag, "Promise", ""));
                body = Body::Promise;
            } else if cls == class::WEAKMAP || cls == class::WEAKSET {
                let fallback = if cls == class::WEAKMAP {
                    "WeakMap"
                } else {
                    "WeakSet"
                };
                parts.open = format!("{}{{", prefix(ctor.as_deref(), &tag, fallback, ""));
                body = Body::Weak;
            } else if cls == class::DATAVIEW {
                parts.open = format!("{}{{", prefix(ctor.as_deref(), &tag, "DataView", ""));
                body = Body::DataView;
            } else if let Some(base) = self.boxed(obj, cls, ctor.as_deref(), &tag) {
                parts.base = base;
                if keys.is_empty() {
                    return parts.base;
                }
            } else {
                let p = prefix(ctor.as_deref(), &tag, "Object", "");
                if keys.is_empty() {
                    return format!("{p}{{}}");
                }
                parts.open = format!("{p}{{");
            }
        }

        if too_deep {
            let name = prefix(ctor.as_deref(), &tag, "Object", "");
            let name = name.trim_end();
            return if ctor.is_some() {
                format!("[{name}]")
            } else {
                name.to_string()
            };
        }

        let depth = depth + 1;
        self.seen.push(raw::identity(v));
        self.current_depth = depth;
        match body {
            Body::Plain => {}
            Body::Array(len) => self.array_items(obj, len, depth, &mut parts.entries),
            Body::Typed(kind, bytes, len) => {
                self.typed_items(kind, &bytes, len, &mut parts.entries)
            }
            Body::Collection(items, size, is_map) => {
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
                    parts.entries.push(entry);
                }
                self.indentation -= 2;
                if size > shown {
                    parts.entries.push(more_items(size - shown));
                }
            }
            Body::Buffer(bytes, whole) => {
                let mut hex: Vec<String> = bytes.iter().map(|b| format!("{b:02x}")).collect();
                if whole > bytes.len() {
                    let rest = whole - bytes.len();
                    hex.push(format!("... {rest} more byte{}", plural(rest)));
                }
                parts
                    .entries
                    .push(format!("[Uint8Contents]: <{}>", hex.join(" ")));
                parts.entries.push(format!("byteLength: {whole}"));
            }
            Body::Promise => {
                let entry = match raw::promise_state(self.ctx, v) {
                    Some(PromiseState::Fulfilled(r)) => {
                        self.indentation += 2;
                        let s = self.value(&r, depth);
                        self.indentation -= 2;
                        s
                    }
                    Some(PromiseState::Rejected(r)) => {
                        self.indentation += 2;
                        let s = self.value(&r, depth);
                        self.indentation -= 2;
                        format!("<rejected> {s}")
                    }
                    _ => "<pending>".into(),
                };
                parts.entries.push(entry);
            }
            Body::Weak => parts.entries.push("<items unknown>".into()),
            Body::DataView => {
                for name in ["byteLength", "byteOffset", "buffer"] {
                    let shown = match self.call_intrinsic(class::DATAVIEW, name, obj) {
                        Some(v) => {
                            self.indentation += 2;
                            let s = self.value(&v, depth);
                            self.indentation -= 2;
                            s
                        }
                        None => "undefined".into(),
                    };
                    parts.entries.push(format!("{name}: {shown}"));
                }
            }
        }
        for key in &keys {
            if self.full() {
                break;
            }
            let entry = self.property(obj, key, depth, false);
            parts.entries.push(entry);
        }
        self.seen.pop();

        if let Some(i) = self.circular.iter().position(|&c| c == raw::identity(v)) {
            let reference = format!("<ref *{}>", i + 1);
            parts.base = if parts.base.is_empty() {
                reference
            } else {
                format!("{reference} {}", parts.base)
            };
        }
        self.reduce(parts, depth, obj)
    }

    /// Node's `reduceToSingleString`: one line when the entries fit (and nest at most three
    /// levels), else one entry a line; long arrays first grouped into columns.
    fn reduce(&mut self, mut parts: Parts, depth: usize, obj: &Object<'js>) -> String {
        let count = parts.entries.len();
        if parts.array_like && count > 6 {
            parts.entries = self.group(parts.entries, obj);
        }
        let base = if parts.base.is_empty() {
            String::new()
        } else {
            format!("{} ", parts.base)
        };
        if self.current_depth.saturating_sub(depth) < 3 && count == parts.entries.len() {
            let start = parts.entries.len()
                + self.indentation
                + utf16_len(&parts.open)
                + utf16_len(&parts.base)
                + 10;
            if self.below_break_length(&parts.entries, start, &parts.base) {
                let joined = parts.entries.join(", ");
                if !joined.contains('\n') {
                    return format!("{base}{} {joined} {}", parts.open, parts.close);
                }
            }
        }
        let indent = format!("\n{}", " ".repeat(self.indentation));
        let joined = parts.entries.join(&format!(",{indent}  "));
        format!(
            "{base}{}{indent}  {joined}{indent}{}",
            parts.open, parts.close
        )
    }

    fn below_break_length(&self, entries: &[String], start: usize, base: &str) -> bool {
        let mut total = entries.len() + start;
        if total + entries.len() > self.opts.break_length {
            return false;
        }
        for e in entries {
            total += utf16_len(e);
            if total > self.opts.break_length {
                return false;
            }
        }
        base.is_empty() || !base.contains('\n')
    }

    /// Node's `groupArrayElements`: more than six short entries are laid out in aligned columns.
    fn group(&self, entries: Vec<String>, obj: &Object<'js>) -> Vec<String> {
        let mut total = 0usize;
        let mut max = 0usize;
        let mut len = entries.len();
        if self.opts.max_array_length < entries.len() {
            // The "... more items" entry is left out of the columns.
            len -= 1;
        }
        const SEPARATOR: usize = 2;
        let widths: Vec<usize> = entries[..len].iter().map(|e| width(e)).collect();
        for &w in &widths {
            total += w + SEPARATOR;
            max = max.max(w);
        }
        let actual_max = max + SEPARATOR;
        let break_length = self.opts.break_length;
        if actual_max * 3 + self.indentation >= break_length
            || !(total as f64 / actual_max as f64 > 5.0 || max <= 6)
        {
            return entries;
        }
        let average_bias = (actual_max as f64 - total as f64 / entries.len() as f64).sqrt();
        let biased_max = (actual_max as f64 - 3.0 - average_bias).max(1.0);
        let columns = ((2.5 * biased_max * len as f64).sqrt() / biased_max)
            .round()
            .min(((break_length - self.indentation) / actual_max) as f64)
            .min(12.0)
            .min(15.0) as usize;
        if columns <= 1 {
            return entries;
        }
        let mut column_width = Vec::with_capacity(columns);
        for i in 0..columns {
            let w = (i..len)
                .step_by(columns)
                .map(|j| widths[j])
                .max()
                .unwrap_or(0);
            column_width.push(w + SEPARATOR);
        }
        let numeric = self.all_numbers(obj, entries.len());
        let mut out = Vec::new();
        let mut i = 0;
        while i < len {
            let end = (i + columns).min(len);
            let mut line = String::new();
            for j in i..end {
                let cell = if j + 1 < end {
                    format!("{}, ", entries[j])
                } else {
                    entries[j].clone()
                };
                let target = if j + 1 < end {
                    column_width[j - i]
                } else {
                    column_width[j - i] - SEPARATOR
                };
                let pad = " ".repeat(target.saturating_sub(width(&cell)));
                if numeric {
                    line.push_str(&pad);
                    line.push_str(&cell);
                } else if j + 1 < end {
                    line.push_str(&cell);
                    line.push_str(&pad);
                } else {
                    line.push_str(&cell);
                }
            }
            out.push(line);
            i = end;
        }
        if len < entries.len() {
            out.push(entries[len].clone());
        }
        out
    }

    /// Whether the first `n` items of an array-like are all numbers or bigints (grouped
    /// columns are then right-aligned).
    fn all_numbers(&self, obj: &Object<'js>, n: usize) -> bool {
        if let Some(kind) = raw::typed_array_kind(obj.as_value()) {
            let len =
                raw::view_bytes_capped(self.ctx, obj.as_value(), 0).map_or(0, |(_, whole)| whole);
            return n <= len / kind.element_bytes();
        }
        (0..n).all(|i| {
            self.own_index(obj, i)
                .filter(|d| d.flags & qjs::JS_PROP_GETSET as i32 == 0)
                .is_some_and(|d| d.value.is_number() || d.value.is_big_int())
        })
    }

    /// One `key: value` entry (or just the value, for an array item).
    fn property(
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
            Some(d) => {
                self.indentation += 2;
                let s = self.value(&d.value, depth);
                self.indentation -= 2;
                s
            }
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
    fn array_items(&mut self, obj: &Object<'js>, len: usize, depth: usize, out: &mut Vec<String>) {
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
    fn next_index(&self, obj: &Object<'js>, from: usize) -> Option<usize> {
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
    fn typed_items(
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

    // ---------------------------------------------------------------------------------------
    // Reading guest objects without running guest code

    /// A guest string's text (lone surrogates replaced); empty for other values.
    fn text(&self, v: &Value<'js>) -> String {
        text_of(self.ctx, v)
            .map(|t| t.to_lossy())
            .unwrap_or_default()
    }

    /// A property name as a guest string, made once per formatting call.
    fn key(&self, name: &str) -> Option<Value<'js>> {
        let mut names = self.names.borrow_mut();
        if let Some((_, v)) = names.iter().find(|(n, _)| n == name) {
            return Some(v.clone());
        }
        let v = rquickjs::String::from_str(self.ctx.clone(), name)
            .ok()?
            .into_value();
        if names.len() < 32 {
            names.push((name.to_string(), v.clone()));
        }
        Some(v)
    }

    /// An own data property's value (`None` for accessors, missing keys and proxies).
    fn own_data(&self, obj: &Object<'js>, name: &str) -> Option<Value<'js>> {
        if raw::is_proxy(obj.as_value()) {
            return None;
        }
        let d = raw::own_descriptor(self.ctx, obj, &self.key(name)?)?;
        (d.flags & qjs::JS_PROP_GETSET as i32 == 0).then_some(d.value)
    }

    fn own_index(&self, obj: &Object<'js>, i: usize) -> Option<raw::Descriptor<'js>> {
        let key = Value::new_number(self.ctx.clone(), i as f64);
        raw::own_descriptor(self.ctx, obj, &key)
    }

    /// `obj[key]` where that runs no guest code: a data property, or an accessor of the engine's
    /// own, found along the prototype chain; `None` otherwise.
    fn safe_get(&self, obj: &Object<'js>, key: &Value<'js>) -> Option<Value<'js>> {
        let mut cur = obj.clone();
        for _ in 0..MAX_CHAIN {
            if raw::is_proxy(cur.as_value()) {
                return None;
            }
            if let Some(d) = raw::own_descriptor(self.ctx, &cur, key) {
                if d.flags & qjs::JS_PROP_GETSET as i32 == 0 {
                    return Some(d.value);
                }
                return self
                    .error_accessor(&d.getter, key)
                    .and_then(|_| self.call_native(&d.getter, obj));
            }
            cur = raw::prototype_of(self.ctx, &cur)?;
        }
        None
    }

    /// `Some(())` when `getter` is the engine's own accessor for `key` on `Error.prototype`
    /// (the only accessors the printer calls: `stack`), whose call runs no guest code.
    fn error_accessor(&self, getter: &Value<'js>, key: &Value<'js>) -> Option<()> {
        let proto = raw::class_proto(self.ctx, class::ERROR)?;
        let d = raw::own_descriptor(self.ctx, &proto, key)?;
        raw::strict_equal(self.ctx, &d.getter, getter).then_some(())
    }

    /// Whether reading `name` or `message` of `obj` would run a guest accessor (reading an
    /// error's stack reads them the first time).
    fn guest_accessor(&self, obj: &Object<'js>, name: &str) -> bool {
        let Some(key) = self.key(name) else {
            return true;
        };
        let mut cur = obj.clone();
        for _ in 0..MAX_CHAIN {
            if raw::is_proxy(cur.as_value()) {
                return true;
            }
            if let Some(d) = raw::own_descriptor(self.ctx, &cur, &key) {
                return d.flags & qjs::JS_PROP_GETSET as i32 != 0;
            }
            match raw::prototype_of(self.ctx, &cur) {
                Some(p) => cur = p,
                None => return false,
            }
        }
        true
    }

    fn safe_get_str(&self, obj: &Object<'js>, name: &str) -> Option<Value<'js>> {
        self.safe_get(obj, &self.key(name)?)
    }

    fn has_property(&self, obj: &Object<'js>, name: &str) -> bool {
        let Some(key) = self.key(name) else {
            return false;
        };
        let mut cur = obj.clone();
        for _ in 0..MAX_CHAIN {
            if raw::is_proxy(cur.as_value()) {
                return false;
            }
            if raw::own_descriptor(self.ctx, &cur, &key).is_some() {
                return true;
            }
            match raw::prototype_of(self.ctx, &cur) {
                Some(p) => cur = p,
                None => return false,
            }
        }
        false
    }

    /// Calls an engine-native function with `this`; `None` for guest functions or on error.
    fn call_native(&self, f: &Value<'js>, this: &Object<'js>) -> Option<Value<'js>> {
        if !raw::is_native_function(f) {
            return None;
        }
        let f = f.as_function()?;
        match f.call::<_, Value>((This(this.clone()),)) {
            Ok(v) => Some(v),
            Err(_) => {
                let _ = self.ctx.catch();
                None
            }
        }
    }

    /// Calls a method of a built-in prototype (taken from the engine) on `this`.
    fn call_intrinsic(
        &self,
        class_id: u32,
        method: &str,
        this: &Object<'js>,
    ) -> Option<Value<'js>> {
        let proto = raw::class_proto(self.ctx, class_id)?;
        let key = self.key(method)?;
        let d = raw::own_descriptor(self.ctx, &proto, &key)?;
        let f = if d.flags & qjs::JS_PROP_GETSET as i32 != 0 {
            d.getter
        } else {
            d.value
        };
        self.call_native(&f, this)
    }

    fn array_length(&self, obj: &Object<'js>) -> usize {
        self.own_data(obj, "length")
            .and_then(|l| l.as_number())
            .unwrap_or(0.0)
            .clamp(0.0, u32::MAX as f64) as usize
    }

    /// Keys of an array or typed array other than its indices. Listing them lists every index
    /// too, so past `MAX_LISTED_ITEMS` items they are left out (Node shows them).
    fn extra_keys(&self, obj: &Object<'js>, len: usize) -> Vec<Value<'js>> {
        if len > MAX_LISTED_ITEMS {
            return Vec::new();
        }
        self.keys(obj, true)
    }

    /// Own keys shown for an object: enumerable string keys then enumerable symbols (every own
    /// key with `showHidden`); array indices left out when `skip_index`.
    fn keys(&self, obj: &Object<'js>, skip_index: bool) -> Vec<Value<'js>> {
        let enumerable_only = !self.opts.show_hidden;
        let keys = if skip_index {
            raw::own_non_index_keys(self.ctx, obj, true, enumerable_only)
        } else if raw::is_proxy(obj.as_value()) {
            None
        } else {
            raw::own_keys(self.ctx, obj, true, enumerable_only)
        };
        keys.unwrap_or_else(|| {
            let _ = self.ctx.catch();
            Vec::new()
        })
    }

    /// The name of the nearest constructor along the prototype chain whose `prototype` the
    /// object inherits from; `None` for a null prototype.
    fn constructor_name(&self, obj: &Object<'js>) -> Option<String> {
        let key = self.key("constructor")?;
        let mut cur = obj.clone();
        let mut first = true;
        for _ in 0..MAX_CHAIN {
            if raw::is_proxy(cur.as_value()) {
                return Some("Object".into());
            }
            if let Some(d) = raw::own_descriptor(self.ctx, &cur, &key) {
                if d.flags & qjs::JS_PROP_GETSET as i32 == 0 {
                    if let Some(f) = d.value.as_object().filter(|_| d.value.is_function()) {
                        let name = self
                            .own_data(f, "name")
                            .map(|n| self.text(&n))
                            .unwrap_or_default();
                        if !name.is_empty() && self.inherits(obj, f) {
                            return Some(name);
                        }
                    }
                }
            }
            match raw::prototype_of(self.ctx, &cur) {
                Some(p) => cur = p,
                None if first => return None,
                None => return Some("Object".into()),
            }
            first = false;
        }
        Some("Object".into())
    }

    /// `obj instanceof f`, read from `f.prototype` as plain data.
    fn inherits(&self, obj: &Object<'js>, f: &Object<'js>) -> bool {
        let Some(proto) = self.own_data(f, "prototype") else {
            return false;
        };
        let target = raw::identity(&proto);
        let mut cur = obj.clone();
        for _ in 0..MAX_CHAIN {
            match raw::prototype_of(self.ctx, &cur) {
                Some(p) if raw::identity(p.as_value()) == target => return true,
                Some(p) => cur = p,
                None => return false,
            }
        }
        false
    }

    /// `Symbol.toStringTag` as inherited data, unless it is the constructor's name already or
    /// an own enumerable property (then printed as a key).
    fn to_string_tag(&self, obj: &Object<'js>, ctor: Option<&str>) -> String {
        let Some(key) = raw::symbol_to_string_tag(self.ctx) else {
            return String::new();
        };
        if let Some(d) = raw::own_descriptor(self.ctx, obj, &key) {
            if d.flags & qjs::JS_PROP_ENUMERABLE as i32 != 0 {
                return String::new();
            }
        }
        let mut cur = obj.clone();
        for _ in 0..MAX_CHAIN {
            if raw::is_proxy(cur.as_value()) {
                return String::new();
            }
            if let Some(d) = raw::own_descriptor(self.ctx, &cur, &key) {
                if d.flags & qjs::JS_PROP_GETSET as i32 != 0 || !d.value.is_string() {
                    return String::new();
                }
                let tag = self.text(&d.value);
                return if Some(tag.as_str()) == ctor {
                    String::new()
                } else {
                    tag
                };
            }
            match raw::prototype_of(self.ctx, &cur) {
                Some(p) => cur = p,
                None => return String::new(),
            }
        }
        String::new()
    }

    /// Map entries as `[k0, v0, k1, v1, ...]` (Set values as a list), at most `limit` entries,
    /// and the collection's size; read with the realm's own `forEach`.
    fn collection(
        &self,
        obj: &Object<'js>,
        is_map: bool,
        limit: usize,
    ) -> (Vec<Value<'js>>, usize) {
        let run = || -> rquickjs::Result<(Vec<Value<'js>>, usize)> {
            let cls = if is_map { class::MAP } else { class::SET };
            let proto = raw::class_proto(self.ctx, cls).ok_or(rquickjs::Error::Unknown)?;
            let for_each = self
                .own_data(&proto, "forEach")
                .filter(raw::is_native_function)
                .and_then(|f| f.into_function())
                .ok_or(rquickjs::Error::Unknown)?;
            collect_entries(self.ctx, obj, &for_each, is_map, limit)
        };
        run().unwrap_or_else(|_| {
            let _ = self.ctx.catch();
            (Vec::new(), 0)
        })
    }

    fn collection_size(&self, obj: &Object<'js>, is_map: bool) -> usize {
        let cls = if is_map { class::MAP } else { class::SET };
        self.call_intrinsic(cls, "size", obj)
            .and_then(|s| s.as_number())
            .unwrap_or(0.0) as usize
    }

    /// The source text `Function.prototype.toString` gives.
    fn function_source(&self, f: &Object<'js>) -> Option<String> {
        let proto = raw::function_proto(self.ctx)?;
        let to_string = self.own_data(&proto, "toString")?;
        let s = self.call_native(&to_string, f)?;
        Some(self.text(&s))
    }

    /// `[Function: f]`, `[AsyncFunction: f]`, `[class A extends B]` and the like.
    fn function_base(&self, f: &Object<'js>, ctor: Option<&str>, tag: &str) -> String {
        let source = self.function_source(f).unwrap_or_default();
        if source.starts_with("class") && source.ends_with('}') {
            let body = &source[5..];
            if let Some(brace) = body.find('{') {
                if !body[..brace].contains('(') {
                    return self.class_base(f, ctor, tag);
                }
            }
        }
        let kind = match raw::class_id(f.as_value()) {
            class::GENERATOR_FUNCTION => "GeneratorFunction",
            class::ASYNC_FUNCTION => "AsyncFunction",
            class::ASYNC_GENERATOR_FUNCTION => "AsyncGeneratorFunction",
            _ => "Function",
        };
        let mut base = format!("[{kind}");
        if ctor.is_none() {
            base.push_str(" (null prototype)");
        }
        let name = self
            .safe_get_str(f, "name")
            .filter(|n| n.is_string())
            .map(|n| self.text(&n))
            .unwrap_or_default();
        if name.is_empty() {
            base.push_str(" (anonymous)");
        } else {
            base.push_str(&format!(": {name}"));
        }
        base.push(']');
        if let Some(c) = ctor.filter(|c| *c != kind) {
            base.push_str(&format!(" {c}"));
        }
        if !tag.is_empty() && Some(tag) != ctor {
            base.push_str(&format!(" [{tag}]"));
        }
        base
    }

    fn class_base(&self, f: &Object<'js>, ctor: Option<&str>, tag: &str) -> String {
        let name = self
            .own_data(f, "name")
            .filter(|n| n.is_string())
            .map(|n| self.text(&n))
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| "(anonymous)".into());
        let mut base = format!("class {name}");
        if let Some(c) = ctor.filter(|c| *c != "Function") {
            base.push_str(&format!(" [{c}]"));
        }
        if !tag.is_empty() && Some(tag) != ctor {
            base.push_str(&format!(" [{tag}]"));
        }
        if ctor.is_some() {
            let parent = raw::prototype_of(self.ctx, f)
                .and_then(|p| self.safe_get_str(&p, "name"))
                .filter(|n| n.is_string())
                .map(|n| self.text(&n))
                .unwrap_or_default();
            if !parent.is_empty() {
                base.push_str(&format!(" extends {parent}"));
            }
        } else {
            base.push_str(" extends [null prototype]");
        }
        format!("[{base}]")
    }

    /// `/source/flags`, read through the realm's own RegExp accessors.
    fn regexp(&self, obj: &Object<'js>) -> String {
        let source = self
            .call_intrinsic(class::REGEXP, "source", obj)
            .map(|s| self.text(&s))
            .unwrap_or_default();
        let mut flags = String::new();
        for (flag, name) in [
            ('d', "hasIndices"),
            ('g', "global"),
            ('i', "ignoreCase"),
            ('m', "multiline"),
            ('s', "dotAll"),
            ('u', "unicode"),
            ('v', "unicodeSets"),
            ('y', "sticky"),
        ] {
            if self
                .call_intrinsic(class::REGEXP, name, obj)
                .and_then(|b| b.as_bool())
                .unwrap_or(false)
            {
                flags.push(flag);
            }
        }
        format!("/{source}/{flags}")
    }

    /// A valid date's ISO string; `None` for an invalid date.
    fn date_iso(&self, obj: &Object<'js>) -> Option<String> {
        let time = self
            .call_intrinsic(class::DATE, "getTime", obj)?
            .as_number()?;
        if time.is_nan() {
            return None;
        }
        let iso = self.call_intrinsic(class::DATE, "toISOString", obj)?;
        Some(self.text(&iso))
    }

    /// The primitive inside a boxed Number, String, Boolean, Symbol or BigInt (or a date's
    /// time).
    fn boxed_value(&self, obj: &Object<'js>) -> Option<Value<'js>> {
        let cls = raw::class_id(obj.as_value());
        match cls {
            class::NUMBER
            | class::STRING
            | class::BOOLEAN
            | class::SYMBOL
            | class::BIG_INT
            | class::DATE => self.call_intrinsic(cls, "valueOf", obj),
            _ => None,
        }
    }

    /// `[Number: 5]`, `[String: 'x']` and the like; `None` for other objects.
    fn boxed(
        &mut self,
        obj: &Object<'js>,
        cls: u32,
        ctor: Option<&str>,
        tag: &str,
    ) -> Option<String> {
        let kind = match cls {
            class::NUMBER => "Number",
            class::STRING => "String",
            class::BOOLEAN => "Boolean",
            class::SYMBOL => "Symbol",
            class::BIG_INT => "BigInt",
            _ => return None,
        };
        let inner = self.boxed_value(obj)?;
        let mut base = format!("[{kind}");
        match ctor {
            None => base.push_str(" (null prototype)"),
            Some(c) if c != kind => base.push_str(&format!(" ({c})")),
            _ => {}
        }
        let shown = self.primitive(&inner, false);
        base.push_str(&format!(": {shown}]"));
        if !tag.is_empty() && Some(tag) != ctor {
            base.push_str(&format!(" [{tag}]"));
        }
        Some(base)
    }

    /// An error as Node shows it: its stack (name and message first), bracketed when it has no
    /// frames, with the class name worked in; `keys` loses what the stack already shows.
    fn error(
        &mut self,
        obj: &Object<'js>,
        ctor: Option<&str>,
        tag: &str,
        keys: &mut Vec<Value<'js>>,
    ) -> String {
        let name_v = self.safe_get_str(obj, "name");
        let name = match &name_v {
            Some(n) if !n.is_undefined() && !n.is_null() => {
                self.plain_text(n).unwrap_or_else(|| "Error".into())
            }
            _ => "Error".into(),
        };
        let message_v = self.safe_get_str(obj, "message");
        let message = message_v
            .as_ref()
            .filter(|m| m.is_string())
            .map(|m| self.text(m))
            .unwrap_or_default();
        let readable = !self.guest_accessor(obj, "name") && !self.guest_accessor(obj, "message");
        let stack = match self.safe_get_str(obj, "stack").filter(|_| readable) {
            Some(s) if s.is_string() && !self.text(&s).is_empty() => self.text(&s),
            _ => {
                let n = name_v
                    .as_ref()
                    .filter(|n| !n.is_undefined())
                    .and_then(|n| self.plain_text(n))
                    .unwrap_or_else(|| "Error".into());
                match (n.is_empty(), message.is_empty()) {
                    (true, _) => message.clone(),
                    (false, true) => n,
                    (false, false) => format!("{n}: {message}"),
                }
            }
        };
        if !self.opts.show_hidden {
            keys.retain(|k| {
                let k_text = if k.is_string() {
                    self.text(k)
                } else {
                    return true;
                };
                if !matches!(k_text.as_str(), "name" | "message" | "stack") {
                    return true;
                }
                match self.own_data(obj, &k_text) {
                    Some(v) if v.is_string() => !stack.contains(&self.text(&v)),
                    _ => false,
                }
            });
        }
        for extra in ["cause", "errors"] {
            let listed = keys.iter().any(|k| k.is_string() && self.text(k) == extra);
            let present = if extra == "cause" {
                self.has_property(obj, extra)
            } else {
                self.safe_get_str(obj, extra)
                    .is_some_and(|e| raw::is_plain_array(&e))
            };
            if present && !listed {
                if let Some(k) = self.key(extra) {
                    keys.push(k);
                }
            }
        }
        let mut stack = improve_stack(stack, ctor, &name, tag);
        let mut pos = if message.is_empty() {
            None
        } else {
            stack
                .find(&message)
                .filter(|&p| p != 0)
                .map(|p| p + message.len())
        };
        if pos.is_some_and(|p| p > stack.len()) {
            pos = None;
        }
        if !stack[pos.unwrap_or(0)..].contains("\n    at") {
            stack = format!("[{stack}]");
        }
        if self.indentation != 0 {
            stack = stack.replace('\n', &format!("\n{}", " ".repeat(self.indentation)));
        }
        self.spend(&stack);
        stack
    }
}

#[derive(PartialEq, Eq)]
enum JsonStep {
    Done,
    /// Left out (undefined, a function, a symbol).
    Skip,
    Cycle,
}

/// Objects whose kind prints specially even when their constructor is `Object`.
fn special(cls: u32, v: &Value<'_>) -> bool {
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

/// Node's `improveStack`: the class name in front of an error's stack when its name lacks it.
fn improve_stack(stack: String, ctor: Option<&str>, name: &str, tag: &str) -> String {
    let Some(ctor) = ctor else {
        return stack;
    };
    let len = name.len();
    let looks_normal = name.ends_with("Error")
        && stack.starts_with(name)
        && (stack.len() == len || matches!(stack.as_bytes()[len], b':' | b'\n'));
    if !looks_normal {
        return stack;
    }
    let fallback = prefix(Some(ctor), tag, "Error", "");
    let fallback = fallback.trim_end();
    if name == fallback {
        return stack;
    }
    if fallback.contains(name) {
        if len == 0 {
            format!("{fallback}: {stack}")
        } else {
            format!("{fallback}{}", &stack[len..])
        }
    } else {
        format!("{fallback} [{name}]{}", &stack[len..])
    }
}

/// Node's `getPrefix`: `Name(size) [tag] `, or `[fallback(size): null prototype] `.
fn prefix(ctor: Option<&str>, tag: &str, fallback: &str, size: &str) -> String {
    match ctor {
        None if !tag.is_empty() && tag != fallback => {
            format!("[{fallback}{size}: null prototype] [{tag}] ")
        }
        None => format!("[{fallback}{size}: null prototype] "),
        Some(c) if !tag.is_empty() && tag != c => format!("{c}{size} [{tag}] "),
        Some(c) => format!("{c}{size} "),
    }
}

fn plural(n: usize) -> &'static str {
    if n > 1 {
        "s"
    } else {
        ""
    }
}

fn more_items(n: usize) -> String {
    format!("... {n} more item{}", plural(n))
}

fn is_identifier(k: &str) -> bool {
    let mut chars = k.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Quotes a string as inspect does: single quotes, or double quotes when it holds a single
/// quote, or backticks when it holds both (and no `${`); control characters escaped.
fn quote(s: &str) -> String {
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

fn utf16_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

/// The longest prefix of `s` of at most `max` UTF-16 units.
fn utf16_prefix(s: &str, max: usize) -> &str {
    let mut units = 0;
    for (i, c) in s.char_indices() {
        units += c.len_utf16();
        if units > max {
            return &s[..i];
        }
    }
    s
}

/// Columns a string takes in a terminal: wide East Asian forms count 2, combining marks 0.
fn width(s: &str) -> usize {
    s.chars()
        .map(|c| {
            let cp = c as u32;
            if (0x300..=0x36f).contains(&cp)
                || (0x200b..=0x200f).contains(&cp)
                || (0xfe00..=0xfe0f).contains(&cp)
            {
                0
            } else if (0x1100..=0x115f).contains(&cp)
                || (0x2e80..=0xa4cf).contains(&cp)
                || (0xac00..=0xd7a3).contains(&cp)
                || (0xf900..=0xfaff).contains(&cp)
                || (0xfe30..=0xfe4f).contains(&cp)
                || (0xff00..=0xff60).contains(&cp)
                || (0xffe0..=0xffe6).contains(&cp)
                || (0x1f300..=0x1faff).contains(&cp)
                || (0x20000..=0x3fffd).contains(&cp)
            {
                2
            } else {
                1
            }
        })
        .sum()
}

fn f16_to_f64(h: u16) -> f64 {
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

/// `parseInt(text)` (radix 10, or 16 after `0x`).
fn parse_int(text: &str) -> f64 {
    let s = text.trim_start();
    let (neg, s) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let (radix, s) = if s.len() >= 2 && (s.starts_with("0x") || s.starts_with("0X")) {
        (16, &s[2..])
    } else {
        (10, s)
    };
    let digits: String = s.chars().take_while(|c| c.is_digit(radix)).collect();
    if digits.is_empty() {
        return f64::NAN;
    }
    let mut n = 0f64;
    for d in digits.chars() {
        n = n * radix as f64 + d.to_digit(radix).unwrap_or(0) as f64;
    }
    if neg {
        -n
    } else {
        n
    }
}

/// `parseFloat(text)`.
fn parse_float(text: &str) -> f64 {
    let s = text.trim_start();
    let b = s.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    if s[i..].starts_with("Infinity") {
        return if b.first() == Some(&b'-') {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
    }
    let start_digits = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let mut seen = i > start_digits;
    if i < b.len() && b[i] == b'.' {
        let dot = i;
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        seen |= i > dot + 1;
        if !seen {
            return f64::NAN;
        }
    }
    if !seen {
        return f64::NAN;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        let exp_start = j;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        if j > exp_start {
            i = j;
        }
    }
    s[..i].parse().unwrap_or(f64::NAN)
}

/// Formats a console call: `console.dir` inspects its first argument with its options, the
/// other methods format their arguments as `console.log`.
pub(crate) fn format_console<'js>(
    ctx: &Ctx<'js>,
    method: &str,
    args: &[Value<'js>],
) -> rquickjs::Result<String> {
    let f = Formatter::new(ctx);
    if method == "dir" {
        f.dir(args)
    } else {
        f.format_args(args)
    }
}

/// How `console.table` shows one cell (Node: no line breaks, three array items, objects with
/// more than two keys as `[Object]`).
pub(crate) fn table_cell<'js>(ctx: &Ctx<'js>, v: &Value<'js>) -> rquickjs::Result<String> {
    let mut depth = 0.0;
    if let Some(obj) = v.as_object() {
        if !raw::is_plain_array(v) && !raw::is_proxy(v) && !v.is_function() {
            let keys = raw::own_keys(ctx, obj, false, true).unwrap_or_default();
            if keys.len() > 2 {
                depth = -1.0;
            }
        }
    }
    let opts = Options {
        depth,
        max_array_length: 3,
        break_length: usize::MAX / 4,
        ..Options::default()
    };
    Formatter::with_options(ctx, opts).inspect_value(v)
}

#[cfg(test)]
mod tests;
