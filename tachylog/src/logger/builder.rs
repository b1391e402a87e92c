//! [`Builder`]: what the logger is configured with, and [`Builder::init`], which opens the
//! sinks, starts the back end and installs the process hooks the configuration asks for.

use super::{Guard, SinkOptions};
use crate::backend::backtrace::BacktraceConfig;
use crate::backend::clock::WallClock;
use crate::backend::worker::{new_merger, Worker};
use crate::facade::log::LogFacade;
use crate::format::pattern::{LineFormatter, Pattern};
use crate::format::Format;
use crate::frontend::gate::{OnFull, GATE};
use crate::queue::control::{self, Control};
use crate::sink::{FileSink, Sink, SinkSlot, Stderr, Stdout};
use crate::{Error, Level};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

enum SinkSpec {
    Stdout,
    Stderr,
    File(PathBuf),
    Custom(Box<dyn Sink>),
}

/// Configures and starts the logger. Get one with [`builder`](crate::builder).
///
/// ```
/// let dir = std::env::temp_dir().join("tachylog-doc-builder");
/// let guard = tachylog::builder()
///     .file(dir.join("app.log"))
///     .level(tachylog::Level::Debug)
///     .on_full(tachylog::OnFull::Block)
///     .utc(true)
///     .init()
///     .expect("logger starts");
/// tachylog::debug!("ready after {} ms", 12);
/// drop(guard); // drains, flushes, joins the back end
/// # std::fs::remove_dir_all(dir).unwrap();
/// ```
#[must_use = "a builder does nothing until .init() is called"]
pub struct Builder {
    /// Each sink with its options.
    sinks: Vec<(SinkSpec, SinkOptions)>,
    level: Level,
    /// Colour for the `.stdout()`/`.stderr()` sinks.
    #[cfg(feature = "color")]
    color: crate::sink::ColorChoice,
    /// `RUST_LOG`-syntax directives given in code.
    filter: Option<String>,
    /// The environment variable to read directives from.
    env_filter: Option<String>,
    ring_capacity: usize,
    initial_ring_capacity: usize,
    on_full: OnFull,
    utc: bool,
    escape: bool,
    flush_interval: Duration,
    pattern: Option<String>,
    max_boxed_bytes: usize,
    handle_termination: bool,
    handle_crashes: bool,
    reopen_on_sighup: bool,
    sync_level: Option<Level>,
    max_block: Option<Duration>,
    max_message_bytes: Option<usize>,
    log_facade: LogFacade,
    backtrace: Option<(Level, usize)>,
    backtrace_trigger: Level,
    spool: Option<std::path::PathBuf>,
    recover_from: Option<std::path::PathBuf>,
    spin_backend: bool,
    backend_cpu: Option<usize>,
}

/// Starts configuring the logger.
///
/// ```
/// let guard = tachylog::builder().stdout().init().unwrap();
/// tachylog::info!("hello");
/// # drop(guard);
/// ```
pub fn builder() -> Builder {
    Builder {
        sinks: Vec::new(),
        level: Level::Info,
        filter: None,
        env_filter: None,
        #[cfg(feature = "color")]
        color: crate::sink::ColorChoice::Auto,
        ring_capacity: 1 << 20,
        initial_ring_capacity: crate::queue::chain::INITIAL_CAPACITY,
        on_full: OnFull::Block,
        utc: false,
        escape: true,
        flush_interval: Duration::from_millis(100),
        pattern: None,
        max_boxed_bytes: 64 << 20,
        handle_termination: true,
        handle_crashes: true,
        reopen_on_sighup: false,
        sync_level: None,
        max_block: None,
        max_message_bytes: None,
        log_facade: LogFacade::Required,
        backtrace: None,
        backtrace_trigger: Level::Error,
        spool: None,
        recover_from: None,
        spin_backend: false,
        backend_cpu: None,
    }
}

/// The largest [`Builder::ring_capacity`]: a power of two whatever is asked (`usize::MAX`,
/// rounded up, would overflow), and more than any thread can fill between two drains.
const MAX_RING_CAPACITY: usize = 1 << 30;

impl Builder {
    /// Adds a standard-output sink, with default [`SinkOptions`].
    pub fn stdout(self) -> Self {
        self.stdout_with(SinkOptions::new())
    }

    /// Adds a standard-output sink with its own level or format.
    ///
    /// ```
    /// use tachylog::{Format, SinkOptions};
    /// let guard = tachylog::builder().stdout_with(SinkOptions::new().format(Format::Logfmt)).init().unwrap();
    /// tachylog::info!("hello"); // ts=… level=info … msg=hello
    /// # drop(guard);
    /// ```
    pub fn stdout_with(mut self, options: SinkOptions) -> Self {
        self.sinks.push((SinkSpec::Stdout, options));
        self
    }

    /// Adds a standard-error sink, with default [`SinkOptions`].
    pub fn stderr(self) -> Self {
        self.stderr_with(SinkOptions::new())
    }

    /// Adds a standard-error sink with its own level or format.
    ///
    /// ```
    /// use tachylog::{Level, SinkOptions};
    /// let guard = tachylog::builder()
    ///     .stdout()
    ///     .stderr_with(SinkOptions::new().level(Level::Warn))
    ///     .init()
    ///     .unwrap();
    /// tachylog::warn!("on both");
    /// # drop(guard);
    /// ```
    pub fn stderr_with(mut self, options: SinkOptions) -> Self {
        self.sinks.push((SinkSpec::Stderr, options));
        self
    }

    /// Adds a file sink, with default [`SinkOptions`]: `path` is created with its parent
    /// directories and appended to.
    pub fn file(self, path: impl Into<PathBuf>) -> Self {
        self.file_with(path, SinkOptions::new())
    }

    /// Adds a file sink with its own level or format.
    ///
    /// ```
    /// use tachylog::{Format, Level, SinkOptions};
    /// let dir = std::env::temp_dir().join("tachylog-doc-file-with");
    /// let guard = tachylog::builder()
    ///     .level(Level::Debug)
    ///     .file(dir.join("all.log"))
    ///     .file_with(dir.join("errors.jsonl"), SinkOptions::new().level(Level::Error).format(Format::Json))
    ///     .init()
    ///     .unwrap();
    /// # drop(guard);
    /// # std::fs::remove_dir_all(dir).unwrap();
    /// ```
    pub fn file_with(mut self, path: impl Into<PathBuf>, options: SinkOptions) -> Self {
        self.sinks.push((SinkSpec::File(path.into()), options));
        self
    }

    /// Adds any [`Sink`], with default [`SinkOptions`].
    pub fn sink(self, sink: impl Sink) -> Self {
        self.sink_with(sink, SinkOptions::new())
    }

    /// Adds any [`Sink`] with its own level or format.
    ///
    /// ```
    /// use tachylog::{Level, SinkOptions, Stderr};
    /// let guard = tachylog::builder()
    ///     .stdout()
    ///     .sink_with(Stderr::new(), SinkOptions::new().level(Level::Error))
    ///     .init()
    ///     .unwrap();
    /// # drop(guard);
    /// ```
    pub fn sink_with(mut self, sink: impl Sink, options: SinkOptions) -> Self {
        self.sinks.push((SinkSpec::Custom(Box::new(sink)), options));
        self
    }

    /// Whether `.stdout()` and `.stderr()` colour the level. By default
    /// ([`ColorChoice::Auto`](crate::ColorChoice::Auto)) only on a terminal, respecting
    /// `NO_COLOR` and `CLICOLOR_FORCE`. Feature `color`; without it the console is never
    /// coloured.
    #[cfg(feature = "color")]
    pub fn color(mut self, choice: crate::sink::ColorChoice) -> Self {
        self.color = choice;
        self
    }

    /// The most verbose level logged (default [`Level::Info`]). Calls below it cost one load
    /// and a branch, and their arguments are not evaluated.
    pub fn level(mut self, level: Level) -> Self {
        self.level = level;
        self
    }

    /// Per-target levels in `RUST_LOG` syntax: `info,my_crate::net=debug,hyper=warn` (see
    /// [`Filter`](crate::Filter)). Replaces [`Builder::level`]; a bad directive makes `init`
    /// fail with [`Error::Filter`]. Each call site is resolved once, so a filtered-out call
    /// still costs one load and a branch.
    ///
    /// ```
    /// let guard = tachylog::builder().stdout().filter("warn,my_app::db=debug").init().unwrap();
    /// # drop(guard);
    /// ```
    pub fn filter(mut self, spec: impl Into<String>) -> Self {
        self.filter = Some(spec.into());
        self
    }

    /// Reads the filter from the environment variable `var` (conventionally `RUST_LOG`) when it
    /// is set and not empty; it then takes precedence over [`Builder::filter`] and
    /// [`Builder::level`]. Directives that do not parse, or are not valid UTF-8, are reported
    /// on stderr and skipped, so a typo in the environment never stops the program from
    /// starting.
    ///
    /// ```
    /// let guard = tachylog::builder().stdout().env_filter("RUST_LOG").init().unwrap();
    /// # drop(guard);
    /// ```
    pub fn env_filter(mut self, var: impl Into<String>) -> Self {
        self.env_filter = Some(var.into());
        self
    }

    /// The filter `init` puts in force.
    fn resolve_filter(&self) -> Result<crate::filter::Filter, Error> {
        let from_env = self.env_filter.as_ref().and_then(|var| {
            let value = std::env::var_os(var)?;
            let blank = String::from_utf8_lossy(value.as_encoded_bytes())
                .trim()
                .is_empty();
            (!blank).then_some((var, value))
        });
        if let Some((var, value)) = from_env {
            let (filter, errors) = crate::filter::Filter::parse_env(&value);
            for error in errors {
                eprintln!("tachylog: ${var}: {error}; that directive is skipped");
            }
            return Ok(filter);
        }
        match &self.filter {
            Some(spec) => Ok(spec.parse()?),
            None => Ok(crate::filter::Filter::new(self.level)),
        }
    }

    /// Keeps every thread's ring in a file mapping under `dir`, so that records whose log call
    /// returned survive the process's death, `SIGKILL` and the OOM killer included: the next
    /// `init` with the same directory (or `tachylog recover DIR`, which comes with the
    /// `tachylog-cli` crate) writes them, each once, whole, with its own timestamp, marked
    /// `[recovered]` (`"recovered":true` in JSON), before the new process's first record. Unix
    /// only; off by default.
    ///
    /// Put `dir` on tmpfs (`/dev/shm/<app>` on Linux): stores to it are then in memory the
    /// kernel keeps for the files, with no writeback. What survives is the process's death,
    /// not the machine's: a power loss or a kernel panic loses what the page cache held (see
    /// [`Builder::sync_level`] for records that must reach the disk).
    ///
    /// `dir` must be private to the user the process runs as, like `~/.ssh`: made with mode
    /// `0700` if it does not exist, and refused if it is a symbolic link, belongs to another
    /// user or may be written by its group or by others (a WARN record names the cause;
    /// logging goes on without the spool). Nothing in a spool can make recovery open a path or
    /// choose a format: recovery writes only to this logger's own sinks.
    ///
    /// What changes with a spool:
    /// - each thread's ring is a file of [`ring_capacity`](Builder::ring_capacity) bytes (1 MiB
    ///   by default), made and touched on its first record, that never grows: 64 threads that
    ///   log hold 64 MiB of the tmpfs, which is also the default size of Docker's `/dev/shm`;
    /// - a record larger than a quarter of the ring is also saved in the spool, in a file of
    ///   its own, before its log call returns, and removed once it was written;
    /// - the back end gives ring space back only once the records are in the files, so a
    ///   thread logging at full speed may wait more often;
    /// - each call site's first record writes its definition (format, literal text, argument
    ///   types) to the spool first: once per site and argument list, on the cold path.
    ///
    /// How recovery writes each record once: after every batch, the back end records which
    /// file each file sink writes and how long it is. Recovery looks in this logger's files
    /// (a [`FileSink`](crate::FileSink), each file of a `RollingFile` the records' times fall
    /// in) past those lengths for the lines the dead process wrote after its last record, and
    /// writes only the others, a `RollingFile` each into the file of its own time. A line the
    /// death tore at a file's end is cut off, under the file's exclusive `flock`, which every
    /// tachylog writer of the file shares while it appends, so a sibling process writing the
    /// same file loses nothing. Sinks that are no file (console, syslog, OTLP, the
    /// application's own) get every recovered record: at least once. A value of the
    /// application's own `CopyArg` type shows as its type name and raw bytes in a recovered
    /// record (only the program that defined it can format it); the line the dead process
    /// wrote with it is still recognised.
    ///
    /// Recovery takes only the directories of dead processes (an `fcntl` lock tells them
    /// apart), so several processes may share `dir`; it runs on the back end's thread before
    /// the first record of this process is written. Problems with the spool (a directory that
    /// cannot be made, a full tmpfs, a damaged file) are WARN records; logging goes on, without
    /// the spool for what they concern. [`Guard::recovery`](crate::Guard::recovery) says what
    /// recovery did.
    ///
    /// ```
    /// # let dir = std::env::temp_dir().join("tachylog-doc-spool");
    /// # let _ = std::fs::remove_dir_all(&dir);
    /// let guard = tachylog::builder()
    ///     .file(dir.join("app.log"))
    ///     .spool(dir.join("spool")) // in production: "/dev/shm/my-app"
    ///     .init()
    ///     .unwrap();
    /// tachylog::info!("survives kill -9");
    /// # drop(guard);
    /// # std::fs::remove_dir_all(dir).unwrap();
    /// ```
    pub fn spool(mut self, dir: impl Into<std::path::PathBuf>) -> Self {
        let dir = dir.into();
        self.recover_from = Some(dir.clone());
        self.spool = Some(dir);
        self
    }

    /// Writes what processes that died left in the spool `dir` (see [`Builder::spool`]) into
    /// this logger's sinks, without keeping a spool for this process: what `tachylog recover`
    /// does, for a program that recovers another's records.
    ///
    /// ```
    /// # let dir = std::env::temp_dir().join("tachylog-doc-recover-from");
    /// # let _ = std::fs::remove_dir_all(&dir);
    /// let guard = tachylog::builder()
    ///     .file(dir.join("app.log"))
    ///     .recover_from(dir.join("spool"))
    ///     .init()
    ///     .unwrap();
    /// assert_eq!(guard.recovery().unwrap().records, 0);
    /// # drop(guard);
    /// # let _ = std::fs::remove_dir_all(dir);
    /// ```
    pub fn recover_from(mut self, dir: impl Into<std::path::PathBuf>) -> Self {
        self.recover_from = Some(dir.into());
        self
    }

    /// The most ring memory one thread may hold (default 1 MiB; rounded up to a power of two,
    /// at least 4 KiB, at most 1 GiB). Applies to threads that log their first record after
    /// `init`.
    ///
    /// A thread's ring starts at [`initial_ring_capacity`](Builder::initial_ring_capacity)
    /// (8 KiB) on its first record, its pages touched then so that later calls take no page
    /// fault. It is replaced by one twice as large (or more, for a large record) when it fills,
    /// or when it passes a quarter full again within one flush interval of the back end's last
    /// drain; never beyond this size. While the back end drains the old ring, both are held, so
    /// a thread holds at most twice this much, and only while it logs that fast. A thread's rings
    /// are freed once it has exited and its records are written. So 1,000 threads that log a
    /// little hold about 8 MiB, and one thread that logs at full speed gets the whole 1 MiB.
    /// When the largest ring is full the caller waits or drops, as [`OnFull`] says.
    ///
    /// A ring of 2 MiB or more is aligned to 2 MiB and, on Linux, asks for transparent huge
    /// pages (`madvise`): one address translation then covers the whole ring, where a 1 MiB ring
    /// of 4 KiB pages costs a page-table walk in each new page, and on a VM such walks are
    /// behind a good part of the slowest calls. Programs that watch their tail latency set
    /// `ring_capacity(2 << 20)` or more, at 1 MiB more for each thread that logs fast
    /// (BENCHMARKS.md, "The caller's tail: where it came from").
    ///
    /// ```
    /// // Up to 4 MiB for a thread that logs bursts of large records.
    /// let builder = tachylog::builder().ring_capacity(4 << 20);
    /// # drop(builder);
    /// ```
    pub fn ring_capacity(mut self, bytes: usize) -> Self {
        self.ring_capacity = bytes.clamp(4096, MAX_RING_CAPACITY);
        self
    }

    /// The size of a thread's first ring (default 8 KiB; at most
    /// [`ring_capacity`](Builder::ring_capacity)). Growing a ring allocates (on a cold path, a
    /// few times in a thread's life): a program that must never allocate in a log call after a
    /// thread's first record sets this to `ring_capacity`, and each logging thread then holds
    /// that much from its first record on.
    ///
    /// ```
    /// // Every logging thread gets its 1 MiB ring on its first record and never grows it.
    /// let builder = tachylog::builder().ring_capacity(1 << 20).initial_ring_capacity(1 << 20);
    /// # drop(builder);
    /// ```
    pub fn initial_ring_capacity(mut self, bytes: usize) -> Self {
        self.initial_ring_capacity = bytes.max(64);
        self
    }

    /// Keeps the back end spinning when it has nothing to do (with the CPU's pause hint)
    /// instead of sleeping: a record is picked up within a microsecond or so of its call, and
    /// no log call ever has to wake the back end. For programs that give the logger a core of
    /// its own (see [`Builder::pin_backend`]); the back end then takes that core whole, idle
    /// or not. Off by default: the back end sleeps when idle and costs a server a few
    /// milliseconds of CPU a second.
    ///
    /// A spinning back end keeps each busy thread's next, twice larger ring allocated ahead
    /// of need (for every thread that has logged half its ring's size and may still grow), so
    /// that a ring filled while the back end lost its CPU is replaced without an allocation on
    /// the caller's thread: up to three times a thread's ring memory while it grows.
    ///
    /// ```
    /// let builder = tachylog::builder().spin_backend(true).pin_backend(1);
    /// # drop(builder);
    /// ```
    pub fn spin_backend(mut self, spin: bool) -> Self {
        self.spin_backend = spin;
        self
    }

    /// Runs the back end's thread on CPU `cpu` alone (Linux; elsewhere, and when the CPU
    /// cannot be had, a WARN record says so and the thread runs where the system puts it).
    ///
    /// ```
    /// let guard = tachylog::builder().stdout().pin_backend(0).init().unwrap();
    /// tachylog::info!("formatted and written on CPU 0");
    /// drop(guard);
    /// ```
    pub fn pin_backend(mut self, cpu: usize) -> Self {
        self.backend_cpu = Some(cpu);
        self
    }

    /// What a thread does when its ring is full (default [`OnFull::Block`], lossless).
    pub fn on_full(mut self, policy: OnFull) -> Self {
        self.on_full = policy;
        self
    }

    /// Timestamps in UTC instead of the local time zone.
    pub fn utc(mut self, utc: bool) -> Self {
        self.utc = utc;
        self
    }

    /// Whether control characters in messages are escaped so that a record is always one line
    /// (default `true`).
    pub fn escape_control_chars(mut self, escape: bool) -> Self {
        self.escape = escape;
        self
    }

    /// How long a record may take to reach its sinks (default 100 ms; at least 1 ms).
    ///
    /// The back end does not poll: between drains it sleeps for this long (or until a sink's
    /// timer, a `flush()`, or a thread's ring passing a quarter full), then formats everything
    /// that arrived and writes it with one `write(2)` per sink. So a record is in the file
    /// within about one interval, and at moderate rates the back end wakes once per interval:
    /// shorter intervals cost more wake-ups, longer ones make bigger batches. While the queues
    /// stay busy, written lines are flushed at least this often too. [`flush`](crate::flush)
    /// and [`sync_level`](Builder::sync_level) do not wait for it.
    ///
    /// ```
    /// // For a `tail -f` that shows lines within 10 ms: 100 wake-ups a second when idle.
    /// let builder = tachylog::builder().flush_interval(std::time::Duration::from_millis(10));
    /// # drop(builder);
    /// ```
    pub fn flush_interval(mut self, interval: Duration) -> Self {
        self.flush_interval = interval.max(Duration::from_millis(1));
        self
    }

    /// The line layout; see [`Pattern`](crate::Pattern) for the placeholders.
    pub fn pattern(mut self, pattern: impl Into<String>) -> Self {
        self.pattern = Some(pattern.into());
        self
    }

    /// Heap bytes that records too big for a ring may hold per thread before that thread waits
    /// (default 64 MiB; a single record of any size always gets through).
    pub fn max_oversize_bytes(mut self, bytes: usize) -> Self {
        self.max_boxed_bytes = bytes;
        self
    }

    /// Whether `init` installs handlers for SIGTERM and SIGINT (default `true`, Linux; on
    /// Windows for Ctrl-C and the console closing, see below), so that a process ended by them
    /// loses no record. What happens on such a signal is decided when it
    /// arrives; the application owns the process:
    /// - **The application handles it** with a handler installed *after* `init` that chains to
    ///   the one it replaced (`tokio::signal`, `signal-hook`): tachylog writes and flushes what
    ///   is queued (waiting at most 5 s) and does nothing else. The process lives on, runs its
    ///   graceful shutdown and may keep logging.
    /// - **The application handles it** with a handler installed *before* `init`: tachylog
    ///   drains, then puts that handler back and raises the signal again, so it runs once.
    /// - **A handler installed after `init` that does not chain** (`ctrlc`): tachylog's never
    ///   runs. Records reach the sinks when the guard is dropped or the process calls `exit`.
    /// - **Nobody handles it:** the `tachylog-signals` thread drains everything published
    ///   before the signal, the back end stops writing (so no line is torn), and the process
    ///   dies of the signal (exit status = the signal).
    ///
    /// A signal ignored (`SIG_IGN`) at `init` stays ignored. Installed once per process;
    /// `false` installs nothing.
    ///
    /// On Windows it installs a console control handler (`SetConsoleCtrlHandler`) for Ctrl-C,
    /// Ctrl-Break, closing the console window, logoff and shutdown: it writes and flushes what
    /// is queued (waiting at most 4 s, under the 5 s Windows allows after a close), then returns
    /// `FALSE`, so the next handler runs: one the application installed before `init`, or
    /// else the system's, which ends the process. A handler installed after `init` runs first,
    /// and tachylog's only if it returns `FALSE` too. tachylog never ends the process itself.
    ///
    /// ```
    /// let guard = tachylog::builder().stdout().handle_termination(false).init().unwrap();
    /// # drop(guard);
    /// ```
    pub fn handle_termination(mut self, on: bool) -> Self {
        self.handle_termination = on;
        self
    }

    /// Whether `init` installs handlers for SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGABRT
    /// (default `true`, Linux): the crashing thread waits at most 1.5 s for the back end to
    /// write what the rings already hold, using only async-signal-safe calls, then the signal
    /// takes its default course (status and core dump are the signal's). Best effort; see
    /// `RELIABILITY.md` for what is and is not covered.
    ///
    /// ```
    /// let guard = tachylog::builder().stdout().handle_crashes(false).init().unwrap();
    /// # drop(guard);
    /// ```
    pub fn handle_crashes(mut self, on: bool) -> Self {
        self.handle_crashes = on;
        self
    }

    /// Whether SIGHUP reopens every sink's destination, as [`reopen`](crate::reopen) does (default `false`).
    /// The handler only writes a byte to a pipe; the `tachylog-signals` thread asks the back
    /// end to reopen. A SIGHUP handler the application installed before `init` is still
    /// called.
    ///
    /// ```
    /// let dir = std::env::temp_dir().join("tachylog-doc-sighup");
    /// let guard = tachylog::builder().file(dir.join("app.log")).reopen_on_sighup(true).init().unwrap();
    /// // `mv app.log app.log.1; kill -HUP <pid>` now starts a fresh app.log.
    /// # drop(guard);
    /// # std::fs::remove_dir_all(dir).unwrap();
    /// ```
    pub fn reopen_on_sighup(mut self, on: bool) -> Self {
        self.reopen_on_sighup = on;
        self
    }

    /// Makes records at `level` or more severe synchronous to the kernel: the log call returns
    /// only after the back end has written the record, and everything logged before it, to
    /// every sink and flushed them (as [`flush`](crate::flush) does). Such records survive even SIGKILL
    /// of the process a moment later (not a power loss: nothing calls `fsync`). Cost: a round
    /// trip to the back end per such record, tens of microseconds instead of nanoseconds; other
    /// levels pay one relaxed load and a compare. Default: no level is synchronous.
    ///
    /// ```
    /// let guard = tachylog::builder().stdout().sync_level(tachylog::Level::Error).init().unwrap();
    /// tachylog::error!("on its way to the kernel when this returns");
    /// # drop(guard);
    /// ```
    pub fn sync_level(mut self, level: Level) -> Self {
        self.sync_level = Some(level);
        self
    }

    /// Under [`OnFull::Block`], the longest one log call waits for room in a full ring; after
    /// that its record is dropped, counted and reported like under [`OnFull::Drop`]. Default:
    /// no limit (lossless; a sink stuck forever then blocks callers forever). With a limit, a
    /// stuck destination costs each call at most `limit`, and records only while it is stuck.
    ///
    /// ```
    /// let guard = tachylog::builder()
    ///     .stdout()
    ///     .max_block(std::time::Duration::from_millis(100))
    ///     .init()
    ///     .unwrap();
    /// # drop(guard);
    /// ```
    pub fn max_block(mut self, limit: Duration) -> Self {
        self.max_block = Some(limit.max(Duration::from_nanos(1)));
        self
    }

    /// Cuts each message longer than `bytes` (as written, after escaping) and says so at the
    /// cut: `…[truncated 123456 bytes]`; the rest of the line (such as the location) is kept.
    /// Default: no limit, every message arrives whole. The cut is made by the back end, so it
    /// bounds the size of lines, not the memory a huge record takes on its way (about twice
    /// its size, see `RELIABILITY.md`).
    ///
    /// ```
    /// let guard = tachylog::builder().stdout().max_message_bytes(64 * 1024).init().unwrap();
    /// # drop(guard);
    /// ```
    pub fn max_message_bytes(mut self, bytes: usize) -> Self {
        self.max_message_bytes = Some(bytes);
        self
    }

    /// Whether `init` makes tachylog the `log` crate's global logger (default
    /// [`LogFacade::Required`]: it does, and fails with [`Error::LogSlotTaken`] if another
    /// logger holds the slot). See [`LogFacade`] for when to leave it, as with a `tracing`
    /// subscriber started by tracing-subscriber's `.init()`.
    ///
    /// ```
    /// let guard = tachylog::builder().stdout().log_facade(tachylog::LogFacade::Off).init()?;
    /// # drop(guard);
    /// # Ok::<(), tachylog::Error>(())
    /// ```
    pub fn log_facade(mut self, choice: LogFacade) -> Self {
        self.log_facade = choice;
        self
    }

    /// Keeps records at `level` or more verbose instead of writing them: the back end holds the
    /// last `capacity` of them, across all threads, and writes them, marked `[backtrace]`
    /// (`"backtrace":true` in JSON, `backtrace=true` in logfmt), in their original order and
    /// with their original timestamps, just before a record at the trigger level
    /// ([`Builder::backtrace_trigger`], `Error` by default), or when [`crate::dump_backtrace`]
    /// is called. Debug detail reaches the disk only when something went wrong.
    ///
    /// The filter's default level is widened to `level` so that those records reach the back
    /// end; per-target directives stay as written. The calling thread's cost does not change:
    /// kept records take the normal path through the ring. Memory: `capacity` records, each
    /// held as its encoded arguments (as in the ring) and its thread's name, in buffers reused
    /// as the ring turns. Kept records are not written at exit.
    ///
    /// ```
    /// let dir = std::env::temp_dir().join("tachylog-doc-backtrace");
    /// # let _ = std::fs::remove_dir_all(&dir);
    /// let guard = tachylog::builder()
    ///     .file(dir.join("app.log"))
    ///     .backtrace(tachylog::Level::Debug, 512)
    ///     .init()
    ///     .unwrap();
    /// tachylog::debug!("cache miss for {}", "user:42");   // kept, not written
    /// tachylog::info!("request served");                  // written
    /// tachylog::error!("payment failed");                 // writes the kept record first
    /// drop(guard);
    /// let text = std::fs::read_to_string(dir.join("app.log")).unwrap();
    /// let lines: Vec<&str> = text.lines().collect();
    /// assert!(lines[0].contains("request served"));
    /// assert!(lines[1].contains("[backtrace] cache miss for user:42"));
    /// assert!(lines[2].contains("payment failed"));
    /// # std::fs::remove_dir_all(dir).unwrap();
    /// ```
    pub fn backtrace(mut self, level: Level, capacity: usize) -> Self {
        self.backtrace = Some((level, capacity));
        self
    }

    /// The level at which the backtrace ring is written (default `Error`): a record at this
    /// level or more severe writes the kept records first. See [`Builder::backtrace`].
    pub fn backtrace_trigger(mut self, level: Level) -> Self {
        self.backtrace_trigger = level;
        self
    }

    /// Opens the sinks, starts the back end and, unless told otherwise
    /// ([`Builder::log_facade`]), makes tachylog the `log` crate's logger.
    ///
    /// With no sink configured, records go to standard output. Fails, starting nothing, on a
    /// bad pattern or filter, a file that cannot be opened, a logger already running, or a
    /// `log` slot held by another logger while [`LogFacade::Required`] is asked for.
    pub fn init(self) -> Result<Guard, Error> {
        let mut running = Control::lock_running();
        if running.is_some() {
            return Err(Error::AlreadyInitialized);
        }
        let pattern = match &self.pattern {
            Some(p) => Pattern::parse(p)?,
            None => Pattern::default(),
        };
        crate::filter::set_backtrace_floor(self.backtrace.map(|(level, _)| level));
        let filter = crate::filter::widened(self.resolve_filter()?);
        let most_verbose = filter.max_level().unwrap_or(Level::Error);
        let zone = if self.utc {
            crate::zone::TimeZone::utc()
        } else {
            crate::zone::TimeZone::system()?
        };
        let mut notices: Vec<(Level, String)> = Vec::new();
        #[cfg(all(unix, not(loom)))]
        crate::backend::recovery::forget();
        #[cfg(not(all(unix, not(loom))))]
        if let Some(dir) = self.spool.as_ref().or(self.recover_from.as_ref()) {
            notices.push((
                Level::Warn,
                format!(
                    "spool {}: not supported on this platform (Unix only); records are not \
                     protected against the process's death",
                    dir.display()
                ),
            ));
        }
        let mut specs = self.sinks;
        if specs.is_empty() {
            specs.push((SinkSpec::Stdout, SinkOptions::new()));
        }
        let mut sinks = Vec::with_capacity(specs.len());
        for (
            spec,
            SinkOptions {
                level,
                format,
                shape,
            },
        ) in specs
        {
            #[cfg(feature = "color")]
            let console_fd = match spec {
                SinkSpec::Stdout => Some(1),
                SinkSpec::Stderr => Some(2),
                _ => None,
            };
            let is_file = matches!(spec, SinkSpec::File(_));
            let sink: Box<dyn Sink> = match spec {
                SinkSpec::Stdout => Box::new(Stdout::new()),
                SinkSpec::Stderr => Box::new(Stderr::new()),
                SinkSpec::File(path) => Box::new(FileSink::open(path)?),
                SinkSpec::Custom(sink) => sink,
            };
            // A request scope's held records were logged because the scope asked for them:
            // a sink takes them down to its own level, or all of them if it has none.
            let release_level = level.unwrap_or(Level::Trace);
            let level = level.map_or(most_verbose, |l| l.min(most_verbose));
            let mut slot = match format {
                Format::Binary if is_file => {
                    SinkSlot::new_binary(sink, level, self.max_message_bytes.unwrap_or(usize::MAX))
                }
                Format::Binary => {
                    return Err(Error::BinaryNeedsFile {
                        sink: sink.describe(),
                    })
                }
                _ => SinkSlot::new(sink, level, format),
            };
            slot.set_release_level(release_level);
            if let Some(shape) = shape {
                slot.set_shape(&shape);
            }
            #[cfg(feature = "color")]
            if let Some(fd) = console_fd {
                // Asked only when it decides: on Windows the answer may switch the console's
                // ANSI mode on, which `ColorChoice::Never` must not do.
                let terminal =
                    self.color == crate::sink::ColorChoice::Auto && crate::sink::is_terminal(fd);
                // Lossy: `NO_COLOR` set to bytes that are not UTF-8 is still set.
                slot.set_colored(crate::sink::use_color(self.color, terminal, |var| {
                    std::env::var_os(var).map(|value| value.to_string_lossy().into_owned())
                }));
            }
            sinks.push(slot);
        }
        let mut formatter = LineFormatter::new(pattern, zone, self.escape);
        if let Some(bytes) = self.max_message_bytes {
            formatter.limit_message(bytes);
        }
        // The `log` slot, last of what can fail and before anything starts: taking it cannot be
        // undone, and records routed to it before the back end runs are filtered out quietly.
        let holds_log_slot = self.log_facade != LogFacade::Off && crate::facade::log::install();
        if self.log_facade == LogFacade::Required && !holds_log_slot {
            return Err(Error::LogSlotTaken);
        }
        let clock = WallClock::calibrate();
        GATE.ticks_per_micro
            .store(clock.ticks_per_micro(), Ordering::Relaxed);
        // Two flush intervals: a thread that logs about a quarter of its ring per interval
        // crosses the mark once an interval, a little more or less than one apart; with one
        // interval's window it would wake the back end every time, and never grow.
        let flush_micros = u64::try_from(self.flush_interval.as_micros()).unwrap_or(u64::MAX);
        GATE.grow_window_ticks.store(
            flush_micros
                .saturating_mul(2)
                .saturating_mul(clock.ticks_per_micro()),
            Ordering::Relaxed,
        );
        let control = Arc::new(Control::new());
        Control::publish_for_signals(&control);
        #[cfg(all(unix, not(loom)))]
        let mut spool = match &self.spool {
            Some(dir) => open_spool(dir, self.ring_capacity, &mut notices),
            None => None,
        };
        // Before any record can be published: recovery dates records with the clock, also
        // those of a process killed before its back-end thread ran.
        #[cfg(all(unix, not(loom)))]
        if let Some(cuts) = &mut spool {
            cuts.publish_clock(&clock);
        }
        let worker = Worker {
            control: control.clone(),
            merger: new_merger(&clock),
            formatter,
            sinks,
            clock,
            flush_interval: self.flush_interval,
            spin: self.spin_backend,
            cpu: self.backend_cpu,
            backtrace: self.backtrace.map(|(kept, capacity)| BacktraceConfig {
                kept,
                capacity,
                trigger: self.backtrace_trigger,
            }),
            #[cfg(all(unix, not(loom)))]
            spool,
            #[cfg(all(unix, not(loom)))]
            recover_from: self.recover_from.clone(),
        };
        GATE.ring_capacity
            .store(self.ring_capacity, Ordering::Relaxed);
        GATE.initial_ring_capacity
            .store(self.initial_ring_capacity, Ordering::Relaxed);
        GATE.on_full
            .store((self.on_full == OnFull::Drop) as u8, Ordering::Relaxed);
        GATE.max_boxed_bytes
            .store(self.max_boxed_bytes, Ordering::Relaxed);
        let closing = control.clone();
        let handle = std::thread::Builder::new()
            .name("tachylog".into())
            .spawn(move || {
                let outcome =
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| worker.run()));
                // Whether it returned or panicked, no flush will be served any more.
                closing.flush.close();
                if outcome.is_err() {
                    // Callers must not wait for a back end that is gone.
                    control::BACKEND_RUNNING.store(false, Ordering::Release);
                    eprintln!("tachylog: the back-end thread panicked; logging is disabled");
                }
            })
            .map_err(Error::SpawnWorker)?;
        control::BACKEND_RUNNING.store(true, Ordering::Release);
        *running = Some(control.clone());
        drop(running);

        crate::lifecycle::install_hooks();
        #[cfg(any(target_os = "linux", target_os = "android"))]
        {
            crate::lifecycle::signals::install(self.handle_termination, self.reopen_on_sighup);
            if self.handle_crashes {
                crate::lifecycle::crash::install();
            }
        }
        #[cfg(windows)]
        if self.handle_termination {
            crate::lifecycle::console_ctrl::install();
        }
        GATE.sync_level
            .store(self.sync_level.map_or(0, |l| l as u8), Ordering::Relaxed);
        let max_block = self
            .max_block
            .map_or(0, |d| d.as_nanos().min(u64::MAX as u128) as u64);
        GATE.max_block_nanos.store(max_block, Ordering::Relaxed);
        super::apply_filter(Some(filter));
        for (level, message) in notices {
            crate::frontend::producer::log_dynamic(
                level,
                "tachylog",
                file!(),
                line!(),
                &message,
                &[],
                None,
            );
        }
        if self.log_facade == LogFacade::BestEffort && !holds_log_slot {
            crate::frontend::producer::log_dynamic(
                Level::Warn,
                "tachylog",
                file!(),
                line!(),
                "another logger already holds the `log` crate's global logger: log::info! records go to it, not to tachylog (see Builder::log_facade)",
                &[],
                None,
            );
        }
        Ok(Guard::new(control, handle))
    }
}

/// Opens this process's spool under `dir` and installs it; `None`, with a WARN notice, when it
/// cannot be made (logging then goes on without it).
#[cfg(all(unix, not(loom)))]
fn open_spool(
    dir: &std::path::Path,
    ring_capacity: usize,
    notices: &mut Vec<(Level, String)>,
) -> Option<crate::backend::spool_cut::SpoolCut> {
    let capacity = ring_capacity.max(4096).next_power_of_two();
    match crate::queue::spool::Spool::create(dir, capacity) {
        Ok(spool) => {
            crate::queue::spool::install(spool);
            let spool = crate::queue::spool::active()?;
            crate::frontend::spool::define_armed(&spool);
            Some(crate::backend::spool_cut::SpoolCut::new(spool))
        }
        Err(e) => {
            notices.push((
                Level::Warn,
                format!(
                    "spool {}: cannot be used: {e}; logging goes on without it (records are \
                     not protected against SIGKILL)",
                    dir.display()
                ),
            ));
            None
        }
    }
}
