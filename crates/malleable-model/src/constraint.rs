//! Node constraints of malleable jobs (Chadha et al. 2020, section IV-B, `--node-constraints`)
//! and the arithmetic of section V-A: which node counts are valid, where a shrink
//! goes to free what a waiting job needs, and where an expand goes given idle nodes.

/// The `--node-constraints` values of Chadha et al. 2020's Listing 2.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub enum NodeConstraint {
    /// Any node count.
    #[default]
    None,
    /// 1, 2, 4, 8, ...
    PowerOfTwo,
    /// 2, 4, 6, ...
    Even,
    /// 1, 3, 5, ...
    Odd,
    /// Perfect cubes 1, 8, 27, 64, ... (3-D domain decompositions).
    NCube,
}

impl NodeConstraint {
    pub const ALL: &'static [NodeConstraint] = &[
        NodeConstraint::PowerOfTwo,
        NodeConstraint::Even,
        NodeConstraint::Odd,
        NodeConstraint::NCube,
        NodeConstraint::None,
    ];

    /// The spelling of `--node-constraints`.
    pub fn name(self) -> &'static str {
        match self {
            NodeConstraint::None => "none",
            NodeConstraint::PowerOfTwo => "pof2",
            NodeConstraint::Even => "even",
            NodeConstraint::Odd => "odd",
            NodeConstraint::NCube => "ncube",
        }
    }

    /// Parse a `--node-constraints` value (case-insensitive; Chadha et al. 2020's Table I
    /// writes `poF2`). The error names the allowed values.
    pub fn parse(value: &str) -> Result<Self, String> {
        let v = value.trim();
        Self::ALL.iter().copied().find(|c| c.name().eq_ignore_ascii_case(v)).ok_or_else(|| {
            let names: Vec<&str> = Self::ALL.iter().map(|c| c.name()).collect();
            format!("unknown node constraint '{}', allowed: {}", value, names.join("|"))
        })
    }

    /// Whether `n` nodes satisfy the constraint (0 never does: a job runs somewhere).
    pub fn is_valid(self, n: u32) -> bool {
        if n == 0 {
            return false;
        }
        match self {
            NodeConstraint::None => true,
            NodeConstraint::PowerOfTwo => n.is_power_of_two(),
            NodeConstraint::Even => n.is_multiple_of(2),
            NodeConstraint::Odd => n % 2 == 1,
            NodeConstraint::NCube => {
                let r = (f64::from(n)).cbrt().round() as u32;
                (r.saturating_sub(1)..=r + 1).any(|k| k.checked_pow(3) == Some(n))
            }
        }
    }
}

impl std::fmt::Display for NodeConstraint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What makes a job malleable: `--min-nodes-invasive`, `--max-nodes-invasive`
/// and `--node-constraints`. Its start size is the job's `--nodes`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct MalleableSpec {
    pub min: u32,
    pub max: u32,
    pub constraint: NodeConstraint,
}

impl MalleableSpec {
    /// A node count the job may run on: within [min, max] and on-constraint.
    pub fn allows(&self, n: u32) -> bool {
        n >= self.min && n <= self.max && self.constraint.is_valid(n)
    }

    /// The valid counts in `lo..=hi`, ascending. Walking them is cheap: node
    /// counts are bounded by the cluster size.
    fn valid_in(&self, lo: u32, hi: u32) -> impl DoubleEndedIterator<Item = u32> + '_ {
        let lo = lo.max(self.min).max(1);
        let hi = hi.min(self.max);
        (lo..=hi).filter(move |&n| self.constraint.is_valid(n))
    }

    /// The lowest and highest valid count in [min, max]: Chadha et al. 2020 set a
    /// malleable ESP job's min and max this way from its constraint.
    pub fn lowest_valid(&self) -> Option<u32> {
        self.valid_in(self.min, self.max).next()
    }
    pub fn highest_valid(&self) -> Option<u32> {
        self.valid_in(self.min, self.max).next_back()
    }

    /// Where to shrink a job on `current` nodes when `needed` more nodes are
    /// wanted: the next lower valid count that frees at least `needed` (8 nodes,
    /// `even`, 6 needed -> 2); if none frees that much, the lowest valid count
    /// (free what can be freed, another job may give the rest). `None` if no
    /// valid count lies below `current` or nothing is needed.
    pub fn shrink_target(&self, current: u32, needed: u32) -> Option<u32> {
        if needed == 0 || current <= 1 {
            return None;
        }
        let below = current - 1;
        let enough = current.checked_sub(needed);
        enough.and_then(|hi| self.valid_in(1, hi.min(below)).next_back()).or_else(|| self.valid_in(1, below).next())
    }

    /// The lowest valid count above `current` and not above `current + idle`:
    /// one step of a round-robin expansion. `None` if there is none.
    pub fn next_valid_above(&self, current: u32, idle: u32) -> Option<u32> {
        self.valid_in(current.saturating_add(1), current.saturating_add(idle)).next()
    }

    /// Where to expand a job on `current` nodes with `idle` nodes free: the
    /// highest valid count not above `current + idle`, within [min, max].
    /// `None` if that is not above `current`.
    pub fn expand_target(&self, current: u32, idle: u32) -> Option<u32> {
        self.valid_in(current.saturating_add(1), current.saturating_add(idle)).next_back()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(min: u32, max: u32, constraint: NodeConstraint) -> MalleableSpec {
        MalleableSpec { min, max, constraint }
    }

    #[test]
    fn parse_accepts_listing_2_spellings_and_names_allowed_values() {
        assert_eq!(NodeConstraint::parse("poF2"), Ok(NodeConstraint::PowerOfTwo));
        assert_eq!(NodeConstraint::parse("even"), Ok(NodeConstraint::Even));
        assert_eq!(NodeConstraint::parse(" odd "), Ok(NodeConstraint::Odd));
        assert_eq!(NodeConstraint::parse("NCUBE"), Ok(NodeConstraint::NCube));
        assert_eq!(NodeConstraint::parse("none"), Ok(NodeConstraint::None));
        let err = NodeConstraint::parse("prime").unwrap_err();
        assert!(err.contains("prime") && err.contains("pof2|even|odd|ncube|none"), "{err}");
    }

    #[test]
    fn valid_counts_per_constraint() {
        let first = |c: NodeConstraint| (0..=30).filter(|&n| c.is_valid(n)).collect::<Vec<_>>();
        assert_eq!(first(NodeConstraint::PowerOfTwo), vec![1, 2, 4, 8, 16]);
        assert_eq!(first(NodeConstraint::NCube), vec![1, 8, 27]);
        assert_eq!(first(NodeConstraint::Even)[..3], [2, 4, 6]);
        assert_eq!(first(NodeConstraint::Odd)[..3], [1, 3, 5]);
        assert_eq!(first(NodeConstraint::None).len(), 30);
        assert!(NodeConstraint::NCube.is_valid(1_000_000) && !NodeConstraint::NCube.is_valid(999_999));
    }

    #[test]
    fn shrink_goes_to_next_lower_count_that_frees_what_is_needed() {
        // The paper's example.
        assert_eq!(spec(2, 32, NodeConstraint::Even).shrink_target(8, 6), Some(2));
        assert_eq!(spec(1, 32, NodeConstraint::Even).shrink_target(8, 3), Some(4));
        assert_eq!(spec(1, 32, NodeConstraint::PowerOfTwo).shrink_target(16, 3), Some(8));
        assert_eq!(spec(1, 32, NodeConstraint::None).shrink_target(16, 3), Some(13));
        assert_eq!(spec(1, 31, NodeConstraint::Odd).shrink_target(9, 1), Some(7));
        assert_eq!(spec(1, 64, NodeConstraint::NCube).shrink_target(27, 5), Some(8));
    }

    #[test]
    fn shrink_frees_what_it_can_when_not_enough_and_respects_min() {
        // 8 even with min 4: 6 needed cannot be freed; go to 4 (frees 4).
        assert_eq!(spec(4, 32, NodeConstraint::Even).shrink_target(8, 6), Some(4));
        // Already at min: nothing.
        assert_eq!(spec(4, 32, NodeConstraint::Even).shrink_target(4, 2), None);
        assert_eq!(spec(1, 32, NodeConstraint::None).shrink_target(1, 1), None);
        assert_eq!(spec(1, 32, NodeConstraint::None).shrink_target(5, 0), None);
    }

    #[test]
    fn expand_goes_to_highest_valid_count_within_idle_and_max() {
        assert_eq!(spec(1, 32, NodeConstraint::PowerOfTwo).expand_target(2, 5), Some(4));
        assert_eq!(spec(1, 32, NodeConstraint::PowerOfTwo).expand_target(2, 6), Some(8));
        assert_eq!(spec(1, 32, NodeConstraint::PowerOfTwo).expand_target(4, 3), None);
        assert_eq!(spec(1, 10, NodeConstraint::None).expand_target(4, 20), Some(10));
        assert_eq!(spec(1, 31, NodeConstraint::Odd).expand_target(5, 3), Some(7));
        assert_eq!(spec(1, 32, NodeConstraint::None).expand_target(32, 3), None);
    }

    #[test]
    fn lowest_and_highest_valid_give_the_papers_min_and_max() {
        let within_32 = |c| spec(1, 32, c);
        assert_eq!(within_32(NodeConstraint::Even).lowest_valid(), Some(2));
        assert_eq!(within_32(NodeConstraint::Odd).highest_valid(), Some(31));
        assert_eq!(within_32(NodeConstraint::NCube).highest_valid(), Some(27));
        assert_eq!(spec(3, 3, NodeConstraint::Even).lowest_valid(), None);
    }
}
