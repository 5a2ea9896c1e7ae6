//! A run over a persistent realm's state: the sealed state is opened and read into the run's
//! freshly derived realm before the guest starts, and written and sealed again when it ends.
//! Between runs the state is only bytes, so any worker thread, or another process with the
//! same build and key, carries the realm on.

use super::errors::{ErrorCode, ErrorInfo};
use super::limits::{CancelToken, Limits, Watchdog};
use super::realm::Realm;
use super::request::PersistState;
use super::snapshot::{self, SnapshotError, SnapshotErrorKind, SnapshotLimits};
use super::state;
use rquickjs::Ctx;
use std::time::Duration;

/// Deepest nesting of values a state may have. The writer and reader recurse per level, and
/// runs on the main thread have Node's stack.
const MAX_STATE_DEPTH: u32 = 4_000;
/// Most bytes a state may take, whatever the memory limit.
const MAX_STATE_BYTES: usize = 256 << 20;

fn limits_for(limits: &Limits) -> SnapshotLimits {
    let max_bytes = limits.memory_bytes.min(MAX_STATE_BYTES);
    SnapshotLimits {
        max_bytes,
        max_depth: MAX_STATE_DEPTH,
        // A value costs at least a few bytes of state, so this cap is never the first one hit
        // by honest state; it bounds the reader's tables.
        max_nodes: u32::try_from(max_bytes / 2).unwrap_or(u32::MAX),
    }
}

/// The names of the global object's own properties: taken before and after the host installs
/// its per-run globals (live values, extensions), whose names are then left out of the state.
pub(crate) fn global_names(ctx: &Ctx<'_>) -> Vec<String> {
    let global = ctx.globals();
    super::raw::own_keys(ctx, &global, false, false)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|k| k.as_string().and_then(|s| s.to_string().ok()))
        .collect()
}

fn engine_error(e: SnapshotError, writing: bool, limits: &Limits) -> ErrorInfo {
    let what = if writing { "written" } else { "read" };
    match e.kind {
        SnapshotErrorKind::Refused => ErrorInfo::new(
            ErrorCode::InvalidInput,
            "TypeError",
            format!(
                "{}; live host values, promises, timers and running generators are not state: \
                 read live values from the globals in each evaluation",
                e.message
            ),
        ),
        SnapshotErrorKind::Limit => ErrorInfo::new(
            ErrorCode::StateTooLarge,
            "RangeError",
            format!(
                "the state cannot be {what}: {} (at most {} bytes and {MAX_STATE_DEPTH} levels of nesting)",
                e.message,
                limits_for(limits).max_bytes
            ),
        ),
        SnapshotErrorKind::Interrupted => ErrorInfo::new(
            ErrorCode::Timeout,
            "TimeoutError",
            format!("the state could not be {what} in time"),
        ),
        SnapshotErrorKind::OutOfMemory => ErrorInfo::new(
            ErrorCode::MemoryLimit,
            "RangeError",
            format!(
                "the state could not be {what} within the memory limit of {} bytes (and as much again for the state itself)",
                limits.memory_bytes
            ),
        ),
        SnapshotErrorKind::Malformed => ErrorInfo::new(
            ErrorCode::SnapshotTampered,
            "Error",
            format!("the state is refused: {}", e.message),
        ),
    }
}

/// Opens the sealed state (the MAC first: nothing unauthenticated reaches the engine's
/// reader), checks it was written over this template, and reads it into `ctx`, a realm just
/// derived from the template.
pub(crate) fn restore(ctx: &Ctx<'_>, ps: &PersistState, limits: &Limits) -> Result<(), ErrorInfo> {
    let Some(sealed) = ps.sealed.as_ref() else {
        return Ok(());
    };
    let opened = state::open(sealed, &ps.key)?;
    opened.check_template(&snapshot::template_fingerprint(ctx))?;
    snapshot::read_realm_state(ctx, opened.payload, &limits_for(limits))
        .map_err(|e| engine_error(e, false, limits))
}

/// Writes the realm's state and seals it. The run is over, so the write gets a deadline of
/// its own (the run's timeout again) and no time slicing; it runs no guest code.
pub(crate) fn capture(
    realm: &Realm,
    ps: &PersistState,
    limits: &Limits,
    host_names: &[String],
) -> Result<Vec<u8>, ErrorInfo> {
    let watchdog = Watchdog::new(Duration::from_millis(limits.timeout_ms), CancelToken::new());
    let previous = std::mem::replace(&mut *realm.slot.watchdog.borrow_mut(), watchdog);
    let slicer = realm.slot.slicer.borrow_mut().take();
    realm.enter(limits.stack_bytes);
    // The written bytes are on top of the heap the run left, and are capped on their own.
    let state_limits = limits_for(limits);
    let run_limit = realm.heap_base.get().saturating_add(limits.memory_bytes);
    realm
        .meter
        .set_limit(run_limit.saturating_add(state_limits.max_bytes));
    let skip: Vec<&str> = host_names.iter().map(String::as_str).collect();
    let written = realm.context.with(|ctx| {
        let payload = snapshot::write_realm_state(&ctx, &skip, &state_limits).map_err(|e| {
            // Out of memory shows as an interrupt too: the handler stops an exhausted heap.
            if realm.meter.exhausted() {
                engine_error(
                    SnapshotError {
                        kind: SnapshotErrorKind::OutOfMemory,
                        ..e
                    },
                    true,
                    limits,
                )
            } else {
                engine_error(e, true, limits)
            }
        })?;
        state::seal(&payload, &snapshot::template_fingerprint(&ctx), &ps.key)
    });
    realm.meter.set_limit(run_limit);
    *realm.slot.slicer.borrow_mut() = slicer;
    *realm.slot.watchdog.borrow_mut() = previous;
    written
}
