//! Realms prepared ahead of time. Building a realm (runtime, intrinsics, bindings, lockdown) is
//! the expensive part of a run, so plain runs take a realm that a background thread already built
//! and froze, use it exactly once, and hand it to another background thread for teardown.

use super::locks::lock_unpoisoned;
use super::realm::{Realm, RealmSpec};
use super::workers::on_worker_thread;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, SyncSender, TrySendError};
use std::sync::{Condvar, Mutex, OnceLock, PoisonError};
use std::time::Duration;

/// A standard realm moved to another thread as a whole. Only `Transfer::new` makes one.
struct Transfer(Realm);

impl Transfer {
    /// Wraps a realm for moving, if it is a standard one (see the `Send` impl); a realm with live
    /// host values or an extension is handed back.
    // The realm is handed back as it was; boxing it for the error case would buy nothing.
    #[allow(clippy::result_large_err)]
    fn new(realm: Realm) -> Result<Transfer, Realm> {
        if realm.standard {
            Ok(Transfer(realm))
        } else {
            Err(realm)
        }
    }
}

// SAFETY: a `Realm` is not `Send` because of its `Rc`s and rquickjs's single-threaded runtime
// handle. In a standard realm (no live host values, no extension: `Transfer::new` checks) every
// one of those is shared only among the realm's own fields and the closures its runtime owns
// (interrupt handler, rejection tracker, bindings), never with anything outside, and no run
// holds guest values of it once it is retired. Moving the whole realm therefore moves every
// owner at once, and the pool and the teardown thread only ever move it, never share it, so
// exactly one thread touches it at a time. Whoever runs it next calls `Realm::begin`, which
// records that thread's stack for QuickJS.
unsafe impl Send for Transfer {}

const DEFAULT_POOL_SIZE: usize = 2;
const TEARDOWN_QUEUE: usize = 4;

struct Pool {
    ready: Mutex<Vec<Transfer>>,
    wanted: AtomicUsize,
    refill: Condvar,
    teardown: Mutex<SyncSender<Transfer>>,
    taken: AtomicUsize,
    built: AtomicUsize,
}

static POOL: OnceLock<Pool> = OnceLock::new();

fn build_standard() -> Option<Realm> {
    Realm::build(RealmSpec::standard()).ok()
}

fn pool() -> &'static Pool {
    POOL.get_or_init(|| {
        // Bounded: when teardown falls behind, callers tear down themselves instead of letting
        // used realms pile up in memory.
        let (tx, rx) = sync_channel::<Transfer>(TEARDOWN_QUEUE);
        let _ = std::thread::Builder::new()
            .name("quickrealm-teardown".into())
            .spawn(move || {
                for realm in rx {
                    drop(realm);
                }
            });
        let _ = std::thread::Builder::new()
            .name("quickrealm-builder".into())
            .spawn(builder_loop);
        Pool {
            ready: Mutex::new(Vec::new()),
            wanted: AtomicUsize::new(DEFAULT_POOL_SIZE),
            refill: Condvar::new(),
            teardown: Mutex::new(tx),
            taken: AtomicUsize::new(0),
            built: AtomicUsize::new(0),
        }
    })
}

fn builder_loop() {
    let pool = pool();
    loop {
        {
            let mut ready = lock_unpoisoned(&pool.ready);
            while ready.len() >= pool.wanted.load(Ordering::Relaxed) {
                ready = pool
                    .refill
                    .wait(ready)
                    .unwrap_or_else(PoisonError::into_inner);
            }
        }
        let built = std::panic::catch_unwind(build_standard).ok().flatten();
        match built {
            Some(realm) => {
                pool.built.fetch_add(1, Ordering::Relaxed);
                let mut ready = lock_unpoisoned(&pool.ready);
                // The size may have shrunk while this realm was being built.
                if ready.len() < pool.wanted.load(Ordering::Relaxed) {
                    if let Ok(t) = Transfer::new(realm) {
                        ready.push(t);
                    }
                } else {
                    drop(ready);
                    retire(realm);
                }
            }
            None => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

/// A prepared standard realm, or a freshly built one when the pool is empty (construction is
/// then part of the run, as it would be without a pool).
pub(crate) fn take_standard() -> Option<Realm> {
    let pool = pool();
    pool.taken.fetch_add(1, Ordering::Relaxed);
    let ready = lock_unpoisoned(&pool.ready).pop();
    pool.refill.notify_one();
    match ready {
        Some(Transfer(realm)) => Some(realm),
        None => build_standard(),
    }
}

/// Hands a used realm to the teardown thread (never back to the pool). On a worker thread the
/// realm is torn down in place: nobody waits on that thread, and the work stays on the core that
/// the worker count accounts for. Only a standard realm leaves its thread.
pub(crate) fn retire(realm: Realm) {
    if on_worker_thread() {
        drop(realm);
        return;
    }
    // Any other realm is dropped right here, on its own thread.
    let Ok(transfer) = Transfer::new(realm) else {
        return;
    };
    let rejected = match POOL.get() {
        Some(pool) => match lock_unpoisoned(&pool.teardown).try_send(transfer) {
            Ok(()) => None,
            Err(TrySendError::Full(t)) | Err(TrySendError::Disconnected(t)) => Some(t),
        },
        None => Some(transfer),
    };
    drop(rejected);
}

/// Sets how many prepared realms the pool keeps ready (0 disables preparation ahead of time).
pub fn set_pool_size(n: usize) {
    let pool = pool();
    pool.wanted.store(n, Ordering::Relaxed);
    let surplus: Vec<Transfer> = {
        let mut ready = lock_unpoisoned(&pool.ready);
        let keep = ready.len().min(n);
        ready.split_off(keep)
    };
    for t in surplus {
        retire(t.0);
    }
    pool.refill.notify_one();
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RealmPoolStats {
    pub ready: usize,
    pub wanted: usize,
    pub taken: usize,
    pub built: usize,
}

pub fn pool_stats() -> RealmPoolStats {
    let pool = pool();
    RealmPoolStats {
        ready: lock_unpoisoned(&pool.ready).len(),
        wanted: pool.wanted.load(Ordering::Relaxed),
        taken: pool.taken.load(Ordering::Relaxed),
        built: pool.built.load(Ordering::Relaxed),
    }
}
