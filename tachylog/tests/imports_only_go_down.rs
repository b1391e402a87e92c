//! The layer rule of `ARCHITECTURE.md`, enforced: every `crate::` path in `tachylog/src` names a
//! module below the one it is written in. The modules are ordered bottom to top in [`LAYERS`];
//! a module may use the modules before it, never one after it, so the module graph has no
//! cycle and a change high up (the process hooks, the builder) cannot break the hot path.
//!
//! What counts: every `crate::x` in code, found by parsing each file with `syn`: every `use`
//! tree (however rustfmt spreads a `use crate::{...}` group over lines), every path in an
//! expression, a type, a pattern or a bound, and every `crate::x` in a macro's tokens (a
//! macro's body is read as items when it parses as items, such as the crate root's
//! `not_under_loom! { ... }`). The crate root's re-exports and imports (`crate::Level`,
//! `crate::flush`, ...) are resolved to the module that defines them. Comments, string
//! literals and `$crate` do not count, and neither does unit-test code: `tests.rs` files, and
//! modules under a `cfg` that requires `test` (the `#[cfg(test)]` module at the end of a file,
//! and the files such a module declares): tests may reach up to build their fixtures.
// Unix only: a check of the source tree, the same on every platform, whose reports spell
// paths with `/`.
#![cfg(unix)]

use proc_macro2::{Delimiter, LineColumn, TokenStream, TokenTree};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use syn::parse::{ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::visit::{self, Visit};
use syn::{Attribute, Ident, Item, ItemMod, ItemUse, Macro, Meta, Token, UseTree};

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
    ("binary", 4),
    ("read", 4),
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

/// The sinks that ship with tachylog but could live in a crate of their own use only what a
/// third-party sink could: the crate's public items (`crate::Sink`, `crate::Line`,
/// `crate::RecordDropped`, `crate::mute_current_thread`, ...), never `crate::sink::...` or
/// another module's internals, and no `super::` path out of their own directory. Test code is
/// exempt, as above.
#[test]
fn the_otlp_sink_uses_only_the_public_api() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = read_tree(&src);
    let problems = private_uses(&src, &files, "sink/otlp");
    assert!(
        problems.is_empty(),
        "{} use(s) of tachylog's internals in src/sink/otlp (it may use only what the crate \
         exports, so that any sink could do what it does):\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// The public-API check must be able to fail: an internal module, a `pub(crate)` root import
/// and a `super::` path out of the directory are each reported; public items, paths inside
/// the directory and test modules are not.
#[test]
fn the_public_api_check_reports_internals() {
    let src = PathBuf::from("src");
    let file = |path: &str, text: &str| (src.join(path), text.to_string());
    let files = vec![
        file(
            "lib.rs",
            "mod sink;\nmod queue;\npub use sink::{Line, Sink};\nuse queue::Hidden;\n",
        ),
        file(
            "sink/ext/mod.rs",
            "mod part;\nuse crate::{Line, Sink};\nuse super::Slot;\n\
             fn f() { crate::queue::flush(); let _: crate::Hidden; }\n\
             #[cfg(test)]\nmod tests {\n use crate::queue::anything;\n}\n",
        ),
        file(
            "sink/ext/part.rs",
            "use super::Line;\nfn g() { super::super::Slot::new(); }\n",
        ),
    ];
    let problems = private_uses(&src, &files, "sink/ext");
    let lines: Vec<&str> = problems
        .iter()
        .map(|p| p.split(": ").next().unwrap())
        .collect();
    assert_eq!(
        lines,
        [
            "src/sink/ext/mod.rs:3:5",
            "src/sink/ext/mod.rs:4:17",
            "src/sink/ext/mod.rs:4:47",
            "src/sink/ext/part.rs:2:10",
        ],
        "{problems:#?}"
    );
}

/// Every path in the files under `src/<dir>` that reaches tachylog's internals.
fn private_uses(src: &Path, files: &[(PathBuf, String)], dir: &str) -> Vec<String> {
    let public = files
        .iter()
        .find(|(path, _)| *path == src.join("lib.rs"))
        .and_then(|(_, text)| syn::parse_file(text).ok())
        .map(|file| public_root_names(&root_items(&file.items)))
        .unwrap_or_default();
    let dir = src.join(dir);
    let mut problems = Vec::new();
    for (path, text) in files {
        if !path.starts_with(&dir) || path.file_name().is_some_and(|n| n == "tests.rs") {
            continue;
        }
        let Ok(file) = syn::parse_file(text) else {
            problems.push(format!("{}: cannot parse", path.display()));
            continue;
        };
        // `super::` from `dir/mod.rs` leaves the directory; from `dir/x.rs`, `super::super::`.
        let allowed_supers = usize::from(path.parent() != Some(dir.as_path()))
            + usize::from(path.file_name().is_some_and(|n| n != "mod.rs"));
        let mut scan = Scan::of(&file);
        scan.targets.retain(|(target, _)| !public.contains(target));
        for (target, at) in &scan.targets {
            problems.push(format!(
                "{}:{}:{}: `crate::{target}` is not a public item of the crate",
                path.display(),
                at.line,
                at.column + 1
            ));
        }
        let mut supers = Supers::default();
        supers.visit_file(&file);
        for (depth, at) in supers.found {
            if depth > allowed_supers {
                problems.push(format!(
                    "{}:{}:{}: a `super::` path leaves {}",
                    path.display(),
                    at.line,
                    at.column + 1,
                    dir.display()
                ));
            }
        }
    }
    problems.sort_by_key(|p| {
        let mut parts = p.split(':');
        let file = parts.next().unwrap_or_default().to_string();
        let line: usize = parts.next().and_then(|l| l.parse().ok()).unwrap_or(0);
        let column: usize = parts.next().and_then(|c| c.parse().ok()).unwrap_or(0);
        (file, line, column)
    });
    problems
}

/// The names the crate root makes public (`pub use`, `pub fn`, ...), but for the hidden
/// `__private`-style modules the macros use.
fn public_root_names(root: &[Item]) -> std::collections::HashSet<String> {
    fn leaves(tree: &UseTree, out: &mut std::collections::HashSet<String>) {
        match tree {
            UseTree::Path(path) => leaves(&path.tree, out),
            UseTree::Name(name) => {
                out.insert(name.ident.to_string());
            }
            UseTree::Rename(rename) => {
                out.insert(rename.rename.to_string());
            }
            UseTree::Group(group) => group.items.iter().for_each(|t| leaves(t, out)),
            UseTree::Glob(_) => {}
        }
    }
    let public = |vis: &syn::Visibility| matches!(vis, syn::Visibility::Public(_));
    let mut names = std::collections::HashSet::new();
    for item in root {
        match item {
            Item::Use(u) if public(&u.vis) => leaves(&u.tree, &mut names),
            Item::Fn(f) if public(&f.vis) => {
                names.insert(f.sig.ident.to_string());
            }
            Item::Struct(s) if public(&s.vis) => {
                names.insert(s.ident.to_string());
            }
            Item::Enum(e) if public(&e.vis) => {
                names.insert(e.ident.to_string());
            }
            Item::Mod(m) if public(&m.vis) && !m.ident.to_string().starts_with("__") => {
                names.insert(m.ident.to_string());
            }
            _ => {}
        }
    }
    names
}

/// How many `super` segments each path outside test modules starts with.
#[derive(Default)]
struct Supers {
    found: Vec<(usize, LineColumn)>,
}

impl Supers {
    fn leading(&mut self, idents: impl Iterator<Item = Ident>) {
        let mut depth = 0;
        let mut at = None;
        for ident in idents {
            if ident != "super" {
                break;
            }
            at.get_or_insert(ident.span().start());
            depth += 1;
        }
        if let Some(at) = at {
            self.found.push((depth, at));
        }
    }
}

impl<'ast> Visit<'ast> for Supers {
    fn visit_item_mod(&mut self, module: &'ast ItemMod) {
        if !requires_test(&module.attrs) {
            visit::visit_item_mod(self, module);
        }
    }

    fn visit_item_use(&mut self, item: &'ast ItemUse) {
        let mut idents = Vec::new();
        let mut tree = &item.tree;
        while let UseTree::Path(path) = tree {
            idents.push(path.ident.clone());
            tree = &path.tree;
        }
        if let UseTree::Name(name) = tree {
            idents.push(name.ident.clone());
        }
        self.leading(idents.into_iter());
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        self.leading(path.segments.iter().map(|s| s.ident.clone()));
        visit::visit_path(self, path);
    }
}

/// The checker itself must be able to fail: an upward import on one line, in a `use` group
/// spread over several lines, inline in code, in a macro's arguments, through a root
/// re-export declared inside a macro, and in code compiled outside tests too (`any(test, ..)`)
/// is each reported at its line; so are a module missing from the table and a file that does
/// not parse. Comments, strings, `$crate`, `#[cfg(test)]` modules, the files they declare and
/// `tests.rs` files are not.
#[test]
fn the_checker_reports_upward_imports() {
    let src = PathBuf::from("src");
    let file = |path: &str, text: &str| (src.join(path), text.to_string());
    let files = vec![
        file(
            "lib.rs",
            "mod queue;\nnot_under_loom! {\nmod backend;\nmod shiny;\npub use backend::Worker;\n}\n",
        ),
        file(
            "queue/mod.rs",
            "use crate::{level::Level, backend::Worker};\n// crate::logger in a comment\n",
        ),
        file(
            "queue/ring.rs",
            "fn f() { crate::logger::flush(); }\n#[cfg(test)]\nmod tests {\n use crate::logger;\n}\n",
        ),
        file("queue/tests.rs", "use crate::logger;\n"),
        file(
            "queue/chain.rs",
            "#[cfg(all(test, loom))]\nmod loom_tests;\n#[cfg(any(test, feature = \"x\"))]\n\
             mod also_outside_tests {\n    fn f() -> crate::sink::Stdout { todo!() }\n}\n",
        ),
        file("queue/chain/loom_tests.rs", "use crate::logger;\n"),
        file("backend/worker.rs", "use crate::queue::ring;\n"),
        file("level.rs", "fn g() -> crate::Worker { todo!() }\n"),
        file(
            "frontend/producer.rs",
            "use crate::{\n    queue::ring,\n    logger::Guard,\n};\n",
        ),
        file(
            "format/mod.rs",
            "macro_rules! m {\n    () => { $crate::logger::flush() };\n}\n\
             fn h() -> String { format!(\"{}\", crate::sink::NAME) }\n\
             const S: &str = \"crate::logger\";\n",
        ),
        file("zone.rs", "fn broken() -> {}\n"),
        file("shiny.rs", "\n"),
    ];
    let problems = violations(&src, &files);
    let joined = problems.join("\n");
    let reported = |at: &str, what: &str| {
        assert!(
            problems
                .iter()
                .any(|p| p.starts_with(at) && p.contains(what)),
            "{what:?} at {at:?} not reported:\n{joined}"
        );
    };
    reported("src/queue/mod.rs:1:", "uses `crate::backend`");
    reported("src/queue/ring.rs:1:", "uses `crate::logger`");
    reported("src/queue/chain.rs:5:", "uses `crate::sink`");
    reported(
        "src/level.rs:1:",
        "uses `crate::Worker`, defined in `backend`",
    );
    reported("src/frontend/producer.rs:3:", "uses `crate::logger`");
    reported("src/format/mod.rs:4:", "uses `crate::sink`");
    reported("src/zone.rs:1:", "cannot parse");
    reported("module `shiny`", "not in the layer table");
    assert_eq!(problems.len(), 8, "{joined}");
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

/// Every upward import in `files` (paths under `src`), every module the table lacks, and every
/// file that cannot be parsed (its imports would go unchecked).
fn violations(src: &Path, files: &[(PathBuf, String)]) -> Vec<String> {
    let rank: HashMap<&str, usize> = LAYERS
        .iter()
        .enumerate()
        .map(|(i, (m, _))| (*m, i))
        .collect();
    let layer = |module: &str| LAYERS[rank[module]].1;
    let mut problems = Vec::new();
    let mut scans = Vec::new();
    for (path, text) in files {
        match syn::parse_file(text) {
            Ok(file) => scans.push((path, Some(Scan::of(&file)), Some(file))),
            Err(e) => {
                let at = e.span().start();
                problems.push(format!(
                    "{}:{}:{}: cannot parse this file ({e}): its imports cannot be checked",
                    path.display(),
                    at.line,
                    at.column + 1
                ));
                scans.push((path, None, None));
            }
        }
    }
    let root = scans
        .iter()
        .find(|(path, _, _)| **path == src.join("lib.rs"))
        .and_then(|(_, _, file)| file.as_ref())
        .map(|file| root_items(&file.items))
        .unwrap_or_default();
    let reexports = root_reexports(&root);
    for module in declared_modules(&root) {
        if !rank.contains_key(module.as_str()) {
            problems.push(format!(
                "module `{module}` is not in the layer table: add it to LAYERS in \
                 tests/imports_only_go_down.rs and to ARCHITECTURE.md"
            ));
        }
    }
    let test_only = TestOnly::declared_in(
        scans
            .iter()
            .filter_map(|(path, scan, _)| scan.as_ref().map(|scan| (path.as_path(), scan))),
    );
    for (path, scan, _) in &scans {
        let relative = path.strip_prefix(src).unwrap_or(path);
        let Some(module) = top_module(relative) else {
            continue; // lib.rs: the root may name anything
        };
        if relative.file_name().is_some_and(|n| n == "tests.rs") || test_only.contains(path) {
            continue;
        }
        let Some(&own) = rank.get(module.as_str()) else {
            continue; // reported above, from lib.rs
        };
        let Some(scan) = scan else {
            continue; // reported above: cannot parse
        };
        for (target, at) in &scan.targets {
            let defining = reexports
                .get(target)
                .cloned()
                .unwrap_or_else(|| target.clone());
            let Some(&theirs) = rank.get(defining.as_str()) else {
                continue;
            };
            if theirs > own {
                problems.push(format!(
                    "{}:{}:{}: `{module}` (layer {}) uses `crate::{target}`{} (layer {}): \
                     imports only go down; move the shared piece into a lower layer or \
                     invert the dependency",
                    path.display(),
                    at.line,
                    at.column + 1,
                    layer(&module),
                    if defining == *target {
                        String::new()
                    } else {
                        format!(", defined in `{defining}`")
                    },
                    layer(&defining),
                ));
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

/// What one file says about the layers: the first segment after each `crate::` with where it
/// is, and the file modules it declares for tests only.
#[derive(Default)]
struct Scan {
    targets: Vec<(String, LineColumn)>,
    /// Relative to the declaring file's module directory, without extension (`tests` for
    /// `tests.rs` and `tests/`), or, from a `#[path]`, to the declaring file's directory.
    test_modules: Vec<TestModule>,
    /// The inline modules (`mod x { ... }`) the visitor is inside.
    inline: Vec<String>,
}

enum TestModule {
    Module(PathBuf),
    PathAttribute(PathBuf),
}

impl Scan {
    fn of(file: &syn::File) -> Scan {
        let mut scan = Scan::default();
        scan.visit_file(file);
        scan
    }

    fn found(&mut self, ident: &Ident) {
        if ident != "self" {
            self.targets.push((ident.to_string(), ident.span().start()));
        }
    }

    /// A `use` tree from its root: only the branches that start at `crate::` count.
    fn use_tree(&mut self, tree: &UseTree) {
        match tree {
            UseTree::Path(path) if path.ident == "crate" => self.after_crate(&path.tree),
            UseTree::Group(group) => group.items.iter().for_each(|t| self.use_tree(t)),
            _ => {}
        }
    }

    /// The part of a `use` tree after `crate::`: each branch names a top-level item.
    fn after_crate(&mut self, tree: &UseTree) {
        match tree {
            UseTree::Path(path) => self.found(&path.ident),
            UseTree::Name(name) => self.found(&name.ident),
            UseTree::Rename(rename) => self.found(&rename.ident),
            UseTree::Group(group) => group.items.iter().for_each(|t| self.after_crate(t)),
            // `crate::*` names no module in particular: nothing to check.
            UseTree::Glob(_) => {}
        }
    }

    /// `crate :: x` and `crate :: { ... }` in tokens no parser has read (a macro's arguments
    /// or rules); `$crate` is the macro's caller's crate root, not a path of this file's.
    fn tokens(&mut self, tokens: TokenStream) {
        let tokens: Vec<TokenTree> = tokens.into_iter().collect();
        for (i, token) in tokens.iter().enumerate() {
            match token {
                TokenTree::Group(group) => self.tokens(group.stream()),
                TokenTree::Ident(ident) if ident == "crate" => {
                    let after_dollar = i > 0
                        && matches!(&tokens[i - 1], TokenTree::Punct(p) if p.as_char() == '$');
                    let colons = matches!(
                        (tokens.get(i + 1), tokens.get(i + 2)),
                        (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
                            if a.as_char() == ':' && b.as_char() == ':'
                    );
                    if after_dollar || !colons {
                        continue;
                    }
                    match tokens.get(i + 3) {
                        Some(TokenTree::Ident(next)) => self.found(next),
                        Some(TokenTree::Group(group)) if group.delimiter() == Delimiter::Brace => {
                            let members = Punctuated::<UseTree, Token![,]>::parse_terminated
                                .parse2(group.stream());
                            for member in members.iter().flatten() {
                                self.after_crate(member);
                            }
                        }
                        _ => {}
                    }
                }
                _ => {}
            }
        }
    }
}

impl<'ast> Visit<'ast> for Scan {
    fn visit_item_mod(&mut self, module: &'ast ItemMod) {
        if requires_test(&module.attrs) {
            if module.content.is_none() {
                self.test_modules.push(match path_attribute(&module.attrs) {
                    Some(path) => TestModule::PathAttribute(path),
                    None => TestModule::Module(
                        self.inline
                            .iter()
                            .chain([&module.ident.to_string()])
                            .collect(),
                    ),
                });
            }
            return;
        }
        self.inline.push(module.ident.to_string());
        visit::visit_item_mod(self, module);
        self.inline.pop();
    }

    fn visit_item_use(&mut self, item: &'ast ItemUse) {
        self.use_tree(&item.tree);
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let mut segments = path.segments.iter();
        if let (None, Some(first), Some(second)) =
            (&path.leading_colon, segments.next(), segments.next())
        {
            if first.ident == "crate" {
                self.found(&second.ident);
            }
        }
        visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast Macro) {
        self.visit_path(&mac.path);
        match mac.parse_body_with(items) {
            Ok(items) => items.iter().for_each(|item| self.visit_item(item)),
            Err(_) => self.tokens(mac.tokens.clone()),
        }
    }
}

/// A macro body read as a sequence of items.
fn items(input: ParseStream<'_>) -> syn::Result<Vec<Item>> {
    let mut items = Vec::new();
    while !input.is_empty() {
        items.push(input.parse()?);
    }
    Ok(items)
}

/// Whether `attrs` hold a `cfg` that only tests satisfy: `test`, `all(test, ...)`, or
/// `any(...)` of such.
fn requires_test(attrs: &[Attribute]) -> bool {
    fn only_in_tests(predicate: &Meta) -> bool {
        match predicate {
            Meta::Path(path) => path.is_ident("test"),
            Meta::List(list) => {
                let Ok(args) =
                    list.parse_args_with(Punctuated::<Meta, Token![,]>::parse_terminated)
                else {
                    return false;
                };
                if list.path.is_ident("all") {
                    args.iter().any(only_in_tests)
                } else if list.path.is_ident("any") {
                    !args.is_empty() && args.iter().all(only_in_tests)
                } else {
                    false
                }
            }
            Meta::NameValue(_) => false,
        }
    }
    attrs
        .iter()
        .filter(|attr| attr.path().is_ident("cfg"))
        .any(|attr| attr.parse_args::<Meta>().is_ok_and(|m| only_in_tests(&m)))
}

/// The file a `#[path = "..."]` attribute names.
fn path_attribute(attrs: &[Attribute]) -> Option<PathBuf> {
    attrs.iter().find_map(|attr| match &attr.meta {
        Meta::NameValue(nv) if nv.path.is_ident("path") => match &nv.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(PathBuf::from(s.value())),
            _ => None,
        },
        _ => None,
    })
}

/// The files that belong to modules declared for tests only.
#[derive(Default)]
struct TestOnly {
    /// A module without extension: its `.rs` file and everything under its directory.
    modules: Vec<PathBuf>,
    files: Vec<PathBuf>,
}

impl TestOnly {
    fn declared_in<'a>(scans: impl Iterator<Item = (&'a Path, &'a Scan)>) -> TestOnly {
        let mut test_only = TestOnly::default();
        for (path, scan) in scans {
            let dir = path.parent().unwrap_or(Path::new(""));
            let is_mod_rs = path
                .file_name()
                .is_some_and(|n| n == "mod.rs" || n == "lib.rs");
            // `a/b.rs` declares its modules in `a/b/`; `a/mod.rs` and `lib.rs` in their own.
            let module_dir = match path.file_stem() {
                Some(stem) if !is_mod_rs => dir.join(stem),
                _ => dir.to_path_buf(),
            };
            for declared in &scan.test_modules {
                match declared {
                    TestModule::Module(module) => test_only.modules.push(module_dir.join(module)),
                    TestModule::PathAttribute(file) => test_only.files.push(dir.join(file)),
                }
            }
        }
        test_only
    }

    fn contains(&self, path: &Path) -> bool {
        self.files.iter().any(|f| f == path)
            || self
                .modules
                .iter()
                .any(|m| path == m.with_extension("rs") || path.starts_with(m))
    }
}

/// The crate root's items, with those of a macro whose body is items (`not_under_loom! {
/// mod backend; ... }`) in its place.
fn root_items(items: &[Item]) -> Vec<Item> {
    let mut flat = Vec::new();
    for item in items {
        match item {
            Item::Macro(m) if m.ident.is_none() => match m.mac.parse_body_with(self::items) {
                Ok(inner) => flat.extend(root_items(&inner)),
                Err(_) => flat.push(item.clone()),
            },
            _ => flat.push(item.clone()),
        }
    }
    flat
}

/// The modules the crate root declares (`mod x;`, whatever its attributes and visibility),
/// but for those declared for tests only.
fn declared_modules(root: &[Item]) -> Vec<String> {
    root.iter()
        .filter_map(|item| match item {
            Item::Mod(m) if m.content.is_none() && !requires_test(&m.attrs) => {
                Some(m.ident.to_string())
            }
            _ => None,
        })
        .collect()
}

/// Names the crate root imports or re-exports, to the module that holds them: `pub use
/// sink::{FileSink, Stdout};` maps `FileSink` and `Stdout` to `sink`. A private `use` counts
/// too: `crate::Name` reaches it from anywhere in the crate.
fn root_reexports(root: &[Item]) -> HashMap<String, String> {
    fn walk(tree: &UseTree, module: Option<&str>, map: &mut HashMap<String, String>) {
        match tree {
            UseTree::Path(path) => {
                let name = path.ident.to_string();
                let module = match module {
                    Some(module) => Some(module),
                    None if name == "crate" || name == "self" => None,
                    None => Some(name.as_str()),
                };
                walk(&path.tree, module, map);
            }
            UseTree::Name(name) => {
                if let Some(module) = module {
                    map.insert(name.ident.to_string(), module.to_string());
                }
            }
            UseTree::Rename(rename) => {
                let module = module.map_or_else(|| rename.ident.to_string(), str::to_string);
                map.insert(rename.rename.to_string(), module);
            }
            UseTree::Group(group) => group.items.iter().for_each(|t| walk(t, module, map)),
            UseTree::Glob(_) => {}
        }
    }
    let mut map = HashMap::new();
    for item in root {
        if let Item::Use(item) = item {
            walk(&item.tree, None, &mut map);
        }
    }
    map
}
