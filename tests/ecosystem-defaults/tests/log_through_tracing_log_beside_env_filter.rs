//! The README's `tracing` setup, verbatim in substance: tachylog leaves the `log` slot, and a
//! `registry()` with an `EnvFilter` and tachylog's layer is started by `.init()` with
//! tracing-subscriber's default features. `log::info!` reaches tachylog once, filtered by its
//! own target, and `tracing` events keep their spans and fields.

use tracing_subscriber::{layer::SubscriberExt, util::SubscriberInitExt, EnvFilter};

#[test]
fn registry_init_with_env_filter_routes_log_records_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app.log");
    let guard = tachylog::builder()
        .file(&path)
        .level(tachylog::Level::Trace)
        .log_facade(tachylog::LogFacade::Off)
        .init()
        .expect("tachylog starts");
    tracing_subscriber::registry()
        .with(EnvFilter::new("info,noisy=off"))
        .with(tachylog::tracing_layer())
        .init();

    log::warn!(target: "shop::payments", "declined {}", 3);
    log::error!(target: "noisy", "filtered out by the EnvFilter, by its own target");
    {
        let _span = tracing::info_span!("request", id = 7u64).entered();
        tracing::info!(rows = 3, "query {} done", "users");
    }
    drop(guard);

    let text = std::fs::read_to_string(&path).unwrap();
    let declined: Vec<&str> = text.lines().filter(|l| l.contains("declined 3")).collect();
    assert_eq!(declined.len(), 1, "{text}");
    assert!(
        declined[0].contains(" WARN  ") && declined[0].contains(" shop::payments: declined 3"),
        "{text}"
    );
    assert!(!text.contains("filtered out"), "{text}");
    assert_eq!(
        text.matches("request{id=7}: query users done rows=3")
            .count(),
        1,
        "{text}"
    );
}
