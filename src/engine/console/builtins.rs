//! How built-in kinds show: functions and classes, regular expressions, dates, boxed
//! primitives and errors (with Node's `improveStack`).

use super::inspect::prefix;
use super::raw::class;
use super::{raw, Formatter};
use rquickjs::{Object, Value};

impl<'a, 'js> Formatter<'a, 'js> {
    /// `[Function: f]`, `[AsyncFunction: f]`, `[class A extends B]` and the like.
    pub(super) fn function_base(&self, f: &Object<'js>, ctor: Option<&str>, tag: &str) -> String {
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

    pub(super) fn class_base(&self, f: &Object<'js>, ctor: Option<&str>, tag: &str) -> String {
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

    /// A regular expression's base text: `/source/flags`, with the prefix of a subclass.
    pub(super) fn regexp_base(&self, obj: &Object<'js>, ctor: Option<&str>, tag: &str) -> String {
        let base = self.regexp(obj);
        let p = prefix(ctor, tag, "RegExp", "");
        if p != "RegExp " {
            format!("{p}{base}")
        } else {
            base
        }
    }

    /// A date's base text: its ISO string or `Invalid Date`, with the prefix of a subclass.
    pub(super) fn date_base(&self, obj: &Object<'js>, ctor: Option<&str>, tag: &str) -> String {
        let base = self.date_iso(obj).unwrap_or_else(|| "Invalid Date".into());
        let p = prefix(ctor, tag, "Date", "");
        if p != "Date " {
            format!("{p}{base}")
        } else {
            base
        }
    }

    /// `/source/flags`, read through the realm's own RegExp accessors.
    pub(super) fn regexp(&self, obj: &Object<'js>) -> String {
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
    pub(super) fn date_iso(&self, obj: &Object<'js>) -> Option<String> {
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
    pub(super) fn boxed_value(&self, obj: &Object<'js>) -> Option<Value<'js>> {
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
    pub(super) fn boxed(
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
    pub(super) fn error(
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
