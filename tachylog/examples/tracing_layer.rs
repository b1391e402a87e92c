//! `tracing` through tachylog: nested spans with fields, events with fields, an `EnvFilter`
//! from `RUST_LOG` (default `info`), text on stdout and JSON lines in `logs/tracing.jsonl`.
//!
//! `cargo run -p tachylog --example tracing_layer --features tracing`
//! `RUST_LOG=debug cargo run -p tachylog --example tracing_layer --features tracing`

use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::EnvFilter;

#[derive(Debug)]
struct Order {
    id: u64,
    items: Vec<&'static str>,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // tachylog lets everything through: the `EnvFilter` below decides, for every layer.
    let _guard = tachylog::builder()
        .stdout()
        .file_with(
            "logs/tracing.jsonl",
            tachylog::SinkOptions::new().format(tachylog::Format::Json),
        )
        .level(tachylog::Level::Trace)
        .init()?;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::registry()
        .with(filter)
        .with(tachylog::tracing_layer())
        .init();

    tracing::info!(version = env!("CARGO_PKG_VERSION"), "starting");
    let request = tracing::info_span!(
        "request",
        method = "GET",
        path = "/orders/7",
        status = tracing::field::Empty
    );
    {
        let _request = request.enter();
        let order = Order {
            id: 7,
            items: vec!["tea", "scones"],
        };
        {
            let _db = tracing::debug_span!("db", table = "orders").entered();
            tracing::debug!(rows = 1u64, elapsed_ms = 0.42, "query done");
        }
        tracing::info!(
            ?order,
            cached = false,
            "loaded order {} ({} items)",
            order.id,
            order.items.len()
        );
        request.record("status", 200u16);
        tracing::warn!(retries = 2, "slow upstream");
    }
    let worker = std::thread::spawn(|| {
        let _job = tracing::info_span!("job", id = 42u64).entered();
        tracing::info!("running on another thread");
    });
    worker.join().expect("the worker panicked");
    tracing::info!("done; JSON lines are in logs/tracing.jsonl");
    Ok(())
}
