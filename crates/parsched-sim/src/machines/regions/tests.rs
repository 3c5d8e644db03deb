use super::config::miss_ratio;
use super::*;
use parsched_core::topology::CacheDomain;

/// Two 256 KB 16-way caches, each shared by two processors (a
/// Clovertown scaled down 16×, so the exact LRU runs fast).
fn small_machine() -> Topology {
    let cache = |procs: Vec<u32>| CacheDomain {
        level: 2,
        size_bytes: 256 << 10,
        ways: 16,
        line_bytes: 64,
        procs: procs.into_iter().map(ProcId).collect(),
    };
    Topology::flat(4)
        .unwrap()
        .with_caches(vec![cache(vec![0, 2]), cache(vec![1, 3])])
        .unwrap()
}

fn memlat_spec(region_kb: u64, a: u64, model: CacheModel) -> MachineSpec {
    MachineSpec {
        topology: small_machine(),
        timing: RegionTiming::clovertown(),
        cache_model: model,
        programs: vec![Placed {
            program: Program::memlat(region_kb << 10, a, (1 << 20) / (2 * a)),
            proc: ProcId(0),
        }],
        chunk: 4096,
        fallback: None,
        online: None,
        seed: 5,
    }
}

/// The fast model against the exact one, on memlat's two schedules:
/// within ±0.05 miss ratio (LRU's remnant eviction makes the standard
/// schedule miss a little more near a ≈ N; see the module doc).
#[test]
fn footprint_matches_exact_lru_on_memlat() {
    let mut worst: f64 = 0.0;
    for (kb, a) in [
        (192, 1 << 10),
        (192, 1 << 12),
        (192, 1 << 14),
        (384, 1 << 12),
        (96, 1 << 12),
    ] {
        for s in [Scheduler::Standard, Scheduler::Region] {
            let f = memlat_spec(kb, a, CacheModel::Footprint).run(s).unwrap();
            let l = memlat_spec(kb, a, CacheModel::Lru).run(s).unwrap();
            let (mf, ml) = (miss_ratio(&f), miss_ratio(&l));
            worst = worst.max((mf - ml).abs());
            assert!(
                (mf - ml).abs() < 0.05,
                "{kb} KB a={a} {s:?}: footprint {mf:.4} lru {ml:.4}"
            );
        }
    }
    assert!(worst > 0.0, "the two models are distinct computations");
}

/// Co-runners sharing a cache (balancing's case): the fluid model against
/// exact LRU within ±0.03 per cache.
#[test]
fn footprint_matches_exact_lru_for_co_runners() {
    let prog = |kb: u64| {
        Program::with_regions(
            vec![Step::Repeat {
                count: 64,
                body: vec![Step::Touch {
                    region: parsched_core::program::RegionRef(0),
                    accesses: 4096,
                    pattern: Pattern::UniformRandom,
                }],
            }],
            vec![parsched_core::program::RegionDecl {
                bytes: kb << 10,
                scope: parsched_core::program::RegionScope::Private,
            }],
        )
    };
    let spec = |model| MachineSpec {
        topology: small_machine(),
        timing: RegionTiming::clovertown(),
        cache_model: model,
        programs: vec![
            Placed {
                program: prog(256),
                proc: ProcId(0),
            },
            Placed {
                program: prog(256),
                proc: ProcId(2),
            },
            Placed {
                program: prog(1),
                proc: ProcId(1),
            },
            Placed {
                program: prog(1),
                proc: ProcId(3),
            },
        ],
        chunk: 1024,
        fallback: None,
        online: None,
        seed: 9,
    };
    for s in [Scheduler::Standard, Scheduler::Region] {
        let f = spec(CacheModel::Footprint).run(s).unwrap();
        let l = spec(CacheModel::Lru).run(s).unwrap();
        for (a, b) in f.caches.iter().zip(&l.caches) {
            assert!(
                (a.miss_ratio - b.miss_ratio).abs() < 0.03,
                "{s:?}: {a:?} vs {b:?}"
            );
        }
    }
}

/// §5.2 on the Clovertown-like machine: pairing 4 MB with 16 KB per cache
/// beats two 4 MB programs sharing one by more than 50 %.
#[test]
fn balancing_pairs_large_with_small_and_is_over_50_percent_faster() {
    for model in [CacheModel::Footprint, CacheModel::Lru] {
        let cfg = RegionsConfig {
            workload: Workload::Balance,
            cache_model: model,
            accesses: 1 << 21,
            ..RegionsConfig::default()
        };
        let r = run(&cfg).unwrap();
        let s = r.speedup.unwrap();
        assert!(s > 1.5, "{model:?}: speedup {s}");
        let four = 4 * MIB + (16 << 10);
        assert_eq!(r.cache_loads, vec![four, four]);
        assert_eq!(r.cache_loads_standard, vec![8 * MIB, 32 << 10]);
        assert_eq!(
            r.microschedules, 0,
            "one region per program: no micro-schedule"
        );
        // Large programs gain; the small ones are not slowed by > 5 %.
        assert!(r.speedup_per_program[0] > 1.5 && r.speedup_per_program[1] > 1.5);
        assert!(r.speedup_per_program[2] > 0.95 && r.speedup_per_program[3] > 0.95);
    }
}

/// Figure 9's forced unification: one micro-schedule per visit after the
/// first; the rate is visits per second; the loads are one region per
/// cache.
#[test]
fn memlat_unification_microschedules_every_visit() {
    let cfg = RegionsConfig {
        wss_mb: 6.0,
        access_time: 1 << 16,
        accesses: 1 << 22,
        ..RegionsConfig::default()
    };
    let r = run(&cfg).unwrap();
    let visits = (1u64 << 22) / (1 << 16);
    assert_eq!(r.microschedules, visits - 1);
    assert_eq!(r.cache_loads, vec![3 * MIB, 3 * MIB]);
    assert_eq!(r.cache_loads_standard, vec![6 * MIB, 0]);
    let rate = r.microschedules as f64 / (r.region.makespan_ns * 1e-9);
    assert!((r.microschedules_per_s - rate).abs() < 1e-6);
    assert!(
        r.normalized_performance > 1.2,
        "{}",
        r.normalized_performance
    );
    assert!(r.miss_ratio_region < r.miss_ratio_standard);
    // Fits one cache: only the micro-schedule cost, a loss.
    let small = run(&RegionsConfig {
        wss_mb: 2.0,
        access_time: 1 << 12,
        ..cfg.clone()
    })
    .unwrap();
    assert!(small.normalized_performance < 1.0);
    // Same inputs and seed: bit-identical.
    assert_eq!(run(&cfg).unwrap(), r);
}

/// With the fallback on, what conditions 1–3 reject runs exactly as the
/// standard scheduler (normalized performance 1, no micro-schedule), and
/// what they accept is unified.
#[test]
fn fallback_does_no_harm() {
    for (mb, a, why) in [
        (2.0, 1 << 16, "fallback:fits_one_cache"),
        (6.0, 1 << 12, "fallback:access_time"),
        (12.0, 1 << 16, "fallback:exceeds_unified"),
    ] {
        let cfg = RegionsConfig {
            wss_mb: mb,
            access_time: a,
            accesses: 1 << 22,
            fallback: true,
            ..RegionsConfig::default()
        };
        let r = run(&cfg).unwrap();
        assert_eq!(r.region.decisions, vec![why.to_string()]);
        assert_eq!(
            r.normalized_performance,
            1.0,
            "{mb} MB 2^{}",
            a.trailing_zeros()
        );
        assert_eq!(r.microschedules, 0);
    }
    let ok = run(&RegionsConfig {
        fallback: true,
        accesses: 1 << 22,
        ..RegionsConfig::default()
    })
    .unwrap();
    assert_eq!(ok.region.decisions, vec!["regioning".to_string()]);
    assert!(ok.microschedules > 0 && ok.normalized_performance > 1.0);
}

/// A sequential (cyclic) sweep under exact LRU gives the paper's sharp
/// Condition 2 and 3 boundaries: a gain only when the working set
/// exceeds one cache and fits two; past two caches each region misses
/// on every line in both schedules, so only the micro-schedules remain.
#[test]
fn sequential_sweeps_under_lru_lose_past_two_caches() {
    let gain = |kb: u64| {
        let mut spec = memlat_spec(kb, 1 << 14, CacheModel::Lru);
        set_pattern(&mut spec.programs[0].program.steps, Pattern::Sequential);
        let s = spec.run(Scheduler::Standard).unwrap();
        let r = spec.run(Scheduler::Region).unwrap();
        (
            s.makespan_ns / r.makespan_ns,
            miss_ratio(&s),
            miss_ratio(&r),
        )
    };
    let (fits, _, _) = gain(96); // 192 KB: one 256 KB cache holds both
    let (band, ms, mr) = gain(192); // 384 KB: two caches hold it
    let (past, ps, pr) = gain(320); // 640 KB: past two caches
    assert!(fits < 1.0, "{fits}");
    // Standard: each visit misses its first sweep of the region (3072 of
    // 16384 accesses); unified: only the cold misses.
    assert!(band > 2.0 && ms > 0.18 && mr < 0.05, "{band} {ms} {mr}");
    assert!(past < 1.0 && ps > 0.99 && pr > 0.99, "{past} {ps} {pr}");
    let mut spec = memlat_spec(192, 1 << 14, CacheModel::Footprint);
    set_pattern(&mut spec.programs[0].program.steps, Pattern::Sequential);
    let e = spec.run(Scheduler::Standard).unwrap_err();
    assert!(e.to_string().starts_with("pattern:"), "{e}");
}

/// The policy pipeline on memlat at full scale (Clovertown, 6 MB, access
/// time 2^16): one regioning phase (about 1 % of a second: 2^20 page
/// touches, q = 2^12 accesses) recovers the two regions from single-page
/// seeds; 32 scans of access bits give each a working set of 3 MB (§4);
/// unification maps one region per cache (loads 3 MB and 3 MB), and a
/// touch of the other region micro-schedules to its cache.
#[test]
fn regioning_estimator_and_balancer_recover_memlat() {
    use parsched_core::policy::regions::{
        unify, HistogramReading, Regioner, RegioningConfig, WssEstimator,
    };
    const PAGE: u64 = 4096;
    let pages = 3 * MIB / PAGE; // per region
    let a = 1u64 << 16;
    let mut rng = stream(11, Stream::Accesses, 0);
    let mut g = Regioner::new(RegioningConfig { q: 1 << 12 });
    g.begin_phase();
    for t in 0..(1u64 << 20) {
        let region = (t / a) % 2;
        g.touch(region * pages + rng.random_range(0..pages), t);
    }
    let rep = g.end_phase();
    assert_eq!(rep.regions, 2, "{:?}", g.regions());
    let r0 = g.region_of(0).unwrap();
    let r1 = g.region_of(pages).unwrap();
    assert_eq!(g.pages(r0), (0..pages).collect::<Vec<_>>());
    assert_eq!(g.pages(r1), (pages..2 * pages).collect::<Vec<_>>());
    // Access bits: every 100 ms scan sees both regions' pages referenced
    // (2^19 random touches per region per scan over 768 pages).
    let mut e = WssEstimator::new(PAGE, HistogramReading::OnesCount);
    for _ in 0..32 {
        for (r, lo) in [(r0, 0), (r1, pages)] {
            let mut bits = vec![false; pages as usize];
            for _ in 0..(1 << 19) {
                bits[(rng.random_range(lo..lo + pages) - lo) as usize] = true;
            }
            e.observe(r, &bits);
        }
    }
    assert_eq!(e.estimate_bytes(r0), 3 * MIB);
    assert_eq!(e.estimate_bytes(r1), 3 * MIB);
    let topo = Topology::clovertown();
    let llc = topo.last_level_caches();
    let bins: Vec<Bin> = llc
        .iter()
        .map(|&c| Bin {
            cache: c,
            capacity_bytes: topo.cache(c).size_bytes,
        })
        .collect();
    let items = [
        Item {
            id: r0.0,
            wss_bytes: e.estimate_bytes(r0),
        },
        Item {
            id: r1.0,
            wss_bytes: e.estimate_bytes(r1),
        },
    ];
    let (asg, fits) = unify(&items, &bins).unwrap();
    assert!(fits);
    let mut map = RegionMap::new(llc.clone());
    for (id, c) in &asg.placed {
        map.insert(RegionId(*id), e.estimate_bytes(RegionId(*id)));
        map.map_to(RegionId(*id), *c).unwrap();
    }
    assert_eq!(
        map.loads().iter().map(|x| x.1).collect::<Vec<_>>(),
        vec![3 * MIB, 3 * MIB]
    );
    let here = ProcId(0);
    let other = if map.mapping(r0)
        == Some(parsched_core::policy::regions::Mapping::Local(llc_of(
            &topo, here,
        ))) {
        r1
    } else {
        r0
    };
    match on_touch(&map, &topo, here, other, TouchRule::MicroSchedule, |_| 0).unwrap() {
        TouchDecision::MicroSchedule { to, cache } => {
            assert!(topo.cache(cache).serves(to) && !topo.cache(cache).serves(here));
        }
        d => panic!("expected a micro-schedule, got {d:?}"),
    }
}

fn llc_of(t: &Topology, p: ProcId) -> CacheId {
    t.cache_of(p, t.last_level().unwrap()).unwrap()
}

#[test]
fn bad_keys_name_the_field() {
    let mut c = RegionsConfig::default();
    let e = c.set("machine", &Value::Str("cray".into())).unwrap_err();
    assert!(e.to_string().starts_with("machine:"), "{e}");
    assert!(e.to_string().contains("clovertown|westmere"), "{e}");
    assert!(c
        .set("wss_mb", &Value::Float(-1.0))
        .unwrap_err()
        .to_string()
        .starts_with("wss_mb:"));
    assert!(c
        .set("nope", &Value::Int(1))
        .unwrap_err()
        .to_string()
        .starts_with("nope:"));
    c.set("access_time", &Value::Int(0)).unwrap();
    assert!(c
        .validate()
        .unwrap_err()
        .to_string()
        .starts_with("access_time:"));
    // A run too long to simulate is refused before it starts.
    let long = RegionsConfig {
        access_time: 1,
        accesses: 1 << 30,
        ..RegionsConfig::default()
    };
    assert!(long
        .validate()
        .unwrap_err()
        .to_string()
        .starts_with("accesses:"));
    assert!(RegionsConfig {
        access_time: 1 << 12,
        ..long
    }
    .validate()
    .is_ok());
    for &k in KEYS {
        let mut c = RegionsConfig::default();
        let e = c.set(k, &Value::Str("not-a-value".into()));
        assert!(e.is_err(), "{k} accepted a bad value");
        assert!(e.unwrap_err().to_string().starts_with(k));
    }
}

/// `effective_cache_mb` shrinks every last-level cache to whole sets (same
/// ways and lines) and moves the harmful threshold with it: on Westmere a
/// 10 MB memlat fits the nominal 12 MB L3 (unification only adds
/// micro-schedules) but not an effective 8 MB one (unification gains).
#[test]
fn effective_capacity_moves_the_fits_one_cache_threshold() {
    let base = RegionsConfig {
        machine: "westmere".into(),
        wss_mb: 10.0,
        access_time: 1 << 16,
        accesses: 1 << 22,
        ..RegionsConfig::default()
    };
    let eff = RegionsConfig {
        effective_cache_mb: Some(8.0),
        ..base.clone()
    };
    let t = eff.topology();
    for c in t.last_level_caches() {
        let d = t.cache(c);
        assert_eq!((d.size_bytes, d.ways, d.line_bytes), (8 * MIB, 16, 64));
    }
    assert_eq!(eff.timing().cache_bytes, 8 * MIB);
    // the inner caches keep their size
    let l2 = t.caches_at(2);
    assert_eq!(t.cache(l2[0]).size_bytes, 256 << 10);
    let nominal = run(&base).unwrap().normalized_performance;
    let effective = run(&eff).unwrap();
    assert!(nominal < 1.0, "{nominal}");
    assert!(effective.normalized_performance > 1.0, "{effective:?}");
    assert_eq!(effective.cache_loads, vec![5 * MIB, 5 * MIB]);
    // bad values name the key
    let mut c = RegionsConfig::default();
    assert!(c
        .set("effective_cache_mb", &Value::Float(0.0))
        .unwrap_err()
        .to_string()
        .starts_with("effective_cache_mb:"));
    c.effective_cache_mb = Some(1e6);
    assert!(c
        .validate()
        .unwrap_err()
        .to_string()
        .starts_with("effective_cache_mb:"));
}

/// `regioning=online`: starting from nothing (regions unmapped and
/// unestimated, the thread running as under the standard scheduler), §4's
/// estimator on simulated access bits and the balancer after each scan
/// reach the placement the declared regions give — memlat unified one
/// region per cache, and the balancing workload paired large with small
/// (on Clovertown by swapping threads between the full caches) — with
/// estimates of the declared sizes, and gain as the declared run does.
#[test]
fn online_regioning_reaches_the_declared_placement() {
    for (machine, workload, wss) in [
        ("clovertown", Workload::Memlat, 6.0),
        ("westmere", Workload::Memlat, 20.0),
        ("clovertown", Workload::Balance, 0.0),
        ("westmere", Workload::Balance, 0.0),
    ] {
        let declared = RegionsConfig {
            machine: machine.into(),
            workload,
            wss_mb: if wss > 0.0 { wss } else { 6.0 },
            access_time: 1 << 14,
            accesses: 1 << 25,
            ..RegionsConfig::default()
        };
        let online = RegionsConfig {
            regioning: Regioning::Online,
            scan_ms: 5.0,
            ..declared.clone()
        };
        let d = run(&declared).unwrap();
        let o = run(&online).unwrap();
        let what = format!("{machine} {workload:?}");
        assert_eq!(o.region.placement, d.region.placement, "{what}");
        assert!(o.region.rebalances >= 1, "{what}");
        // the estimates converge to the declared sizes (within a page each)
        for (pe, pd) in o.region.estimates.iter().zip(&d.region.estimates) {
            for (e, b) in pe.iter().zip(pd) {
                assert!(e.abs_diff(*b) <= 4096, "{what}: estimate {e} of {b}");
            }
        }
        // learning costs a little at the start, not the gain
        let (gd, go) = (d.normalized_performance, o.normalized_performance);
        assert!(
            go > 1.0 && go <= gd * 1.001 && go > 0.8 * gd,
            "{what}: {go} vs {gd}"
        );
        assert!(o.region.decisions.iter().all(|x| x == "regioning:online"));
    }
    // online needs forced regioning, and scans a positive period
    let bad = RegionsConfig {
        regioning: Regioning::Online,
        fallback: true,
        ..RegionsConfig::default()
    };
    assert!(bad
        .validate()
        .unwrap_err()
        .to_string()
        .starts_with("regioning:"));
    let mut c = RegionsConfig::default();
    assert!(c
        .set("scan_ms", &Value::Float(0.0))
        .unwrap_err()
        .to_string()
        .starts_with("scan_ms:"));
}

/// The cancel flag ends a run with `Interrupted` (looked at every
/// `CHECK_EVERY` events); unset, the watched run gives the same result as
/// an unwatched one.
#[test]
fn the_cancel_flag_stops_a_run_with_interrupted() {
    use crate::cancel::{with_cancel, CHECK_EVERY};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let mut spec = memlat_spec(512, 4096, CacheModel::Footprint);
    spec.chunk = 64; // 2^14 chunks: several times CHECK_EVERY events
    assert!((1u64 << 20) / spec.chunk > 2 * CHECK_EVERY as u64);
    let flag = Arc::new(AtomicBool::new(false));
    for s in [Scheduler::Standard, Scheduler::Region] {
        let watched = with_cancel(&flag, || spec.run(s)).unwrap();
        assert!(watched.makespan_ns > 0.0);
        assert_eq!(watched, spec.run(s).unwrap());
    }
    flag.store(true, Ordering::Relaxed);
    for s in [Scheduler::Standard, Scheduler::Region] {
        let r = with_cancel(&flag, || spec.run(s));
        assert_eq!(r, Err(RegionMachineError::Interrupted), "{s:?}");
    }
}

/// The tick the module documents is the one its conversions use: `PS`
/// ticks per ns.
#[test]
fn one_tick_is_one_picosecond() {
    let per_ns = TICK.per_second().expect("a physical unit") as f64 / 1e9;
    assert_eq!(per_ns, PS);
}
