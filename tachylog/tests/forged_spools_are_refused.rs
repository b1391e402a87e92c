//! A spool is read like `ssh` reads `~/.ssh`: nothing in it is trusted. A root or a process
//! directory that another user owns, that others may write, or that is a symbolic link is not
//! used (a WARN record names the cause, logging goes on); a file that is not a regular file of
//! the user's (a symbolic link to `/dev/zero`, a FIFO, a directory) or is larger than the
//! layout allows is refused before a byte is read, without hanging; absurd lengths, clocks and
//! positions are damage, counted and named; and nothing in a spool can make recovery write
//! anywhere but the recovering logger's own sinks.
//!
//! The forged spools start from a real one: a child process logs with its back end held and is
//! killed, then the test changes what an attacker or a damaged disk would.
// Unix only: the spool is Unix-only.
#![cfg(unix)]

mod common;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The user tests give foreign directories to.
const NOBODY: u32 = 65534;

/// A child that logs 50 records into its spool and dies with them all still there.
#[test]
fn dies_holding_records() {
    if let Some(log) = common::child_role("dies_holding_records") {
        std::mem::forget(common::expect_init(
            tachylog::builder()
                .file(&log)
                .spool(log.with_extension("spool"))
                .init(),
        ));
        tachylog::__private::hold_backend(true);
        for i in 0..50u64 {
            tachylog::info!("held {} of the dead", i);
        }
        // SAFETY: killing our own process.
        unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
        common::await_fatal_signal(Duration::from_secs(30));
    }
}

/// A dead process's real spool under `dir/spool`; returns the spool root and the process's
/// directory in it.
fn dead_spool(dir: &Path) -> (PathBuf, PathBuf) {
    let log = dir.join("dead.log");
    let child = common::run_child_with_log("dies_holding_records", &log, Duration::from_secs(60));
    assert_eq!(child.status.signal(), Some(libc::SIGKILL), "{child}");
    let root = log.with_extension("spool");
    let process = common::process_dirs(&root)
        .into_iter()
        .next()
        .expect("the dead process's directory");
    (root, process)
}

/// Starts a logger writing `log` with the spool `root`, logs 20 records, ends it; returns the
/// log's text, after checking that its own records are all there (logging went on).
fn recover_into(log: &Path, root: &Path) -> String {
    let _watchdog = common::watchdog("recovery of a forged spool", Duration::from_secs(60));
    let guard = common::expect_init(tachylog::builder().file(log).spool(root).init());
    common::log_numbered("own", 20);
    drop(guard);
    let text = common::read_log(log);
    common::assert_numbered(&common::parse_log(&text), "own", 20);
    text
}

fn warnings(text: &str) -> Vec<&str> {
    common::parse_log(text)
        .into_iter()
        .filter(|l| l.level == "WARN")
        .map(|l| l.message)
        .collect()
}

fn assert_warned(text: &str, parts: &[&str]) {
    assert!(
        warnings(text)
            .iter()
            .any(|w| parts.iter().all(|p| w.contains(p))),
        "no WARN with {parts:?}:\n{text}"
    );
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn chown(path: &Path, uid: u32) {
    std::os::unix::fs::chown(path, Some(uid), None).expect("the tests run as root in CI");
}

/// A root someone else may write or owns, or a symbolic link: not used at all, not even read.
#[test]
fn a_root_others_may_write_or_own_is_not_used() {
    let _serial = common::logger_lock();
    for (case, expected) in [
        (
            "world-writable",
            "is writable by its group or by others (mode 777)",
        ),
        (
            "group-writable",
            "is writable by its group or by others (mode 770)",
        ),
        ("another user's", "is owned by user 65534"),
        ("a symbolic link", "is a symbolic link"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let (root, process) = dead_spool(dir.path());
        let used = match case {
            "world-writable" => {
                chmod(&root, 0o777);
                root.clone()
            }
            "group-writable" => {
                chmod(&root, 0o770);
                root.clone()
            }
            "another user's" => {
                chown(&root, NOBODY);
                root.clone()
            }
            _ => {
                let link = dir.path().join("link");
                std::os::unix::fs::symlink(&root, &link).unwrap();
                link
            }
        };
        let before = std::fs::read_dir(&root).unwrap().count();
        let text = recover_into(&dir.path().join("own.log"), &used);
        assert_warned(&text, &[expected, "cannot be used"]);
        assert!(
            !text.contains("held "),
            "{case}: records read from it:\n{text}"
        );
        assert!(
            process.join("state").exists(),
            "{case}: its files were touched"
        );
        assert_eq!(
            std::fs::read_dir(&root).unwrap().count(),
            before,
            "{case}: a directory of ours was made in it"
        );
    }
}

/// A process directory someone else owns or may write, inside a private root: left as it is,
/// with a WARN; the others are recovered.
#[test]
fn a_process_directory_others_own_or_may_write_is_left_alone() {
    let _serial = common::logger_lock();
    for (case, expected) in [
        ("another user's", "is owned by user 65534"),
        ("world-writable", "(mode 777)"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let (root, process) = dead_spool(dir.path());
        match case {
            "another user's" => chown(&process, NOBODY),
            _ => chmod(&process, 0o777),
        }
        let text = recover_into(&dir.path().join("own.log"), &root);
        let name = process.file_name().unwrap().to_str().unwrap();
        assert_warned(&text, &[name, expected, "left alone"]);
        assert!(!text.contains("held "), "{case}:\n{text}");
        assert!(process.join("state").exists() && process.join("defs").exists());
    }
}

/// Files that are not what their names say (a link to `/dev/zero`, a FIFO, a directory, a
/// device): refused before a byte is read, without waiting on a FIFO or reading a device
/// without end. What they hold is lost, and said so.
#[test]
fn files_that_are_not_regular_files_are_refused_without_hanging() {
    let _serial = common::logger_lock();
    let fifo = |path: &Path| {
        let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    };
    type Forge = fn(&Path, &dyn Fn(&Path));
    let cases: [(&str, &str, Forge); 7] = [
        ("state", "is a symbolic link", |p, _| {
            std::os::unix::fs::symlink("/dev/zero", p).unwrap()
        }),
        ("state", "is not a regular file", |p, fifo| fifo(p)),
        ("defs", "is a symbolic link", |p, _| {
            std::os::unix::fs::symlink("/dev/zero", p).unwrap()
        }),
        ("ring-1", "is a symbolic link", |p, _| {
            std::os::unix::fs::symlink("/dev/zero", p).unwrap()
        }),
        ("ring-1", "is not a regular file", |p, fifo| fifo(p)),
        ("ring-1", "is not a regular file", |p, _| {
            std::fs::create_dir(p).unwrap()
        }),
        ("state", "is not a regular file", |p, _| {
            // A character device: /dev/zero's numbers (1, 5), made in the spool (as root).
            let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
            // SAFETY: a valid NUL-terminated path.
            let made =
                unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o600, libc::makedev(1, 5)) };
            assert_eq!(made, 0, "mknod: {}", std::io::Error::last_os_error());
        }),
    ];
    for (name, expected, forge) in cases {
        let dir = tempfile::tempdir().unwrap();
        let (root, process) = dead_spool(dir.path());
        let path = match name {
            "ring-1" => ring_of(&process),
            _ => process.join(name),
        };
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        let name = name.as_str();
        std::fs::remove_file(&path).unwrap();
        forge(&path, &fifo);
        let text = recover_into(&dir.path().join("own.log"), &root);
        assert_warned(&text, &[name, expected]);
        if name.starts_with("ring-") {
            // The ring is lost, said so; the directory is gone like any recovered one.
            assert_warned(&text, &["none of its records recovered"]);
        } else {
            assert_warned(&text, &["renamed to .damaged"]);
        }
        assert!(!text.contains("held "), "{name}:\n{text}");
    }
}

/// Sizes and fields no writer writes: a state file of a gigabyte, a ring whose header claims
/// more than any ring holds or more written than it holds, a clock of absurd speed, a record
/// length past the ring. Each is damage, named, with what it costs; nothing reads the sizes
/// claimed, and nothing panics.
#[test]
fn sizes_and_fields_past_the_layout_are_damage() {
    let _serial = common::logger_lock();
    type Forge = fn(&Path);
    let cases: [(&str, &[&str], Forge); 6] = [
        ("a huge state", &["state", "bytes, more than"], |p| {
            std::fs::OpenOptions::new()
                .write(true)
                .open(p.join("state"))
                .unwrap()
                .set_len(1 << 30)
                .unwrap()
        }),
        (
            "a ring claiming a huge capacity",
            &["ring-", "a capacity of"],
            |p| patch(&ring_of(p), 2048 + 16, &(1u64 << 40).to_le_bytes()),
        ),
        (
            "more written than the ring holds",
            &[
                "ring-",
                "they were overwritten",
                "none of its records recovered",
            ],
            |p| {
                let ring = ring_of(p);
                let head_offset = read_u64(&ring, 2048 + 32);
                patch(&ring, head_offset, &(1u64 << 40).to_le_bytes())
            },
        ),
        (
            "a clock of 1e300 ns a tick",
            &["a clock of", "renamed to .damaged"],
            |p| patch(&p.join("state"), 64 + 24, &1e300f64.to_bits().to_le_bytes()),
        ),
        (
            "a frame longer than the ring",
            &["a damaged frame", "the rest of its ring", "bytes) is lost"],
            |p| patch(&ring_of(p), 4096, &0x7fff_fff8u32.to_le_bytes()),
        ),
        (
            "a time at the end of time",
            &["recovered 50 record(s)"],
            |p| patch(&p.join("state"), 64 + 16, &i64::MAX.to_le_bytes()),
        ),
    ];
    for (case, expected, forge) in cases {
        let dir = tempfile::tempdir().unwrap();
        let (root, process) = dead_spool(dir.path());
        forge(&process);
        let text = recover_into(&dir.path().join("own.log"), &root);
        let lines = common::parse_log(&text);
        assert!(
            lines
                .iter()
                .any(|l| (l.level == "WARN" || l.level == "INFO")
                    && expected.iter().all(|e| l.message.contains(e))),
            "{case}: no record with {expected:?}:\n{text}"
        );
    }
}

/// A spool that says where to write (a manifest of files and a pattern, as an older tachylog
/// wrote) is not listened to: the recovered records go to the recovering logger's own file, in
/// its own format, and the file the spool names is not touched.
#[test]
fn a_spool_names_no_file_to_write_and_no_format() {
    let _serial = common::logger_lock();
    let dir = tempfile::tempdir().unwrap();
    let (root, process) = dead_spool(dir.path());
    let victim = dir.path().join("victim.log");
    let original = vec![b'v'; 150_000];
    std::fs::write(&victim, &original).unwrap();
    std::fs::write(
        process.join("manifest"),
        format!(
            "tachylog spool manifest 1\npattern\tFORGED {{message}}\nutc\t1\nsink\ttext\tTRACE\tfile:{}\n",
            victim.display()
        ),
    )
    .unwrap();
    let own = dir.path().join("own.log");
    let text = recover_into(&own, &root);
    assert_eq!(
        std::fs::read(&victim).unwrap(),
        original,
        "the named file changed"
    );
    let recovered: Vec<_> = common::parse_log(&text)
        .into_iter()
        .filter(|l| l.message.starts_with("[recovered] held "))
        .collect();
    assert_eq!(recovered.len(), 50, "{text}");
    assert!(!text.contains("FORGED"));
}

/// Spool directories are made private: `0700`, the user's.
#[test]
fn a_spool_is_made_private() {
    let _serial = common::logger_lock();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("new").join("spool");
    let guard = common::expect_init(
        tachylog::builder()
            .file(dir.path().join("app.log"))
            .spool(&root)
            .init(),
    );
    tachylog::info!("made");
    tachylog::flush();
    let process = common::process_dirs(&root).into_iter().next().unwrap();
    for path in [&root, &process, &root.join("locks")] {
        let meta = std::fs::metadata(path).unwrap();
        assert_eq!(meta.mode() & 0o777, 0o700, "{}", path.display());
    }
    for entry in std::fs::read_dir(&process).unwrap() {
        let meta = entry.unwrap().metadata().unwrap();
        assert_eq!(meta.mode() & 0o077, 0, "files are the user's alone");
    }
    drop(guard);
}

/// The dead process's one ring file, `ring-<serial>`.
fn ring_of(process: &Path) -> PathBuf {
    std::fs::read_dir(process)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("ring-")
        })
        .expect("a ring file")
}

fn patch(path: &Path, at: u64, bytes: &[u8]) {
    use std::os::unix::fs::FileExt;
    let file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    file.write_all_at(bytes, at).unwrap();
}

fn read_u64(path: &Path, at: u64) -> u64 {
    use std::os::unix::fs::FileExt;
    let mut bytes = [0u8; 8];
    std::fs::File::open(path)
        .unwrap()
        .read_exact_at(&mut bytes, at)
        .unwrap();
    u64::from_le_bytes(bytes)
}
