//! Tests of region scheduling's policy pieces: examples from the paper and
//! the property tests.

use super::*;
use crate::ids::{CacheId, ProcId, RegionId};
use crate::topology::Topology;
use proptest::prelude::*;

const MB: u64 = 1 << 20;
const KB: u64 = 1 << 10;

fn clovertown_map() -> (Topology, RegionMap) {
    let t = Topology::clovertown();
    let m = RegionMap::new(t.last_level_caches());
    (t, m)
}

#[test]
fn figure_2_cache_load_is_the_sum_of_mapped_regions() {
    // C2(11) = R5 (5) + R6 (4) + R7 (2).
    let mut m = RegionMap::new(vec![CacheId(1), CacheId(2)]);
    for (r, s) in [(5, 5), (6, 4), (7, 2), (8, 3)] {
        m.insert(RegionId(r), s);
    }
    for r in [5, 6, 7] {
        m.map_to(RegionId(r), CacheId(2)).unwrap();
    }
    assert_eq!(m.load(CacheId(2)), 11);
    assert_eq!(m.load(CacheId(1)), 0);
    m.make_global(RegionId(8)).unwrap();
    assert_eq!(m.global_bytes(), 3);
    assert_eq!(m.load(CacheId(1)) + m.load(CacheId(2)), 11);
    assert_eq!(m.emptiest(), Some(CacheId(1)));
    assert!(m.map_to(RegionId(5), CacheId(9)).is_err());
    m.set_wss(RegionId(7), 6).unwrap();
    assert_eq!(m.load(CacheId(2)), 15);
    assert_eq!(m.remove(RegionId(6)), Some(Mapping::Local(CacheId(2))));
    assert_eq!(m.load(CacheId(2)), 11);
    assert_eq!(m.regions_on(CacheId(2)), vec![RegionId(5), RegionId(7)]);
}

#[test]
fn touch_elsewhere_microschedules_to_the_least_loaded_processor_of_the_cache() {
    let (t, mut m) = clovertown_map();
    let c0 = t.cache_of(ProcId(0), 2).unwrap();
    let c1 = t.cache_of(ProcId(1), 2).unwrap();
    m.insert(RegionId(1), 4 * MB);
    m.map_to(RegionId(1), c1).unwrap();
    // Processor 0 (cache 0) touches region 1 (cache 1: processors 1, 3).
    let busy = |p: ProcId| if p == ProcId(1) { 2 } else { 0 };
    let d = on_touch(
        &m,
        &t,
        ProcId(0),
        RegionId(1),
        TouchRule::MicroSchedule,
        busy,
    )
    .unwrap();
    assert_eq!(
        d,
        TouchDecision::MicroSchedule {
            to: ProcId(3),
            cache: c1
        }
    );
    let d = on_touch(&m, &t, ProcId(0), RegionId(1), TouchRule::Open, busy).unwrap();
    assert_eq!(d, TouchDecision::OpenLocally { cache: c0 });
    // On its own cache, or global: no fault.
    let d = on_touch(
        &m,
        &t,
        ProcId(3),
        RegionId(1),
        TouchRule::MicroSchedule,
        busy,
    )
    .unwrap();
    assert_eq!(d, TouchDecision::Proceed);
    m.make_global(RegionId(1)).unwrap();
    let d = on_touch(
        &m,
        &t,
        ProcId(0),
        RegionId(1),
        TouchRule::MicroSchedule,
        busy,
    )
    .unwrap();
    assert_eq!(d, TouchDecision::Proceed);
    // Unmapped: opened where touched.
    m.insert(RegionId(2), MB);
    let d = on_touch(
        &m,
        &t,
        ProcId(2),
        RegionId(2),
        TouchRule::MicroSchedule,
        busy,
    )
    .unwrap();
    assert_eq!(d, TouchDecision::OpenLocally { cache: c0 });
    assert!(on_touch(&m, &t, ProcId(0), RegionId(9), TouchRule::Open, busy).is_err());
}

#[test]
fn wss_weights_follow_section_4() {
    // 10 pages as in Figure 15: histories with known numbers of ones.
    let hist: Vec<u32> = vec![
        u32::MAX,      // 32 ones: weight 1 (our reading of H(32))
        (1 << 30) - 1, // 30: 1
        (1 << 26) - 1, // 26: 1
        (1 << 25) - 1, // 25: 3/4
        (1 << 20) - 1, // 20: 3/4
        (1 << 19) - 1, // 19: 1/2
        (1 << 14) - 1, // 14: 1/2
        (1 << 13) - 1, // 13: 1/4
        (1 << 8) - 1,  // 8: 1/4
        (1 << 7) - 1,  // 7: 0
    ];
    let y = weighted_pages(&hist, HistogramReading::OnesCount);
    assert!((y - (3.0 + 1.5 + 1.0 + 0.5)).abs() < 1e-12, "y = {y}");
    let h = ones_histogram(&hist);
    assert_eq!(h[32], 1);
    assert_eq!(h[7], 1);
    assert_eq!(h.iter().sum::<u64>(), 10);
    // Per-bit reading: an always-referenced page counts 1 after the /15.
    assert!((weighted_pages(&[u32::MAX], HistogramReading::PerBit) - 1.0).abs() < 1e-12);
    // A page referenced only in the last 6 periods: per-bit gives 6/15 (the
    // bits 26..31 of the paper, the most recent), ones-count gives 0.
    assert!((weighted_pages(&[0x3f], HistogramReading::PerBit) - 6.0 / 15.0).abs() < 1e-12);
    assert_eq!(weighted_pages(&[0x3f], HistogramReading::OnesCount), 0.0);
}

#[test]
fn wss_estimator_tracks_a_steady_and_a_shrinking_working_set() {
    let mut e = WssEstimator::new(4096, HistogramReading::OnesCount);
    let r = RegionId(0);
    // 100 pages of which the same 40 are referenced every period.
    for _ in 0..32 {
        e.observe_count(r, 100, 40);
    }
    assert_eq!(e.estimate_bytes(r), 40 * 4096);
    // The working set shrinks to 10 pages: the 30 others fade out by weight.
    for _ in 0..8 {
        e.observe_count(r, 100, 10);
    }
    // 30 pages with 24 ones (weight 3/4) + 10 with 32.
    assert_eq!(e.estimate_bytes(r), (10 * 4096) + (30 * 4096 * 3 / 4));
    for _ in 0..24 {
        e.observe_count(r, 100, 10);
    }
    assert_eq!(e.estimate_bytes(r), 10 * 4096);
    assert_eq!(e.estimate_bytes(RegionId(7)), 0);
}

#[test]
fn balancing_pairs_large_with_small_section_5_2() {
    let bins = [
        Bin {
            cache: CacheId(0),
            capacity_bytes: 4 * MB,
        },
        Bin {
            cache: CacheId(1),
            capacity_bytes: 4 * MB,
        },
    ];
    let items = [
        Item {
            id: 0,
            wss_bytes: 4 * MB,
        },
        Item {
            id: 1,
            wss_bytes: 4 * MB,
        },
        Item {
            id: 2,
            wss_bytes: 16 * KB,
        },
        Item {
            id: 3,
            wss_bytes: 16 * KB,
        },
    ];
    let a = balance(&items, &bins).unwrap();
    assert_ne!(a.cache_of(0), a.cache_of(1), "{a:?}");
    assert_ne!(a.cache_of(2), a.cache_of(3), "{a:?}");
    assert_eq!(a.load(CacheId(0)), 4 * MB + 16 * KB);
    assert_eq!(a.load(CacheId(1)), 4 * MB + 16 * KB);
    assert!(balance(&items, &[]).is_err());
}

#[test]
fn unification_spreads_memlat_over_both_caches() {
    let bins = [
        Bin {
            cache: CacheId(0),
            capacity_bytes: 4 * MB,
        },
        Bin {
            cache: CacheId(1),
            capacity_bytes: 4 * MB,
        },
    ];
    let regions = [
        Item {
            id: 10,
            wss_bytes: 3 * MB,
        },
        Item {
            id: 11,
            wss_bytes: 3 * MB,
        },
    ];
    let (a, fits) = unify(&regions, &bins).unwrap();
    assert!(fits);
    assert_ne!(a.cache_of(10), a.cache_of(11));
    let big = [
        Item {
            id: 10,
            wss_bytes: 6 * MB,
        },
        Item {
            id: 11,
            wss_bytes: 6 * MB,
        },
    ];
    assert!(!unify(&big, &bins).unwrap().1);
}

#[test]
fn partitioning_isolates_the_preferred_program() {
    let bins: Vec<Bin> = (0..4)
        .map(|i| Bin {
            cache: CacheId(i),
            capacity_bytes: 4 * MB,
        })
        .collect();
    let d = [
        PartitionDemand {
            id: 7,
            wss_bytes: 6 * MB,
            exclusive: true,
        },
        PartitionDemand {
            id: 8,
            wss_bytes: MB,
            exclusive: false,
        },
        PartitionDemand {
            id: 9,
            wss_bytes: 2 * MB,
            exclusive: false,
        },
    ];
    let p = partition(&d, &bins).unwrap();
    assert_eq!(p[0], (7, vec![CacheId(0), CacheId(1)]));
    for (_, cs) in &p[1..] {
        assert_eq!(cs.len(), 1);
        assert!(!p[0].1.contains(&cs[0]));
    }
    assert_ne!(p[1].1, p[2].1);
    // Two caches, two exclusive programs and a shared one: one cache each
    // for the exclusive ones would leave none, so the smaller shares.
    let two = &bins[..2];
    let d2 = [
        PartitionDemand {
            id: 1,
            wss_bytes: 8 * MB,
            exclusive: true,
        },
        PartitionDemand {
            id: 2,
            wss_bytes: MB,
            exclusive: true,
        },
        PartitionDemand {
            id: 3,
            wss_bytes: MB,
            exclusive: false,
        },
    ];
    let p2 = partition(&d2, two).unwrap();
    assert_eq!(p2[0].1, vec![CacheId(0)]);
    assert!(p2.iter().all(|(_, cs)| cs.len() == 1));
    assert_eq!(p2[1].1, p2[2].1);
}

#[test]
fn fallback_conditions_1_to_3() {
    let c = Conditions::paper_clovertown();
    c.validate().unwrap();
    let ok = Observation {
        access_time: 65536.0,
        total_wss_bytes: 6 * MB,
        microschedules_per_s: 500.0,
        idle_while_waiting: false,
    };
    assert_eq!(c.decide(&ok), RegionDecision::Regioning);
    let f = |o: Observation| c.decide(&o);
    assert_eq!(
        f(Observation {
            access_time: 4096.0,
            ..ok
        }),
        RegionDecision::Fallback(Condition::AccessTime)
    );
    assert_eq!(
        f(Observation {
            total_wss_bytes: 3 * MB,
            ..ok
        }),
        RegionDecision::Fallback(Condition::FitsOneCache)
    );
    assert_eq!(
        f(Observation {
            total_wss_bytes: 9 * MB,
            ..ok
        }),
        RegionDecision::Fallback(Condition::ExceedsUnified)
    );
    assert_eq!(
        f(Observation {
            microschedules_per_s: 9000.0,
            ..ok
        }),
        RegionDecision::Fallback(Condition::MicroScheduleRate)
    );
    assert_eq!(
        f(Observation {
            idle_while_waiting: true,
            ..ok
        }),
        RegionDecision::Fallback(Condition::IdlePrevention)
    );
    let w = Conditions::paper_westmere();
    assert_eq!(
        w.decide(&Observation {
            total_wss_bytes: 8 * MB,
            ..ok
        }),
        RegionDecision::Fallback(Condition::FitsOneCache)
    );
    assert_eq!(
        w.decide(&Observation {
            total_wss_bytes: 20 * MB,
            ..ok
        }),
        RegionDecision::Regioning
    );
    let bad = Conditions {
        max_access: Some(1.0),
        ..c
    };
    assert!(bad
        .validate()
        .unwrap_err()
        .to_string()
        .starts_with("max_access"));
}

/// A memlat page trace: two regions of `pages` pages, `a` random page
/// touches per visit, alternating.
fn memlat_trace(pages: u64, a: u64, visits: u64, seed: u64) -> Vec<u64> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut out = Vec::new();
    for v in 0..visits {
        let base = (v % 2) * pages;
        for _ in 0..a {
            out.push(base + rng.random_range(0..pages));
        }
    }
    out
}

#[test]
fn regioning_recovers_memlats_two_regions() {
    // 64 pages per region, 4096 touches per visit: a page recurs within a
    // visit after ~64 touches, across visits after >= 4096. q = 1024.
    let trace = memlat_trace(64, 4096, 6, 3);
    let mut g = Regioner::new(RegioningConfig { q: 1024 });
    g.begin_phase();
    for (t, &p) in trace.iter().enumerate() {
        g.touch(p, t as u64);
    }
    let rep = g.end_phase();
    let regs = g.regions();
    assert_eq!(regs.len(), 2, "{regs:?}");
    assert_eq!(rep.regions, 2);
    assert_eq!(rep.merges, 126);
    let a = g.region_of(0).unwrap();
    let b = g.region_of(64).unwrap();
    assert_ne!(a, b);
    assert_eq!(g.pages(a), (0..64).collect::<Vec<_>>());
    assert_eq!(g.pages(b), (64..128).collect::<Vec<_>>());
    // A threshold above the access time merges everything into one region.
    let mut g1 = Regioner::new(RegioningConfig { q: 1 << 20 });
    g1.begin_phase();
    for (t, &p) in trace.iter().enumerate() {
        g1.touch(p, t as u64);
    }
    g1.end_phase();
    assert_eq!(g1.regions().len(), 1);
    // Teardown turns the largest merged region back into seeds, and not the
    // same region twice in a row.
    let (torn, seeds) = g.teardown().unwrap();
    assert_eq!(seeds.len(), 64);
    assert!(g.regions().len() == 65);
    let second = g.teardown().unwrap().0;
    assert_ne!(torn, second);
    assert!(
        g.teardown().is_none(),
        "only regions merged in the phase are torn down"
    );
    // Exclude: a page leaves its region.
    let mut g2 = Regioner::new(RegioningConfig { q: 1024 });
    g2.begin_phase();
    for (t, &p) in trace.iter().enumerate() {
        g2.touch(p, t as u64);
    }
    g2.end_phase();
    let r = g2.region_of(5).unwrap();
    let s = g2.exclude(5).unwrap();
    assert_ne!(r, s);
    assert_eq!(g2.pages(r).len(), 63);
}

#[test]
fn regioning_schedule_is_one_percent_after_the_first_second() {
    let s = RegioningSchedule::default();
    s.validate().unwrap();
    assert_eq!(s.phase_ns(), 10_000_000);
    assert!(!s.in_phase(0));
    assert!(!s.in_phase(999_999_999));
    assert!(s.in_phase(1_000_000_000));
    assert!(s.in_phase(1_009_999_999));
    assert!(!s.in_phase(1_010_000_000));
    assert_eq!(s.next_phase(0), (1_000_000_000, 1_010_000_000));
    assert_eq!(s.next_phase(1_500_000_000), (2_000_000_000, 2_010_000_000));
    let share = (0..100_000u64).filter(|k| s.in_phase(k * 100_003)).count() as f64 / 100_000.0;
    assert!((share - 0.01).abs() < 0.002, "{share}");
    assert!(RegioningSchedule { p: 0.0, ..s }.validate().is_err());
}

#[derive(Debug, Clone)]
enum Op {
    Insert(u64, u64),
    Map(u64, u32),
    Global(u64),
    Unmap(u64),
    Wss(u64, u64),
    Remove(u64),
    Allocate(u64),
}

fn op() -> impl Strategy<Value = Op> {
    let r = 0u64..12;
    prop_oneof![
        (r.clone(), 0u64..(64 * MB)).prop_map(|(a, b)| Op::Insert(a, b)),
        (r.clone(), 0u32..3).prop_map(|(a, b)| Op::Map(a, b)),
        r.clone().prop_map(Op::Global),
        r.clone().prop_map(Op::Unmap),
        (r.clone(), 0u64..(64 * MB)).prop_map(|(a, b)| Op::Wss(a, b)),
        r.clone().prop_map(Op::Remove),
        r.prop_map(Op::Allocate),
    ]
}

proptest! {
    /// A region is mapped to at most one cache unless global, and the cache
    /// loads equal the sum of their regions, after any sequence of changes.
    #[test]
    fn map_invariants(ops in proptest::collection::vec(op(), 0..80)) {
        let caches = vec![CacheId(0), CacheId(1), CacheId(2)];
        let mut m = RegionMap::new(caches.clone());
        for o in ops {
            let _ = match o {
                Op::Insert(r, b) => { m.insert(RegionId(r), b); Ok(()) }
                Op::Map(r, c) => m.map_to(RegionId(r), CacheId(c)),
                Op::Global(r) => m.make_global(RegionId(r)),
                Op::Unmap(r) => m.unmap(RegionId(r)),
                Op::Wss(r, b) => m.set_wss(RegionId(r), b),
                Op::Remove(r) => { m.remove(RegionId(r)); Ok(()) }
                Op::Allocate(r) => m.allocate(RegionId(r)).map(|_| ()),
            };
            for &c in &caches {
                let on: Vec<RegionId> = m.regions_on(c);
                let sum: u64 = on.iter().map(|&r| m.wss(r).unwrap()).sum();
                prop_assert_eq!(m.load(c), sum);
                for other in caches.iter().filter(|&&o| o != c) {
                    for r in &on {
                        prop_assert!(!m.regions_on(*other).contains(r));
                    }
                }
            }
            let global: u64 = m.iter().filter(|x| x.1 == Mapping::Global).map(|x| x.2).sum();
            prop_assert_eq!(m.global_bytes(), global);
            for (r, mp, _) in m.iter() {
                let n = caches.iter().filter(|&&c| m.regions_on(c).contains(&r)).count();
                match mp {
                    Mapping::Local(_) => prop_assert_eq!(n, 1),
                    Mapping::Global | Mapping::Unmapped => prop_assert_eq!(n, 0),
                }
            }
        }
    }

    /// A micro-schedule always lands on a processor of the region's cache.
    #[test]
    fn microschedule_lands_on_the_regions_cache(
        westmere in any::<bool>(),
        proc_seed in 0u32..1000,
        cache_pick in 0usize..2,
        loads in proptest::collection::vec(0u32..5, 12),
    ) {
        let t = if westmere { Topology::westmere() } else { Topology::clovertown() };
        let llc = t.last_level_caches();
        let mut m = RegionMap::new(llc.clone());
        let target = llc[cache_pick % llc.len()];
        m.insert(RegionId(1), MB);
        m.map_to(RegionId(1), target).unwrap();
        let p = ProcId(proc_seed % t.num_procs());
        let d = on_touch(&m, &t, p, RegionId(1), TouchRule::MicroSchedule, |q| loads[q.idx() % loads.len()]).unwrap();
        match d {
            TouchDecision::MicroSchedule { to, cache } => {
                prop_assert_eq!(cache, target);
                prop_assert!(t.cache(target).serves(to));
                prop_assert!(!t.cache(target).serves(p));
            }
            TouchDecision::Proceed => prop_assert!(t.cache(target).serves(p)),
            TouchDecision::OpenLocally { .. } => prop_assert!(false, "a local region is never opened under MicroSchedule"),
        }
    }

    /// Balancing places every item once, the loads are the sums, and the
    /// greedy bound holds: max load - min load <= the largest item.
    #[test]
    fn balance_is_a_partition_with_bounded_imbalance(
        sizes in proptest::collection::vec(0u64..(16 * MB), 0..30),
        nbins in 1usize..5,
    ) {
        let items: Vec<Item> = sizes.iter().enumerate().map(|(i, &s)| Item { id: i as u64, wss_bytes: s }).collect();
        let bins: Vec<Bin> = (0..nbins).map(|i| Bin { cache: CacheId(i as u32), capacity_bytes: 4 * MB }).collect();
        let a = balance(&items, &bins).unwrap();
        prop_assert_eq!(a.placed.len(), items.len());
        for b in &bins {
            let sum: u64 = a.placed.iter().filter(|(_, c)| *c == b.cache).map(|(i, _)| sizes[*i as usize]).sum();
            prop_assert_eq!(a.load(b.cache), sum);
        }
        let max = a.loads.iter().map(|x| x.1).max().unwrap();
        let min = a.loads.iter().map(|x| x.1).min().unwrap();
        prop_assert!(max - min <= sizes.iter().copied().max().unwrap_or(0));
    }

    /// The working-set estimate never exceeds the region's pages.
    #[test]
    fn wss_estimate_at_most_the_pages(bits in proptest::collection::vec(proptest::collection::vec(any::<bool>(), 1..40), 1..50)) {
        let mut e = WssEstimator::new(4096, HistogramReading::OnesCount);
        let mut most = 0;
        for b in &bits {
            most = most.max(b.len());
            e.observe(RegionId(0), b);
        }
        prop_assert!(e.estimate_bytes(RegionId(0)) <= most as u64 * 4096);
    }
}
