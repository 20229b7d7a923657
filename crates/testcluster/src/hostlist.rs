//! Slurm's node lists as slurmctld prints them (`n[2-5,7]`, `n1`, and the
//! plugin's own `n2,n3,n4`), expanded into names: what the records and the
//! occupancy chart need, without linking libslurm into a tool.

/// Every node a list names, in order. Accepts `a,b`, `p[1-3,5]`, and
/// a mix (`n1,n[3-4]`). A piece it cannot read is an error naming it.
pub fn expand(list: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for piece in split_top(list.trim()) {
        let piece = piece.trim();
        if piece.is_empty() || piece == "(null)" {
            continue;
        }
        let Some(open) = piece.find('[') else {
            out.push(piece.to_string());
            continue;
        };
        let (prefix, rest) = piece.split_at(open);
        let inner = rest
            .strip_prefix('[')
            .and_then(|r| r.strip_suffix(']'))
            .ok_or_else(|| format!("node list '{list}': '{piece}' has no closing ']'"))?;
        for range in inner.split(',') {
            let (a, b) = range.split_once('-').unwrap_or((range, range));
            let width = a.len();
            let bad = || format!("node list '{list}': '{range}' is not N or N-M");
            let (lo, hi): (u32, u32) = (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?);
            if lo > hi {
                return Err(bad());
            }
            out.extend((lo..=hi).map(|i| format!("{prefix}{i:0width$}")));
        }
    }
    Ok(out)
}

/// Split at commas outside brackets.
fn split_top(s: &str) -> Vec<&str> {
    let (mut depth, mut start, mut parts) = (0i32, 0usize, Vec::new());
    for (i, c) in s.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expands_slurm_and_plugin_lists() {
        assert_eq!(expand("n1").unwrap(), ["n1"]);
        assert_eq!(expand("n[2-4,7]").unwrap(), ["n2", "n3", "n4", "n7"]);
        assert_eq!(expand("n2,n3,n[10-11]").unwrap(), ["n2", "n3", "n10", "n11"]);
        assert_eq!(expand("c[08-10]").unwrap(), ["c08", "c09", "c10"]);
        assert!(expand("(null)").unwrap().is_empty());
        assert!(expand("n[3-1]").unwrap_err().contains("'3-1' is not N or N-M"));
        assert!(expand("n[1-2").unwrap_err().contains("no closing"));
    }
}
