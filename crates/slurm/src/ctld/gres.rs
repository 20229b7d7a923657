//! GPU counts in the GRES texts slurmctld keeps: a node's `Gres=` as
//! slurm.conf gives it ("gpu:2", "gpu:tesla:2(S:0-1)") and a job's TRES
//! requests as 22.05 stores them ("gres:gpu:2", "gres:gpu:tesla:1,gres:nic:1").
//! Pure text, so a strategy placing cores knows a node's GPUs and what a
//! job asks without Slurm's GRES plugin internals.

/// The GPUs a GRES text names: the sum of its `gpu` entries' counts (an
/// entry without a count, "gpu" or "gpu:tesla", is one, as Slurm reads
/// it); 0 when it names none. A count Slurm would scale ("2k") or that
/// does not read is taken as `None`: the caller cannot place such a job.
pub fn gpus_in(text: &str) -> Option<u32> {
    let mut total: u32 = 0;
    for entry in entries(text) {
        // A node's entry may end with its sockets, "(S:0-1)".
        let entry = entry.split('(').next().unwrap_or(entry);
        let mut parts = entry.split([':', '=']);
        if parts.next() != Some("gpu") {
            continue;
        }
        let rest: Vec<&str> = parts.collect();
        let count = match rest.last() {
            None => 1,
            Some(last) if last.chars().all(|c| c.is_ascii_digit()) && !last.is_empty() => last.parse().ok()?,
            // A type name ("tesla") with no count after it.
            Some(last) if last.chars().next().is_some_and(|c| c.is_ascii_alphabetic()) => 1,
            Some(_) => return None,
        };
        total = total.checked_add(count)?;
    }
    Some(total)
}

/// Whether a GRES text names a resource other than GPUs ("gres:r1:1",
/// "nic:2"), which the model does not count per node.
pub fn names_other_than_gpus(text: &str) -> bool {
    entries(text).any(|entry| entry.split([':', '=', '(']).next().is_some_and(|name| name != "gpu"))
}

/// A GRES text's entries, each without its "gres:" (22.05's TRES prefix) or
/// "gres/" (the TRES name).
fn entries(text: &str) -> impl Iterator<Item = &str> {
    text.split(',')
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .map(|entry| entry.strip_prefix("gres:").or_else(|| entry.strip_prefix("gres/")).unwrap_or(entry))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resources_other_than_gpus_are_told_apart() {
        assert!(names_other_than_gpus("gres:r1:1"));
        assert!(names_other_than_gpus("gres:gpu:1,gres:nic:2"));
        assert!(names_other_than_gpus("gres/r1=1"));
        assert!(!names_other_than_gpus("gres:gpu:tesla:2"));
        assert!(!names_other_than_gpus("gres/gpu=4"));
        assert!(!names_other_than_gpus(""));
    }

    #[test]
    fn gpus_of_nodes_and_of_job_requests() {
        // A node's Gres= as slurm.conf writes it.
        assert_eq!(gpus_in("gpu:2"), Some(2));
        assert_eq!(gpus_in("gpu:tesla:2(S:0-1),gpu:k80:1"), Some(3));
        assert_eq!(gpus_in("gpu"), Some(1));
        assert_eq!(gpus_in("nic:1"), Some(0));
        assert_eq!(gpus_in(""), Some(0));
        // A job's tres_per_node as 22.05 keeps `--gres=gpu:2`, `--gres=gpu:tesla`.
        assert_eq!(gpus_in("gres:gpu:2"), Some(2));
        assert_eq!(gpus_in("gres:gpu:tesla,gres:nic:4"), Some(1));
        assert_eq!(gpus_in("gres/gpu=4"), Some(4));
        // "gpus" is not "gpu"; a scaled or broken count is not guessed.
        assert_eq!(gpus_in("gres:gpus:2"), Some(0));
        assert_eq!(gpus_in("gres:gpu:2k"), None);
        assert_eq!(gpus_in("gres:gpu:-1"), None);
    }
}
