//! Request scopes in a tokio server, as users run one: 1,000 concurrent requests on a
//! multi-thread runtime, each logging 20 DEBUG records across `.await` points while the logger
//! runs at its default INFO, 1 % of them failing. Exactly the failing requests' DEBUG records
//! reach the file, each before its request's error, and none of the others; the discarded
//! ones are counted. Once through tachylog's own `Scope::bind`, once through `tracing` spans
//! (`TracingLayer::request_scope`, spans `instrument`ing the tasks).

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tracing::Instrument as _;
use tracing_subscriber::layer::SubscriberExt as _;

const REQUESTS: u64 = 1_000;
const STEPS: u64 = 20;

fn fails(request: u64) -> bool {
    request % 100 == 42
}

/// Checks one phase's lines (those with `tag`): the failing requests' 20 steps, once each,
/// before their error; no step of any other request; every request's outcome.
fn check(text: &str, tag: &str) {
    let lines: Vec<&str> = text.lines().filter(|l| l.contains(tag)).collect();
    for request in 0..REQUESTS {
        let me = format!("{tag} request {request} ");
        let mine: Vec<(usize, &str)> = lines
            .iter()
            .enumerate()
            .filter(|(_, l)| l.contains(&me))
            .map(|(i, l)| (i, *l))
            .collect();
        let steps: Vec<usize> = mine
            .iter()
            .filter(|(_, l)| l.contains(" DEBUG "))
            .map(|(i, _)| *i)
            .collect();
        if fails(request) {
            let error = mine
                .iter()
                .find(|(_, l)| l.contains(" ERROR ") && l.contains("failed"))
                .unwrap_or_else(|| panic!("{me}: no error line"))
                .0;
            assert_eq!(steps.len() as u64, STEPS, "{me}: {mine:#?}");
            for step in 0..STEPS {
                let wanted = format!("{me}step {step} done");
                let found: Vec<_> = mine.iter().filter(|(_, l)| l.contains(&wanted)).collect();
                assert_eq!(found.len(), 1, "{wanted}: {mine:#?}");
            }
            assert!(
                steps.iter().all(|&i| i < error),
                "{me}: steps after the error: {mine:#?}"
            );
        } else {
            assert!(
                steps.is_empty(),
                "{me}: DEBUG records of a request that did not fail: {mine:#?}"
            );
            assert!(
                mine.iter()
                    .any(|(_, l)| l.contains(" INFO ") && l.contains("ok")),
                "{me}"
            );
        }
    }
}

/// Runs the requests on a 4-worker runtime; `serve` is one request. Returns how many requests
/// were polled on more than one thread (so that the test is known to cover that).
fn serve_all<F>(serve: impl Fn(u64, Arc<AtomicUsize>) -> F) -> usize
where
    F: std::future::Future<Output = ()> + Send + 'static,
{
    let hopped = Arc::new(AtomicUsize::new(0));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let tasks: Vec<_> = (0..REQUESTS)
            .map(|request| tokio::spawn(serve(request, hopped.clone())))
            .collect();
        for task in tasks {
            task.await.unwrap();
        }
    });
    hopped.load(Ordering::Relaxed)
}

/// One request's work: 20 steps, each after an `.await` that may move it to another thread.
async fn steps(request: u64, hopped: Arc<AtomicUsize>, log: impl Fn(u64)) {
    let mut threads = HashSet::new();
    for step in 0..STEPS {
        threads.insert(std::thread::current().id());
        log(step);
        if step % 5 == 4 {
            tokio::time::sleep(std::time::Duration::from_micros(200)).await;
        } else {
            tokio::task::yield_now().await;
        }
    }
    if threads.len() > 1 {
        hopped.fetch_add(1, Ordering::Relaxed);
    }
    let _ = request;
}

#[test]
fn only_the_failing_requests_debug_records_are_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("server.log");
    let guard = tachylog::builder().file(&path).init().unwrap();
    let failing = (0..REQUESTS).filter(|r| fails(*r)).count() as u64;

    // tachylog's own API: a scope per request, bound to the task's future.
    let before = tachylog::stats();
    let hopped = serve_all(|request, hopped| {
        tachylog::Scope::new().bind(async move {
            steps(request, hopped, |step| {
                tachylog::debug!("own request {} step {} done", request, step)
            })
            .await;
            if fails(request) {
                tachylog::error!("own request {} failed", request);
            } else {
                tachylog::info!("own request {} ok", request);
            }
        })
    });
    tachylog::flush();
    let after = tachylog::stats();
    assert!(
        hopped > 0,
        "no request moved between threads: the test proves nothing"
    );
    assert_eq!(
        after.scoped_records_discarded - before.scoped_records_discarded,
        (REQUESTS - failing) * STEPS
    );
    assert_eq!(
        after.scoped_records_released - before.scoped_records_released,
        failing * STEPS
    );
    check(&std::fs::read_to_string(&path).unwrap(), "own");

    // `tracing`: a `request` span per task, the layer opening a scope for each.
    let subscriber =
        tracing_subscriber::registry().with(tachylog::tracing_layer().request_scope("request"));
    tracing::subscriber::set_global_default(subscriber).unwrap();
    let before = tachylog::stats();
    let hopped = serve_all(|request, hopped| {
        async move {
            steps(request, hopped, |step| {
                tracing::debug!("traced request {} step {} done", request, step)
            })
            .await;
            if fails(request) {
                tracing::error!("traced request {} failed", request);
            } else {
                tracing::info!("traced request {} ok", request);
            }
        }
        .instrument(tracing::info_span!("request", id = request))
    });
    tachylog::flush();
    let after = tachylog::stats();
    assert!(
        hopped > 0,
        "no request moved between threads: the test proves nothing"
    );
    assert_eq!(
        after.scoped_records_discarded - before.scoped_records_discarded,
        (REQUESTS - failing) * STEPS
    );
    assert_eq!(
        after.scoped_records_released - before.scoped_records_released,
        failing * STEPS
    );
    drop(guard);
    check(&std::fs::read_to_string(&path).unwrap(), "traced");
}
