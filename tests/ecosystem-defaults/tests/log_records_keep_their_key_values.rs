//! tachylog takes the `log` slot (the default) and the `tracing` subscriber is installed with
//! `set_global_default` rather than `.init()`: `log::info!` records go straight to tachylog,
//! exactly once, with their target and key-values, while `tracing` events arrive through the
//! layer. tracing-subscriber keeps its default features.

use tracing_subscriber::layer::SubscriberExt as _;

#[test]
fn log_key_values_survive_beside_a_tracing_subscriber() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app.log");
    let guard = tachylog::builder()
        .file(&path)
        .init()
        .expect("tachylog starts");
    tracing::subscriber::set_global_default(
        tracing_subscriber::registry().with(tachylog::tracing_layer()),
    )
    .expect("no other subscriber");

    log::info!(target: "shop::auth", user = 42, admin = false; "logged in");
    tracing::info!(rows = 3, "from tracing");
    drop(guard);

    let text = std::fs::read_to_string(&path).unwrap();
    let logged_in: Vec<&str> = text.lines().filter(|l| l.contains("logged in")).collect();
    assert_eq!(logged_in.len(), 1, "{text}");
    assert!(
        logged_in[0].contains(" shop::auth: logged in user=42 admin=false"),
        "{text}"
    );
    assert_eq!(text.matches("from tracing rows=3").count(), 1, "{text}");
}
