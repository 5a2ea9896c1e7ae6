//! Error codes and model-friendly error reports (name, message, location, frame, guest stack).

use super::marshal::string_prop;
use rquickjs::{Ctx, Value};

/// The run failures a run reports are codes of the crate's one vocabulary.
pub use crate::codes::ErrorCode;

#[derive(Debug, Clone, PartialEq)]
pub struct ErrorInfo {
    pub code: ErrorCode,
    pub name: String,
    pub message: String,
    pub line: Option<u32>,
    pub column: Option<u32>,
    pub stack: Option<String>,
    pub frame: Option<String>,
}

impl ErrorInfo {
    pub fn new(code: ErrorCode, name: &str, message: impl Into<String>) -> Self {
        ErrorInfo {
            code,
            name: name.to_string(),
            message: message.into(),
            line: None,
            column: None,
            stack: None,
            frame: None,
        }
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidInput, "TypeError", message)
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Internal, "InternalError", message)
    }

    /// Attaches a location and a frame taken from the caller's source.
    pub fn at(mut self, source: &str, line: u32, column: u32) -> Self {
        self.line = Some(line);
        self.column = Some(column);
        self.frame = code_frame(source, line, column);
        self
    }
}

/// Reads a guest exception into name, message and the guest-only stack.
pub(crate) fn describe_exception<'js>(
    ctx: &Ctx<'js>,
    exc: &Value<'js>,
) -> (String, String, Option<String>) {
    // A DOMException (DataCloneError, AbortError...) is an error of its own class, whose name
    // and message are the template's frozen getters.
    let is_error =
        super::raw::is_error(exc) || super::raw::class_id(exc) == super::raw::class::DOM_EXCEPTION;
    if let Some(obj) = exc.as_object().filter(|_| is_error) {
        let name = string_prop(ctx, obj, "name").unwrap_or_else(|| "Error".into());
        let message = string_prop(ctx, obj, "message").unwrap_or_default();
        return (name, message, string_prop(ctx, obj, "stack"));
    }
    let shown = super::console::Formatter::new(ctx).inspect(exc);
    if exc.is_object() {
        // Inspecting an object may run guest getters; whatever they threw is not the error.
        let _ = ctx.catch();
    }
    ("Error".into(), format!("Uncaught {shown}"), None)
}

/// Keeps only frames that belong to guest code or engine built-ins, never host paths.
pub(crate) fn guest_stack(stack: &str, filename: &str) -> String {
    stack
        .lines()
        .filter(|l| {
            let t = l.trim_start();
            t.starts_with("at ")
                && !t.contains(super::raw::INTERNAL_FILENAME)
                && (t.contains(filename) || t.contains("(native)") || !t.contains('/'))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Finds the first `filename:line:column` in a stack.
pub(crate) fn first_location(stack: &str, filename: &str) -> Option<(u32, u32)> {
    let needle = format!("{filename}:");
    for line in stack.lines() {
        let Some(pos) = line.find(&needle) else {
            continue;
        };
        let rest = &line[pos + needle.len()..];
        let mut parts = rest.split(|c: char| !c.is_ascii_digit());
        let l = parts.next().and_then(|s| s.parse::<u32>().ok());
        let c = parts.next().and_then(|s| s.parse::<u32>().ok());
        if let Some(l) = l {
            return Some((l, c.unwrap_or(1)));
        }
    }
    None
}

/// A compiler-style excerpt: up to two lines before, the failing line, a caret, one line after.
pub(crate) fn code_frame(source: &str, line: u32, column: u32) -> Option<String> {
    let lines: Vec<&str> = source.split('\n').collect();
    let idx = (line as usize).checked_sub(1)?;
    if idx >= lines.len() {
        return None;
    }
    let first = idx.saturating_sub(2);
    let last = (idx + 1).min(lines.len() - 1);
    let width = (last + 1).to_string().len();
    let mut out = String::new();
    for (i, text) in lines.iter().enumerate().take(last + 1).skip(first) {
        let text = text.trim_end_matches('\r');
        let shown: String = text.chars().take(160).collect();
        let marker = if i == idx { '>' } else { ' ' };
        out.push_str(&format!("{marker} {:>width$} | {shown}\n", i + 1));
        if i == idx {
            let col = (column.max(1) as usize - 1).min(shown.chars().count());
            let pad: String = shown
                .chars()
                .take(col)
                .map(|c| if c == '\t' { '\t' } else { ' ' })
                .collect();
            out.push_str(&format!("  {:>width$} | {pad}^\n", ""));
        }
    }
    Some(out.trim_end().to_string())
}

/// A pending exception (or another engine error) as `Name: message`.
pub fn exception_text(ctx: &Ctx<'_>, e: rquickjs::Error) -> String {
    if matches!(e, rquickjs::Error::Exception) {
        let exc = ctx.catch();
        let (name, message, _) = describe_exception(ctx, &exc);
        format!("{name}: {message}")
    } else {
        e.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_points_at_the_column() {
        let src = "let a = 1;\nlet b = a.x.y;\nreturn b;";
        let f = code_frame(src, 2, 11).unwrap();
        assert!(f.contains("> 2 | let b = a.x.y;"), "{f}");
        assert!(f.contains("    |           ^"), "{f}");
        assert!(f.contains("  1 | let a = 1;"));
        assert!(f.contains("  3 | return b;"));
    }

    #[test]
    fn frame_out_of_range_is_none() {
        assert!(code_frame("x", 5, 1).is_none());
        assert!(code_frame("x", 0, 1).is_none());
    }

    #[test]
    fn location_is_read_from_the_first_guest_frame() {
        let st = "    at f (sandbox.js:3:9)\n    at <anonymous> (sandbox.js:5:1)\n";
        assert_eq!(first_location(st, "sandbox.js"), Some((3, 9)));
        assert_eq!(first_location("    at x (native)", "sandbox.js"), None);
    }

    #[test]
    fn guest_stack_drops_host_paths() {
        let st =
            "    at f (sandbox.js:3:9)\n    at g (/home/user/secret.js:1:1)\n    at h (native)";
        let g = guest_stack(st, "sandbox.js");
        assert!(g.contains("sandbox.js:3:9"));
        assert!(!g.contains("/home/user"));
        assert!(g.contains("(native)"));
    }
}
