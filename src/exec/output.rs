//! What an exec run writes: `console` lines, `process.stdout`/`process.stderr` writes and
//! `emit()` text, all under the run's one `outputBytes` cap.
//!
//! Every byte counts when it is written, partial lines included. The first write that does
//! not fit keeps what fits (cut at a character boundary), and the run stops with
//! `OUTPUT_LIMIT`: its stdout and stderr together then hold exactly the first bytes written,
//! up to the cap.

use rquickjs::function::Rest;
use rquickjs::{Ctx, Function, Object, Value};

use super::files::{lock, SharedFiles};
use super::guest_errors::throw_uncatchable;
use super::process::{lock_state, SharedState};
use crate::engine::console::{clip, format_console, CONSOLE_LEVELS, MAX_LINE};
use crate::engine::limits::CancelToken;
use crate::engine::{LogEntry, LogListener};

/// Where text goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stream {
    Stdout = 0,
    Stderr = 1,
}

impl Stream {
    /// The stream of a file descriptor: 2 is stderr, anything else stdout.
    pub(super) fn of_fd(fd: u32) -> Self {
        if fd == 2 {
            Stream::Stderr
        } else {
            Stream::Stdout
        }
    }

    /// The stream a console level writes to.
    fn of_level(level: &str) -> Self {
        if matches!(level, "warn" | "error") {
            Stream::Stderr
        } else {
            Stream::Stdout
        }
    }
}

/// One stream's text: its finished lines and the line still being written.
#[derive(Debug, Default)]
struct StreamText {
    lines: String,
    partial: String,
}

/// The output of one run, under one byte cap.
#[derive(Debug, Default)]
pub(super) struct RunOutput {
    streams: [StreamText; 2],
    used: usize,
    cap: usize,
    overflowed: bool,
}

impl RunOutput {
    /// Empty output that may grow to `cap` bytes.
    pub(super) fn new(cap: usize) -> Self {
        RunOutput {
            cap,
            ..RunOutput::default()
        }
    }

    /// Whether some text did not fit.
    pub(super) fn overflowed(&self) -> bool {
        self.overflowed
    }

    /// The part of `text` that still fits, counted as written; marks the overflow when it is
    /// not all of it. Nothing fits after an overflow.
    fn admit<'t>(&mut self, text: &'t str) -> &'t str {
        if self.overflowed {
            return "";
        }
        let room = self.cap - self.used;
        let kept = if text.len() <= room {
            text
        } else {
            self.overflowed = true;
            clip(text, room)
        };
        self.used += kept.len();
        kept
    }

    /// A stream write: text up to its last newline finishes lines, the rest waits for its
    /// newline (or the end of the run). Returns false when it did not all fit.
    pub(super) fn write(&mut self, stream: Stream, text: &str) -> bool {
        let kept = self.admit(text);
        let s = &mut self.streams[stream as usize];
        match kept.rfind('\n') {
            Some(nl) => {
                s.lines.push_str(&s.partial);
                s.partial.clear();
                s.lines.push_str(&kept[..=nl]);
                s.partial.push_str(&kept[nl + 1..]);
            }
            None => s.partial.push_str(kept),
        }
        !self.overflowed
    }

    /// A whole line (a console call, a warning): `text` and a newline, ahead of any unfinished
    /// stream line. Returns false when it did not all fit.
    pub(super) fn line(&mut self, stream: Stream, text: &str) -> bool {
        self.append(stream, text) && self.append(stream, "\n")
    }

    /// Text added to the stream's finished lines as it is (`emit()`). Returns false when it
    /// did not all fit.
    pub(super) fn append(&mut self, stream: Stream, text: &str) -> bool {
        let kept = self.admit(text);
        self.streams[stream as usize].lines.push_str(kept);
        !self.overflowed
    }

    /// Stdout and stderr: each stream's lines, then its unfinished line.
    pub(super) fn finish(self) -> (String, String) {
        let [mut out, mut err] = self.streams;
        out.lines.push_str(&out.partial);
        err.lines.push_str(&err.partial);
        (out.lines, err.lines)
    }
}

/// Stops the run after a write that did not fit: file operations end, the run is cancelled,
/// and the guest gets an error it cannot catch. The outcome reports `OUTPUT_LIMIT`.
fn stop<'js>(ctx: &Ctx<'js>, files: &SharedFiles, cancel: &CancelToken) -> rquickjs::Error {
    lock(files).halted = true;
    cancel.cancel();
    throw_uncatchable(ctx, "output limit exceeded")
}

/// Everything that writes output in one run, sharing its [`RunOutput`].
#[derive(Clone)]
pub(super) struct OutputHost {
    pub(super) state: SharedState,
    pub(super) files: SharedFiles,
    pub(super) cancel: CancelToken,
    /// Told about each console line the run prints, once it is written.
    pub(super) on_log: Option<LogListener>,
}

impl OutputHost {
    /// Runs `write` on the run's output; stops the run when it did not all fit.
    fn write<'js>(
        &self,
        ctx: &Ctx<'js>,
        write: impl FnOnce(&mut RunOutput) -> bool,
    ) -> rquickjs::Result<()> {
        let fits = write(&mut lock_state(&self.state).output);
        if fits {
            Ok(())
        } else {
            Err(stop(ctx, &self.files, &self.cancel))
        }
    }

    /// Replaces the realm's `console` and `emit` with ones that write into the run's output.
    pub(super) fn install_console<'js>(&self, ctx: &Ctx<'js>) -> rquickjs::Result<()> {
        let console = Object::new(ctx.clone())?;
        for (method, level) in CONSOLE_LEVELS {
            let host = self.clone();
            let f = Function::new(
                ctx.clone(),
                move |ctx: Ctx<'js>, args: Rest<Value<'js>>| -> rquickjs::Result<()> {
                    // Formatting may run guest code, which may log: no lock is held meanwhile.
                    let mut line = format_console(&ctx, method, &args.0)?;
                    line.truncate(clip(&line, MAX_LINE).len());
                    host.write(&ctx, |out| out.line(Stream::of_level(level), &line))?;
                    if let Some(listener) = &host.on_log {
                        (listener.0)(&LogEntry {
                            level,
                            message: line,
                        });
                    }
                    Ok(())
                },
            )?
            .with_name(method)?;
            console.set(method, f)?;
        }
        ctx.globals().set("console", console)?;
        let host = self.clone();
        let emit = Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>, text: rquickjs::Coerced<String>| -> rquickjs::Result<()> {
                host.write(&ctx, |out| out.append(Stream::Stdout, &text.0))
            },
        )?
        .with_name("emit")?;
        ctx.globals().set("emit", emit)
    }

    /// The native half of `process.stdout.write` and `process.stderr.write`:
    /// `write(fd, text)`.
    pub(super) fn stream_write<'js>(&self, ctx: &Ctx<'js>) -> rquickjs::Result<Function<'js>> {
        let host = self.clone();
        Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>, fd: u32, text: String| -> rquickjs::Result<()> {
                host.write(&ctx, |out| out.write(Stream::of_fd(fd), &text))
            },
        )
    }

    /// The native line writer of `process` (warnings): `line(fd, text)`.
    pub(super) fn line_write<'js>(&self, ctx: &Ctx<'js>) -> rquickjs::Result<Function<'js>> {
        let host = self.clone();
        Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>, fd: u32, text: String| -> rquickjs::Result<()> {
                host.write(&ctx, |out| out.line(Stream::of_fd(fd), &text))
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finished(out: RunOutput) -> (String, String) {
        out.finish()
    }

    #[test]
    fn lines_and_partial_lines_keep_their_order() {
        let mut out = RunOutput::new(1000);
        assert!(out.line(Stream::Stdout, "log"));
        assert!(out.write(Stream::Stdout, "a"));
        assert!(out.write(Stream::Stdout, "b\nc"));
        assert!(out.write(Stream::Stderr, "e\n"));
        assert!(out.line(Stream::Stdout, "{ k: 1 }"));
        assert!(out.append(Stream::Stdout, "emitted"));
        assert!(!out.overflowed());
        assert_eq!(
            finished(out),
            ("log\nab\n{ k: 1 }\nemittedc".into(), "e\n".into())
        );
    }

    #[test]
    fn every_byte_counts_against_one_cap() {
        // A partial line is counted when written, not when its newline comes.
        let mut out = RunOutput::new(10);
        assert!(out.write(Stream::Stdout, "12345678"));
        assert!(!out.write(Stream::Stderr, "abcd"));
        assert!(out.overflowed());
        assert!(
            !out.write(Stream::Stdout, "more"),
            "nothing fits after an overflow"
        );
        assert!(!out.line(Stream::Stderr, ""));
        assert_eq!(finished(out), ("12345678".into(), "ab".into()));

        // A console line's newline counts too.
        let mut out = RunOutput::new(4);
        assert!(!out.line(Stream::Stdout, "abcd"));
        assert_eq!(finished(out), ("abcd".into(), String::new()));

        // Exactly full is not an overflow.
        let mut out = RunOutput::new(4);
        assert!(out.line(Stream::Stdout, "abc"));
        assert!(!out.overflowed());
        assert!(!out.write(Stream::Stdout, "x"));
        assert_eq!(finished(out), ("abc\n".into(), String::new()));
    }

    #[test]
    fn a_cut_never_splits_a_character() {
        // "é" is two bytes and "😀" four: the cut falls before a character that does not fit.
        let mut out = RunOutput::new(5);
        assert!(!out.write(Stream::Stdout, "abcé😀"));
        assert_eq!(finished(out).0, "abcé");
        let mut out = RunOutput::new(4);
        assert!(!out.write(Stream::Stdout, "abcé"));
        assert_eq!(finished(out).0, "abc");
        let mut out = RunOutput::new(3);
        assert!(!out.write(Stream::Stdout, "😀"));
        assert_eq!(finished(out).0, "");
    }

    #[test]
    fn a_zero_cap_keeps_nothing() {
        let mut out = RunOutput::new(0);
        assert!(out.write(Stream::Stdout, ""));
        assert!(!out.write(Stream::Stdout, "x"));
        assert_eq!(finished(out), (String::new(), String::new()));
    }
}
