//! Readable, bounded formatting of guest values for captured console output.

use super::marshal::{child_path, text_of};
use super::raw;
use rquickjs::{Ctx, Object, Value};

const MAX_DEPTH: usize = 2;
const MAX_ITEMS: usize = 50;
const MAX_STRING: usize = 10_000;
/// Upper bound on one formatted console line, whatever the arguments.
pub const MAX_LINE: usize = 64 << 10;

pub struct Formatter<'a, 'js> {
    ctx: &'a Ctx<'js>,
    out: String,
    seen: Vec<usize>,
}

fn clip(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

impl<'a, 'js> Formatter<'a, 'js> {
    pub fn new(ctx: &'a Ctx<'js>) -> Self {
        Formatter {
            ctx,
            out: String::new(),
            seen: Vec::new(),
        }
    }

    fn full(&self) -> bool {
        self.out.len() >= MAX_LINE
    }

    fn push(&mut self, s: &str) {
        if !self.full() {
            let room = MAX_LINE - self.out.len();
            self.out.push_str(clip(s, room));
        }
    }

    /// Formats console arguments the way Node prints them: strings raw, others inspected.
    pub fn format_args(mut self, args: &[Value<'js>]) -> String {
        for (i, a) in args.iter().enumerate() {
            if i > 0 {
                self.push(" ");
            }
            if a.is_string() {
                let s = text_of(self.ctx, a)
                    .map(|t| t.to_lossy())
                    .unwrap_or_default();
                self.push(&s);
            } else {
                self.value(a, 0);
            }
        }
        self.out
    }

    pub fn inspect(mut self, v: &Value<'js>) -> String {
        self.value(v, 0);
        self.out
    }

    fn value(&mut self, v: &Value<'js>, depth: usize) {
        if self.full() {
            return;
        }
        if v.is_undefined() {
            return self.push("undefined");
        }
        if v.is_null() {
            return self.push("null");
        }
        if let Some(b) = v.as_bool() {
            return self.push(if b { "true" } else { "false" });
        }
        if let Some(n) = v.as_number() {
            if n == 0.0 && n.is_sign_negative() {
                return self.push("-0");
            }
            let s = raw::to_display_string(self.ctx, v).unwrap_or_default();
            return self.push(&s);
        }
        if v.is_big_int() {
            let s = raw::to_display_string(self.ctx, v).unwrap_or_default();
            self.push(&s);
            return self.push("n");
        }
        if v.is_string() {
            let s = text_of(self.ctx, v)
                .map(|t| t.to_lossy())
                .unwrap_or_default();
            let clipped = clip(&s, MAX_STRING);
            let quoted = format!(
                "'{}'",
                clipped
                    .replace('\\', "\\\\")
                    .replace('\'', "\\'")
                    .replace('\n', "\\n")
            );
            self.push(&quoted);
            if clipped.len() < s.len() {
                self.push(&format!("... {} more bytes", s.len() - clipped.len()));
            }
            return;
        }
        if let Some(sym) = v.as_symbol() {
            let desc = sym
                .description()
                .ok()
                .and_then(|d| text_of(self.ctx, &d))
                .map(|t| t.to_lossy());
            return self.push(&format!("Symbol({})", desc.unwrap_or_default()));
        }
        if v.is_function() {
            let name = v
                .as_object()
                .and_then(|o| o.get::<_, Value>("name").ok())
                .and_then(|n| text_of(self.ctx, &n))
                .map(|t| t.to_lossy())
                .unwrap_or_default();
            return if name.is_empty() {
                self.push("[Function (anonymous)]")
            } else {
                self.push(&format!("[Function: {name}]"))
            };
        }
        let Some(obj) = v.as_object() else {
            return self.push("[unknown]");
        };
        if raw::is_error(v) {
            let stack = obj
                .get::<_, Value>("stack")
                .ok()
                .and_then(|s| text_of(self.ctx, &s))
                .map(|t| t.to_lossy());
            let name = obj
                .get::<_, Value>("name")
                .ok()
                .and_then(|s| text_of(self.ctx, &s))
                .map(|t| t.to_lossy())
                .unwrap_or_else(|| "Error".into());
            let msg = obj
                .get::<_, Value>("message")
                .ok()
                .and_then(|s| text_of(self.ctx, &s))
                .map(|t| t.to_lossy())
                .unwrap_or_default();
            let head = if msg.is_empty() {
                name
            } else {
                format!("{name}: {msg}")
            };
            let text = match stack {
                Some(st) if !st.is_empty() => format!("{head}\n{}", st.trim_end()),
                _ => head,
            };
            return self.push(&text);
        }
        if raw::is_date(v) {
            let iso = obj
                .get::<_, rquickjs::Function>("toISOString")
                .and_then(|f| f.call::<_, Value>((rquickjs::function::This(obj.clone()),)))
                .ok()
                .and_then(|s| text_of(self.ctx, &s))
                .map(|t| t.to_lossy())
                .unwrap_or_else(|| "Invalid Date".into());
            return self.push(&iso);
        }
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
            let name = text_of(self.ctx, key)
                .map(|t| t.to_lossy())
                .unwrap_or_default();
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
