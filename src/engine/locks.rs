//! Locking (a leaf: it depends on nothing).

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks a mutex, also after a panic on another thread while it held the lock: every critical
/// section in the engine leaves its data consistent (a push, a pop, a counter, a send), so the
/// data is still good to use.
pub(crate) fn lock_unpoisoned<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
