//! The README's quick start: logs a few records of every kind to stdout and `logs/app.log`.
//!
//! `cargo run -p tachylog --example quickstart`

#[derive(Clone, Copy, Debug)]
struct OrderId(u64);

impl std::fmt::Display for OrderId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "order-{}", self.0)
    }
}

impl tachylog::CopyArg for OrderId {}

fn main() -> Result<(), tachylog::Error> {
    let _guard = tachylog::builder()
        .stdout()
        .file("logs/app.log")
        .level(tachylog::Level::Debug)
        .init()?;
    let (id, ms, path) = (42u64, 1.2345f64, "/index.html");
    tachylog::info!("request {} took {:.3} ms: {}", id, ms, path);
    let user = String::from("ada");
    let addr: std::net::SocketAddr = "127.0.0.1:8080".parse().unwrap();
    tachylog::debug!("user {user} logged in from {addr:?}");
    tachylog::warn!(
        "{:>8}|{:<8}|{:^8}|{:+}|{:#x}|{:08.2}|{:e}",
        "r",
        "l",
        "c",
        5,
        255,
        -5.55555,
        1234.5
    );
    tachylog::info!(
        "width from args: [{:>1$}] [{:.*}] [{:>w$.p$}]",
        "x",
        6,
        1.23456,
        9.87654,
        w = 10,
        p = 1
    );
    tachylog::error!(
        "filled {} ({:?}), names {:?}",
        OrderId(7),
        OrderId(7),
        vec!["a", "b"]
    );
    tachylog::info!("multi\nline\tand \x1b[31mcolour");
    log::info!("through the log crate: {}", 5);
    std::thread::Builder::new()
        .name("worker 1".into())
        .spawn(|| tachylog::info!("from a named thread"))
        .unwrap()
        .join()
        .unwrap();
    Ok(())
}
