//! The `world` a turn's guest sees, native: `read`, `write`, `list`, `search`, `stat`,
//! `delete`, `mkdir` and `fingerprint` over the turn's working copy, installed as a realm
//! extension (as `fs` is for `ws.exec`). Every call passes the turn's gate on the guest's own
//! thread — admitted before it runs (policy, call cap, budget with `bytesWritten` charged
//! before a write, re-run divergence), settled after (audit) — so world data never crosses into
//! the host's JavaScript. A refusal stops the turn with an error the guest cannot catch.
//!
//! Answers are the same when a paused turn is re-run: a file the turn changed reports the
//! turn's fixed time as its `mtime`. `world.exec` orchestrates a program run in the host; a
//! host that binds it passes it to [`TurnWorld::install`].

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use rquickjs::function::{Constructor, Rest};
use rquickjs::{Ctx, Function, Object, Value};
use serde_json::{json, Value as Json};
use sha2::{Digest, Sha256};

use super::gate::{world_key, Admission, Call, CallKind, Outcome, Stop, TurnGate};
use super::world_args::{
    audit_args, audit_text, key_args, number_json, read_args, string, Arg, Options,
};
use super::Ledger;
use crate::engine::{raw, Extension, RealmExtension};
use crate::exec::{lock_workspace, SharedWorkspace};
use crate::workspace::{bounds, EntryKind, Query, Workspace, WsCode, WsError};

/// A session's ledger and the gate of its turn in progress, shared by the host (operations,
/// the approval flow) and the guest's thread (world calls).
#[derive(Debug)]
pub struct SessionState {
    pub ledger: Ledger,
    pub turn: Option<TurnGate>,
}

/// [`SessionState`] behind a lock.
pub type SharedSession = Arc<Mutex<SessionState>>;

/// Locks the session state; a panic elsewhere never makes it unusable (every change to it is
/// made whole under the lock).
pub fn lock_session(s: &SharedSession) -> MutexGuard<'_, SessionState> {
    s.lock().unwrap_or_else(|e| e.into_inner())
}

/// The SHA-256 (hex) of the files of `ws` matching `glob`, in path order: each path, a NUL, its
/// bytes, a NUL. Read rules apply as to every read.
pub fn fingerprint(ws: &Workspace, glob: &str) -> Result<String, WsError> {
    let mut hash = Sha256::new();
    for path in ws.glob(glob)? {
        hash.update(path.as_bytes());
        hash.update([0u8]);
        hash.update(ws.read_file(&path)?);
        hash.update([0u8]);
    }
    Ok(hash.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WorldOp {
    Read,
    Write,
    List,
    Search,
    Stat,
    Delete,
    Mkdir,
    Fingerprint,
}

impl WorldOp {
    const ALL: [WorldOp; 8] = [
        WorldOp::Read,
        WorldOp::Write,
        WorldOp::List,
        WorldOp::Search,
        WorldOp::Stat,
        WorldOp::Delete,
        WorldOp::Mkdir,
        WorldOp::Fingerprint,
    ];

    fn method(self) -> &'static str {
        match self {
            WorldOp::Read => "read",
            WorldOp::Write => "write",
            WorldOp::List => "list",
            WorldOp::Search => "search",
            WorldOp::Stat => "stat",
            WorldOp::Delete => "delete",
            WorldOp::Mkdir => "mkdir",
            WorldOp::Fingerprint => "fingerprint",
        }
    }

    fn operation(self) -> String {
        format!("world.{}", self.method())
    }

    /// How many arguments the call reads (the rest are ignored).
    fn arity(self) -> usize {
        match self {
            WorldOp::Read | WorldOp::Write | WorldOp::Search | WorldOp::Delete => 2,
            _ => 1,
        }
    }
}

/// What a call answers: data, or a file's bytes (a `Uint8Array` for the guest).
enum Reply {
    Data(Json),
    Bytes(Vec<u8>),
}

/// Why a call that ran failed.
enum Failure {
    /// A wrong argument the guest may catch (`TypeError`).
    Type(String),
    /// The workspace refused (a path rule refusal stops the turn).
    Ws(WsError),
}

impl From<WsError> for Failure {
    fn from(e: WsError) -> Self {
        Failure::Ws(e)
    }
}

const TYPE_PATH: &str = "the path must be a string";
const TYPE_DATA: &str = "world.write(path, data): data must be a string or a Uint8Array";
const STOPPED: &str = "the turn was stopped by the session";

fn path_of(a: &Arg) -> Result<String, Failure> {
    match a {
        Arg::Str(s) => Ok(s.clone()),
        _ => Err(Failure::Type(TYPE_PATH.into())),
    }
}

fn kind_name(kind: EntryKind) -> &'static str {
    match kind {
        EntryKind::File => "file",
        EntryKind::Dir => "dir",
    }
}

struct Inner {
    session: SharedSession,
    work: SharedWorkspace,
    origin: SharedWorkspace,
    now_ms: f64,
    halted: AtomicBool,
}

/// The native `world` of one turn (see the module documentation).
#[derive(Clone)]
pub struct TurnWorld(Arc<Inner>);

impl TurnWorld {
    /// The world over `work` (the turn's working copy) for the turn whose gate `session` holds;
    /// `origin` is the world as the turn found it and `now_ms` the turn's fixed time.
    pub fn new(
        session: SharedSession,
        work: SharedWorkspace,
        origin: SharedWorkspace,
        now_ms: f64,
    ) -> Self {
        TurnWorld(Arc::new(Inner {
            session,
            work,
            origin,
            now_ms,
            halted: AtomicBool::new(false),
        }))
    }

    /// The realm extension that installs `world` (without `exec`) as a frozen global.
    pub fn extension(&self) -> Extension {
        Extension(Arc::new(self.clone()))
    }

    /// From now on every call stops the turn (the host ended it: `needs()`, an operation's
    /// refusal, the run's end).
    pub fn halt(&self) {
        self.0.halted.store(true, Ordering::SeqCst);
    }

    /// Installs the frozen `world` global; `exec`, when given, is the host's `world.exec`.
    pub fn install<'js>(&self, ctx: &Ctx<'js>, exec: Option<Value<'js>>) -> rquickjs::Result<()> {
        let world = Object::new(ctx.clone())?;
        for op in WorldOp::ALL {
            let me = self.clone();
            let f = Function::new(ctx.clone(), move |ctx: Ctx<'js>, args: Rest<Value<'js>>| {
                me.call(&ctx, op, &args.0)
            })?
            .with_name(op.method())?;
            if let Some(o) = f.as_object() {
                raw::freeze(ctx, o);
            }
            world.set(op.method(), f)?;
        }
        if let Some(exec) = exec {
            world.set("exec", exec)?;
        }
        raw::freeze(ctx, &world);
        ctx.globals().set("world", world)
    }

    fn call<'js>(
        &self,
        ctx: &Ctx<'js>,
        op: WorldOp,
        given: &[Value<'js>],
    ) -> rquickjs::Result<Value<'js>> {
        let operation = op.operation();
        if self.0.halted.load(Ordering::SeqCst) {
            return Err(stopped(ctx));
        }
        let mut args = read_args(ctx, given, op.arity())
            .map_err(|e| throw_named(ctx, "TypeError", &e.message(&operation)))?;
        if matches!(op, WorldOp::List | WorldOp::Fingerprint) && args[0] == Arg::Undefined {
            args[0] = Arg::Str("**/*".into());
        }
        let audit = audit_args(&args);
        let key = world_key(&operation, &key_args(&args));
        let bytes = match (op, &args[1..]) {
            (WorldOp::Write, [Arg::Str(s)]) => s.len() as f64,
            (WorldOp::Write, [Arg::Bytes(b)]) => b.len() as f64,
            _ => 0.0,
        };
        let call = Call {
            kind: CallKind::World,
            operation: &operation,
            args: &audit,
            bytes,
            approval: super::Approval::Never,
            key: Some(&key),
        };
        let call_id = {
            let mut state = lock_session(&self.0.session);
            let SessionState { ledger, turn } = &mut *state;
            let Some(gate) = turn.as_mut() else {
                return Err(stopped(ctx));
            };
            match gate.admit(ledger, &call) {
                Admission::Run { call_id, .. } => call_id,
                _ => return Err(stopped(ctx)),
            }
        };
        let ran = self.run(op, &args);
        let mut state = lock_session(&self.0.session);
        let SessionState { ledger, turn } = &mut *state;
        let Some(gate) = turn.as_mut() else {
            return Err(stopped(ctx));
        };
        match ran {
            Ok(reply) => {
                let result = match &reply {
                    Reply::Data(v) => audit_json(v),
                    Reply::Bytes(b) => Json::String(format!("<{} bytes>", b.len())).to_string(),
                };
                let outcome = Outcome {
                    result: Some(result),
                    ..Outcome::default()
                };
                if gate.settle(ledger, call_id, outcome).is_some() {
                    return Err(stopped(ctx));
                }
                drop(state);
                match reply {
                    Reply::Data(v) => to_guest(ctx, &v),
                    Reply::Bytes(b) => {
                        rquickjs::TypedArray::<u8>::new(ctx.clone(), b).map(|a| a.into_value())
                    }
                }
            }
            Err(Failure::Type(message)) => {
                settle_error(gate, ledger, call_id, message.clone());
                Err(throw_named(ctx, "TypeError", &message))
            }
            Err(Failure::Ws(e)) => {
                let coded = format!("{}: {}", e.code.as_str(), e.message);
                settle_error(gate, ledger, call_id, coded.clone());
                if e.code == WsCode::PolicyViolation {
                    gate.halt(Stop::Policy {
                        rule: "worldRules".into(),
                        message: format!("{operation}: {}", e.message),
                    });
                    return Err(stopped(ctx));
                }
                Err(throw_named(ctx, "WorldError", &coded))
            }
        }
    }

    /// Runs an admitted call on the working copy.
    fn run(&self, op: WorldOp, args: &[Arg]) -> Result<Reply, Failure> {
        let work = || lock_workspace(&self.0.work);
        Ok(match op {
            WorldOp::Read => {
                let path = path_of(&args[0])?;
                let binary = matches!(&args[1], Arg::Map(o) if o.iter().any(|(k, v)| k == "encoding" && *v == Arg::Null));
                if binary {
                    Reply::Bytes(work().read_file(&path)?.to_vec())
                } else {
                    Reply::Data(Json::String(work().read_text(&path)?))
                }
            }
            WorldOp::Write => {
                let data: &[u8] = match &args[1] {
                    Arg::Str(s) => s.as_bytes(),
                    Arg::Bytes(b) => b,
                    _ => return Err(Failure::Type(TYPE_DATA.into())),
                };
                let path = path_of(&args[0])?;
                work().write_file(&path, data, true)?;
                Reply::Data(number_json(data.len() as f64))
            }
            WorldOp::List => {
                let glob = string(&args[0], "pattern")?;
                Reply::Data(json!(work().glob(&glob)?))
            }
            WorldOp::Search => Reply::Data(self.search(args)?),
            WorldOp::Stat => Reply::Data(self.stat(&path_of(&args[0])?)?),
            WorldOp::Delete => {
                let path = path_of(&args[0])?;
                let recursive =
                    Options::read(&args[1], "options", &["recursive"])?.boolean("recursive")?;
                work().delete(&path, recursive)?;
                Reply::Data(Json::Bool(true))
            }
            WorldOp::Mkdir => {
                work().mkdir(&path_of(&args[0])?, true)?;
                Reply::Data(Json::Bool(true))
            }
            WorldOp::Fingerprint => {
                let glob = string(&args[0], "pattern")?;
                Reply::Data(Json::String(fingerprint(&work(), &glob)?))
            }
        })
    }

    fn search(&self, args: &[Arg]) -> Result<Json, WsError> {
        let query = Query::new(string(&args[0], "query")?)?;
        let o = Options::read(
            &args[1],
            "options",
            &["path", "context", "maxResults", "maxBytes"],
        )?;
        let path = o.string("path")?.unwrap_or_else(|| "~".into());
        let context = o.integer("context", bounds::SEARCH_CONTEXT)?.unwrap_or(0);
        let max = o
            .integer("maxResults", bounds::SEARCH_RESULTS)?
            .unwrap_or(bounds::DEFAULT_SEARCH_RESULTS);
        let max_bytes = o
            .integer("maxBytes", bounds::SEARCH_BYTES)?
            .unwrap_or(bounds::DEFAULT_SEARCH_BYTES);
        let found = lock_workspace(&self.0.work).search(
            &query,
            &path,
            bounds::to_usize(context),
            bounds::to_usize(max),
            bounds::to_usize(max_bytes),
        )?;
        let matches: Vec<Json> = found
            .matches
            .into_iter()
            .map(|m| {
                json!({
                    "path": m.path,
                    "line": m.line,
                    "column": m.column,
                    "before": m.before,
                    "text": m.line_text,
                    "after": m.after,
                })
            })
            .collect();
        Ok(json!({
            "matches": matches,
            "truncated": found.truncated,
            "filesSearched": found.files_searched,
        }))
    }

    /// `{ size, kind, mtime }`; a path the turn changed reports the turn's time, so a re-run
    /// answers the same.
    fn stat(&self, path: &str) -> Result<Json, WsError> {
        let now = lock_workspace(&self.0.work).stat(path)?;
        let before = lock_workspace(&self.0.origin).stat(&now.path).ok();
        let mtime = match before {
            Some(b) if b.mtime == now.mtime => number_json(now.mtime as f64),
            _ => number_json(self.0.now_ms),
        };
        Ok(json!({ "size": now.size, "kind": kind_name(now.kind), "mtime": mtime }))
    }
}

/// `world` is installed once the run's live globals are bound: the host binds `world` as
/// `{ exec }` (a program run is orchestrated in the host), and the native `world` takes that
/// `exec` and replaces the live object. A run without live globals gets a `world` without
/// `exec`.
impl RealmExtension for TurnWorld {
    fn bound<'js>(&self, ctx: &Ctx<'js>, global: &Object<'js>) -> rquickjs::Result<()> {
        let exec = match global.get::<_, Option<Object<'js>>>("world")? {
            Some(live) => live.get::<_, Option<Value<'js>>>("exec")?,
            None => None,
        };
        TurnWorld::install(self, ctx, exec)
    }

    /// Nothing is kept in the runtime and `world` is not a built-in: the turn's realm is derived
    /// from the thread's frozen template.
    fn derivable(&self) -> bool {
        true
    }
}

fn settle_error(gate: &mut TurnGate, ledger: &mut Ledger, call_id: u64, error: String) {
    let outcome = Outcome {
        error: Some(error),
        ..Outcome::default()
    };
    // A stop caused here is kept by the gate; the guest gets the call's own error first.
    let _ = gate.settle(ledger, call_id, outcome);
}

/// JSON text of a result as the audit log keeps it (long strings cut).
fn audit_json(v: &Json) -> String {
    fn cut(v: &Json) -> Json {
        match v {
            Json::String(s) => Json::String(audit_text(s)),
            Json::Array(items) => Json::Array(items.iter().map(cut).collect()),
            Json::Object(map) => {
                Json::Object(map.iter().map(|(k, v)| (k.clone(), cut(v))).collect())
            }
            other => other.clone(),
        }
    }
    cut(v).to_string()
}

/// A guest copy of a result (fresh objects with the result's fixed keys).
fn to_guest<'js>(ctx: &Ctx<'js>, v: &Json) -> rquickjs::Result<Value<'js>> {
    Ok(match v {
        Json::Null => Value::new_null(ctx.clone()),
        Json::Bool(b) => Value::new_bool(ctx.clone(), *b),
        Json::Number(n) => Value::new_number(ctx.clone(), n.as_f64().unwrap_or(f64::NAN)),
        Json::String(s) => rquickjs::String::from_str(ctx.clone(), s)?.into_value(),
        Json::Array(items) => {
            let array = rquickjs::Array::new(ctx.clone())?;
            for (i, item) in items.iter().enumerate() {
                array.set(i, to_guest(ctx, item)?)?;
            }
            array.into_value()
        }
        Json::Object(map) => {
            let obj = Object::new(ctx.clone())?;
            for (k, item) in map {
                obj.set(k.as_str(), to_guest(ctx, item)?)?;
            }
            obj.into_value()
        }
    })
}

/// Throws `new Error(message)` (or `TypeError`) with its `name` set, as host errors reach the
/// guest: name and message only.
fn throw_named<'js>(ctx: &Ctx<'js>, name: &str, message: &str) -> rquickjs::Error {
    let built = (|| -> rquickjs::Result<Value<'js>> {
        let ctor: Constructor = ctx.globals().get(if name == "TypeError" {
            "TypeError"
        } else {
            "Error"
        })?;
        let err: Object = ctor.construct((message,))?;
        if name != "TypeError" {
            err.set("name", name)?;
        }
        Ok(err.into_value())
    })();
    match built {
        Ok(v) => ctx.throw(v),
        Err(e) => e,
    }
}

/// Throws the error that ends a stopped turn; guest `catch` and `finally` cannot intercept it.
fn stopped(ctx: &Ctx<'_>) -> rquickjs::Error {
    let built = (|| -> rquickjs::Result<Value<'_>> {
        let ctor: Constructor = ctx.globals().get("Error")?;
        let err: Object = ctor.construct((STOPPED,))?;
        err.set("name", "TurnStopped")?;
        Ok(err.into_value())
    })();
    match built {
        Ok(v) => {
            raw::make_uncatchable(ctx, &v);
            ctx.throw(v)
        }
        Err(e) => e,
    }
}
