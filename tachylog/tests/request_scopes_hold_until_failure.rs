//! Request scopes at their edges, with a real logger and real files (one logger per process,
//! so the cases are phases of one test, each asserting on the lines it added): two requests
//! interleaved on one thread, nested scopes, a target turned off, `Scope::flush`, the bounds, a panic, a sink with a
//! level of its own, the `log` facade, JSON, and open scopes at shutdown.

use std::path::Path;
use tachylog::{Level, Scope, SinkOptions};

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn scopes_write_their_held_records_only_when_they_fail() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("app.log");
    let json = dir.path().join("app.jsonl");
    let warnings = dir.path().join("warnings.log");
    let guard = tachylog::builder()
        .file(&text)
        .file_with(&json, SinkOptions::new().format(tachylog::Format::Json))
        .file_with(&warnings, SinkOptions::new().level(Level::Warn))
        .filter("info,request_scopes_hold_until_failure::muted=off")
        .utc(true)
        .init()
        .unwrap();
    let mut seen = 0;
    let mut new_lines = || {
        tachylog::flush();
        let all = lines(&text);
        let fresh = all[seen..].to_vec();
        seen = all.len();
        fresh
    };

    // 1. Outside any scope, DEBUG stays off at the default INFO, as before.
    tachylog::debug!("unscoped detail");
    tachylog::info!("unscoped info");
    assert_eq!(new_lines().len(), 1);

    // 2. Two requests interleaved on one thread: each record goes to its own scope; the one
    //    that fails writes its own DEBUG records (not the other's), in order, before its error;
    //    INFO is written as it comes.
    let a = Scope::new();
    let b = Scope::new();
    for step in 0..3 {
        a.in_scope(|| tachylog::debug!("a step {}", step));
        b.in_scope(|| tachylog::debug!("b step {}", step));
    }
    a.in_scope(|| tachylog::info!("a progress"));
    b.in_scope(|| tachylog::error!("b failed"));
    let phase = new_lines();
    let messages: Vec<&str> = phase.iter().map(|l| message(l)).collect();
    assert_eq!(
        messages,
        ["a progress", "b step 0", "b step 1", "b step 2", "b failed"],
        "{phase:#?}"
    );
    // After its trigger, a scope writes as records come.
    b.in_scope(|| tachylog::debug!("b after the failure"));
    assert_eq!(message(&new_lines()[0]), "b after the failure");
    drop(b);
    let discarded = tachylog::stats().scoped_records_discarded;
    drop(a);
    assert!(new_lines().is_empty());
    assert_eq!(tachylog::stats().scoped_records_discarded, discarded + 3);

    // 3. Nested scopes: a failure in the inner one writes the outer one's records too, merged
    //    in time order; an inner scope that ends quietly discards only its own.
    let request = Scope::new();
    let entered = request.enter();
    tachylog::debug!("outer 1");
    let quiet = Scope::new();
    quiet.in_scope(|| tachylog::debug!("quiet inner"));
    drop(quiet);
    let inner = Scope::new();
    inner.in_scope(|| tachylog::debug!("inner 1"));
    tachylog::debug!("outer 2");
    inner.in_scope(|| tachylog::error!("inner failed"));
    let phase = new_lines();
    let messages: Vec<&str> = phase.iter().map(|l| message(l)).collect();
    assert_eq!(
        messages,
        ["outer 1", "inner 1", "outer 2", "inner failed"],
        "{phase:#?}"
    );
    drop(inner);
    drop(entered);
    drop(request);

    // 4. A target the filter turns off stays off inside scopes too.
    let scope = Scope::new();
    scope.in_scope(|| {
        muted::detail();
        tachylog::error!("failed beside a muted target");
    });
    let messages: Vec<String> = new_lines().iter().map(|l| message(l).to_string()).collect();
    assert_eq!(messages, ["failed beside a muted target"]);
    drop(scope);

    // 5. `Scope::flush` writes what is held, on demand.
    let scope = Scope::new();
    scope.in_scope(|| tachylog::debug!("flushed detail"));
    assert!(new_lines().is_empty());
    scope.flush();
    assert_eq!(message(&new_lines()[0]), "flushed detail");
    drop(scope);

    // 6. Bounds: the oldest go, and the block starts with a notice that counts them.
    let scope = Scope::builder().max_records(3).begin();
    for step in 0..10 {
        scope.in_scope(|| tachylog::debug!("bounded {}", step));
    }
    scope.in_scope(|| tachylog::error!("bounded failed"));
    let phase = new_lines();
    assert!(
        phase[0].contains("WARN") && phase[0].contains("7 held records dropped"),
        "{phase:#?}"
    );
    let messages: Vec<&str> = phase[1..].iter().map(|l| message(l)).collect();
    assert_eq!(
        messages,
        ["bounded 7", "bounded 8", "bounded 9", "bounded failed"]
    );
    drop(scope);
    // A quiet scope's count includes what its bounds dropped: every record is accounted for.
    let discarded = tachylog::stats().scoped_records_discarded;
    let scope = Scope::builder().max_records(2).begin();
    for step in 0..5 {
        scope.in_scope(|| tachylog::debug!("quiet bounded {}", step));
    }
    drop(scope);
    assert!(new_lines().is_empty());
    assert_eq!(tachylog::stats().scoped_records_discarded, discarded + 5);

    // 7. A panic that unwinds through a scope writes its records, on whatever thread.
    std::thread::spawn(|| {
        let outcome = std::panic::catch_unwind(|| {
            let scope = Scope::new();
            let _entered = scope.enter();
            tachylog::debug!("before the panic");
            panic!("handler bug");
        });
        assert!(outcome.is_err());
    })
    .join()
    .unwrap();
    let phase = new_lines();
    assert!(
        phase.iter().any(|l| message(l) == "before the panic"),
        "{phase:#?}"
    );

    // 8. The `log` facade's records are held and written like the macros' ones.
    let scope = Scope::new();
    scope.in_scope(|| {
        log::debug!("from log");
        log::error!("log failed");
    });
    let messages: Vec<String> = new_lines().iter().map(|l| message(l).to_string()).collect();
    assert_eq!(messages, ["from log", "log failed"]);
    drop(scope);

    // 9. Shutdown with a scope still open: its held records are written, after a notice.
    let open = Scope::new();
    open.in_scope(|| tachylog::debug!("in flight at shutdown"));
    std::mem::forget(open);
    drop(guard);
    let phase = lines(&text)[seen..].to_vec();
    assert!(phase[0].contains("1 still open at shutdown"), "{phase:#?}");
    assert_eq!(message(&phase[1]), "in flight at shutdown");

    // The JSON sink got the same records; the WARN sink took only what its own level takes.
    let json_text = std::fs::read_to_string(&json).unwrap();
    for wanted in [
        "\"b step 1\"",
        "\"outer 2\"",
        "\"flushed detail\"",
        "\"in flight at shutdown\"",
    ] {
        assert!(json_text.contains(wanted), "{wanted} in {json_text}");
    }
    assert!(!json_text.contains("a step"), "{json_text}");
    let warned = std::fs::read_to_string(&warnings).unwrap();
    assert!(warned.contains("b failed"), "{warned}");
    assert!(!warned.contains("b step"), "{warned}");
}

mod muted {
    pub fn detail() {
        tachylog::debug!("muted detail");
    }
}

/// The message of a text line of the default pattern: after the target's `: `, before the
/// ` (file:line)` at the end.
fn message(line: &str) -> &str {
    let start = line.find(": ").map_or(0, |i| i + 2);
    let end = line.rfind(" (").unwrap_or(line.len());
    &line[start..end]
}
