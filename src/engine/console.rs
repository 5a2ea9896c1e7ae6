//! Readable, bounded formatting of guest values for captured console output.

use super::marshal::{child_path, string_prop, text_of};
use super::raw;
use rquickjs::{Ctx, Object, Value};

const MAX_DEPTH: usize = 2;
const MAX_ITEMS: usize = 50;
const MAX_STRING: usize = 10_000;
/// Upper bound on one formatted console line, whatever the arguments.
pub(crate) const MAX_LINE: usize = 64 << 10;

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

/// Formats guest values into one line of at most `MAX_LINE` bytes.
pub(crate) struct Formatter<'a, 'js> {
    ctx: &'a Ctx<'js>,
    out: String,
    seen: Vec<usize>,
}

/// The longest prefix of `s` that fits in `max` bytes without splitting a character.
pub(crate) fn clip(s: &str, max: usize) -> &str {
    &s[..s.floor_char_boundary(max)]
}

impl<'a, 'js> Formatter<'a, 'js> {
    pub(crate) fn new(ctx: &'a Ctx<'js>) -> Self {
        Formatter {
            ctx,
            out: String::new(),
            seen: Vec::new(),
        }
    }

    fn full(&self) -> bool {
        self.out.len() >= MAX_LINE
    }

    /// Appends as much of `s` as fits in the line.
    fn push(&mut self, s: &str) {
        if !self.full() {
            let room = MAX_LINE - self.out.len();
            self.out.push_str(clip(s, room));
        }
    }

    /// Formats console arguments the way Node prints them: strings raw, others inspected.
    /// The line never exceeds `MAX_LINE` bytes.
    pub(crate) fn format_args(mut self, args: &[Value<'js>]) -> String {
        for (i, a) in args.iter().enumerate() {
            if i > 0 {
                self.push(" ");
            }
            if a.is_string() {
                let s = self.text(a);
                self.push(&s);
            } else {
                self.value(a, 0);
            }
        }
        self.out
    }

    /// Formats one value as `console.log` would show it.
    pub(crate) fn inspect(mut self, v: &Value<'js>) -> String {
        self.value(v, 0);
        self.out
    }

    fn value(&mut self, v: &Value<'js>, depth: usize) {
        if self.full() {
            return;
        }
        if let Some(text) = self.leaf(v) {
            return self.push(&text);
        }
        let Some(obj) = v.as_object() else {
            return self.push("[unknown]");
        };
        if raw::is_error(v) {
            let text = self.error(obj);
            return self.push(&text);
        }
        if raw::is_date(v) {
            let text = self.date(obj);
            return self.push(&text);
        }
        self.nested(v, obj, depth);
    }

    /// Primitives and functions, which print without looking inside; `None` for other objects.
    fn leaf(&self, v: &Value<'js>) -> Option<String> {
        if v.is_undefined() {
            return Some("undefined".into());
        }
        if v.is_null() {
            return Some("null".into());
        }
        if let Some(b) = v.as_bool() {
            return Some(b.to_string());
        }
        if let Some(n) = v.as_number() {
            if n == 0.0 && n.is_sign_negative() {
                return Some("-0".into());
            }
            return Some(raw::to_display_string(self.ctx, v).unwrap_or_default());
        }
        if v.is_big_int() {
            return Some(raw::to_display_string(self.ctx, v).unwrap_or_default() + "n");
        }
        if v.is_string() {
            return Some(self.quoted(v));
        }
        if let Some(sym) = v.as_symbol() {
            let desc = sym.description().ok().and_then(|d| text_of(self.ctx, &d));
            let desc = desc.map(|t| t.to_lossy()).unwrap_or_default();
            return Some(format!("Symbol({desc})"));
        }
        if v.is_function() {
            let name = v.as_object().and_then(|o| string_prop(self.ctx, o, "name"));
            return Some(match name.unwrap_or_default() {
                name if name.is_empty() => "[Function (anonymous)]".into(),
                name => format!("[Function: {name}]"),
            });
        }
        None
    }

    /// A guest string's text (lone surrogates replaced); empty for other values.
    fn text(&self, v: &Value<'js>) -> String {
        text_of(self.ctx, v)
            .map(|t| t.to_lossy())
            .unwrap_or_default()
    }

    /// A string as it shows inside a structure: quoted, escaped and clipped.
    fn quoted(&self, v: &Value<'js>) -> String {
        let s = self.text(v);
        let clipped = clip(&s, MAX_STRING);
        let mut quoted = format!(
            "'{}'",
            clipped
                .replace('\\', "\\\\")
                .replace('\'', "\\'")
                .replace('\n', "\\n")
        );
        if clipped.len() < s.len() {
            quoted.push_str(&format!("... {} more bytes", s.len() - clipped.len()));
        }
        quoted
    }

    /// `Name: message` and the stack, as Node prints an error.
    fn error(&self, obj: &Object<'js>) -> String {
        let stack = string_prop(self.ctx, obj, "stack");
        let name = string_prop(self.ctx, obj, "name").unwrap_or_else(|| "Error".into());
        let msg = string_prop(self.ctx, obj, "message").unwrap_or_default();
        let head = if msg.is_empty() {
            name
        } else {
            format!("{name}: {msg}")
        };
        match stack {
            // A stack carries its own `Name: message` line unless the guest replaced it with
            // frames only.
            Some(st) if st.trim_start().starts_with("at ") => {
                format!("{head}\n{}", st.trim_end())
            }
            Some(st) if !st.is_empty() => st.trim_end().to_string(),
            _ => head,
        }
    }

    /// A date as its ISO string.
    fn date(&self, obj: &Object<'js>) -> String {
        obj.get::<_, rquickjs::Function>("toISOString")
            .and_then(|f| f.call::<_, Value>((rquickjs::function::This(obj.clone()),)))
            .ok()
            .and_then(|s| text_of(self.ctx, &s))
            .map(|t| t.to_lossy())
            .unwrap_or_else(|| "Invalid Date".into())
    }

    /// Arrays and objects: their items, unless already being printed or too deep.
    fn nested(&mut self, v: &Value<'js>, obj: &Object<'js>, depth: usize) {
        let id = raw::identity(v);
        if self.seen.contains(&id) {
            return self.push("[Circular]");
        }
        if depth > MAX_DEPTH {
            return self.push(if v.is_array() { "[Array]" } else { "[Object]" });
        }
        self.seen.push(id);
        if v.is_array() {
            self.array(obj, depth);
        } else {
            self.object(obj, depth);
        }
        self.seen.pop();
    }

    fn array(&mut self, obj: &Object<'js>, depth: usize) {
        let len = obj
            .get::<_, Value>("length")
            .ok()
            .and_then(|l| l.as_number())
            .unwrap_or(0.0)
            .max(0.0) as usize;
        if len == 0 {
            return self.push("[]");
        }
        self.push("[ ");
        for i in 0..len.min(MAX_ITEMS) {
            if i > 0 {
                self.push(", ");
            }
            match obj.get::<_, Value>(i as u32) {
                Ok(item) => self.value(&item, depth + 1),
                Err(_) => {
                    let _ = self.ctx.catch();
                    self.push("<error>")
                }
            }
        }
        if len > MAX_ITEMS {
            self.push(&format!(", ... {} more items", len - MAX_ITEMS));
        }
        self.push(" ]");
    }

    fn object(&mut self, obj: &Object<'js>, depth: usize) {
        let prefix = if raw::is_map(obj.as_value()) {
            "Map "
        } else if raw::is_set(obj.as_value()) {
            "Set "
        } else {
            ""
        };
        let keys = raw::own_keys(self.ctx, obj, false, true).unwrap_or_default();
        if keys.is_empty() {
            return self.push(&format!("{prefix}{{}}"));
        }
        self.push(&format!("{prefix}{{ "));
        for (i, key) in keys.iter().take(MAX_ITEMS).enumerate() {
            if i > 0 {
                self.push(", ");
            }
            let name = self.text(key);
            let shown = child_path("", &name);
            self.push(shown.strip_prefix('.').unwrap_or(&shown));
            self.push(": ");
            match obj.get::<_, Value>(key.clone()) {
                Ok(item) => self.value(&item, depth + 1),
                Err(_) => {
                    let _ = self.ctx.catch();
                    self.push("<error>")
                }
            }
        }
        if keys.len() > MAX_ITEMS {
            self.push(&format!(", ... {} more keys", keys.len() - MAX_ITEMS));
        }
        self.push(" }");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rquickjs::{Context, Runtime};

    fn inspect(src: &str) -> String {
        let rt = Runtime::new().unwrap();
        let context = Context::full(&rt).unwrap();
        context.with(|ctx| {
            let v: Value = ctx.eval(src).unwrap();
            Formatter::new(&ctx).inspect(&v)
        })
    }

    #[test]
    fn primitives_and_functions_print_like_node() {
        for (src, shown) in [
            ("undefined", "undefined"),
            ("null", "null"),
            ("true", "true"),
            ("-0", "-0"),
            ("1.5", "1.5"),
            ("2n ** 64n", "18446744073709551616n"),
            (r#""it's\n\\""#, r#"'it\'s\n\\'"#),
            ("Symbol('s')", "Symbol(s)"),
            ("Symbol()", "Symbol()"),
            ("(function named() {})", "[Function: named]"),
            ("(() => {})", "[Function (anonymous)]"),
        ] {
            assert_eq!(inspect(src), shown, "{src}");
        }
    }

    #[test]
    fn objects_errors_and_dates() {
        assert_eq!(inspect("new Date(0)"), "1970-01-01T00:00:00.000Z");
        assert_eq!(inspect("new Date(NaN)"), "Invalid Date");
        let e = inspect("new RangeError('bad')");
        assert!(e.starts_with("RangeError: bad\n"), "{e}");
        assert_eq!(
            inspect("(() => { const e = new Error(); e.stack = ''; return e })()"),
            "Error"
        );
        assert_eq!(
            inspect("({ a: 1, 'b-c': [2, 'x'], [Symbol()]: 3 })"),
            r#"{ a: 1, ["b-c"]: [ 2, 'x' ] }"#
        );
        assert_eq!(inspect("[[[[1]]], {}]"), "[ [ [ [Array] ] ], {} ]");
        assert_eq!(
            inspect("(() => { const a = [1]; a.push(a); return a })()"),
            "[ 1, [Circular] ]"
        );
        assert_eq!(inspect("new Map([[1, 2]])"), "Map {}");
        assert_eq!(inspect("({ get x() { throw 1 } })"), "{ x: <error> }");
        let many = inspect("Array.from({ length: 52 }, (_, i) => i)");
        assert!(many.ends_with(", 49, ... 2 more items ]"), "{many}");
    }

    #[test]
    fn strings_and_lines_are_clipped_at_character_boundaries() {
        let long = inspect("'é'.repeat(6000)");
        assert!(
            long.ends_with("'... 2000 more bytes"),
            "{}",
            &long[long.len() - 30..]
        );
        assert_eq!(long.len(), MAX_STRING + "''... 2000 more bytes".len());
        let rt = Runtime::new().unwrap();
        let context = Context::full(&rt).unwrap();
        let line = context.with(|ctx| {
            let args: Vec<Value> = vec![ctx.eval("'x' + 'é'.repeat(40000)").unwrap()];
            Formatter::new(&ctx).format_args(&args)
        });
        assert_eq!(
            line.len(),
            MAX_LINE - 1,
            "the last character would straddle the cap"
        );
        assert_eq!(clip("aé", 2), "a");
        assert_eq!(clip("aé", 3), "aé");
        assert_eq!(clip("aé", 99), "aé");
    }
}
