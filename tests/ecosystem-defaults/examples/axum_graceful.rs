//! An HTTP server that logs every request through tachylog and shuts down gracefully on
//! SIGTERM (or Ctrl-C), as axum's `with_graceful_shutdown` examples do: stop accepting, finish
//! the requests in flight, log, exit 0. tachylog's defaults stay on; it only flushes when the
//! signal arrives and leaves the shutdown to the application.
//!
//! ```sh
//! cargo run -p ecosystem-defaults --example axum_graceful
//! curl http://127.0.0.1:3000/work/1 &  kill -TERM <pid>   # the request still completes
//! ```
//!
//! Options (the tests use them): `--log FILE` (default `logs/axum_graceful.log`), `--port N`
//! (default 3000; 0 picks a free one), `--signals tokio|signal-hook|ctrlc` (which library
//! catches the signal; default tokio; `ctrlc` with its default features handles SIGINT only),
//! `--handler before-init|after-init` (when the application installs it; default after-init),
//! `--work-ms N` (how long each request works; default 300).

use axum::extract::{Path, State};
use axum::routing::get;
use axum::Router;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

struct Options {
    log: String,
    port: u16,
    signals: String,
    before_init: bool,
    work: Duration,
}

fn options() -> Options {
    let mut options = Options {
        log: "logs/axum_graceful.log".into(),
        port: 3000,
        signals: "tokio".into(),
        before_init: false,
        work: Duration::from_millis(300),
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args
            .next()
            .unwrap_or_else(|| usage(&format!("{flag} needs a value")));
        match flag.as_str() {
            "--log" => options.log = value,
            "--port" => {
                options.port = value
                    .parse()
                    .unwrap_or_else(|_| usage("--port takes a number"))
            }
            "--signals" => options.signals = value,
            "--handler" => {
                options.before_init = match value.as_str() {
                    "before-init" => true,
                    "after-init" => false,
                    _ => usage("--handler takes before-init or after-init"),
                }
            }
            "--work-ms" => {
                let ms = value
                    .parse()
                    .unwrap_or_else(|_| usage("--work-ms takes a number"));
                options.work = Duration::from_millis(ms);
            }
            _ => usage(&format!("unknown option {flag}")),
        }
    }
    if !["tokio", "signal-hook", "ctrlc"].contains(&options.signals.as_str()) {
        usage("--signals takes tokio, signal-hook or ctrlc");
    }
    options
}

fn usage(problem: &str) -> ! {
    eprintln!("axum_graceful: {problem}");
    eprintln!("usage: axum_graceful [--log FILE] [--port N] [--signals tokio|signal-hook|ctrlc] [--handler before-init|after-init] [--work-ms N]");
    std::process::exit(2);
}

/// Resolves when the application's own handler has caught SIGTERM or SIGINT.
type ShutdownSignal = Pin<Box<dyn Future<Output = &'static str> + Send>>;

/// Installs the application's handler with the chosen library; the returned future resolves
/// when it fires.
fn install_shutdown_handler(library: &str) -> std::io::Result<ShutdownSignal> {
    match library {
        "tokio" => {
            use tokio::signal::unix::{signal, SignalKind};
            let mut terminate = signal(SignalKind::terminate())?;
            let mut interrupt = signal(SignalKind::interrupt())?;
            Ok(Box::pin(async move {
                tokio::select! {
                    _ = terminate.recv() => "SIGTERM",
                    _ = interrupt.recv() => "SIGINT",
                }
            }))
        }
        "signal-hook" => {
            use signal_hook::consts::{SIGINT, SIGTERM};
            let mut signals = signal_hook::iterator::Signals::new([SIGTERM, SIGINT])?;
            let (caught, wait) = tokio::sync::oneshot::channel();
            std::thread::spawn(move || {
                if let Some(sig) = signals.forever().next() {
                    let _ = caught.send(if sig == SIGTERM { "SIGTERM" } else { "SIGINT" });
                }
            });
            Ok(Box::pin(async move { wait.await.unwrap_or("no signal") }))
        }
        _ => {
            let (caught, wait) = tokio::sync::oneshot::channel();
            let caught = std::sync::Mutex::new(Some(caught));
            ctrlc::set_handler(move || {
                if let Some(caught) = caught.lock().unwrap().take() {
                    let _ = caught.send("SIGINT");
                }
            })
            .map_err(std::io::Error::other)?;
            Ok(Box::pin(async move { wait.await.unwrap_or("no signal") }))
        }
    }
}

async fn work(Path(id): Path<u64>, State(work): State<Duration>) -> String {
    tokio::time::sleep(work).await;
    tachylog::info!(request_id = id; "GET /work/{} 200", id);
    format!("done {id}\n")
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let options = options();
    let early_handler = options
        .before_init
        .then(|| install_shutdown_handler(&options.signals))
        .transpose()?;
    let guard = tachylog::builder().stdout().file(&options.log).init()?;
    let shutdown = match early_handler {
        Some(handler) => handler,
        None => install_shutdown_handler(&options.signals)?,
    };

    let app = Router::new()
        .route("/work/{id}", get(work))
        .with_state(options.work);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", options.port)).await?;
    let address = listener.local_addr()?;
    tachylog::info!(%address, signals = options.signals.as_str(); "listening");
    println!("listening on {address}");
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            let signal = shutdown.await;
            tachylog::info!(signal; "shutdown started");
        })
        .await?;
    tachylog::info!("shutdown done");
    drop(guard); // writes everything, then the process exits 0
    Ok(())
}
