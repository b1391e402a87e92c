//! Bridges from the logging facades applications already use into tachylog's queue.

pub(crate) mod log;
#[cfg(feature = "tracing")]
pub(crate) mod tracing;
