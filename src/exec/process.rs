//! The minimal `process` global of an exec run: `argv`, `env`, `exit`, `exitCode`, `cwd()`,
//! `stdout`/`stderr.write` and friends. The host reads back the exit code and the run's output
//! from [`ProcessState`].

use std::sync::{Arc, Mutex, MutexGuard};

use rquickjs::{Array, Ctx, Function, Object};

use super::encoding::decode;
use super::files::lock;
use super::guest_errors::throw_uncatchable;
use super::lock_unpoisoned;
use super::output::{OutputHost, RunOutput};
use crate::engine::realm::INTERNAL_FILENAME;

/// `process` state the host reads after the run.
#[derive(Debug, Default)]
pub(super) struct ProcessState {
    /// The code passed to `process.exit()`.
    pub(super) exit: Option<i32>,
    /// The last `process.exitCode` set.
    pub(super) exit_code: Option<i32>,
    /// Everything the run wrote (console, streams, `emit()`), under its output cap.
    pub(super) output: RunOutput,
}

impl ProcessState {
    /// The state of a run that may write `output_bytes` bytes in all.
    pub(super) fn new(output_bytes: usize) -> Self {
        ProcessState {
            exit: None,
            exit_code: None,
            output: RunOutput::new(output_bytes),
        }
    }
}

/// The `process` state of one run, shared with its native functions.
pub(super) type SharedState = Arc<Mutex<ProcessState>>;

/// Locks the run's `process` state; a panic elsewhere never makes it unusable.
pub(super) fn lock_state(s: &SharedState) -> MutexGuard<'_, ProcessState> {
    lock_unpoisoned(s)
}

const PROCESS_JS: &str = r#"(function (native, argv, env) {
  'use strict';
  const StringCtor = String, TypeErrorCtor = TypeError, isInteger = Number.isInteger;
  const NumberCtor = Number, BigIntCtor = BigInt, floor = Math.floor, now = Date.now;
  const PromiseCtor = Promise, U8 = Uint8Array;
  const started = now();
  let exitCode;
  function toCode(code) {
    if (code === undefined || code === null) return undefined;
    const n = typeof code === 'string' && /^-?[0-9]+$/.test(code) ? NumberCtor(code) : code;
    if (typeof n !== 'number' || !isInteger(n)) {
      const e = new TypeErrorCtor('The "code" argument must be an integer. Received ' + StringCtor(code));
      e.code = 'ERR_INVALID_ARG_TYPE';
      throw e;
    }
    return n;
  }
  function later(fn, args) {
    PromiseCtor.resolve().then(() => fn(...args));
  }
  function stream(fd) {
    const s = {
      fd,
      isTTY: false,
      columns: 80,
      write(chunk, encoding, cb) {
        native.write(fd, typeof chunk === 'string' ? chunk : chunk instanceof U8 ? native.decode(chunk) : StringCtor(chunk));
        const done = typeof encoding === 'function' ? encoding : cb;
        if (typeof done === 'function') later(done, []);
        return true;
      },
      end() {},
      on() { return s; },
      once() { return s; },
    };
    return s;
  }
  function hrtime(previous) {
    const ms = now() - started;
    let sec = floor(ms / 1000), ns = (ms % 1000) * 1e6;
    if (previous) {
      sec -= previous[0];
      ns -= previous[1];
      if (ns < 0) { sec -= 1; ns += 1e9; }
    }
    return [sec, ns];
  }
  hrtime.bigint = () => BigIntCtor(now() - started) * 1000000n;
  const process = {
    title: 'quickrealm',
    pid: 1,
    ppid: 0,
    platform: 'linux',
    arch: 'x64',
    argv0: 'quickrealm',
    execArgv: [],
    versions: {},
    release: { name: 'quickrealm' },
    get argv() { return argv; },
    set argv(v) { argv = v; },
    get env() { return env; },
    set env(v) { env = v; },
    get exitCode() { return exitCode; },
    set exitCode(v) {
      exitCode = toCode(v);
      native.setExitCode(exitCode === undefined ? null : exitCode);
    },
    exit(code) {
      const c = code === undefined ? exitCode : toCode(code);
      native.exit(c === undefined ? 0 : c);
    },
    cwd() { return '~'; },
    chdir() {
      const e = new Error('process.chdir() is not supported here; the working directory is always ~');
      e.code = 'ERR_UNSUPPORTED';
      throw e;
    },
    uptime() { return (now() - started) / 1000; },
    hrtime,
    memoryUsage() { return { rss: 0, heapTotal: 0, heapUsed: 0, external: 0, arrayBuffers: 0 }; },
    nextTick(fn, ...args) {
      if (typeof fn !== 'function') {
        const e = new TypeErrorCtor('The "callback" argument must be of type function');
        e.code = 'ERR_INVALID_ARG_TYPE';
        throw e;
      }
      later(fn, args);
    },
    emitWarning(warning) {
      native.line(2, 'Warning: ' + (warning && typeof warning === 'object' && 'message' in warning ? warning.message : StringCtor(warning)));
    },
    on() { return process; },
    once() { return process; },
    off() { return process; },
    addListener() { return process; },
    removeListener() { return process; },
    removeAllListeners() { return process; },
    emit() { return false; },
    listeners() { return []; },
    stdout: stream(1),
    stderr: stream(2),
  };
  return process;
})"#;

/// Installs the global `process` of an exec run; its streams write through `output`.
pub(super) fn install_process<'js>(
    ctx: &Ctx<'js>,
    output: &OutputHost,
    argv: &[String],
    env: &[(String, String)],
) -> rquickjs::Result<()> {
    let (files, state, cancel) = (&output.files, &output.state, &output.cancel);
    let native = Object::new(ctx.clone())?;
    {
        let (files, state, cancel) = (files.clone(), state.clone(), cancel.clone());
        let exit = Function::new(ctx.clone(), move |ctx: Ctx<'js>, code: i32| {
            lock_state(&state).exit = Some(code);
            lock(&files).halted = true;
            cancel.cancel();
            Err::<(), _>(throw_uncatchable(&ctx, &format!("process.exit({code})")))
        })?
        .with_name("exit")?;
        native.set("exit", exit)?;
    }
    {
        let state = state.clone();
        let set = Function::new(ctx.clone(), move |code: Option<i32>| {
            lock_state(&state).exit_code = code;
        })?;
        native.set("setExitCode", set)?;
    }
    native.set("write", output.stream_write(ctx)?)?;
    native.set("line", output.line_write(ctx)?)?;
    let decode = Function::new(ctx.clone(), |ctx: Ctx<'js>, bytes: rquickjs::Value<'js>| {
        let data = crate::engine::raw::view_bytes(&ctx, &bytes).unwrap_or_default();
        decode(&data, "utf8")
    })?;
    native.set("decode", decode)?;

    let argv_arr = Array::new(ctx.clone())?;
    for (i, a) in argv.iter().enumerate() {
        argv_arr.set(i, a.as_str())?;
    }
    let env_obj = Object::new(ctx.clone())?;
    for (k, v) in env {
        env_obj.set(k.as_str(), v.as_str())?;
    }
    let mut opts = rquickjs::context::EvalOptions::default();
    opts.filename = Some(INTERNAL_FILENAME.into());
    opts.strict = true;
    let build: Function = ctx.eval_with_options(PROCESS_JS, opts)?;
    let process: Object = build.call((native, argv_arr, env_obj))?;
    ctx.globals().set("process", process)?;
    Ok(())
}
