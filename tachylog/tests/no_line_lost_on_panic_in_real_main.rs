//! A panic in the program's real main thread loses nothing: this file is its own `fn main`
//! (`harness = false`). Run as the parent it re-executes itself as the child, which logs
//! 50,000 records and then panics in `main`; the parent checks the exit status (101) and that
//! the file holds every record followed by the panic's ERROR line.

const RECORDS: u64 = 50_000;

fn main() {
    if let Ok(path) = std::env::var("TACHYLOG_REAL_MAIN_CHILD") {
        let _guard = tachylog::builder().file(&path).init().expect("init");
        for i in 0..RECORDS {
            tachylog::info!("record {i}");
        }
        panic!("boom in the real main");
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("main-panic.log");
    let output = std::process::Command::new(std::env::current_exe().expect("current exe"))
        .env("TACHYLOG_REAL_MAIN_CHILD", &path)
        .output()
        .expect("child runs");
    assert_eq!(
        output.status.code(),
        Some(101),
        "child should exit with the panic status; stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = std::fs::read_to_string(&path).expect("log file exists");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines.len() as u64,
        RECORDS + 1,
        "every record plus the panic line"
    );
    for (i, line) in lines[..RECORDS as usize].iter().enumerate() {
        assert!(
            line.contains(" INFO  ") && line.contains(&format!(": record {i} (")),
            "{line}"
        );
    }
    let last = lines[RECORDS as usize];
    assert!(
        last.contains(" ERROR ")
            && last.contains("panicked at")
            && last.contains("boom in the real main"),
        "{last}"
    );
    println!("no_line_lost_on_panic_in_real_main: 1 passed, 0 failed");
}
