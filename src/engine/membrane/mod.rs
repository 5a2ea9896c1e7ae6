//! Live host values inside a realm. The guest half (`guest.js`) turns host handles into
//! proxies; this half implements the native functions those proxies call, and converts values
//! between the guest and the `HostBridge` (implemented by the napi layer on the main thread).
//!
//! Its rooms: `protocol` (the encodings both halves agree on, and the conversions over them),
//! `bridge` (what the host provides, and the guest handle host callbacks call back in through),
//! `guest` (the guest half installed once per realm, the natives it calls, runs attached to it)
//! and `trap` (the native `get` trap, with its fast path).

mod bridge;
mod guest;
mod protocol;
mod trap;

pub use bridge::{GuestHandle, HostBridge};
pub(crate) use guest::{bind_globals, Membrane};
pub use protocol::{FromHost, HostFailure, HostResult, Key, RefKind, ToHost};

#[cfg(test)]
mod tests;
