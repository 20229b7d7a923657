//! The cores this process may run on now, for an application whose cores
//! task/drom changes while it runs (SD-Policy's core sharing): it calls
//! [`CoreWatch::changed`] at its safe points and resizes its thread pool.

/// A CPU list as Linux writes it ("0-3,8,10-11"): how many CPUs it names.
/// `None` for text that is not one.
pub fn count_cpu_list(text: &str) -> Option<usize> {
    let mut count = 0;
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        count += match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (a.parse().ok()?, b.parse().ok()?);
                b.checked_sub(a)? + 1
            }
            None => part.parse::<usize>().map(|_| 1).ok()?,
        };
    }
    (count > 0).then_some(count)
}

/// How many CPUs the calling thread may run on (its affinity mask, as
/// `Cpus_allowed_list` in /proc/thread-self/status says it). task/drom sets
/// every thread's mask, so any thread's answer is the process's.
pub fn cores() -> std::io::Result<usize> {
    let status = std::fs::read_to_string("/proc/thread-self/status")?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .and_then(count_cpu_list)
        .ok_or_else(|| std::io::Error::other("no readable Cpus_allowed_list in /proc/thread-self/status"))
}

/// The core count last seen, to tell the application when it changes.
#[derive(Debug)]
pub struct CoreWatch {
    last: usize,
}

impl CoreWatch {
    /// Start watching from the count now.
    pub fn new() -> std::io::Result<CoreWatch> {
        Ok(CoreWatch { last: cores()? })
    }

    pub fn cores(&self) -> usize {
        self.last
    }

    /// The new count, if it changed since the last call (or `new`).
    pub fn changed(&mut self) -> Option<usize> {
        let now = cores().ok()?;
        (now != self.last).then(|| {
            self.last = now;
            now
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_are_counted_and_nonsense_is_not() {
        assert_eq!(count_cpu_list("0-3,8,10-11\n"), Some(7));
        assert_eq!(count_cpu_list("1"), Some(1));
        assert_eq!(count_cpu_list("\t0-1"), Some(2));
        for bad in ["", "3-1", "a", "0-", "1,,x"] {
            assert_eq!(count_cpu_list(bad), None, "{bad:?}");
        }
    }
}
