//! The keys of seed 002's desktop models: the declarative schema
//! ([`parsched_core::schema`]) of [`DesktopConfig`] (`fcs`, Table 1), from
//! which `set`, the per-key checks of `validate`, the key lists, the Python
//! config classes and the key tables of `docs/formats/config-toml.md` come.
//! The keys of the cluster both models lower onto (waiting, local scheduler,
//! costs, the run) are declared once, by [`desktop_cluster_fields!`], so both
//! accept the same values for them (`figs.rs` declares the figures' schema
//! with it).

use super::{DefaultWait, DesktopConfig, DesktopScheme, RunQueues};
use crate::machines::node_costs::impl_node_costs;
use parsched_core::policy::fcs::{FRows, Fill};
use parsched_core::schema::{End, Field, Kind, Schema, U32, U64};
use parsched_core::{choices, field};
use std::sync::LazyLock;

choices!(DesktopScheme {
    Default => "default",
    Fcfs => "fcfs",
    Gang => "gang",
    Sb => "sb",
    Fcs => "fcs",
});
choices!(DefaultWait {
    Block => "block",
    SpinBlock => "spin_block",
    Spin => "spin",
});
choices!(RunQueues {
    PerNode => "per_node",
    PerCpu => "per_cpu",
});

/// The desktop's local schedulers (not the time-sharing table's `ts`).
pub(super) const LOCAL: Kind = Kind::Choice {
    choices: &["o1", "rr", "fair"],
};

/// The keys of the cluster a desktop model lowers onto, for configuration
/// type `$C` (fields of those names): one declaration for both models; the
/// five node costs come from the fragment the cluster's schema takes them
/// from too (`machines::node_costs`), with the desktop's docs.
macro_rules! desktop_cluster_fields {
    ($C:ty) => {
        [
            field!($C, "slot_ms", slot_ms: f64, Kind::POSITIVE, "ms", "", "",
                "gang (and FCS) scheduling's slot [ext: the paper does not say; 50-100 ms]")
            .worded("{}", "a finite number > 0"),
            field!($C, "spin_us", spin_us: f64, Kind::NONNEG, "µs", "", "",
                "spin before blocking (SB; FCS's F and DC jobs; default_wait = spin_block) \
                 [ext: about two context switches]"),
            field!($C, "default_wait", default_wait: choice, Kind::choice::<DefaultWait>(), "",
                "", "", "how a waiting process waits under the default scheduler: block (a \
                 blocking receive), spin_block (spin spin_us, then block) or spin (a polling \
                 receive)"),
            field!($C, "local", local: choice, LOCAL, "", "", "",
                "the nodes' scheduler: o1 (Linux 2.6, with its sleep-average bonus), fair \
                 (CFS-like, wake-up preemption) or rr (round robin, rr_quantum_ms)")
            .aliased(&[("linux26", "o1")]),
            field!($C, "o1_sleep_bonus", o1_sleep_bonus: bool, Kind::Bool, "", "", "",
                "the O(1) scheduler's sleep-average interactivity bonus"),
            field!($C, "rr_quantum_ms", rr_quantum_ms: f64, Kind::POSITIVE, "ms", "", "",
                "round robin's quantum")
            .worded("{}", "a finite number > 0"),
            $crate::machines::node_costs::tick_ms::<$C>("the kernel's tick (HZ = 1000)"),
            $crate::machines::node_costs::latency_us::<$C>(
                "one-way latency of a small message (or of a wake-up) [ext]"),
            $crate::machines::node_costs::context_switch_us::<$C>("a context switch [ext]"),
            $crate::machines::node_costs::interrupt_us::<$C>("waking a blocked process [ext]"),
            $crate::machines::node_costs::syscall_us::<$C>("the call that blocks [ext]"),
            field!($C, "start_skew_ms", start_skew_ms: f64, Kind::NONNEG, "ms", "", "",
                "processes start within this of time 0"),
            field!($C, "scale", scale: f64, Kind::POSITIVE, "", "", "",
                "multiplies the iterations (quick runs)")
            .worded("{}", "a finite number > 0"),
            field!($C, "seed", seed: u64, Kind::int(U64), "", "", "", "random seed"),
            field!($C, "reps", reps: u32, Kind::int_min(1, U32), "", "", "",
                "replications (different seeds)"),
            field!($C, "max_time_s", max_time_s: f64, Kind::POSITIVE, "s", "", "",
                "a run stops with an error past this simulated time")
            .worded("{}", "a finite number > 0"),
            field!($C, "max_events", max_events: u64, Kind::int(U64), "events", "", "",
                "a run stops with an error naming max_events past this many events; 0: no \
                 limit"),
        ]
    };
}
pub(super) use desktop_cluster_fields;

/// `head`, then the cluster keys, then `tail`, as one schema.
pub(super) fn schema_of<C>(
    model: &'static str,
    head: &[Field<C>],
    cluster: &[Field<C>],
    tail: &[Field<C>],
) -> Schema<C> {
    let all: Vec<Field<C>> = head.iter().chain(cluster).chain(tail).copied().collect();
    Schema {
        model,
        fields: Box::leak(all.into_boxed_slice()),
    }
}

type D = DesktopConfig;
impl_node_costs!(DesktopConfig);

/// The schema of [`DesktopConfig`] (the `fcs` model).
#[rustfmt::skip]
pub static FCS_SCHEMA: LazyLock<Schema<DesktopConfig>> = LazyLock::new(|| {
    let head = [
        field!(D, "scheme", scheme: choice, Kind::choice::<DesktopScheme>(), "", "", "Table 1",
            "the scheduler: default (unmodified Linux), fcfs, gang, sb (spin-block) or fcs \
             (flexible coscheduling)"),
        field!(D, "nodes", nodes: u32, Kind::int_min(1, U32), "nodes", "", "§4.2",
            "nodes (the paper: 2)"),
        field!(D, "cpus_per_node", cpus_per_node: u32, Kind::int_min(1, U32), "processors", "",
            "§4.2", "processors per node (the paper: 2)"),
        field!(D, "jobs", jobs: table, Kind::Table { min: Some(End { value: 0.0, closed: false }), max: None },
            "", "", "Table 1",
            "per-process compute multipliers, one row per job (the paper: 1,1,2,2;2,2,1,1;1,1,1,1)"),
        field!(D, "grain_us", grain_us: f64, Kind::POSITIVE, "µs", "", "§4.2",
            "compute per iteration at multiplier 1 (the paper: 1 ms)")
        .worded("{}", "a finite number > 0"),
        field!(D, "iterations", iterations: u64, Kind::int_min(1, 1_000_000_000), "", "", "§4.2",
            "iterations per job (60,000: 60 s of 1 ms, 120 s for the doubled processes)")
        .worded("{}", "1..=1000000000"),
    ];
    let tail = [
        field!(D, "runqueues", runqueues: choice, Kind::choice::<RunQueues>(), "", "", "",
            "per_node (one queue per node shared by its processors) or per_cpu (one per \
             processor, as Linux 2.6 has)"),
        field!(D, "discovery_s", classifier.discovery_s: f64, Kind::NONNEG, "s", "", "",
            "FCS: observed seconds before any classification"),
        field!(D, "coarse_grain_s", classifier.coarse_grain_s: f64, Kind::POSITIVE, "s", "", "",
            "FCS: mean granularity at or above which a job does not care about coscheduling"),
        field!(D, "frustrated_wait_ratio", classifier.frustrated_wait_ratio: f64, Kind::NONNEG,
            "", "", "", "FCS: mean wait per synchronization over the granularity above which a \
             fine-grained job is frustrated (F)"),
        field!(D, "window_s", classifier.window_s: f64, Kind::NONNEG, "s", "", "",
            "FCS: the revision window (0: classes are not revised)"),
        field!(D, "revise_after", classifier.revise_after: u32, Kind::int_min(1, U32), "", "",
            "", "FCS: consecutive periods that must agree before a class changes"),
        field!(D, "f_rows", f_rows: choice, Kind::choice::<FRows>(), "", "", "",
            "FCS: F jobs share one row (shared) or have their own (own)"),
        field!(D, "fill", fill: choice, Kind::choice::<Fill>(), "", "", "",
            "FCS: who fills processors the row leaves idle: F and DC jobs (f_dc) or DC only (dc)"),
    ];
    schema_of("fcs", &head, &desktop_cluster_fields!(D), &tail)
});

#[cfg(test)]
mod tests {
    use super::super::figs::{FigureConfig, FIGURES_SCHEMA};
    use super::*;
    use parsched_core::Value;

    #[test]
    fn both_desktop_models_accept_the_same_cluster_keys() {
        let fcs: Vec<_> = FCS_SCHEMA.describe(&DesktopConfig::default());
        let figs: Vec<_> = FIGURES_SCHEMA.describe(&FigureConfig::default());
        for k in desktop_cluster_fields!(D) {
            let a = fcs.iter().find(|i| i.key == k.key).unwrap();
            let b = figs.iter().find(|i| i.key == k.key).unwrap();
            assert_eq!((a.kind, a.doc), (b.kind, b.doc), "{}", k.key);
        }
        let mut c = FigureConfig::default();
        c.set("local", &Value::Str("fair".into())).unwrap();
        let mut d = DesktopConfig::default();
        assert_eq!(
            d.set("local", &Value::Str("ts".into()))
                .unwrap_err()
                .allowed,
            "o1|rr|fair"
        );
    }
}
