//! Slot choosers for `run_with` (each gang's slot in the matrix, at build).

use super::*;
use parsched_core::policy::gang_place::{FirstFit, SlotChooser, SlotView};

/// A chooser that records the views it was shown.
struct Recording<C>(C, Vec<(i64, u32, Vec<u32>, Vec<u32>)>);
impl<C: SlotChooser> SlotChooser for Recording<C> {
    fn choose(&mut self, v: &SlotView) -> Result<Option<usize>, String> {
        let seen = (
            v.job.id,
            v.procs,
            v.slot_free.to_vec(),
            v.slot_jobs.to_vec(),
        );
        self.1.push(seen);
        self.0.choose(v)
    }
}

/// Every gang after the first in a new slot of its own.
struct NewSlot;
impl SlotChooser for NewSlot {
    fn choose(&mut self, v: &SlotView) -> Result<Option<usize>, String> {
        Ok(Some(v.slots()))
    }
}

/// A valid slot picked at random (xorshift from `seed`): an existing
/// slot with room or a new one.
struct Random(u64);
impl SlotChooser for Random {
    fn choose(&mut self, v: &SlotView) -> Result<Option<usize>, String> {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        let ok: Vec<usize> = (0..=v.slots())
            .filter(|&s| s == v.slots() || v.slot_free[s] >= v.procs)
            .collect();
        Ok(Some(ok[(self.0 % ok.len() as u64) as usize]))
    }
}

/// Gives `answer` for gang `at`, first fit for the others.
struct At(i64, Result<Option<usize>, String>);
impl SlotChooser for At {
    fn choose(&mut self, v: &SlotView) -> Result<Option<usize>, String> {
        if v.job.id == self.0 {
            return self.1.clone();
        }
        FirstFit.choose(v)
    }
}

/// Gangs of 4 on 8 processors, 3 per processor: room for choices.
fn eight(sched: &str, skew: bool) -> SyncConfig {
    cfg(&[
        ("n", Value::Int(4)),
        ("P", Value::Int(8)),
        ("l", Value::Int(3)),
        ("k", Value::Int(400)),
        ("tq", Value::Float(5.0)),
        ("sched", s(sched)),
        ("skew", Value::Bool(skew)),
    ])
}

#[test]
fn barrier_first_fit_chooser_is_the_built_in() {
    for sched in ["gang", "local"] {
        for wait in ["busy", "block"] {
            for skew in [true, false] {
                let c = SyncConfig {
                    wait: if wait == "busy" {
                        WaitStrategy::Busy
                    } else {
                        WaitStrategy::Block
                    },
                    ..eight(sched, skew)
                };
                let a = run(&c, SyncOptions::default()).unwrap();
                let mut rec = Recording(FirstFit, Vec::new());
                let b = run_with(&c, SyncOptions::default(), Some(&mut rec)).unwrap();
                assert!(a.same_simulation(&b), "{sched}/{wait}/{skew}");
                // Asked once per gang, in order, with the matrix so far.
                let ids: Vec<i64> = rec.1.iter().map(|v| v.0).collect();
                assert_eq!(ids, (0..3 + i64::from(skew)).collect::<Vec<_>>());
                let last = rec.1.last().unwrap();
                let want = if skew {
                    (3, 4, vec![0, 0], vec![1, 2])
                } else {
                    (2, 4, vec![0], vec![2])
                };
                assert_eq!(*last, want, "{sched}/{wait}/{skew}");
            }
        }
    }
}

#[test]
fn barrier_competitors_in_new_slots() {
    // P = 8, n = 4, l = 3, no skew. First fit: the measured gang and the
    // first competitor share slot 0 (processors 0-3 and 4-7), the second
    // competitor has slot 1 (0-3; 4-7 idle): the measured gang runs one
    // slot in 2, and a quarter of the cells idle. NewSlot gives every
    // gang a slot of its own (all on processors 0-3): the measured gang
    // runs one slot in 3, so an iteration takes 3/2 as long (its
    // iterations, a few ms, run within its quanta of 5 ms either way),
    // and half of the cells idle.
    let c = eight("gang", false);
    let ff = run(&c, AUDIT).unwrap();
    let ns = run_with(&c, AUDIT, Some(&mut NewSlot)).unwrap();
    let ratio = ns.time_per_iter / ff.time_per_iter;
    assert!(rel(ratio, 1.5) < 0.05, "{ratio}");
    assert!(rel(ff.fragmentation, 0.25) < 0.05, "{}", ff.fragmentation);
    assert!(rel(ns.fragmentation, 0.5) < 0.05, "{}", ns.fragmentation);
    // Under local round robin the allocation fixes the processors:
    // first fit puts 2 threads on processors 0-3 and 1 on 4-7 (the
    // measured gang on 0-3 shares them with one competitor); NewSlot
    // puts all 3 on 0-3 and leaves 4-7 idle, so the measured gang's
    // threads get one quantum in 3 instead of one in 2.
    let c = SyncConfig {
        wait: WaitStrategy::Block,
        ..eight("local", false)
    };
    let ff = run(&c, AUDIT).unwrap();
    let ns = run_with(&c, AUDIT, Some(&mut NewSlot)).unwrap();
    assert!(
        ns.time_per_iter > 1.3 * ff.time_per_iter,
        "{ns:?} vs {ff:?}"
    );
    assert!(ns.useful_utilization < 0.6 * ff.useful_utilization);
}

#[test]
fn barrier_bad_answers_name_the_gang() {
    let c = eight("gang", true);
    let err = |gang: i64, a: Result<Option<usize>, String>| match run_with(
        &c,
        SyncOptions::default(),
        Some(&mut At(gang, a)),
    ) {
        Err(RunError::Machine(MachineError::Policy(e))) => e.0,
        other => panic!("{other:?}"),
    };
    // Skew has slot 0 (all 8 processors), the measured gang slot 1.
    assert_eq!(
        err(1, Ok(Some(5))),
        "gang_place for gang 1 (measured): slot 5 is out of range; allowed: 0..1 (an \
         existing slot) or 1 (a new slot)"
    );
    assert_eq!(
        err(1, Ok(Some(0))),
        "gang_place for gang 1 (measured): slot 0 has no room (0 free cells, the gang \
         needs 4)"
    );
    assert_eq!(
        err(0, Ok(None)),
        "gang_place for gang 0 (skew): returned None; allowed: a slot index in 0..=0 \
         (every gang is placed when the machine is built)"
    );
    assert_eq!(
        err(3, Err("place raised ValueError: no".into())),
        "gang_place for gang 3 (competitor): place raised ValueError: no"
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
    /// Any valid placement: the fast paths (batches, the periodic
    /// solver) give exactly the event path's results, and the audit
    /// (threads in their gang's slot, blocked threads off the
    /// processors) holds.
    #[test]
    fn barrier_fast_paths_hold_for_any_placement(
        n in 1i64..5, extra in 0i64..5, l in 1i64..5, k in 1i64..800,
        compute in proptest::bool::ANY, skew in proptest::bool::ANY,
        gang in proptest::bool::ANY, wait in 0usize..3, pick in 1u64..u64::MAX,
        seed in 0i64..1000, tq in 1u32..20,
    ) {
        let c = cfg(&[
            ("n", Value::Int(n)),
            ("P", Value::Int(n + extra)),
            ("l", Value::Int(l)),
            ("k", Value::Int(k)),
            ("tq", Value::Float(f64::from(tq))),
            ("competitors", s(if compute { "compute" } else { "same" })),
            ("skew", Value::Bool(skew)),
            ("seed", Value::Int(seed)),
            ("sched", s(if gang { "gang" } else { "local" })),
            ("wait", s(["busy", "block", "twophase"][wait])),
        ]);
        let fast = run_with(&c, SyncOptions::default(), Some(&mut Random(pick))).unwrap();
        let slow = SyncOptions { audit: true, fast: false };
        let slow = run_with(&c, slow, Some(&mut Random(pick))).unwrap();
        proptest::prop_assert_eq!(format!("{:?}", strip(fast)), format!("{:?}", strip(slow)));
    }
}
