//! TypeScript to JavaScript with oxc: parse, strip types (enums and namespaces are lowered),
//! print, and keep a position map so engine locations point into the original file.

use std::path::{Path, PathBuf};

use oxc_allocator::Allocator;
use oxc_codegen::{Codegen, CodegenOptions};
use oxc_parser::Parser;
use oxc_semantic::SemanticBuilder;
use oxc_span::SourceType;
use oxc_transformer::{TransformOptions, Transformer};

/// Maps 1-based `(line, column)` positions of generated code back to the original source.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PositionMap {
    /// `(generated line, generated column, original line, original column)`, all 0-based,
    /// sorted by generated position.
    tokens: Vec<(u32, u32, u32, u32)>,
}

impl PositionMap {
    /// The original position of a generated one (both 1-based). A column before the first
    /// mapped token of its line takes that token; a line without tokens takes the nearest
    /// mapped line above it.
    pub fn original(&self, line: u32, column: u32) -> Option<(u32, u32)> {
        let (l, c) = (line.checked_sub(1)?, column.saturating_sub(1));
        let after = self.tokens.partition_point(|t| (t.0, t.1) <= (l, c));
        let token = match after.checked_sub(1).map(|i| self.tokens[i]) {
            Some(t) if t.0 == l => t,
            _ => match self.tokens.get(after) {
                Some(t) if t.0 == l => *t,
                _ => after.checked_sub(1).map(|i| self.tokens[i])?,
            },
        };
        Some((token.2 + 1, token.3 + 1))
    }
}

/// Compiled output of one file.
#[derive(Debug, Clone)]
pub struct Transpiled {
    pub code: String,
    pub map: PositionMap,
}

/// A compile error located in the original source (1-based).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompileError {
    pub message: String,
    pub line: u32,
    pub column: u32,
}

/// 1-based line and column (in characters) of a byte offset.
pub fn line_column(source: &str, offset: usize) -> (u32, u32) {
    let mut end = offset.min(source.len());
    while !source.is_char_boundary(end) {
        end -= 1;
    }
    let before = &source[..end];
    let line = before.matches('\n').count() as u32 + 1;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[start..].chars().count() as u32 + 1;
    (line, column)
}

fn located(source: &str, diags: &[oxc_diagnostics::OxcDiagnostic]) -> CompileError {
    let Some(first) = diags.first() else {
        return CompileError {
            message: "the TypeScript compiler failed without a message".into(),
            line: 1,
            column: 1,
        };
    };
    let offset = first.labels.first().map_or(0, |l| l.offset() as usize);
    let (line, column) = line_column(source, offset);
    let mut message = first.message.to_string();
    if let Some(help) = &first.help {
        message = format!("{message} ({help})");
    }
    CompileError {
        message,
        line,
        column,
    }
}

/// Deepest bracket nesting accepted. The parser recurses per level, so hostile input is refused
/// before parsing rather than risking the thread's stack.
pub const MAX_NESTING: usize = 1_000;

/// Stack of the thread that compiles one module.
const COMPILE_STACK_BYTES: usize = 64 << 20;

/// How many times larger than its source the printed JavaScript may be with indentation.
const MAX_GROWTH: usize = 4;

/// An over-approximation of the deepest `(`/`[`/`{` nesting, skipping strings, template text
/// and comments.
pub fn nesting_depth(source: &str) -> usize {
    #[derive(PartialEq)]
    enum Open {
        Bracket,
        Substitution,
    }
    let b = source.as_bytes();
    let (mut i, mut max) = (0usize, 0usize);
    let mut stack: Vec<Open> = Vec::new();
    let mut in_template = false;
    while i < b.len() {
        let c = b[i];
        if in_template {
            match c {
                b'\\' => i += 1,
                b'`' => in_template = false,
                b'$' if b.get(i + 1) == Some(&b'{') => {
                    stack.push(Open::Substitution);
                    max = max.max(stack.len());
                    in_template = false;
                    i += 1;
                }
                _ => {}
            }
            i += 1;
            continue;
        }
        match c {
            b'(' | b'[' | b'{' => {
                stack.push(Open::Bracket);
                max = max.max(stack.len());
            }
            b')' | b']' => {
                stack.pop();
            }
            // Closing a `${...}` substitution goes back into the template's text.
            b'}' => in_template = stack.pop() == Some(Open::Substitution),
            b'`' => in_template = true,
            b'\'' | b'"' => {
                i += 1;
                while i < b.len() && b[i] != c && b[i] != b'\n' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                    i += 1;
                }
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    max
}

/// [`transpile`] on a thread of its own with a known, large stack, after refusing input nested
/// deeper than [`MAX_NESTING`]. A panic in the compiler becomes an error.
pub fn transpile_guarded(name: &str, source: &str) -> Result<Transpiled, CompileError> {
    let depth = nesting_depth(source);
    if depth > MAX_NESTING {
        return Err(CompileError {
            message: format!(
                "brackets are nested {depth} levels deep; at most {MAX_NESTING} are supported"
            ),
            line: 1,
            column: 1,
        });
    }
    let failed = |what: String| CompileError {
        message: format!("the TypeScript compiler failed: {what}"),
        line: 1,
        column: 1,
    };
    std::thread::scope(|scope| {
        let handle = std::thread::Builder::new()
            .name("quickrealm-ts".into())
            .stack_size(COMPILE_STACK_BYTES)
            .spawn_scoped(scope, || transpile(name, source))
            .map_err(|e| failed(e.to_string()))?;
        handle
            .join()
            .unwrap_or_else(|_| Err(failed("it panicked".into())))
    })
}

/// Compiles a TypeScript module (`name` is only used in messages and the map).
pub fn transpile(name: &str, source: &str) -> Result<Transpiled, CompileError> {
    let allocator = Allocator::default();
    let source_type = SourceType::ts().with_module(true);
    let parsed = Parser::new(&allocator, source, source_type).parse();
    if parsed.panicked || parsed.diagnostics.has_errors() {
        let errors: Vec<_> = parsed.diagnostics.errors().cloned().collect();
        return Err(located(source, &errors));
    }
    let mut program = parsed.program;
    let semantic = SemanticBuilder::new()
        .with_excess_capacity(2.0)
        .with_enum_eval(true)
        .build(&program);
    let scoping = semantic.semantic.into_scoping();
    let options = TransformOptions::default();
    let transformed = Transformer::new(&allocator, Path::new(name), &options)
        .build_with_scoping(scoping, &mut program);
    if transformed.diagnostics.has_errors() {
        let errors: Vec<_> = transformed.diagnostics.errors().cloned().collect();
        return Err(located(source, &errors));
    }
    let print = |indent_width: usize| {
        Codegen::new()
            .with_options(CodegenOptions {
                source_map_path: Some(PathBuf::from(name)),
                indent_width,
                ..CodegenOptions::default()
            })
            .build(&program)
    };
    let mut printed = print(CodegenOptions::default().indent_width);
    // Indentation grows with nesting, so deeply nested statements (`if (a) if (b) ...`, which
    // no bracket limit catches) print quadratically: 35 KB of source became 25 MB. Such code
    // is printed again without indentation, which keeps the output linear in the source.
    if printed.code.len() > MAX_GROWTH * source.len() + 4096 {
        printed = print(0);
    }
    let mut tokens: Vec<(u32, u32, u32, u32)> = printed
        .map
        .as_ref()
        .map(|m| {
            m.get_tokens()
                .map(|t| {
                    (
                        t.get_dst_line(),
                        t.get_dst_col(),
                        t.get_src_line(),
                        t.get_src_col(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    tokens.sort_unstable();
    Ok(Transpiled {
        code: printed.code,
        map: PositionMap { tokens },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deeply_nested_statements_print_in_linear_size() {
        let src = format!("{}f();\nexport {{}};\n", "if (a) ".repeat(5000));
        let out = transpile_guarded("~/a.ts", &src).unwrap();
        assert!(
            out.code.len() < MAX_GROWTH * src.len(),
            "{} bytes",
            out.code.len()
        );
        assert_eq!(out.code.matches("if (a)").count(), 5000);
        // Ordinary code keeps its indentation.
        let out = transpile(
            "~/b.ts",
            "export function f(x: number) {\n  if (x) {\n    return 1;\n  }\n}\n",
        )
        .unwrap();
        assert!(out.code.contains("\n\t\treturn 1;"), "{:?}", out.code);
    }

    #[test]
    fn types_are_stripped_and_enums_lowered() {
        let src = "interface P { x: number }\ntype T = string;\nenum Color { Red, Green = 5 }\nexport function f(p: P): number { return p.x as number; }\nexport const c: Color = Color.Green;\n";
        let out = transpile("~/a.ts", src).unwrap();
        assert!(!out.code.contains("interface"), "{}", out.code);
        assert!(!out.code.contains(": number"), "{}", out.code);
        assert!(out.code.contains("Color"), "{}", out.code);
    }

    #[test]
    fn type_only_imports_disappear() {
        let src = "import { Shape } from './shapes';\nimport type { X } from './x';\nexport const s: Shape | X = 1 as any;\n";
        let out = transpile("~/a.ts", src).unwrap();
        assert!(!out.code.contains("import"), "{}", out.code);
    }

    #[test]
    fn errors_are_located_in_the_original() {
        let e = transpile("~/a.ts", "const a = 1;\nconst b: = 2;\n").unwrap_err();
        assert_eq!(e.line, 2, "{e:?}");
        assert!(e.column >= 9, "{e:?}");
    }

    #[test]
    fn positions_map_back() {
        let src = "type A = { a: number };\n\n\nconst x: A = { a: 1 };\nthrow new Error('boom');\n";
        let out = transpile("~/a.ts", src).unwrap();
        let (gl, line) = out
            .code
            .lines()
            .enumerate()
            .find(|(_, l)| l.contains("throw"))
            .map(|(i, l)| (i as u32 + 1, l.to_string()))
            .unwrap();
        let col = line.find("throw").unwrap() as u32 + 1;
        assert_eq!(out.map.original(gl, col), Some((5, 1)));
    }

    #[test]
    fn deep_nesting_is_refused_before_parsing() {
        let deep = format!("const x = {}1{};", "(".repeat(5000), ")".repeat(5000));
        let e = transpile_guarded("~/a.ts", &deep).unwrap_err();
        assert!(e.message.contains("nested 5000 levels"), "{e:?}");
        let ok = format!("const x = {}1{};", "(".repeat(900), ")".repeat(900));
        assert!(transpile_guarded("~/a.ts", &ok).is_ok());
        assert_eq!(
            nesting_depth("f('((((', \"[[\", `${a({})}`) // (((\n/* [[[ */"),
            4
        );
    }

    #[test]
    fn line_columns_count_characters() {
        assert_eq!(line_column("ab\ncdé f", 8), (2, 5));
        assert_eq!(line_column("x", 0), (1, 1));
    }
}
