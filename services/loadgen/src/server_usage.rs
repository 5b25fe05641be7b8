//! What the server process uses while measured, read from `/proc` (Linux): its CPU time,
//! by thread too, and its resident memory.

/// A process's CPU time so far, user and system, in seconds (`/proc/PID/stat`, Linux; at
/// the kernel's 100 ticks a second, so a window of seconds measures it within 1%).
pub(crate) fn cpu_seconds(pid: u32) -> Option<f64> {
    cpu_seconds_of(std::path::Path::new(&format!("/proc/{pid}/stat")))
}

/// The user and system CPU seconds in a `/proc` `stat` file (a process's or a thread's).
fn cpu_seconds_of(path: &std::path::Path) -> Option<f64> {
    let stat = std::fs::read_to_string(path).ok()?;
    // Fields after the command name (which may hold spaces), from the third on.
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i)?.parse::<u64>().ok();
    // utime and stime are fields 14 and 15 of the whole line: 11 and 12 after the name.
    Some((ticks(11)? + ticks(12)?) as f64 / 100.0)
}

/// Each live thread's (id, name) and CPU seconds so far (`/proc/PID/task`, Linux).
pub(crate) fn thread_cpu_seconds(pid: u32) -> Option<std::collections::HashMap<(u32, String), f64>> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    let mut threads = std::collections::HashMap::new();
    for task in tasks.flatten() {
        let Some(tid) = task.file_name().to_str().and_then(|t| t.parse::<u32>().ok()) else {
            continue;
        };
        // (A thread may end between the listing and these reads: then it is skipped.)
        let Ok(name) = std::fs::read_to_string(task.path().join("comm")) else {
            continue;
        };
        if let Some(s) = cpu_seconds_of(&task.path().join("stat")) {
            threads.insert((tid, name.trim().to_string()), s);
        }
    }
    Some(threads)
}

/// CPU seconds between two readings of [`thread_cpu_seconds`], summed by thread name; a
/// thread started in between counts from zero.
pub(crate) fn by_name(
    before: &std::collections::HashMap<(u32, String), f64>,
    after: &std::collections::HashMap<(u32, String), f64>,
) -> std::collections::BTreeMap<String, f64> {
    let mut sums = std::collections::BTreeMap::new();
    for (key, s) in after {
        *sums.entry(key.1.clone()).or_default() += s - before.get(key).copied().unwrap_or(0.0);
    }
    sums
}

/// A process's resident memory (`VmRSS` in `/proc/PID/status`, Linux), in bytes.
pub(crate) fn resident_bytes(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kb * 1024)
}
