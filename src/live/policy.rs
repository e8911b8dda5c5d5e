//! The tiered merge policy (as tantivy's and Lucene's): segments fall in tiers by size, each tier
//! `factor` times larger than the one below; when a tier holds `factor` segments, the `factor`
//! smallest of it are merged into one of the next tier. Every object is so merged about
//! `log_factor(n)` times, and a search sees at most about `factor` segments per tier. A segment
//! whose objects are mostly deleted is rewritten alone. Segments on disk are merged with segments
//! on disk, segments in memory with segments in memory.

/// The default number of segments of a tier that starts a merge: 4 kept 13-14 segments under
/// 100 K writes/s where 8 kept 33, and reads faster (docs/journal/live.md).
pub const DEFAULT_FACTOR: usize = 4;
/// Objects of the smallest tier: segments smaller than this are all in tier 0.
pub const FLOOR: u64 = 4096;

/// What the policy sees of a segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SegmentSize {
    /// Objects in it (live or not).
    pub objects: u32,
    /// Of them, deleted.
    pub deleted: u32,
    /// Whether it is on disk.
    pub on_disk: bool,
}

impl SegmentSize {
    fn live(&self) -> u64 {
        u64::from(self.objects - self.deleted.min(self.objects))
    }
}

fn tier(live: u64, factor: u64) -> u32 {
    let mut t = 0;
    let mut bound = FLOOR;
    while live >= bound {
        t += 1;
        bound = bound.saturating_mul(factor);
    }
    t
}

/// The segments (positions in `sizes`) to merge now, if any.
pub fn choose(sizes: &[SegmentSize], factor: usize) -> Option<Vec<usize>> {
    let factor = factor.max(2);
    // a segment mostly deleted, rewritten alone
    if let Some(i) = sizes
        .iter()
        .position(|s| s.objects >= 1024 && u64::from(s.deleted) * 2 > u64::from(s.objects))
    {
        return Some(vec![i]);
    }
    for on_disk in [false, true] {
        let mut tiers: std::collections::BTreeMap<u32, Vec<usize>> = Default::default();
        for (i, s) in sizes
            .iter()
            .enumerate()
            .filter(|(_, s)| s.on_disk == on_disk)
        {
            tiers
                .entry(tier(s.live(), factor as u64))
                .or_default()
                .push(i);
        }
        for members in tiers.values_mut() {
            if members.len() >= factor {
                members.sort_by_key(|&i| (sizes[i].live(), i));
                let mut picked: Vec<usize> = members[..factor].to_vec();
                picked.sort_unstable();
                return Some(picked);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(objects: u32, on_disk: bool) -> SegmentSize {
        SegmentSize {
            objects,
            deleted: 0,
            on_disk,
        }
    }

    #[test]
    fn a_full_tier_merges_its_smallest() {
        let mut sizes: Vec<SegmentSize> = (0..7).map(|i| seg(100 + i, false)).collect();
        assert_eq!(choose(&sizes, 8), None);
        sizes.push(seg(5_000_000, false));
        assert_eq!(
            choose(&sizes, 8),
            None,
            "a large segment is in another tier"
        );
        sizes.push(seg(50, false));
        assert_eq!(choose(&sizes, 8), Some(vec![0, 1, 2, 3, 4, 5, 6, 8]));
        // disk and memory are not mixed
        let mixed: Vec<SegmentSize> = (0..8).map(|i| seg(10, i % 2 == 0)).collect();
        assert_eq!(choose(&mixed, 8), None);
    }

    #[test]
    fn a_mostly_deleted_segment_is_rewritten() {
        let sizes = [
            seg(10_000, true),
            SegmentSize {
                objects: 10_000,
                deleted: 6_000,
                on_disk: true,
            },
        ];
        assert_eq!(choose(&sizes, 8), Some(vec![1]));
    }

    #[test]
    fn merges_stop_when_each_tier_is_below_the_factor() {
        // merging as chosen until nothing is chosen leaves fewer than `factor` per tier
        let mut sizes: Vec<SegmentSize> = (0..200).map(|_| seg(1000, false)).collect();
        let mut merges = 0;
        while let Some(picked) = choose(&sizes, 4) {
            let total: u32 = picked.iter().map(|&i| sizes[i].objects).sum();
            for &i in picked.iter().rev() {
                sizes.remove(i);
            }
            sizes.push(seg(total, false));
            merges += 1;
            assert!(merges < 1000);
        }
        assert_eq!(sizes.iter().map(|s| s.objects).sum::<u32>(), 200_000);
        assert!(sizes.len() < 4 * 6, "{} segments", sizes.len());
    }
}
