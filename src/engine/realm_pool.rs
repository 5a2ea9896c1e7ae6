//! Realms prepared ahead of time. Building a realm (runtime, intrinsics, bindings, lockdown) is
//! the expensive part of a run, so plain runs take a realm that a background thread already built
//! and froze, use it exactly once, and hand it to another background thread for teardown.

use super::limits::DEFAULT_MEMORY_BYTES;
use super::realm::{Realm, RealmSpec};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, SyncSender, TrySendError};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::Duration;

/// A realm moved to another thread as a whole. Every `Rc` it holds is shared only with objects
/// inside the same realm (its runtime's closures), so exactly one thread ever touches it.
struct Transfer(Realm);
// SAFETY: see above; the pool and the teardown thread only move realms, never share them.
unsafe impl Send for Transfer {}

pub const DEFAULT_POOL_SIZE: usize = 2;
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
    Realm::build(RealmSpec {
        with_console: true,
        max_elements: RealmSpec::max_elements_for(DEFAULT_MEMORY_BYTES),
        extension: None,
        live: None,
    })
    .ok()
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
            let Ok(mut ready) = pool.ready.lock() else {
                return;
            };
            while ready.len() >= pool.wanted.load(Ordering::Relaxed) {
                ready = match pool.refill.wait(ready) {
                    Ok(r) => r,
                    Err(_) => return,
                };
            }
        }
        let built = std::panic::catch_unwind(build_standard).ok().flatten();
        match built {
            Some(realm) => {
                pool.built.fetch_add(1, Ordering::Relaxed);
                let surplus = match pool.ready.lock() {
                    // The size may have shrunk while this realm was being built.
                    Ok(mut ready) if ready.len() < pool.wanted.load(Ordering::Relaxed) => {
                        ready.push(Transfer(realm));
                        None
                    }
                    _ => Some(realm),
                };
                if let Some(realm) = surplus {
                    retire(realm);
                }
            }
            None => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

/// A prepared standard realm, or a freshly built one when the pool is empty (construction is
/// then part of the run, as it would be without a pool).
pub fn take_standard() -> Option<Realm> {
    let pool = pool();
    pool.taken.fetch_add(1, Ordering::Relaxed);
    let ready = pool.ready.lock().ok().and_then(|mut r| r.pop());
    pool.refill.notify_one();
    match ready {
        Some(Transfer(realm)) => Some(realm),
        None => build_standard(),
    }
}

/// Hands a used realm to the teardown thread (never back to the pool). On a worker thread the
/// realm is torn down in place: nobody waits on that thread, and the work stays on the core that
/// the worker count accounts for.
pub fn retire(realm: Realm) {
    if super::workers::on_worker_thread() {
        drop(realm);
        return;
    }
    let rejected = match POOL.get().and_then(|p| p.teardown.lock().ok()) {
        Some(tx) => match tx.try_send(Transfer(realm)) {
            Ok(()) => None,
            Err(TrySendError::Full(t)) | Err(TrySendError::Disconnected(t)) => Some(t),
        },
        None => Some(Transfer(realm)),
    };
    drop(rejected);
}

/// Sets how many prepared realms the pool keeps ready (0 disables preparation ahead of time).
pub fn set_pool_size(n: usize) {
    let pool = pool();
    pool.wanted.store(n, Ordering::Relaxed);
    if let Ok(mut ready) = pool.ready.lock() {
        while ready.len() > n {
            if let Some(r) = ready.pop() {
                retire(r.0);
            }
        }
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
        ready: pool.ready.lock().map(|r| r.len()).unwrap_or(0),
        wanted: pool.wanted.load(Ordering::Relaxed),
        taken: pool.taken.load(Ordering::Relaxed),
        built: pool.built.load(Ordering::Relaxed),
    }
}
