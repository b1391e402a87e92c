//! The layer rule of `ARCHITECTURE.md`, enforced: every `crate::` path in `tachylog/src` names a
//! module below the one it is written in. The modules are ordered bottom to top in [`LAYERS`];
//! a module may use the modules before it, never one after it, so the module graph has no
//! cycle and a change high up (the process hooks, the builder) cannot break the hot path.
//!
//! What counts: every `crate::x` in code (a `use` or a path inline), with the crate root's
//! re-exports (`crate::Level`, `crate::flush`, ...) resolved to the module that defines them.
//! Comments and unit-test code (`tests.rs` files and the `#[cfg(test)]` module at the end of
//! a file) do not count: tests may reach up to build their fixtures.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The modules of `tachylog/src`, bottom first, with their layer. A module may import only
/// modules listed before it.
const LAYERS: &[(&str, u8)] = &[
    // 1. Foundation: no import from the crate but what is listed before.
    ("level", 1),
    ("error", 1),
    ("zone", 1),
    ("panic_guard", 1),
    ("queue", 1),
    // 2. The record's encoding: typed field values, argument codecs, the record layout.
    ("fields", 2),
    ("codec", 2),
    ("record", 2),
    // 3. The calling thread.
    ("frontend", 3),
    // 4. Rendering lines.
    ("format", 4),
    // 5. Destinations.
    ("sink", 5),
    // 6. The worker thread.
    ("backend", 6),
    // 7. Wiring: filters, the `log`/`tracing` bridges, process-wide hooks.
    ("filter", 7),
    ("facade", 7),
    ("lifecycle", 7),
    // 8. Public entry points.
    ("logger", 8),
];

#[test]
fn every_import_goes_down_the_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = read_tree(&src);
    let problems = violations(&src, &files);
    assert!(
        problems.is_empty(),
        "{} upward import(s) in tachylog/src (the rule: a module imports only modules of \
         lower layers, see ARCHITECTURE.md and tests/imports_only_go_down.rs):\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// The checker itself must be able to fail: an upward import, an import hidden in a `use`
/// group and a module missing from the table are each reported; comments and tests are not.
#[test]
fn the_checker_reports_upward_imports() {
    let src = PathBuf::from("src");
    let file = |path: &str, text: &str| (src.join(path), text.to_string());
    let files = vec![
        file("lib.rs", "mod queue;\nmod backend;\nmod shiny;\npub use backend::Worker;\n"),
        file("queue/mod.rs", "use crate::{level::Level, backend::Worker};\n// crate::logger in a comment\n"),
        file("queue/ring.rs", "fn f() { crate::logger::flush(); }\n#[cfg(test)]\nmod tests {\n use crate::logger;\n}\n"),
        file("queue/tests.rs", "use crate::logger;\n"),
        file("backend/worker.rs", "use crate::queue::ring;\n"),
        file("level.rs", "fn g() -> crate::Worker { todo!() }\n"),
        file("shiny.rs", "\n"),
    ];
    let problems = violations(&src, &files);
    let joined = problems.join("\n");
    assert_eq!(problems.len(), 4, "{joined}");
    assert!(
        joined.contains("src/queue/mod.rs:1") && joined.contains("crate::backend"),
        "{joined}"
    );
    assert!(
        joined.contains("src/queue/ring.rs:1") && joined.contains("crate::logger"),
        "{joined}"
    );
    assert!(
        joined.contains("src/level.rs:1") && joined.contains("crate::Worker"),
        "{joined}"
    );
    assert!(joined.contains("module `shiny`"), "{joined}");
    assert!(joined.contains("imports only go down"), "{joined}");
}

fn read_tree(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                files.push((path, text));
            }
        }
    }
    files.sort();
    files
}

/// Every upward import in `files` (paths under `src`), and every module the table lacks.
fn violations(src: &Path, files: &[(PathBuf, String)]) -> Vec<String> {
    let rank: HashMap<&str, usize> = LAYERS
        .iter()
        .enumerate()
        .map(|(i, (m, _))| (*m, i))
        .collect();
    let layer = |module: &str| LAYERS[rank[module]].1;
    let lib = files
        .iter()
        .find(|(p, _)| p == &src.join("lib.rs"))
        .map(|(_, text)| text.as_str())
        .unwrap_or("");
    let reexports = root_reexports(lib);
    let mut problems = Vec::new();
    for module in declared_modules(lib) {
        if !rank.contains_key(module.as_str()) {
            problems.push(format!(
                "module `{module}` is not in the layer table: add it to LAYERS in \
                 tests/imports_only_go_down.rs and to ARCHITECTURE.md"
            ));
        }
    }
    for (path, text) in files {
        let relative = path.strip_prefix(src).unwrap_or(path);
        let Some(module) = top_module(relative) else {
            continue; // lib.rs: the root may name anything
        };
        if relative.file_name().is_some_and(|n| n == "tests.rs") {
            continue;
        }
        let Some(&own) = rank.get(module.as_str()) else {
            continue; // reported above, from lib.rs
        };
        for (number, line) in code_lines(text) {
            for target in crate_paths(line) {
                let defining = reexports
                    .get(&target)
                    .cloned()
                    .unwrap_or_else(|| target.clone());
                let Some(&theirs) = rank.get(defining.as_str()) else {
                    continue;
                };
                if theirs > own {
                    problems.push(format!(
                        "{}:{number}: `{module}` (layer {}) uses `crate::{target}`{} (layer {}): \
                         imports only go down; move the shared piece into a lower layer or \
                         invert the dependency",
                        path.display(),
                        layer(&module),
                        if defining == target {
                            String::new()
                        } else {
                            format!(", defined in `{defining}`")
                        },
                        layer(&defining),
                    ));
                }
            }
        }
    }
    problems
}

/// The top-level module a file belongs to (`None` for the crate root).
fn top_module(relative: &Path) -> Option<String> {
    let first = relative.components().next()?.as_os_str().to_str()?;
    match first.strip_suffix(".rs") {
        Some("lib") => None,
        Some(module) => Some(module.to_string()),
        None => Some(first.to_string()),
    }
}

/// The lines that are code: comments dropped, and nothing from a trailing `#[cfg(test)]` module
/// on.
fn code_lines(text: &str) -> Vec<(usize, &str)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut code = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        let test_attribute =
            trimmed.starts_with("#[cfg(test)]") || trimmed.starts_with("#[cfg(all(test");
        if test_attribute
            && lines
                .get(i + 1)
                .is_some_and(|next| next.trim_start().starts_with("mod "))
        {
            break;
        }
        if trimmed.starts_with("//") {
            continue;
        }
        let without_comment = match line.find(" //") {
            Some(comment) => &line[..comment],
            None => line,
        };
        code.push((i + 1, without_comment));
    }
    code
}

/// The first segment after each `crate::` in `line`, including each member of a `{...}` group.
fn crate_paths(line: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("crate::") {
        let before = rest[..at].chars().last();
        rest = &rest[at + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            continue; // `$crate::` in a macro, or an identifier ending in `crate`
        }
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for member in group[..end].split(',') {
                if let Some(first) = identifier(member.trim()) {
                    found.push(first);
                }
            }
        } else if let Some(first) = identifier(rest) {
            found.push(first);
        }
    }
    found
}

fn identifier(text: &str) -> Option<String> {
    let name: String = text
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty() && name != "self").then_some(name)
}

/// The modules `lib.rs` declares (`mod x;`, whatever its attributes and visibility).
fn declared_modules(lib: &str) -> Vec<String> {
    lib.lines()
        .filter_map(|line| {
            let line = line.trim();
            let line = line
                .strip_prefix("pub(crate) ")
                .or_else(|| line.strip_prefix("pub "))
                .unwrap_or(line);
            let name = line.strip_prefix("mod ")?.strip_suffix(';')?;
            Some(name.to_string())
        })
        .collect()
}

/// Names re-exported at the crate root, to the module that holds them: `pub use
/// sink::{FileSink, Stdout};` maps `FileSink` and `Stdout` to `sink`.
fn root_reexports(lib: &str) -> HashMap<String, String> {
    let mut map = HashMap::new();
    let mut rest = lib;
    while let Some(at) = rest.find("pub use ") {
        rest = &rest[at + "pub use ".len()..];
        let end = rest.find(';').unwrap_or(rest.len());
        let statement = &rest[..end];
        let Some(module) = identifier(statement) else {
            continue;
        };
        let names = match statement.find('{') {
            Some(open) => statement[open + 1..].trim_end_matches('}').to_string(),
            None => statement.rsplit("::").next().unwrap_or("").to_string(),
        };
        for name in names.split(',') {
            let name = name.trim().rsplit("::").next().unwrap_or("").trim();
            if !name.is_empty() {
                map.insert(name.to_string(), module.clone());
            }
        }
    }
    map
}
