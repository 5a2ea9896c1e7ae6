//! The native `world` of a session turn ([`crate::session::TurnWorld`]): made from the turn's
//! ledger and working copies, handed to the run as a realm extension, halted when JavaScript
//! ends the turn. No world data crosses here.

use napi_derive::napi;

use super::SessionLedger;
use crate::engine::Extension;
use crate::napi::workspace::ZipWorkspace;
use crate::session::TurnWorld;

/// The `world` of one turn, for the turn's run.
#[napi]
pub struct NativeWorld {
    world: TurnWorld,
}

/// The `world` of the turn `ledger` has open, over `work` (the working copy), with `origin`
/// the world as the turn found it and `now` the turn's fixed time (ms since the epoch).
#[napi(js_name = "turnWorld", catch_unwind)]
pub fn turn_world(
    ledger: &SessionLedger,
    work: &ZipWorkspace,
    origin: &ZipWorkspace,
    now: f64,
) -> NativeWorld {
    NativeWorld {
        world: TurnWorld::new(ledger.state.clone(), work.shared(), origin.shared(), now),
    }
}

#[napi]
impl NativeWorld {
    /// Every later call stops the turn (the host ended it).
    #[napi(catch_unwind)]
    pub fn halt(&self) {
        self.world.halt();
    }
}

impl NativeWorld {
    /// The realm extension that installs `world` in the run.
    pub fn extension(&self) -> Extension {
        self.world.extension()
    }

    /// The world itself (to install with the host's `world.exec` once live globals are bound).
    pub fn world(&self) -> &TurnWorld {
        &self.world
    }
}
