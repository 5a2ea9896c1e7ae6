//! `setTimeout`/`setInterval` in the realm. The guest half (`timers.js`) keeps the pending
//! timers; the run's job loop asks it when the next one is due and runs it once the guest has
//! nothing else to do, waiting for it under the run's deadline.

use super::super::raw;
use super::RunSlot;
use rquickjs::{Ctx, Function, Object, Persistent};
use std::rc::Rc;

const SOURCE: &str = include_str!("timers.js");

/// The host's handle on a realm's timers.
#[derive(Clone)]
pub(crate) struct Timers {
    control: Persistent<Object<'static>>,
}

impl Timers {
    /// Defines the timer functions on the global object (before lockdown freezes them).
    pub(crate) fn install<'js>(ctx: &Ctx<'js>, slot: &Rc<RunSlot>) -> rquickjs::Result<Timers> {
        let make: Function = raw::eval_helper(ctx, SOURCE, c"quickrealm:timers")?.get()?;
        let made: Object = make.call((slot.touch_function(ctx)?,))?;
        let globals: Object = made.get("globals")?;
        let global = ctx.globals();
        for name in ["setTimeout", "setInterval", "clearTimeout", "clearInterval"] {
            let f: Function = globals.get(name)?;
            global.set(name, f)?;
        }
        let control: Object = made.get("control")?;
        Ok(Timers {
            control: Persistent::save(ctx, control),
        })
    }

    /// Milliseconds until the next timer is due (0 when one is due now); `None` when none is
    /// pending.
    pub(crate) fn next_due(&self, ctx: &Ctx<'_>) -> rquickjs::Result<Option<f64>> {
        let control = raw::rebind(ctx, self.control.clone().restore(ctx)?)?;
        let next: Function = control.get("nextDue")?;
        let ms: f64 = next.call(())?;
        Ok((ms >= 0.0).then_some(ms))
    }

    /// Forgets every pending timer (a realm that serves another run).
    pub(crate) fn reset(&self, ctx: &Ctx<'_>) -> rquickjs::Result<()> {
        let control = raw::rebind(ctx, self.control.clone().restore(ctx)?)?;
        let reset: Function = control.get("reset")?;
        reset.call(())
    }

    /// Runs the timer due first, if one is due; `Err` carries what its callback threw.
    pub(crate) fn fire_next(&self, ctx: &Ctx<'_>) -> rquickjs::Result<bool> {
        let control = raw::rebind(ctx, self.control.clone().restore(ctx)?)?;
        let fire: Function = control.get("fireNext")?;
        fire.call(())
    }
}
