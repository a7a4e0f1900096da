//! Counting a process's sockets from `/proc` (Linux), for the tests and benchmarks that
//! check the crawler's bound on connections: the same count in both, so a benchmark's
//! number means what the test's assertion means.

use std::collections::HashSet;

/// The sockets of a process (`proc` is `/proc/self` or `/proc/PID`), from its `fd` folder,
/// and how many of them are TCP connections to `port`: those found in its `net/tcp` tables
/// too, read just after (a socket closed meanwhile has left them, so one that came and went
/// during the reading is not counted twice; nor is one listed twice). `None` when they
/// cannot be read: the process is gone, or has no descriptor left to read them with, or
/// this is not Linux.
pub fn open_sockets(proc: &str, port: u16) -> Option<(usize, usize)> {
    let mut inodes = HashSet::new();
    for e in std::fs::read_dir(format!("{proc}/fd")).ok()? {
        let link = e.ok().and_then(|e| std::fs::read_link(e.path()).ok());
        let link = link
            .map(|l| l.to_string_lossy().into_owned())
            .unwrap_or_default();
        if let Some(inode) = link
            .strip_prefix("socket:[")
            .and_then(|l| l.strip_suffix(']'))
        {
            inodes.insert(inode.to_string());
        }
    }
    // Distinct inodes: the kernel lists the tables in chunks, and a table that changes
    // between two chunks may list a socket twice.
    let mut connections = HashSet::new();
    for table in ["net/tcp", "net/tcp6"] {
        let text = std::fs::read_to_string(format!("{proc}/{table}")).ok()?;
        for line in text.lines().skip(1) {
            let cols: Vec<&str> = line.split_whitespace().collect();
            let remote = cols.get(2).and_then(|a| a.rsplit(':').next());
            let remote = remote.and_then(|p| u16::from_str_radix(p, 16).ok());
            match cols.get(9) {
                Some(i) if remote == Some(port) && inodes.contains(*i) => {
                    connections.insert(i.to_string());
                }
                _ => {}
            }
        }
    }
    Some((inodes.len(), connections.len()))
}
