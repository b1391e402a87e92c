//! Turning records into text, on the back end: the line [`pattern`], the cached date-time
//! ([`time`]) and the escaping that keeps one record on one line ([`escape`]).

pub(crate) mod escape;
pub(crate) mod pattern;
pub(crate) mod time;
