//! Plain QuickJS-ng — the same vendored and patched engine quickrealm runs, without quickrealm's
//! realm setup (no lockdown, code generation allowed) — as a baseline for `bench/test262.cjs`.
//!
//! Reads one JSON object per line on stdin, `{"source": "...", "async": false}`, runs each
//! source as a strict script in a fresh runtime and context with `console.log` collecting lines,
//! runs its jobs, and writes one line per test: `{"ok": bool, "error": "Name", "lines": [..]}`.
//!
//!   cargo run --release --example unfrozen-quickjs < tests.ndjson

use rquickjs::{Context, Ctx, Function, Object, Runtime, Value};
use std::cell::RefCell;
use std::io::{BufRead, Write};
use std::rc::Rc;
use std::time::{Duration, Instant};

const DEADLINE: Duration = Duration::from_secs(10);

fn error_name<'js>(ctx: &Ctx<'js>) -> String {
    let caught: Value = ctx.catch();
    caught
        .as_object()
        .and_then(|o| o.get::<_, String>("name").ok())
        .unwrap_or_else(|| caught.type_name().to_string())
}

fn run_one(source: &str) -> serde_json::Value {
    let rt = Runtime::new().expect("runtime");
    rt.set_memory_limit(256 << 20);
    let started = Instant::now();
    rt.set_interrupt_handler(Some(Box::new(move || started.elapsed() > DEADLINE)));
    let ctx = Context::full(&rt).expect("context");
    let lines = Rc::new(RefCell::new(Vec::<String>::new()));
    let outcome = ctx.with(|ctx| {
        let sink = lines.clone();
        let log = Function::new(ctx.clone(), move |m: rquickjs::Coerced<String>| {
            sink.borrow_mut().push(m.0);
        })
        .expect("log");
        let console = Object::new(ctx.clone()).expect("console");
        console.set("log", log).expect("console.log");
        ctx.globals()
            .set("console", console)
            .expect("console global");
        let code = format!("'use strict';\n{source}");
        match ctx.eval::<Value, _>(code) {
            Ok(_) => Ok(()),
            Err(_) => Err(error_name(&ctx)),
        }
    });
    let outcome = outcome.and_then(|()| loop {
        match rt.execute_pending_job() {
            Ok(true) => {}
            Ok(false) => break Ok(()),
            Err(e) => break Err(e.0.with(|ctx| error_name(&ctx))),
        }
    });
    let lines = lines.borrow().clone();
    serde_json::json!({
        "ok": outcome.is_ok(),
        "error": outcome.err().unwrap_or_default(),
        "lines": lines,
    })
}

fn main() {
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let test: serde_json::Value = match serde_json::from_str(&line) {
            Ok(t) => t,
            Err(_) => continue,
        };
        let source = test["source"].as_str().unwrap_or_default();
        let result = run_one(source);
        if writeln!(out, "{result}").is_err() {
            break;
        }
    }
}
