//! What this binary was built with, recorded by `build.rs`: the compiler, the profile and
//! the locked version of every crate, so a report names exactly what it measured.

/// `rustc --version` of the compiler that built this binary.
pub const RUSTC: &str = env!("BENCH_RUSTC_VERSION");

/// The workspace this binary was built from (the bench crate's parent directory).
pub fn workspace_dir() -> std::path::PathBuf {
    let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_path_buf()
}

/// `name@version` of every package in the workspace's Cargo.lock, space-separated.
const LOCKED: &str = env!("BENCH_LOCKED_PACKAGES");

/// "name version" for each of `crates` as locked (all versions if several are), or
/// "name ?" when the lock file did not list it.
pub fn versions(crates: &[&str]) -> String {
    crates
        .iter()
        .map(|name| {
            let found: Vec<&str> = LOCKED
                .split(' ')
                .filter_map(|p| p.split_once('@'))
                .filter(|(n, _)| n == name)
                .map(|(_, v)| v)
                .collect();
            if found.is_empty() {
                format!("{name} ?")
            } else {
                format!("{name} {}", found.join("/"))
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_locked_versions() {
        // serde_json is a direct dependency, so it is in the lock file.
        let v = versions(&["serde_json"]);
        assert!(v.starts_with("serde_json 1."), "{v}");
        assert_eq!(versions(&["no-such-crate-xyz"]), "no-such-crate-xyz ?");
        assert!(RUSTC.starts_with("rustc "), "{RUSTC}");
    }
}
