//! `RUST_LOG` directives read by tachylog, by env_logger (its filter is the crate `env_filter`)
//! and by tracing-subscriber's `EnvFilter`, query by query.
//!
//! Every row of the tables below names what each of the three decides. A row where they do not
//! all agree must name the [`Differs`] reason, which is a row of the README's "Coming from
//! env_logger / tracing-subscriber" table; a row naming no reason must agree. So if any of the
//! three changes its mind, this test fails and that README table must change with it.
//!
//! Each side parses the way it reads `RUST_LOG`: leniently, a bad directive skipped with a
//! warning (`env_filter::Builder::parse`, `EnvFilter::new`, `tachylog::Filter::parse_lenient`,
//! which is what `Builder::env_filter` uses). The strict parsers (`try_parse`, `try_new`,
//! `str::parse`) are compared in their own table.

mod common;

use std::time::Duration;
use tachylog::Level;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::EnvFilter;

/// Why the three do not agree on a row: one variant per row of the README table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Differs {
    /// They agree.
    No,
    /// With only per-target directives, tachylog still passes errors of every other target;
    /// env_logger and tracing-subscriber pass nothing else. tachylog's choice: a dependency's
    /// error must not vanish because the user asked for more of their own crate.
    OtherTargetsKeepErrors,
    /// `net=debug` covers `network` in env_logger and tracing-subscriber (a string prefix), in
    /// tachylog only `net` and `net::…` (module-path boundaries).
    ModuleBoundaries,
    /// `target=` without a level: everything from the target in env_logger and
    /// tracing-subscriber, a bad directive (skipped) in tachylog.
    EmptyLevel,
    /// Spaces around a directive or its `=`: tachylog ignores them all. env_logger ignores
    /// those around a directive and after `=`, but keeps one before `=` in the target name,
    /// which then matches nothing; tracing-subscriber rejects the directive.
    Spaces,
    /// `warning` is a level name in tachylog only; the others read a bare `warning` as a
    /// target and reject `target=warning`.
    WarningIsALevel,
    /// Numbers `0`..=`5` (off..trace) are levels in tracing-subscriber only; env_logger reads a
    /// bare `3` as a target and rejects `target=3`, tachylog the same.
    NumericLevels,
    /// `/regex` after the directives filters messages in env_logger; tracing-subscriber reads
    /// it as part of a target; tachylog rejects the directive that holds it.
    MessageRegex,
    /// `=debug` (an empty target) is a default for every target in env_logger; the others
    /// reject it.
    EmptyTarget,
    /// A target with a space inside: a name like any other in env_logger and
    /// tracing-subscriber, a bad directive in tachylog (module paths and the targets its
    /// macros accept have no spaces).
    SpaceInTarget,
}

use Differs::*;

/// What each side decides for one query.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Verdicts {
    env_logger: bool,
    tracing: bool,
    tachylog: bool,
}

struct Row {
    spec: &'static str,
    target: &'static str,
    level: Level,
    expected: Verdicts,
    differs: Differs,
}

/// A row on which all three decide `verdict`.
const fn same(spec: &'static str, target: &'static str, level: Level, verdict: bool) -> Row {
    Row {
        spec,
        target,
        level,
        expected: Verdicts {
            env_logger: verdict,
            tracing: verdict,
            tachylog: verdict,
        },
        differs: No,
    }
}

/// A row on which they differ, for the reason `differs`: `[env_logger, tracing, tachylog]`.
const fn differ(
    spec: &'static str,
    target: &'static str,
    level: Level,
    [env_logger, tracing, tachylog]: [bool; 3],
    differs: Differs,
) -> Row {
    Row {
        spec,
        target,
        level,
        expected: Verdicts {
            env_logger,
            tracing,
            tachylog,
        },
        differs,
    }
}

/// The message of every queried record: env_logger's `/regex` is matched against it.
const MESSAGE: &str = "connection reset";

const ROWS: &[Row] = &[
    // Levels alone.
    same("info", "my_app", Level::Info, true),
    same("info", "my_app", Level::Debug, false),
    same("", "my_app", Level::Error, true),
    same("", "my_app", Level::Warn, false),
    same("off", "my_app", Level::Error, false),
    same("OFF", "my_app", Level::Error, false),
    same("INFO", "my_app", Level::Info, true),
    same("Debug", "my_app", Level::Debug, true),
    same("debug,info", "my_app", Level::Debug, false),
    // Per-target levels next to a default.
    same("warn,my_app::db=debug", "my_app::db", Level::Debug, true),
    same(
        "warn,my_app::db=debug",
        "my_app::db::pool",
        Level::Debug,
        true,
    ),
    same("warn,my_app::db=debug", "my_app::http", Level::Info, false),
    same("warn,my_app::db=debug", "my_app::http", Level::Warn, true),
    same("warn,my_app=DEBUG", "my_app", Level::Debug, true),
    same("info,my_app=off", "my_app", Level::Error, false),
    same("info,my_app=off", "my_app::db", Level::Error, false),
    // The longest matching target wins, wherever it is written; of equal ones the last.
    same(
        "my_app::db=debug,my_app=warn",
        "my_app::db",
        Level::Debug,
        true,
    ),
    same(
        "my_app=trace,my_app::db=warn",
        "my_app::db",
        Level::Info,
        false,
    ),
    same(
        "my_app=trace,my_app::db=warn",
        "my_app::http",
        Level::Info,
        true,
    ),
    same(
        "warn,my_app=info,my_app=error",
        "my_app",
        Level::Warn,
        false,
    ),
    // A bare target: everything from it.
    same("my_app", "my_app::db", Level::Trace, true),
    // Empty directives are ignored.
    same("info,,my_app=debug,", "my_app", Level::Debug, true),
    // Targets are case-sensitive.
    same("warn,My_App=debug", "my_app", Level::Debug, false),
    // A directive that does not parse is skipped; the others still apply.
    same("warn,my_app=loud", "my_app", Level::Info, false),
    same("warn,my_app=loud", "my_app", Level::Warn, true),
    same("warn,my_app=debug=x", "my_app", Level::Debug, false),
    // Span and field directives are tracing-subscriber's: the other two read them as a target
    // that matches nothing, and tracing-subscriber applies them only inside such a span.
    same("warn,my_app[request]=debug", "my_app", Level::Debug, false),
    same("warn,my_app[request]=debug", "my_app", Level::Warn, true),
    // Only per-target directives: the only differing defaults.
    differ(
        "my_app=debug",
        "hyper",
        Level::Error,
        [false, false, true],
        OtherTargetsKeepErrors,
    ),
    same("my_app=debug", "hyper", Level::Warn, false),
    same("off,my_app=debug", "hyper", Level::Error, false),
    same("my_app=debug", "my_app", Level::Debug, true),
    differ(
        "my_app::db=trace,my_app::http=off",
        "my_app",
        Level::Error,
        [false, false, true],
        OtherTargetsKeepErrors,
    ),
    // Prefixes and module boundaries.
    differ(
        "warn,net=debug",
        "network",
        Level::Debug,
        [true, true, false],
        ModuleBoundaries,
    ),
    same("warn,net=debug", "net::tcp", Level::Debug, true),
    same("warn,net=debug", "network", Level::Warn, true),
    differ(
        "info,my_app::db=off",
        "my_app::dbx",
        Level::Info,
        [false, false, true],
        ModuleBoundaries,
    ),
    // `target=` with no level.
    differ(
        "warn,my_app=",
        "my_app",
        Level::Trace,
        [true, true, false],
        EmptyLevel,
    ),
    // Spaces.
    differ(
        "warn, my_app=debug",
        "my_app",
        Level::Debug,
        [true, false, true],
        Spaces,
    ),
    differ(
        "warn,my_app=debug ",
        "my_app",
        Level::Debug,
        [true, false, true],
        Spaces,
    ),
    differ(
        "warn,my_app= debug",
        "my_app",
        Level::Debug,
        [true, false, true],
        Spaces,
    ),
    differ(
        "warn,my_app = debug",
        "my_app",
        Level::Debug,
        [false, false, true],
        Spaces,
    ),
    // `warning`.
    differ(
        "error,my_app=warning",
        "my_app",
        Level::Warn,
        [false, false, true],
        WarningIsALevel,
    ),
    differ(
        "warning",
        "my_app",
        Level::Warn,
        [false, false, true],
        WarningIsALevel,
    ),
    // Numbers.
    differ(
        "error,my_app=4",
        "my_app",
        Level::Debug,
        [false, true, false],
        NumericLevels,
    ),
    differ(
        "3",
        "my_app",
        Level::Info,
        [false, true, false],
        NumericLevels,
    ),
    // `/regex`: env_logger passes the info record whose message matches, and no other.
    differ(
        "info/reset",
        "my_app",
        Level::Info,
        [true, false, false],
        MessageRegex,
    ),
    differ(
        "info/timeout",
        "my_app",
        Level::Error,
        [false, false, true],
        MessageRegex,
    ),
    // An empty target.
    differ(
        "warn,=debug",
        "my_app",
        Level::Debug,
        [true, false, false],
        EmptyTarget,
    ),
    // A space inside a target.
    differ(
        "warn,my app=debug",
        "my app",
        Level::Debug,
        [true, true, false],
        SpaceInTarget,
    ),
];

fn env_logger_verdict(spec: &str, target: &str, level: Level) -> bool {
    let filter = env_filter::Builder::new().parse(spec).build();
    filter.matches(
        &log::Record::builder()
            .target(target)
            .level(level.into())
            .args(format_args!("{MESSAGE}"))
            .build(),
    )
}

fn tachylog_verdict(spec: &str, target: &str, level: Level) -> bool {
    let (filter, _skipped) = tachylog::Filter::parse_lenient(spec);
    filter.level_for(target).is_some_and(|max| level <= max)
}

/// Asks a subscriber made of `EnvFilter::new(spec)` whether an event of `level` from `target`
/// is enabled, through `tracing::enabled!` as an application's event would be. The macro needs
/// its target as a literal, hence one call site per (target, level) the tables query.
fn tracing_verdict(spec: &str, target: &str, level: Level) -> bool {
    macro_rules! site {
        ($target:literal) => {
            match level {
                Level::Error => tracing::enabled!(target: $target, tracing::Level::ERROR),
                Level::Warn => tracing::enabled!(target: $target, tracing::Level::WARN),
                Level::Info => tracing::enabled!(target: $target, tracing::Level::INFO),
                Level::Debug => tracing::enabled!(target: $target, tracing::Level::DEBUG),
                Level::Trace => tracing::enabled!(target: $target, tracing::Level::TRACE),
            }
        };
    }
    // A fresh dispatcher per query: creating it recomputes every call site's cached interest,
    // and the previous query's dispatcher is gone by then.
    let subscriber = tracing_subscriber::registry().with(EnvFilter::new(spec));
    tracing::subscriber::with_default(subscriber, || match target {
        "my_app" => site!("my_app"),
        "my_app::db" => site!("my_app::db"),
        "my_app::db::pool" => site!("my_app::db::pool"),
        "my_app::dbx" => site!("my_app::dbx"),
        "my_app::http" => site!("my_app::http"),
        "hyper" => site!("hyper"),
        "net::tcp" => site!("net::tcp"),
        "network" => site!("network"),
        "my app" => site!("my app"),
        other => panic!("no tracing call site for target {other:?}: add one to the list"),
    })
}

/// The verdict table: each row's three verdicts are as written, and differ only where the row
/// names a documented reason.
#[test]
fn every_difference_from_env_logger_and_tracing_subscriber_is_a_documented_one() {
    let mut failures = Vec::new();
    for row in ROWS {
        let actual = Verdicts {
            env_logger: env_logger_verdict(row.spec, row.target, row.level),
            tracing: tracing_verdict(row.spec, row.target, row.level),
            tachylog: tachylog_verdict(row.spec, row.target, row.level),
        };
        let query = format!(
            "RUST_LOG={:?}, {} from {:?}",
            row.spec, row.level, row.target
        );
        if actual != row.expected {
            failures.push(format!(
                "{query}: expected {:?}, got {actual:?}",
                row.expected
            ));
        }
        let all_agree = row.expected.env_logger == row.expected.tachylog
            && row.expected.tracing == row.expected.tachylog;
        if all_agree != (row.differs == No) {
            failures.push(format!(
                "{query}: a row names a reason ({:?}) exactly when the three differ",
                row.differs
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "the directives no longer compare as the README's table says; update the table and \
         these rows:\n{}",
        failures.join("\n")
    );
}

/// Which directives each strict parser rejects: [env_filter's `try_parse`,
/// `EnvFilter::try_new`, `tachylog::Filter`'s `FromStr`] (`true`: an error). The lenient parsers
/// the verdict table uses skip exactly these directives, with a warning on stderr.
#[test]
fn the_strict_parsers_reject_the_documented_directives() {
    let rows: &[(&str, [bool; 3], Differs)] = &[
        ("info,my_app=debug", [false, false, false], No),
        ("my_app=loud", [true, true, true], No),
        ("my_app=debug=x", [true, true, true], No),
        ("my_app=", [false, false, true], EmptyLevel),
        ("my_app = debug", [false, true, false], Spaces),
        (" my_app=debug", [false, true, false], Spaces),
        ("my_app=warning", [true, true, false], WarningIsALevel),
        ("my_app=4", [true, false, true], NumericLevels),
        ("info/reset", [false, false, true], MessageRegex),
        ("=debug", [false, true, true], EmptyTarget),
        ("my app=debug", [false, false, true], SpaceInTarget),
    ];
    let mut failures = Vec::new();
    for &(spec, expected, differs) in rows {
        let actual = [
            env_filter::Builder::new().try_parse(spec).is_err(),
            EnvFilter::try_new(spec).is_err(),
            spec.parse::<tachylog::Filter>().is_err(),
        ];
        if actual != expected {
            failures.push(format!(
                "{spec:?}: expected errors {expected:?}, got {actual:?}"
            ));
        }
        let all_agree = expected.iter().all(|&e| e == expected[0]);
        if all_agree != (differs == No) {
            failures.push(format!(
                "{spec:?}: a row names a reason ({differs:?}) exactly when the three differ"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "the strict parsers no longer compare as the README's table says:\n{}",
        failures.join("\n")
    );
}

/// `RUST_LOG=` (set but empty): env_logger and tracing-subscriber pass errors only, as for an
/// empty spec; tachylog's `Builder::env_filter` treats it as unset and keeps the filter the
/// code gave. Run in a child, where setting the variable cannot race other tests.
#[test]
fn an_empty_rust_log_keeps_the_filter_of_the_code() {
    const SCENARIO: &str = "an_empty_rust_log_keeps_the_filter_of_the_code";
    if let Some(log) = common::child_role(SCENARIO) {
        let env_logger = env_filter::Builder::from_env("RUST_LOG").build();
        let info = log::Metadata::builder()
            .target("my_app")
            .level(log::Level::Info)
            .build();
        let tracing = tracing::subscriber::with_default(
            tracing_subscriber::registry().with(EnvFilter::from_default_env()),
            || tracing::enabled!(target: "my_app", tracing::Level::INFO),
        );
        println!(
            "env_logger passes info: {}; tracing passes info: {tracing}",
            env_logger.enabled(&info)
        );
        let guard = common::expect_init(
            tachylog::builder()
                .file(&log)
                .filter("info")
                .env_filter("RUST_LOG")
                .init(),
        );
        tachylog::info!("info passed by the code's filter");
        drop(guard);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let child = common::run_child_with_env(
        SCENARIO,
        &dir.path().join("child.log"),
        &[("RUST_LOG", Some(""))],
        Duration::from_secs(30),
    );
    assert!(child.status.success(), "{child}");
    assert!(
        child
            .stdout
            .contains("env_logger passes info: false; tracing passes info: false"),
        "{child}"
    );
    let messages: Vec<&str> = common::parse_log(&child.log)
        .iter()
        .map(|l| l.message)
        .collect();
    assert_eq!(messages, ["info passed by the code's filter"], "{child}");
}
