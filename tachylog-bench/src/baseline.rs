//! A baseline commit's own bench binary, so that "`latency` no worse than the baseline"
//! compares two builds measured in the same suite (`--baseline COMMIT`, or `--full --targets`
//! with the commit in `baselines/latency.json`).
//!
//! Why not only the recorded figures: a tail percentile measures the machine of the day as
//! much as the code. The same binary, run again on the same virtual machine on another day,
//! can give a p99.9 several times the one recorded for it, while its harness overhead moves
//! too. Run in the same suite, interleaved with the current code's runs, the two builds share
//! the machine's state, and only the code differs. The recorded figures stay in the targets as
//! a reference.
//!
//! The binary is built once per commit under `target/bench-baseline/<commit>/`: the commit's
//! tree is taken with `git archive` (so the working tree is never touched) and built with
//! `cargo build --release --locked`, its own `Cargo.lock`, and its own target directory. It
//! needs the repository's history; from a tarball or a shallow clone the report says why the
//! baseline was not run and falls back to the recorded figures.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The baseline's name in the report's tables.
pub const LABEL: &str = "tachylog_baseline";

/// A built baseline.
#[derive(Clone, Debug)]
pub struct BaselineBinary {
    /// The commit, as given (short hash).
    pub commit: String,
    /// Its `tachylog-bench` executable.
    pub exe: PathBuf,
}

/// `<workspace>/target/bench-baseline`.
pub fn cache_dir() -> PathBuf {
    crate::build_info::workspace_dir()
        .join("target")
        .join("bench-baseline")
}

/// The bench binary of `commit`, built under `cache` unless an earlier run built it. Build
/// output goes to this process's stderr. The error says which step failed and why.
pub fn prepare(commit: &str, cache: &Path) -> Result<BaselineBinary, String> {
    let repo = crate::build_info::workspace_dir();
    let full = resolve(&repo, commit)?;
    let dir = cache.join(&full[..12.min(full.len())]);
    let exe = dir.join("target").join("release").join("tachylog-bench");
    // Written after a successful build, so an interrupted build is redone, not trusted.
    let built = dir.join("built");
    if built.is_file() && exe.is_file() {
        return Ok(BaselineBinary {
            commit: commit.to_string(),
            exe,
        });
    }
    let src = dir.join("src");
    if src.exists() {
        std::fs::remove_dir_all(&src)
            .map_err(|e| format!("cannot clear {}: {e}", src.display()))?;
    }
    std::fs::create_dir_all(&src).map_err(|e| format!("cannot create {}: {e}", src.display()))?;
    extract(&repo, &full, &src)?;
    eprintln!(
        "tachylog-bench: building the baseline {commit} in {}",
        dir.display()
    );
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(&cargo)
        .args(["build", "--release", "--locked", "-p", "tachylog-bench"])
        .current_dir(&src)
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .map_err(|e| format!("cannot run {}: {e}", Path::new(&cargo).display()))?;
    if !status.success() || !exe.is_file() {
        return Err(format!(
            "`cargo build --release --locked -p tachylog-bench` of {commit} in {} failed ({status})",
            src.display()
        ));
    }
    std::fs::write(&built, format!("{full}\n"))
        .map_err(|e| format!("cannot write {}: {e}", built.display()))?;
    Ok(BaselineBinary {
        commit: commit.to_string(),
        exe,
    })
}

/// The full hash of `commit` in `repo`.
fn resolve(repo: &Path, commit: &str) -> Result<String, String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["rev-parse", "--verify", "--quiet"])
        .arg(format!("{commit}^{{commit}}"))
        .stderr(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    let hash = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() || hash.is_empty() {
        return Err(format!(
            "git cannot find commit {commit} in {} (a source tarball or a shallow clone has no \
             history)",
            repo.display()
        ));
    }
    Ok(hash)
}

/// `git archive <commit> | tar -x -C <into>`.
fn extract(repo: &Path, commit: &str, into: &Path) -> Result<(), String> {
    let mut archive = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["archive", "--format=tar", commit])
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run git archive: {e}"))?;
    let tarball = archive.stdout.take().expect("stdout was piped");
    let untar = Command::new("tar")
        .arg("-x")
        .arg("-C")
        .arg(into)
        .stdin(Stdio::from(tarball))
        .status();
    let archived = archive.wait();
    match (archived, untar) {
        (Ok(a), Ok(t)) if a.success() && t.success() => Ok(()),
        (a, t) => Err(format!(
            "`git archive {commit} | tar -x` into {} failed (git: {a:?}, tar: {t:?})",
            into.display()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_commit_the_repository_does_not_have_is_refused_with_the_reason() {
        let cache =
            std::env::temp_dir().join(format!("tachylog-baseline-test-{}", std::process::id()));
        let err = prepare("0123456789abcdef0123456789abcdef01234567", &cache).unwrap_err();
        assert!(err.contains("cannot find commit 0123456789abcdef"), "{err}");
        assert!(
            !cache.exists(),
            "nothing is created for a commit that does not exist"
        );
    }
}
