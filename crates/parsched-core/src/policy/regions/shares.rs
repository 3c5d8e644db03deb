//! Placing whole jobs on caches by cpusets: two constraints around
//! [`super::balance`](mod@super::balance) that the paper's machine did not need (moved here from
//! the Linux runtime's controller, which calls them).
//!
//! * **CPU-share repair** ([`cpu_share_repair`]): the balancer packs by
//!   working set only, so with unequal estimates it may put three of four
//!   single-threaded jobs on one of two one-CPU caches (each small job goes to
//!   the emptier cache). The paper's machine kept every processor busy through
//!   Xen's credit scheduler and idle prevention; a job confined to its cache's
//!   CPUs cannot leave them, so while a cache holds more threads than its
//!   share of all threads (rounded up, in proportion to its CPUs) and another
//!   holds fewer than its share (rounded down), the job with the smallest
//!   working set (ties: the later one) that fits moves from the first to the
//!   least-loaded such cache.
//! * **Hysteresis** ([`keep_current`]): the current assignment is kept unless
//!   the new one lowers the fullest cache's fill (load over capacity) by more
//!   than [`HYSTERESIS`] (10%) — near-equal estimates would otherwise swap
//!   jobs between caches at every re-placement, each swap costing both jobs
//!   their cache contents. A current assignment left over the CPU shares
//!   (another job exited) is first repaired by moving its smallest job, so
//!   that a large job keeps its cache.
//!
//! An assignment is a `Vec<usize>`: entry k is job k's cache (bin) index.

/// The relative fill improvement a new assignment must bring for
/// [`keep_current`] to give up the current one.
pub const HYSTERESIS: f64 = 0.10;

/// Threads per cache of an assignment.
fn threads_per_bin(bin_of: &[usize], threads: &[usize], nbins: usize) -> Vec<usize> {
    let mut t = vec![0usize; nbins];
    for (k, &b) in bin_of.iter().enumerate() {
        t[b] += threads[k];
    }
    t
}

/// The CPU-share repair of an assignment (see the module documentation).
/// `threads[k]` and `wss[k]` are job k's threads and working set, `cpus[b]`
/// cache b's CPUs; returns the repaired assignment. Every `bin_of` entry must
/// be below `cpus.len()`, and the slices as long as `bin_of`.
pub fn cpu_share_repair(
    mut bin_of: Vec<usize>,
    threads: &[usize],
    wss: &[u64],
    cpus: &[usize],
) -> Vec<usize> {
    let total_t: usize = threads.iter().sum();
    let total_c: usize = cpus.iter().sum::<usize>().max(1);
    let hi = |b: usize| (total_t * cpus[b]).div_ceil(total_c);
    let lo = |b: usize| total_t * cpus[b] / total_c;
    for _ in 0..bin_of.len() * cpus.len() {
        let t = threads_per_bin(&bin_of, threads, cpus.len());
        let mut load = vec![0u64; cpus.len()];
        for (k, &b) in bin_of.iter().enumerate() {
            load[b] += wss[k];
        }
        let Some(from) = (0..cpus.len()).find(|&b| t[b] > hi(b)) else {
            break;
        };
        let Some(to) = (0..cpus.len())
            .filter(|&b| t[b] < lo(b))
            .min_by_key(|&b| (load[b], b))
        else {
            break;
        };
        let Some(k) = (0..bin_of.len())
            .filter(|&k| bin_of[k] == from && t[to] + threads[k] <= hi(to))
            .min_by_key(|&k| (wss[k], std::cmp::Reverse(k)))
        else {
            break;
        };
        bin_of[k] = to;
    }
    bin_of
}

/// Whether no cache holds more than its share of threads (rounded up, in
/// proportion to its CPUs; see [`cpu_share_repair`]).
pub fn within_shares(bin_of: &[usize], threads: &[usize], cpus: &[usize]) -> bool {
    let total_t: usize = threads.iter().sum();
    let total_c: usize = cpus.iter().sum::<usize>().max(1);
    let t = threads_per_bin(bin_of, threads, cpus.len());
    (0..cpus.len()).all(|b| t[b] <= (total_t * cpus[b]).div_ceil(total_c))
}

/// The fullest cache's load over its capacity.
pub fn max_fill(bin_of: &[usize], wss: &[u64], caps: &[u64]) -> f64 {
    let mut load = vec![0u64; caps.len()];
    for (k, &b) in bin_of.iter().enumerate() {
        load[b] += wss[k];
    }
    (0..caps.len())
        .map(|b| load[b] as f64 / caps[b].max(1) as f64)
        .fold(0.0, f64::max)
}

/// The hysteresis (see the module documentation): `current` (every job on
/// one cache already; `None` when some job is not placed on a single cache),
/// first repaired to the CPU shares if a job left it over them
/// ([`cpu_share_repair`] moves the smallest job, not the large one the new
/// packing may move), if its fullest cache is at most [`HYSTERESIS`] fuller
/// than `proposed`'s; else `proposed`.
pub fn keep_current(
    current: Option<Vec<usize>>,
    proposed: Vec<usize>,
    threads: &[usize],
    wss: &[u64],
    caps: &[u64],
    cpus: &[usize],
) -> Vec<usize> {
    let Some(mut cur) = current else {
        return proposed;
    };
    if !within_shares(&cur, threads, cpus) {
        cur = cpu_share_repair(cur, threads, wss, cpus);
    }
    if cur != proposed
        && within_shares(&cur, threads, cpus)
        && max_fill(&cur, wss, caps) <= (1.0 + HYSTERESIS) * max_fill(&proposed, wss, caps)
    {
        cur
    } else {
        proposed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_and_fill() {
        assert!(within_shares(&[0, 1, 1, 0], &[1; 4], &[1, 1]));
        assert!(!within_shares(&[0, 1, 1, 1], &[1; 4], &[1, 1]));
        // Shares follow the CPUs: 3 of 4 threads on a 3-CPU cache is fine.
        assert!(within_shares(&[0, 0, 0, 1], &[1; 4], &[3, 1]));
        assert!(!within_shares(&[0, 1, 1, 0], &[1; 4], &[3, 1]));
        let f = max_fill(&[0, 1, 1, 0], &[400, 30, 410, 20], &[512, 512]);
        assert!((f - 440.0 / 512.0).abs() < 1e-12);
        // Unequal capacities: the fill is relative.
        let f = max_fill(&[0, 1], &[100, 100], &[1000, 200]);
        assert!((f - 0.5).abs() < 1e-12);
    }

    #[test]
    fn repair_moves_the_smallest_job_to_the_short_cache() {
        // large0 → 0, large1 → 1, both small → 1 (the greedy's outcome when
        // large1's estimate is lower): the later small one moves to cache 0.
        let b = cpu_share_repair(vec![0, 1, 1, 1], &[1; 4], &[3300, 49, 3200, 49], &[1, 1]);
        assert_eq!(b, vec![0, 1, 1, 0]);
        // The smaller one moves, whatever its position.
        let b = cpu_share_repair(vec![0, 1, 1, 1], &[1; 4], &[3300, 40, 3200, 49], &[1, 1]);
        assert_eq!(b, vec![0, 0, 1, 1]);
        // Already within shares: unchanged.
        let b = cpu_share_repair(vec![0, 1, 1, 0], &[1; 4], &[3300, 49, 3200, 49], &[1, 1]);
        assert_eq!(b, vec![0, 1, 1, 0]);
        // A two-thread job does not fit the short cache's share: nothing moves
        // past it; the one-thread job does.
        let b = cpu_share_repair(vec![1, 1, 1], &[2, 1, 1], &[10, 5, 7], &[2, 2]);
        let t0: usize = b
            .iter()
            .zip([2, 1, 1])
            .filter(|(x, _)| **x == 0)
            .map(|(_, t)| t)
            .sum();
        assert_eq!(t0, 2, "{b:?}");
        // Unequal caches: shares follow the CPUs (3 + 1).
        let b = cpu_share_repair(vec![0; 4], &[1; 4], &[4, 3, 2, 1], &[3, 1]);
        assert_eq!(b.iter().filter(|&&x| x == 1).count(), 1);
        assert_eq!(b[3], 1, "the smallest moves: {b:?}");
        // The result is always within the shares when a move is possible.
        let b = cpu_share_repair(vec![0; 6], &[1; 6], &[6, 5, 4, 3, 2, 1], &[1, 1, 1]);
        assert!(within_shares(&b, &[1; 6], &[1, 1, 1]), "{b:?}");
    }

    #[test]
    fn hysteresis_keeps_a_near_equal_assignment_and_yields_to_a_better_one() {
        let caps = [512u64, 512];
        let cpus = [1usize, 1];
        let t = [1usize; 4];
        // Two large jobs of near-equal estimates: the balancer's pairing
        // swaps the smalls (proposed), the current pairing is as good: kept.
        let wss = [400u64, 30, 410, 20];
        let cur = vec![0, 1, 1, 0];
        let new = vec![0, 0, 1, 1];
        assert_eq!(
            keep_current(Some(cur.clone()), new.clone(), &t, &wss, &caps, &cpus),
            cur
        );
        // The current one puts both large jobs together (fill 810/512 against
        // 430/512): more than 10% worse, so the new one wins.
        let wss = [400u64, 30, 410, 20];
        let cur = vec![0, 1, 0, 1];
        let got = keep_current(Some(cur), new.clone(), &t, &wss, &caps, &cpus);
        assert_eq!(got, new);
        // Just inside / just outside the 10% bound.
        let wss = [109u64, 100];
        let (cur, new) = (vec![0, 1], vec![1, 0]);
        let caps2 = [100u64, 100];
        // cur fill 1.09, new fill 1.09 (same jobs, swapped): kept.
        assert_eq!(
            keep_current(Some(cur.clone()), new.clone(), &[1, 1], &wss, &caps2, &cpus),
            cur
        );
        let caps3 = [100u64, 200];
        // cur: 109/100 = 1.09; new: max(100/100, 109/200) = 1.0 → 1.09 <= 1.1: kept.
        assert_eq!(
            keep_current(Some(cur.clone()), new.clone(), &[1, 1], &wss, &caps3, &cpus),
            cur
        );
        let wss = [112u64, 100];
        // cur 1.12 > 1.1 × 1.0: the new one.
        assert_eq!(
            keep_current(Some(cur.clone()), new.clone(), &[1, 1], &wss, &caps3, &cpus),
            new
        );
        // A job exited and left the current assignment over the CPU shares
        // (large1 and small1 on cache 1): the small one moves, the large one
        // stays, although the balancer proposes moving the large one (ties go
        // to the first cache).
        let wss = [2_111_488u64, 32_768];
        let caps4 = [2u64 << 20, 2 << 20];
        let got = keep_current(Some(vec![1, 1]), vec![0, 1], &[1, 1], &wss, &caps4, &cpus);
        assert_eq!(got, vec![1, 0]);
        // Over the shares and not repairable into something as good: the
        // proposed one (the repair of [0, 0, 0] moves a 20 to cache 1,
        // leaving 120 on cache 0 against the proposed 100 alone).
        let got = keep_current(
            Some(vec![0, 0, 0]),
            vec![0, 1, 1],
            &[1, 1, 1],
            &[100, 20, 20],
            &[100, 100],
            &cpus,
        );
        assert_eq!(got, vec![0, 1, 1]);
        // No current assignment: the proposed one.
        assert_eq!(
            keep_current(None, new.clone(), &[1, 1], &[10, 10], &[100, 100], &cpus),
            new
        );
    }
}
