//! Formatting of guest values for captured console output, as Node's `util.format` and
//! `util.inspect` print them.
//!
//! The printer never runs guest code: it reads own property descriptors instead of properties
//! (an accessor shows as `[Getter]`, `[Setter]` or `[Getter/Setter]`), formats a Proxy's target
//! without triggering a trap, and reaches collections, dates, regular expressions and boxed
//! primitives through the realm's own (frozen) built-ins, taken from the engine rather than from
//! the guest's globals. Its work is counted against the run's deadline and its output is capped
//! at `MAX_LINE` bytes a line.

//!
//! Its rooms: `formatters` (`util.format` and its specifiers), `inspect` (one value, Node's
//! `formatRaw` in named steps), `builtins` (how functions, errors, dates and the other built-in
//! kinds show), `groups` (laying entries out on one line, one a line or in columns), `read`
//! (reading guest objects without running guest code) and `table` (`console.table` cells).

mod builtins;
mod formatters;
mod groups;
mod inspect;
mod read;
mod table;

use super::ffi;
use super::marshal::{collect_entries, text_of, TypedArrayKind};
use super::raw;
use rquickjs::{qjs, Ctx, Value};
use std::cell::RefCell;

pub(crate) use table::table_cell;

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

impl Parts {
    fn new(open: String, close: &'static str) -> Self {
        Parts {
            base: String::new(),
            open,
            close,
            entries: Vec::new(),
            array_like: false,
        }
    }
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
#[cfg(test)]
mod tests;
