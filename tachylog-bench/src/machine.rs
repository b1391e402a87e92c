//! What machine the numbers come from: CPU model, core count, kernel, and whether the TSC is
//! invariant (without `constant_tsc`/`nonstop_tsc` rdtsc latencies are not trustworthy); and
//! what this process used of it ([`Usage`], [`peak_rss_kib`]).

use serde::{Deserialize, Serialize};

/// The report header's description of the machine.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Machine {
    /// `model name` from /proc/cpuinfo, or "unknown".
    pub cpu_model: String,
    /// Logical CPUs this process may run on.
    pub logical_cpus: usize,
    /// Physical cores (distinct `physical id`/`core id` pairs), when /proc/cpuinfo says.
    pub physical_cores: Option<usize>,
    /// `x86_64`, `aarch64`, ...
    pub arch: String,
    /// Kernel release from /proc/sys/kernel/osrelease, or the OS name elsewhere.
    pub kernel: String,
    /// The TSC flags the CPU advertises (`constant_tsc`, `nonstop_tsc`), empty if none.
    pub tsc_flags: Vec<String>,
}

impl Machine {
    /// Reads /proc; every field degrades to "unknown"/empty rather than failing.
    pub fn detect() -> Self {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .map(|s| format!("Linux {}", s.trim()))
            .unwrap_or_else(|_| std::env::consts::OS.to_string());
        Machine {
            cpu_model: cpuinfo_field(&cpuinfo, "model name")
                .unwrap_or("unknown")
                .to_string(),
            logical_cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
            physical_cores: physical_cores(&cpuinfo),
            arch: std::env::consts::ARCH.to_string(),
            kernel,
            tsc_flags: cpuinfo_field(&cpuinfo, "flags")
                .unwrap_or("")
                .split_whitespace()
                .filter(|f| matches!(*f, "constant_tsc" | "nonstop_tsc"))
                .map(str::to_string)
                .collect(),
        }
    }

    /// One line for the report header.
    pub fn describe(&self) -> String {
        let cores = match self.physical_cores {
            Some(p) => format!("{} logical CPUs / {p} cores", self.logical_cpus),
            None => format!("{} logical CPUs", self.logical_cpus),
        };
        let tsc = if self.tsc_flags.is_empty() {
            "TSC not invariant".to_string()
        } else {
            self.tsc_flags.join(" ")
        };
        format!(
            "{}, {cores}, {}, {}, {tsc}",
            self.cpu_model, self.arch, self.kernel
        )
    }
}

/// This process's CPU time so far, in seconds.
pub fn process_cpu_s() -> f64 {
    Usage::process().cpu_s
}

/// What `getrusage` says a process or a thread used so far.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Usage {
    /// User + system CPU time, seconds.
    pub cpu_s: f64,
    /// Voluntary context switches: the thread gave the CPU up (sleep, wait, blocking call).
    pub voluntary_switches: u64,
    /// Involuntary context switches: the scheduler took the CPU away.
    pub involuntary_switches: u64,
}

impl Usage {
    /// This process: every thread, those already exited included.
    pub fn process() -> Usage {
        Self::of(libc::RUSAGE_SELF)
    }

    /// The calling thread alone.
    pub fn thread() -> Usage {
        Self::of(libc::RUSAGE_THREAD)
    }

    fn of(who: libc::c_int) -> Usage {
        // SAFETY: `getrusage` only writes the struct we pass, which is zero-initialised plain
        // data; RUSAGE_SELF and RUSAGE_THREAD are always valid targets on Linux.
        let usage = unsafe {
            let mut usage: libc::rusage = std::mem::zeroed();
            libc::getrusage(who, &mut usage);
            usage
        };
        let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
        Usage {
            cpu_s: tv(usage.ru_utime) + tv(usage.ru_stime),
            voluntary_switches: usage.ru_nvcsw.max(0) as u64,
            involuntary_switches: usage.ru_nivcsw.max(0) as u64,
        }
    }

    /// What was used between `earlier` and `self`.
    pub fn since(self, earlier: Usage) -> Usage {
        Usage {
            cpu_s: self.cpu_s - earlier.cpu_s,
            voluntary_switches: self
                .voluntary_switches
                .saturating_sub(earlier.voluntary_switches),
            involuntary_switches: self
                .involuntary_switches
                .saturating_sub(earlier.involuntary_switches),
        }
    }
}

/// This process's peak resident set so far, KiB (`VmHWM` in /proc/self/status), if readable.
pub fn peak_rss_kib() -> Option<u64> {
    vm_hwm_kib(&std::fs::read_to_string("/proc/self/status").ok()?)
}

fn vm_hwm_kib(status: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))?
        .trim()
        .strip_suffix("kB")?
        .trim()
        .parse()
        .ok()
}

/// The 1, 5 and 15 minute load averages from /proc/loadavg, if readable. Another busy
/// process on a 2-core machine skews every figure, so the report shows this.
pub fn load_average() -> Option<[f64; 3]> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    let mut it = text.split_whitespace().map(|v| v.parse::<f64>().ok());
    Some([it.next()??, it.next()??, it.next()??])
}

/// CPU time counters, to tell how much of the machine other processes used during the suite.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuTimes {
    /// All CPUs' time since boot, in clock ticks (/proc/stat `cpu` line, guest time excluded
    /// since it is already in user time).
    pub total: u64,
    /// Of that, not idle and not waiting for I/O (hypervisor steal included).
    pub busy: u64,
    /// User + system time of this process and its waited-for children (/proc/self/stat).
    pub own: u64,
}

impl CpuTimes {
    /// Reads /proc; None where it is not available.
    pub fn read() -> Option<Self> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        let own = std::fs::read_to_string("/proc/self/stat").ok()?;
        Self::parse(&stat, &own)
    }

    fn parse(stat: &str, self_stat: &str) -> Option<Self> {
        let cpu: Vec<u64> = stat
            .lines()
            .next()?
            .strip_prefix("cpu ")?
            .split_whitespace()
            .take(8) // user nice system idle iowait irq softirq steal
            .map(|v| v.parse().ok())
            .collect::<Option<_>>()?;
        let total: u64 = cpu.iter().sum();
        let idle = cpu.get(3)? + cpu.get(4)?;
        // Fields after the command name, which is in parentheses and may contain spaces:
        // index 11..15 are utime, stime, cutime, cstime (fields 14-17 in proc(5)).
        let after_comm = self_stat.rsplit_once(')')?.1;
        let fields: Vec<&str> = after_comm.split_whitespace().collect();
        let own = fields
            .get(11..15)?
            .iter()
            .map(|v| v.parse::<u64>().ok())
            .sum::<Option<u64>>()?;
        Some(CpuTimes {
            total,
            busy: total - idle,
            own,
        })
    }

    /// Share (0..1) of all CPUs' time between `self` and `later` that went to anything but
    /// this process and its children.
    pub fn others_share(self, later: CpuTimes) -> f64 {
        let total = later.total.saturating_sub(self.total);
        let busy = later.busy.saturating_sub(self.busy);
        let own = later.own.saturating_sub(self.own);
        if total == 0 {
            return 0.0;
        }
        busy.saturating_sub(own) as f64 / total as f64
    }
}

/// Value of the first `key : value` line of /proc/cpuinfo.
fn cpuinfo_field<'a>(cpuinfo: &'a str, key: &str) -> Option<&'a str> {
    cpuinfo.lines().find_map(|line| {
        let (k, v) = line.split_once(':')?;
        (k.trim() == key).then(|| v.trim())
    })
}

/// Distinct (physical id, core id) pairs; None when the file lacks them (VMs often do).
fn physical_cores(cpuinfo: &str) -> Option<usize> {
    let mut pairs = std::collections::BTreeSet::new();
    for block in cpuinfo.split("\n\n") {
        let phys = cpuinfo_field(block, "physical id");
        let core = cpuinfo_field(block, "core id");
        if let (Some(p), Some(c)) = (phys, core) {
            pairs.insert((p.to_string(), c.to_string()));
        }
    }
    (!pairs.is_empty()).then_some(pairs.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_cpuinfo_blocks() {
        let info = "processor\t: 0\nmodel name\t: AMD EPYC 7B13\nphysical id\t: 0\ncore id\t: 0\n\
                    flags\t\t: fpu tsc constant_tsc rep_good nonstop_tsc\n\n\
                    processor\t: 1\nmodel name\t: AMD EPYC 7B13\nphysical id\t: 0\ncore id\t: 0\n\n";
        assert_eq!(cpuinfo_field(info, "model name"), Some("AMD EPYC 7B13"));
        assert_eq!(physical_cores(info), Some(1));
        assert_eq!(physical_cores("processor : 0\n"), None);
    }

    #[test]
    fn reads_the_peak_resident_set() {
        let status = "Name:\tbench\nVmPeak:\t  99999 kB\nVmHWM:\t   12345 kB\nVmRSS:\t 1 kB\n";
        assert_eq!(vm_hwm_kib(status), Some(12_345));
        assert_eq!(vm_hwm_kib("VmRSS:\t 1 kB\n"), None);
        assert!(peak_rss_kib().is_some_and(|k| k > 0));
    }

    #[test]
    fn usage_counts_this_threads_sleeps_as_voluntary_switches() {
        let before = Usage::thread();
        std::thread::sleep(std::time::Duration::from_millis(1));
        let used = Usage::thread().since(before);
        assert!(used.voluntary_switches >= 1, "{used:?}");
        assert!(Usage::process().cpu_s >= used.cpu_s);
    }

    #[test]
    fn cpu_times_separate_own_work_from_others() {
        let own = |ticks: u64| {
            format!("42 (my (odd) name) R 1 1 1 0 -1 0 0 0 0 0 {ticks} 0 0 0 20 0 1 0")
        };
        let before = CpuTimes::parse("cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 1\n", &own(10)).unwrap();
        assert_eq!((before.total, before.busy, before.own), (1000, 150, 10));
        // 200 more ticks in all, 100 of them busy, 60 of those ours: others used 40/200.
        let after = CpuTimes::parse("cpu  170 0 80 900 50 0 0 0 0 0\n", &own(70)).unwrap();
        assert!((before.others_share(after) - 0.2).abs() < 1e-9);
    }
}
