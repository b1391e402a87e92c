use super::*;

fn pattern_in(dir: &Path, p: &str) -> NamePattern {
    NamePattern::parse(dir.join(p).to_str().unwrap()).unwrap()
}

fn write(path: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

/// Writes `path` with `age` as its modification time.
fn write_aged(path: &Path, bytes: &[u8], age: Duration) {
    write(path, bytes);
    File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(SystemTime::now() - age)
        .unwrap();
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

fn retention(files: Option<usize>, age: Option<u64>, bytes: Option<u64>) -> Retention {
    Retention {
        max_files: files,
        max_age: age.map(Duration::from_secs),
        max_total_bytes: bytes,
    }
}

fn worker(pattern: NamePattern, retention: Retention, current: &Path) -> Worker {
    Worker {
        pattern: Arc::new(pattern),
        retention,
        compression: Compression::None,
        pending: Vec::new(),
        current: Some(current.to_path_buf()),
    }
}

#[test]
fn the_highest_index_on_disk_is_found_per_period() {
    let dir = tempfile::tempdir().unwrap();
    let p = pattern_in(dir.path(), "app.%Y%m%d.log");
    let base = dir.path().join("app.20261121.log");
    assert!(highest_index(&p, &base).is_none());
    write(&base, b"x\n");
    let h = highest_index(&p, &base).unwrap();
    assert_eq!((h.index, h.uncompressed_size), (0, Some(2)));
    write(&dir.path().join("app.20261121.2.log.zst"), b"");
    write(&dir.path().join("app.20261122.5.log"), b""); // another day
    write(&dir.path().join("app.20261121.9.log.bak"), b""); // not ours
    let h = highest_index(&p, &base).unwrap();
    assert_eq!(
        (h.index, h.uncompressed_size),
        (2, None),
        "compressed: closed for writing"
    );
    write(&dir.path().join("app.20261121.3.log"), b"abc\n");
    let h = highest_index(&p, &base).unwrap();
    assert_eq!((h.index, h.uncompressed_size), (3, Some(4)));
    write(&dir.path().join("app.20261121.3.log.gz.tmp"), b"");
    let h = highest_index(&p, &base).unwrap();
    assert_eq!(
        (h.index, h.uncompressed_size),
        (3, None),
        "being compressed: closed"
    );
    assert_eq!(
        indexes_on_disk(&p, &base),
        [(0, false), (2, true), (3, true)]
    );
    // The last index, which anyone may create: one entry, found without a look at the
    // indexes below it.
    write(&dir.path().join("app.20261121.4294967295.log"), b"");
    assert_eq!(
        indexes_on_disk(&p, &base),
        [(0, false), (2, true), (3, true), (u32::MAX, false)]
    );
}

#[cfg(feature = "gzip")]
#[test]
fn gzip_compression_round_trips_and_keeps_the_modification_time() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app.1.log");
    let text: String = (0..10_000).map(|i| format!("line {i}\n")).collect();
    write_aged(&path, text.as_bytes(), Duration::from_secs(3600));
    let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
    compress_file(&path, Compression::Gzip).unwrap();
    assert_eq!(names(dir.path()), ["app.1.log.gz"]);
    let packed = dir.path().join("app.1.log.gz");
    assert_eq!(
        std::fs::metadata(&packed).unwrap().modified().unwrap(),
        modified
    );
    let mut out = String::new();
    std::io::Read::read_to_string(
        &mut flate2::read::GzDecoder::new(File::open(&packed).unwrap()),
        &mut out,
    )
    .unwrap();
    assert_eq!(out, text);
}

/// A symbolic link or a FIFO where a rotated file was (put there by another process that may
/// write the directory) is neither read nor removed: no compressed copy of the link's target,
/// and no wait for a FIFO's writer.
#[cfg(all(unix, feature = "gzip"))]
#[test]
fn compression_refuses_a_symbolic_link_and_a_fifo() {
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("secret");
    write(&secret, b"not for the log's readers\n");
    let link = dir.path().join("app.1.log");
    std::os::unix::fs::symlink(&secret, &link).unwrap();
    let error = compress_file(&link, Compression::Gzip).unwrap_err();
    assert!(error.to_string().contains("symbolic link"), "{error}");
    assert_eq!(names(dir.path()), ["app.1.log", "secret"]);

    let fifo = dir.path().join("app.2.log");
    let name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: `name` is a NUL-terminated path; the result is checked.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
    let error = compress_file(&fifo, Compression::Gzip).unwrap_err();
    assert_eq!(error.kind(), io::ErrorKind::InvalidInput, "{error}");
    assert_eq!(names(dir.path()), ["app.1.log", "app.2.log", "secret"]);
}

#[cfg(feature = "zstd")]
#[test]
fn zstd_compression_round_trips_and_never_replaces_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app.log");
    write(&path, b"one\ntwo\n");
    compress_file(&path, Compression::Zstd).unwrap();
    let packed = dir.path().join("app.log.zst");
    assert_eq!(
        zstd::decode_all(File::open(&packed).unwrap()).unwrap(),
        b"one\ntwo\n"
    );
    // A second file of the same name (say, a late record after compression) must not
    // overwrite the first compressed copy: the compression fails and the file stays.
    write(&path, b"three\n");
    let error = compress_file(&path, Compression::Zstd).unwrap_err();
    assert_eq!(error.kind(), io::ErrorKind::AlreadyExists);
    assert_eq!(names(dir.path()), ["app.log", "app.log.zst"]);
    assert_eq!(
        zstd::decode_all(File::open(&packed).unwrap()).unwrap(),
        b"one\ntwo\n"
    );
}

#[test]
fn retention_by_count_keeps_the_newest_and_the_current_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = pattern_in(dir.path(), "app.%Y%m%d.log");
    for day in 10..20 {
        let age = Duration::from_secs((30 - day) * 3600);
        write_aged(
            &dir.path().join(format!("app.202611{day}.log")),
            b"x\n",
            age,
        );
    }
    // The current file is the oldest by time (a clock step back): it still stays.
    let current = dir.path().join("app.20261110.log");
    write(&dir.path().join("notes.txt"), b"not a log");
    write(&dir.path().join("app.20261101.log.bak"), b"not ours either");
    worker(p, retention(Some(3), None, None), &current).prune();
    assert_eq!(
        names(dir.path()),
        [
            "app.20261101.log.bak",
            "app.20261110.log",
            "app.20261118.log",
            "app.20261119.log",
            "notes.txt"
        ]
    );
}

/// Files of the pattern as large as a file may be (sparse, on tmpfs: anyone who may write the
/// directory can make them) add up past `u64::MAX`, the largest limit: those past it are
/// pruned, without overflowing the sum (a panic of the housekeeping thread in a debug build).
#[cfg(target_os = "linux")]
#[test]
fn retention_by_bytes_sums_files_of_the_largest_size() {
    let dir = tempfile::tempdir_in("/dev/shm").expect("a tmpfs at /dev/shm");
    let p = pattern_in(dir.path(), "app.%Y%m%d.log");
    let current = dir.path().join("app.20261121.log");
    write(&current, b"x\n");
    for day in 17..21 {
        let path = dir.path().join(format!("app.202611{day}.log"));
        write_aged(&path, b"", Duration::from_secs((21 - day) * 3600));
        File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(i64::MAX as u64)
            .unwrap();
    }
    worker(p, retention(None, None, Some(u64::MAX)), &current).prune();
    assert_eq!(names(dir.path()), ["app.20261120.log", "app.20261121.log"]);
}

#[test]
fn retention_by_age_and_bytes_counts_compressed_files_too() {
    let dir = tempfile::tempdir().unwrap();
    let p = pattern_in(dir.path(), "app.%Y%m%d.log");
    let current = dir.path().join("app.20261121.log");
    write(&current, &[b'x'; 100]);
    write_aged(
        &dir.path().join("app.20261120.1.log.zst"),
        &[0; 100],
        Duration::from_secs(60),
    );
    write_aged(
        &dir.path().join("app.20261120.log.gz"),
        &[0; 100],
        Duration::from_secs(120),
    );
    write_aged(
        &dir.path().join("app.20261119.log"),
        &[0; 10],
        Duration::from_secs(7200),
    );
    // 250 bytes: the current (100) and the newest compressed (100) fit; the next does not.
    worker(
        pattern_in(dir.path(), "app.%Y%m%d.log"),
        retention(None, None, Some(250)),
        &current,
    )
    .prune();
    assert_eq!(
        names(dir.path()),
        ["app.20261120.1.log.zst", "app.20261121.log"]
    );
    write_aged(
        &dir.path().join("app.20261119.log"),
        &[0; 10],
        Duration::from_secs(7200),
    );
    worker(p, retention(None, Some(3600), None), &current).prune();
    assert_eq!(
        names(dir.path()),
        ["app.20261120.1.log.zst", "app.20261121.log"]
    );
}

#[test]
fn pruning_walks_dated_directories_and_removes_the_empty_ones() {
    let dir = tempfile::tempdir().unwrap();
    let p = pattern_in(dir.path(), "logs/%Y/%m/%d/app.log");
    let old = dir.path().join("logs/2026/10/01/app.log");
    write_aged(&old, b"old\n", Duration::from_secs(90 * 86_400));
    write_aged(
        &dir.path().join("logs/2026/10/02/app.1.log"),
        b"old\n",
        Duration::from_secs(89 * 86_400),
    );
    write(&dir.path().join("logs/2026/10/02/keep.txt"), b"not ours");
    let current = dir.path().join("logs/2026/11/21/app.log");
    write(&current, b"now\n");
    worker(p, retention(None, Some(30 * 86_400), None), &current).prune();
    assert!(
        !dir.path().join("logs/2026/10/01").exists(),
        "emptied day directory removed"
    );
    assert!(dir.path().join("logs/2026/10/02/keep.txt").exists());
    assert!(!dir.path().join("logs/2026/10/02/app.1.log").exists());
    assert!(current.exists());
}

#[cfg(feature = "gzip")]
#[test]
fn startup_compresses_what_an_earlier_run_left_and_clears_stale_temporaries() {
    let dir = tempfile::tempdir().unwrap();
    let p = pattern_in(dir.path(), "app.%Y%m%d.log");
    let current = dir.path().join("app.20261121.log");
    write(&current, b"today\n");
    write_aged(
        &dir.path().join("app.20261120.log"),
        b"yesterday\n",
        Duration::from_secs(86_400),
    );
    write_aged(
        &dir.path().join("app.20261119.log.gz.tmp"),
        b"",
        Duration::from_secs(3600),
    );
    let mut w = worker(p, Retention::default(), &current);
    w.compression = Compression::Gzip;
    let period_start = unix_nanos(SystemTime::now() - Duration::from_secs(600));
    w.recover(&current, period_start);
    assert_eq!(
        names(dir.path()),
        ["app.20261120.log.gz", "app.20261121.log"]
    );
}
