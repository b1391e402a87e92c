//! The OpenTelemetry span a log call is made in, read on the calling thread (feature
//! `opentelemetry`): `opentelemetry::Context`'s current span, if it has a valid span context.
//! Its ids are copied raw into the record (25 bytes); nothing is allocated.
//!
//! Without the feature this is a constant `None`, and neither the record format nor the hot
//! path carries any of it.

use crate::record::TraceContext;

/// The current OpenTelemetry span's ids, if the calling thread is inside one.
#[inline(always)]
pub(crate) fn current() -> Option<TraceContext> {
    #[cfg(feature = "opentelemetry")]
    {
        from_context()
    }
    #[cfg(not(feature = "opentelemetry"))]
    {
        None
    }
}

#[cfg(feature = "opentelemetry")]
#[inline]
fn from_context() -> Option<TraceContext> {
    use opentelemetry::trace::TraceContextExt;
    opentelemetry::Context::map_current(|cx| {
        if !cx.has_active_span() {
            return None;
        }
        of_span_context(cx.span().span_context())
    })
}

/// The ids of a span context, if it is valid.
#[cfg(feature = "opentelemetry")]
pub(crate) fn of_span_context(context: &opentelemetry::trace::SpanContext) -> Option<TraceContext> {
    context.is_valid().then(|| TraceContext {
        trace_id: context.trace_id().to_bytes(),
        span_id: context.span_id().to_bytes(),
        flags: context.trace_flags().to_u8(),
    })
}
