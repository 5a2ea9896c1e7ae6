//! `util.format`: the `%s %d %i %f %j %o %O %c %%` specifiers of a first string argument,
//! and `%j`'s JSON text of a value's data.

use super::raw::class;
use super::{ffi, raw, Formatter, Options, MAX_NESTING, POLL_UNITS};
use rquickjs::{qjs, Object, Value};

impl<'a, 'js> Formatter<'a, 'js> {
    /// Replaces the format specifiers of `fmt` with the arguments after it; `next` becomes the
    /// index of the first argument left over (0 when nothing was substituted).
    pub(super) fn substitute(
        &mut self,
        fmt: &str,
        args: &[Value<'js>],
        next: &mut usize,
    ) -> String {
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

    pub(super) fn with_opts(&mut self, opts: Options, v: &Value<'js>) -> String {
        let saved = std::mem::replace(&mut self.opts, opts);
        let s = self.top(v);
        self.opts = saved;
        s
    }

    /// `%s`: strings as they are, numbers as numbers, objects inspected one level deep.
    pub(super) fn spec_string(&mut self, v: &Value<'js>) -> String {
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
    pub(super) fn to_number(&self, v: &Value<'js>) -> Option<f64> {
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

    pub(super) fn number_text(&self, n: f64) -> String {
        if n == 0.0 && n.is_sign_negative() {
            return "-0".into();
        }
        raw::to_display_string(self.ctx, &Value::new_number(self.ctx.clone(), n))
            .unwrap_or_default()
    }

    pub(super) fn spec_number(&mut self, v: &Value<'js>) -> String {
        if v.is_big_int() {
            return self.primitive(v, false);
        }
        if v.is_symbol() {
            return "NaN".into();
        }
        self.number_text(self.to_number(v).unwrap_or(f64::NAN))
    }

    /// The text `String(value)` gives for primitives, without running guest code.
    pub(super) fn plain_text(&mut self, v: &Value<'js>) -> Option<String> {
        if v.is_string() {
            return Some(self.text(v));
        }
        if v.is_object() {
            return None;
        }
        Some(raw::to_display_string(self.ctx, v).unwrap_or_default())
    }

    pub(super) fn spec_int(&mut self, v: &Value<'js>) -> String {
        if v.is_big_int() {
            return self.primitive(v, false);
        }
        if v.is_symbol() {
            return "NaN".into();
        }
        let n = self.plain_text(v).map_or(f64::NAN, |s| parse_int(&s));
        self.number_text(n)
    }

    pub(super) fn spec_float(&mut self, v: &Value<'js>) -> String {
        if v.is_symbol() {
            return "NaN".into();
        }
        let n = self.plain_text(v).map_or(f64::NAN, |s| parse_float(&s));
        self.number_text(n)
    }

    /// `%j`: JSON text of the value's data (accessors and `toJSON` methods of guest objects are
    /// not run; a cycle prints `[Circular]` as in Node).
    pub(super) fn json(&mut self, v: &Value<'js>) -> String {
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

    pub(super) fn json_value(
        &mut self,
        v: &Value<'js>,
        stack: &mut Vec<usize>,
        out: &mut String,
    ) -> JsonStep {
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

    pub(super) fn json_array(
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

    pub(super) fn json_object(
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
}

#[derive(PartialEq, Eq)]
pub(super) enum JsonStep {
    Done,
    /// Left out (undefined, a function, a symbol).
    Skip,
    Cycle,
}

/// `parseInt(text)` (radix 10, or 16 after `0x`).
pub(super) fn parse_int(text: &str) -> f64 {
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
pub(super) fn parse_float(text: &str) -> f64 {
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
