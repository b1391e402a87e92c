//! Records what the numbers were built with: the rustc version, and every package version in
//! the workspace's Cargo.lock (so the report can name the exact peer versions measured).

use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");

    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let version = Command::new(&rustc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown rustc".to_string());
    println!("cargo:rustc-env=BENCH_RUSTC_VERSION={version}");

    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let lock = manifest.join("..").join("Cargo.lock");
    println!("cargo:rerun-if-changed={}", lock.display());
    // `name = "x"` is followed by `version = "y"` in every [[package]] block.
    let text = std::fs::read_to_string(&lock).unwrap_or_default();
    let mut packages = Vec::new();
    let mut name: Option<&str> = None;
    for line in text.lines() {
        let value = |prefix: &str| {
            line.strip_prefix(prefix)
                .and_then(|v| v.strip_prefix('"'))
                .and_then(|v| v.strip_suffix('"'))
        };
        if let Some(n) = value("name = ") {
            name = Some(n);
        } else if let (Some(v), Some(n)) = (value("version = "), name.take()) {
            packages.push(format!("{n}@{v}"));
        }
    }
    println!(
        "cargo:rustc-env=BENCH_LOCKED_PACKAGES={}",
        packages.join(" ")
    );
}
