//! Starting and stopping the logger: [`Builder`] ([`builder`]) with [`SinkOptions`], and
//! [`Guard`]; the run-time level controls [`set_level`] and [`set_filter`]. The flush barrier and `reopen` live below, in `queue::control`, so that
//! every layer can reach them.
//!
//! Layer 8, the top (see `ARCHITECTURE.md`): may import every module below it; nothing
//! imports it but the crate root.

mod builder;
mod guard;
mod sink_options;

pub use builder::{builder, Builder};
pub use guard::{set_filter, set_level, Guard};
pub use sink_options::SinkOptions;

use crate::Level;

/// Puts `filter` in force (`None`: everything off) for tachylog's own calls and mirrors its
/// most verbose level into the `log` crate's global filter when tachylog holds that slot.
fn apply_filter(filter: Option<crate::filter::Filter>) {
    crate::frontend::scope::on_floor_raised(refresh_filter);
    let max_level: Option<Level> = crate::filter::apply(filter);
    crate::facade::log::set_max_level(max_level);
}

/// The request scopes' floor rose: call sites down to it are enabled inside scopes, and `log`
/// must let their records through to us.
fn refresh_filter() {
    let max_level = crate::filter::refresh();
    crate::facade::log::set_max_level(max_level);
}
