//! Laying a container's entries out (Node's `reduceToSingleString` and
//! `groupArrayElements`): one line when they fit, else one entry a line, with more than six
//! short array items grouped into aligned columns. (`console.group` indentation is the realm's,
//! in `realm/bindings.rs`.)

use super::inspect::utf16_len;
use super::{qjs, raw, Formatter, Parts};
use rquickjs::Object;

impl<'a, 'js> Formatter<'a, 'js> {
    /// Node's `reduceToSingleString`: one line when the entries fit (and nest at most three
    /// levels), else one entry a line; long arrays first grouped into columns.
    pub(super) fn reduce(&mut self, mut parts: Parts, depth: usize, obj: &Object<'js>) -> String {
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

    pub(super) fn below_break_length(&self, entries: &[String], start: usize, base: &str) -> bool {
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
    pub(super) fn group(&self, entries: Vec<String>, obj: &Object<'js>) -> Vec<String> {
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
    pub(super) fn all_numbers(&self, obj: &Object<'js>, n: usize) -> bool {
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
