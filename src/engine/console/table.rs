//! How `console.table` shows one cell; the table itself is drawn by the realm's
//! `console_extras.js` over this.

use super::{raw, Formatter, Options};
use rquickjs::{Ctx, Value};

/// How `console.table` shows one cell (Node: no line breaks, three array items, objects with
/// more than two keys as `[Object]`).
pub(crate) fn table_cell<'js>(ctx: &Ctx<'js>, v: &Value<'js>) -> rquickjs::Result<String> {
    let mut depth = 0.0;
    if let Some(obj) = v.as_object() {
        if !raw::is_plain_array(v) && !raw::is_proxy(v) && !v.is_function() {
            let keys = raw::own_keys(ctx, obj, false, true).unwrap_or_default();
            if keys.len() > 2 {
                depth = -1.0;
            }
        }
    }
    let opts = Options {
        depth,
        max_array_length: 3,
        break_length: usize::MAX / 4,
        ..Options::default()
    };
    Formatter::with_options(ctx, opts).inspect_value(v)
}
