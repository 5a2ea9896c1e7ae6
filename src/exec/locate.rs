//! Placing an error of an exec run in the workspace module it came from, with positions in the
//! original (TypeScript) source.

use super::files::{LoadFailure, RealmFiles};
use super::resolve::WORKSPACE_PREFIX;
use super::typescript;
use crate::engine::errors::ErrorInfo;

/// Finds `file:line:column` of a workspace module in one stack line: `(start, end, file,
/// line, column)` with the byte range of the location text.
fn frame_location(line: &str) -> Option<(usize, usize, String, u32, u32)> {
    let start = line.find(WORKSPACE_PREFIX)?;
    let rest = &line[start..];
    let end = rest.rfind(')').unwrap_or(rest.len());
    let loc = &rest[..end];
    let (head, column) = loc.rsplit_once(':')?;
    let (file, l) = head.rsplit_once(':')?;
    let line_no = l.parse::<u32>().ok()?;
    let column = column.parse::<u32>().ok()?;
    Some((start, start + end, file.to_string(), line_no, column))
}

fn original(files: &RealmFiles, file: &str, line: u32, column: u32) -> (u32, u32) {
    match files.modules.get(file).and_then(|m| m.map.as_ref()) {
        Some(map) => map.original(line, column).unwrap_or((line, column)),
        None => (line, column),
    }
}

/// 1-based position of the first quoted occurrence of `specifier` in `source`.
fn find_specifier(source: &str, specifier: &str) -> Option<(u32, u32)> {
    ["'", "\"", "`"].iter().find_map(|q| {
        source
            .find(&format!("{q}{specifier}{q}"))
            .map(|i| typescript::line_column(source, i))
    })
}

/// Places an error of an exec run in the module it came from: sets `line`, `column` and
/// `frame` relative to that module's original source, maps TypeScript positions in the stack
/// back to the original files, and returns the module's name.
pub fn locate(files: &RealmFiles, info: &mut ErrorInfo) -> Option<String> {
    match &files.failure {
        Some(LoadFailure::Import {
            importer,
            specifier,
        }) if info.message.contains(&format!("'{specifier}'")) => {
            if let Some(rec) = files.modules.get(importer) {
                if let Some((l, c)) = find_specifier(&rec.source, specifier) {
                    *info = info.clone().at(&rec.source, l, c);
                }
                return Some(importer.clone());
            }
            return None;
        }
        Some(LoadFailure::Compile {
            file,
            line: Some(l),
            column: Some(c),
        }) if info.name == "SyntaxError" => {
            if let Some(rec) = files.modules.get(file) {
                *info = info.clone().at(&rec.source, *l, *c);
            }
            info.stack = Some(format!("    at {file}:{l}:{c}"));
            return Some(file.clone());
        }
        _ => {}
    }
    let stack = info.stack.clone()?;
    let mut first: Option<(String, u32, u32)> = None;
    let lines: Vec<String> = stack
        .lines()
        .map(|text| match frame_location(text) {
            Some((start, end, file, l, c)) => {
                let (ol, oc) = original(files, &file, l, c);
                let out = format!("{}{file}:{ol}:{oc}{}", &text[..start], &text[end..]);
                if first.is_none() && files.modules.contains_key(&file) {
                    first = Some((file, ol, oc));
                }
                out
            }
            None => text.to_string(),
        })
        .collect();
    info.stack = Some(lines.join("\n"));
    let (file, l, c) = first?;
    if let Some(rec) = files.modules.get(&file) {
        let last_line = rec.source.split('\n').count() as u32;
        let (l, c) = if l > last_line {
            let last = rec.source.rsplit('\n').next().unwrap_or("");
            (last_line, last.chars().count() as u32 + 1)
        } else {
            (l, c)
        };
        *info = info.clone().at(&rec.source, l, c);
    }
    Some(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stack_locations_are_found() {
        let (s, e, file, l, c) = frame_location("    at f (~/lib/a b.ts:3:9)").unwrap();
        assert_eq!((file.as_str(), l, c), ("~/lib/a b.ts", 3, 9));
        assert_eq!(&"    at f (~/lib/a b.ts:3:9)"[s..e], "~/lib/a b.ts:3:9");
        assert!(frame_location("    at ~/main.js:1:2").is_some());
        assert!(frame_location("    at f (native)").is_none());
    }
}
