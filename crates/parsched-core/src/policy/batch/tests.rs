//! Unit tests of the batch policies (tie rules, reservations, the checking
//! pass against the reference implementations).

use super::*;

fn run(
    p: &mut dyn BatchPolicy,
    now: u64,
    total: u32,
    running: &[(u32, u64)],
    queue: &[(u32, u64)],
) -> Vec<usize> {
    let running: Vec<RunningJob> = running
        .iter()
        .map(|&(procs, requested_end)| RunningJob {
            procs,
            requested_end,
        })
        .collect();
    let busy: u32 = running.iter().map(|r| r.procs).sum();
    let queue: Vec<QueuedJob> = queue
        .iter()
        .map(|&(procs, requested)| QueuedJob { procs, requested })
        .collect();
    let mut by_end: Vec<(u64, u32)> = running.iter().map(|r| (r.requested_end, r.procs)).collect();
    by_end.sort_unstable();
    let view = BatchView {
        now,
        total,
        free: total - busy,
        running: &running,
        running_by_end: Some(&by_end),
        queue: &queue,
        backfill: None,
    };
    let mut out = Vec::new();
    p.schedule(&view, &mut out);
    out
}

#[test]
fn fcfs_stops_at_first_misfit() {
    let s = run(&mut Fcfs, 0, 10, &[(4, 100)], &[(3, 5), (4, 5), (1, 5)]);
    assert_eq!(s, vec![0]);
}

#[test]
fn easy_shadow_and_extra() {
    // 10 procs; running 6 until 100 and 2 until 50; free 2. Head wants 5:
    // at 50 avail 4, at 100 avail 10 → shadow 100, extra 5.
    let ends = [(50, 2), (100, 6)];
    assert_eq!(
        Easy::shadow(0, 2, &ends, 5),
        Some(Shadow {
            time: 100,
            extra: 5
        })
    );
    assert_eq!(Easy::shadow(0, 2, &ends, 11), None);
    // Candidates: (2, 200) does not end before 100 and 2 <= extra 5 → yes.
    let s = run(
        &mut Easy::default(),
        0,
        10,
        &[(6, 100), (2, 50)],
        &[(5, 10), (2, 200)],
    );
    assert_eq!(s, vec![1]);
    // Head 10 → shadow 100, extra 0: a candidate ending exactly at the
    // shadow time backfills; one ending a tick later does not.
    let s = run(
        &mut Easy::default(),
        0,
        10,
        &[(6, 100), (2, 50)],
        &[(10, 10), (2, 100), (1, 1)],
    );
    assert_eq!(s, vec![1]);
    let s = run(
        &mut Easy::default(),
        0,
        10,
        &[(6, 100), (2, 50)],
        &[(10, 10), (2, 101)],
    );
    assert!(s.is_empty());
}

#[test]
fn overrunning_job_is_expected_to_end_next_tick() {
    let s = run(
        &mut Easy::default(),
        500,
        10,
        &[(8, 100)],
        &[(10, 10), (2, 1), (2, 2)],
    );
    // Shadow 501: (2,1) ends at 501 → backfills; (2,2) does not fit (free 0).
    assert_eq!(s, vec![1]);
}

#[test]
fn profile_earliest_and_reserve() {
    let mut p = Profile::default();
    p.rebuild(0, 2, &[(10, 3), (20, 5)]);
    assert_eq!(p.steps(), [(0, 2), (10, 5), (20, 10)]);
    assert_eq!(p.earliest(2, 100), Some(0));
    assert_eq!(p.earliest(3, 5), Some(10));
    assert_eq!(p.earliest(6, 1), Some(20));
    assert_eq!(p.earliest(11, 1), None);
    p.reserve(5, 10, 2);
    assert_eq!(p.steps(), [(0, 2), (5, 0), (10, 3), (15, 5), (20, 10)]);
    assert_eq!(p.earliest(1, 1), Some(0));
    assert_eq!(p.earliest(1, 6), Some(10));
    assert_eq!(p.earliest(4, 1), Some(15));
}

#[test]
fn place_equals_earliest_then_reserve() {
    let mut a = Profile::default();
    a.rebuild(3, 1, &[(7, 2), (9, 1), (20, 4)]);
    let mut b = a.clone();
    for (p, d) in [(2, 3), (1, 1), (4, 5), (8, 2), (3, 10), (1, 30), (2, 2)] {
        let t = a.earliest(p, d).unwrap();
        a.reserve(t, d, p);
        assert_eq!(b.place(p, d), Some(t));
        assert_eq!(a, b);
    }
    assert_eq!(b.place(9, 1), None);
}

#[test]
fn conservative_protects_every_reservation() {
    // 10 procs, running 8 until 100 (free 2). Queue: A(10,50) reserved at
    // 100; B(2,200): now..200 would overlap A's [100,150) needing 10 → no,
    // reserved at 150; C(2,100): [0,100) free 2 → starts now.
    let mut c = Conservative::default();
    let running = [RunningJob {
        procs: 8,
        requested_end: 100,
    }];
    let queue = [
        QueuedJob {
            procs: 10,
            requested: 50,
        },
        QueuedJob {
            procs: 2,
            requested: 200,
        },
        QueuedJob {
            procs: 2,
            requested: 100,
        },
    ];
    let view = BatchView {
        now: 0,
        total: 10,
        free: 2,
        running: &running,
        running_by_end: None,
        queue: &queue,
        backfill: None,
    };
    assert_eq!(c.plan(&view), vec![100, 150, 0]);
    let mut s = Vec::new();
    c.schedule(&view, &mut s);
    assert_eq!(s, vec![2]);
    // EASY agrees here: shadow 100 with extra 0, so B (ends at 200)
    // waits and C (ends at 100) backfills.
    let mut e = Easy::default();
    let mut s = Vec::new();
    e.schedule(&view, &mut s);
    assert_eq!(s, vec![2]);
}

#[test]
fn fit_bounds_dominance() {
    let mut b = conservative::FitBounds::default();
    b.reset(100);
    assert_eq!(b.bound(4, 10), 0);
    b.record(2, 5, 130);
    // no narrower or no shorter: no bound
    assert_eq!(b.bound(1, 10), 0);
    assert_eq!(b.bound(4, 4), 0);
    assert_eq!(b.bound(2, 5), 130);
    assert_eq!(b.bound(8, 50), 130);
    b.record(1, 1, 120);
    assert_eq!(b.bound(1, 10), 120);
    assert_eq!(b.bound(8, 50), 130);
    // a fit of u32::MAX ticks or more is not kept
    b.record(1, u32::MAX as u64, 500);
    assert_eq!(b.bound(8, u64::MAX), 130);
    b.reset(0);
    assert_eq!(b.bound(8, 50), 0);
}

mod props {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// `FitBounds::bound` never exceeds a job's earliest fit on a
        /// profile that only loses processors (a pass), whatever the jobs
        /// before it, and the ring wrapping around: so searches may start
        /// there.
        #[test]
        fn fit_bounds_are_lower_bounds(
            now in 0u64..1000,
            free in 0u32..=16,
            ends in proptest::collection::vec((1u64..200, 1u32..=8), 0..6),
            jobs in proptest::collection::vec((1u32..=24, 1u64..120), 1..60),
        ) {
            let mut ends: Vec<(u64, u32)> =
                ends.into_iter().map(|(d, p)| (now + d, p)).collect();
            ends.sort_unstable();
            let total = free + ends.iter().map(|e| e.1).sum::<u32>();
            let mut profile = Profile::default();
            profile.rebuild(now, free, &ends);
            let mut fits = conservative::FitBounds::default();
            fits.reset(now);
            for (procs, dur) in jobs {
                let Some(t) = profile.earliest(procs, dur) else {
                    prop_assert!(procs > total);
                    continue;
                };
                let b = fits.bound(procs, dur);
                prop_assert!(b <= t, "bound {b} after the earliest fit {t}");
                profile.reserve(t, dur, procs);
                fits.record(procs, dur, t);
            }
        }
    }
}

#[test]
fn expected_ends_from_the_sorted_list_equal_the_sorted_running_jobs() {
    // overrunning jobs (requested end at or before now) are expected at
    // now + 1, in processor order, as a full sort puts them
    let now = 100;
    let running: Vec<RunningJob> = [(5, 90), (1, 101), (3, 100), (2, 300), (4, 50), (1, 300)]
        .iter()
        .map(|&(procs, requested_end)| RunningJob {
            procs,
            requested_end,
        })
        .collect();
    let mut by_end: Vec<(u64, u32)> = running.iter().map(|r| (r.requested_end, r.procs)).collect();
    by_end.sort_unstable();
    let queue = [];
    let mut view = BatchView {
        now,
        total: 20,
        free: 4,
        running: &running,
        running_by_end: None,
        queue: &queue,
        backfill: None,
    };
    let (mut a, mut b) = (Vec::new(), Vec::new());
    expected_ends(&mut a, &view);
    view.running_by_end = Some(&by_end);
    expected_ends(&mut b, &view);
    assert_eq!(a, b);
    assert_eq!(&b[..4], &[(101, 1), (101, 3), (101, 4), (101, 5)]);
}
