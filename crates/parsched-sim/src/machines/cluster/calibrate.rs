//! How seed 003's applications get their sizes: from the paper's Table 2 and
//! §3.1 text, the programs' real structure and stated machine constants —
//! never from the completion times of Tables 3–5.
//!
//! The paper gives, per application, its share of time communicating alone
//! (LIFE(3.5) 3.5 %, LIFE(12) 12 %, MG 26 %, LU 16 %, EP < 1 %), that each
//! runs about 25 s alone on the eight nodes, that LIFE(3.5) is the coarse
//! one ("a large matrix size with small iterations results in a coarse grain
//! application"), and that all four processes of a node fit in its 64 MB of
//! memory. The procedure, in this order:
//!
//! 1. **LIFE(3.5)** is the large matrix: the largest edge N (a multiple of 8)
//!    whose two `int` matrices fit a process's share of memory,
//!    [`PROCESS_MEMORY_B`]. Its compute per iteration is N²/8 cells at
//!    [`LIFE_CELL_US`].
//! 2. **The machine's compute jitter j** (every compute step is uniform within
//!    ±j of its mean: load imbalance and daemon noise, the same machine for
//!    every program) is solved so that LIFE(3.5) alone communicates 3.5 %.
//! 3. **LIFE(12)**: the same program and jitter; its edge N is solved from
//!    12 %.
//! 4. **MG**: NPB's mg.f on a 2 × 2 × 2 process grid at class S's 32³ grid
//!    (the smallest NPB class; the paper chose sizes "reasonably small"). The
//!    sustained rate R of NPB's Fortran on the node is solved so that MG
//!    communicates 26 %.
//! 5. **LU**: NPB's lu.f on its 4 × 2 grid at that rate R; the grid edge
//!    (at least 12, subdomain.f's smallest on 8 ranks) solved from 16 %.
//! 6. **EP**: one long computation and four global sums.
//! 7. Every application's iteration count makes its alone time 25 s.
//!
//! Shares are computed by [`dedicated`]: all ranks of one job on their own
//! processors, with the machine's message costs (ClusterConfig's defaults:
//! 32 µs latency, 5 µs send and receive overheads, 30 ns per byte) and the
//! jitter drawn from a fixed seed — the simulator's alone run without its
//! scheduler. `cluster::tests::applications_are_calibrated` checks the
//! result against the full simulator, and `reproduce cosched` reports each
//! application's simulated share beside Table 2.

pub use super::apps::LU_SWEEP_SHARE;
use super::apps::{AppKind, AppModel};
use parsched_core::program::{Dist, Step};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::VecDeque;

/// Cost of one Life cell update (µs) on the paper's 167 MHz UltraSPARC-I:
/// 8–9 loads and a store through one load/store pipe, ~7 adds and 2–3
/// data-dependent branches, about 25 cycles \[estimate\].
pub const LIFE_CELL_US: f64 = 0.15;
/// Data memory per process (bytes): the node's 64 MB (paper §3.1) less about
/// 16 MB for Solaris 2.5.1, its daemons and the messaging buffers
/// \[estimate\], over the four processes of a workload.
pub const PROCESS_MEMORY_B: f64 = 12.0 * 1024.0 * 1024.0;
/// MG's grid edge: NPB class S (32³, 5 levels).
pub const MG_EDGE: u32 = 32;
/// Flops per grid point between two consecutive `comm3` calls of mg.f: 58
/// per point and iteration in mg.f's operation count, 7/8 of it on the
/// finest level's three intervals.
pub const MG_FLOP_PER_POINT: f64 = 17.0;
/// LU's smallest grid edge on 8 ranks (subdomain.f refuses a local extent
/// below 3 on the 4 × 2 grid).
pub const LU_MIN_EDGE: u32 = 12;
/// Time each application runs alone (s, paper §3.1).
pub const ALONE_S: f64 = 25.0;
/// Ranks of a job (the paper's eight workstations).
pub const WIDTH: u32 = 8;
/// Iterations the dedicated run averages over.
const SAMPLE_ITERATIONS: usize = 24;

/// The message costs of the machine the applications are sized on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Costs {
    pub send_us: f64,
    pub recv_us: f64,
    pub wire_us: f64,
    pub per_byte_us: f64,
}

impl Costs {
    /// The costs of a machine with this one-way small-message latency (µs,
    /// the overheads included), send and receive overheads (µs) and wire
    /// time per byte (ns) (`ClusterConfig::costs` gives a configuration's).
    pub fn new(
        latency_us: f64,
        send_overhead_us: f64,
        recv_overhead_us: f64,
        per_byte_ns: f64,
    ) -> Costs {
        Costs {
            send_us: send_overhead_us,
            recv_us: recv_overhead_us,
            wire_us: latency_us - send_overhead_us - recv_overhead_us,
            per_byte_us: per_byte_ns * 1e-3,
        }
    }

    /// The paper's machine: 32 µs one way, 5 µs to send and to receive, 30
    /// ns per byte (`ClusterConfig`'s defaults; its tests check they agree).
    pub fn paper() -> Costs {
        Costs::new(32.0, 5.0, 5.0, 30.0)
    }
}

/// One iteration body run alone: mean time per iteration and mean share of
/// it spent inside sends and receives (waits included).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Dedicated {
    pub iteration_us: f64,
    pub comm_share: f64,
}

fn flatten(steps: &[Step], out: &mut Vec<Step>) {
    for s in steps {
        match s {
            Step::Repeat { count, body } => {
                for _ in 0..*count {
                    flatten(body, out);
                }
            }
            other => out.push(other.clone()),
        }
    }
}

/// Runs `iterations` copies of `body` on `width` ranks, each on its own
/// processor (no scheduler): computes take their drawn demand, a send its
/// overhead, a receive waits for the matching message (FIFO per pair, wire
/// time plus bytes, one transfer at a time on a node's link) and then its
/// overhead. Peers absent for a rank
/// (`Peer::absent`) are skipped, as the machine does.
pub fn dedicated(
    body: &[Step],
    width: u32,
    costs: Costs,
    iterations: usize,
    seed: u64,
) -> Dedicated {
    let mut flat = Vec::new();
    flatten(body, &mut flat);
    let n = width as usize;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut t = vec![0.0f64; n];
    let mut comm = vec![0.0f64; n];
    let mut pc = vec![0usize; n];
    let mut queue: Vec<VecDeque<f64>> = vec![VecDeque::new(); n * n];
    let mut last = vec![0.0f64; n * n];
    let mut link = vec![0.0f64; n];
    let total = flat.len() * iterations;
    loop {
        let mut moved = false;
        for r in 0..n {
            while pc[r] < total {
                let step = &flat[pc[r] % flat.len()];
                let own = r as u32;
                match step {
                    Step::Compute { demand } => {
                        t[r] += match *demand {
                            Dist::Uniform { lo, hi } => rng.random_range(lo..=hi),
                            ref d => d.mean(width),
                        };
                    }
                    Step::Send { to, bytes } if !to.absent(own, width) => {
                        let d = to.resolve(own, width).unwrap_or(own) as usize;
                        t[r] += costs.send_us;
                        comm[r] += costs.send_us;
                        // The node's link carries one transfer at a time.
                        let xfer = *bytes as f64 * costs.per_byte_us;
                        let start = t[r].max(link[r]);
                        link[r] = start + xfer;
                        let at = (start + costs.wire_us + xfer).max(last[r * n + d]);
                        last[r * n + d] = at;
                        queue[r * n + d].push_back(at);
                    }
                    Step::Receive { from } if !from.absent(own, width) => {
                        let s = from.resolve(own, width).unwrap_or(own) as usize;
                        let Some(at) = queue[s * n + r].pop_front() else {
                            break;
                        };
                        let end = t[r].max(at) + costs.recv_us;
                        comm[r] += end - t[r];
                        t[r] = end;
                    }
                    _ => {}
                }
                pc[r] += 1;
                moved = true;
            }
        }
        if pc.iter().all(|&p| p >= total) {
            break;
        }
        assert!(moved, "the application's program deadlocks when run alone");
    }
    let span = t.iter().cloned().fold(0.0, f64::max);
    Dedicated {
        iteration_us: span / iterations as f64,
        comm_share: comm.iter().sum::<f64>() / (n as f64 * span),
    }
}

fn solve(lo: f64, hi: f64, want: f64, decreasing: bool, f: impl Fn(f64) -> f64) -> f64 {
    let (mut lo, mut hi) = (lo, hi);
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if (f(mid) > want) == decreasing {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

fn run(costs: Costs, kind: AppKind, size: u32, compute_us: f64, jitter: f64) -> Dedicated {
    let m = AppModel {
        iterations: 1,
        size,
        compute_us,
        jitter,
        spin_time_us: 0.0,
    };
    let body = m.body(kind, WIDTH);
    dedicated(&body, WIDTH, costs, SAMPLE_ITERATIONS, 0x5eed_0003)
}

fn life_compute_us(edge: u32) -> f64 {
    LIFE_CELL_US * edge as f64 * edge as f64 / WIDTH as f64
}

/// NPB LU's operation count per iteration and process (lu.f), in flops.
pub fn lu_flop(edge: u32) -> f64 {
    let n = edge as f64;
    (1984.77 * n * n * n - 10923.3 * n * n + 27770.9 * n - 144010.0) / WIDTH as f64
}

/// MG's flops per V-cycle and process at edge `edge` (the `comm3` intervals
/// of [`AppModel::mg_levels`], [`MG_FLOP_PER_POINT`] per point each).
pub fn mg_flop(edge: u32) -> f64 {
    AppModel::mg_levels(edge)
        .iter()
        .map(|&k| MG_FLOP_PER_POINT * (1u64 << (3 * k)) as f64 / WIDTH as f64)
        .sum()
}

/// The calibration for a machine's message costs: the applications' models
/// and the machine constants it solved. A value: computed where a run (or a
/// report) starts, by [`Calibration::of`], and passed to what sizes the
/// applications.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Calibration {
    /// The message costs the applications were sized on.
    pub costs: Costs,
    /// Compute jitter j, from LIFE(3.5)'s share.
    pub jitter: f64,
    /// NPB's sustained rate on a node (Mflop/s), from MG's share.
    pub mflops: f64,
    pub models: [AppModel; 5],
}

fn with_iterations(costs: Costs, kind: AppKind, mut m: AppModel) -> AppModel {
    let d = run(costs, kind, m.size, m.compute_us, m.jitter);
    m.iterations = ((ALONE_S * 1e6 / d.iteration_us).round() as u64).max(1);
    m
}

fn compute(costs: Costs) -> Calibration {
    let run = |kind, size, compute_us, jitter| run(costs, kind, size, compute_us, jitter);
    let life35 = {
        let cells = PROCESS_MEMORY_B / 8.0 * WIDTH as f64; // two int matrices
        (cells.sqrt() as u32) / 8 * 8
    };
    let share = |k: AppKind| k.comm_share();
    let c35 = life_compute_us(life35);
    let jitter = solve(0.0, 0.5, share(AppKind::Life3_5), false, |j| {
        run(AppKind::Life3_5, life35, c35, j).comm_share
    });
    let life12 = solve(16.0, life35 as f64, share(AppKind::Life12), true, |e| {
        let e = e as u32;
        run(AppKind::Life12, e, life_compute_us(e), jitter).comm_share
    }) as u32;
    let mflops = solve(1.0, 1000.0, share(AppKind::Mg), false, |r| {
        run(AppKind::Mg, MG_EDGE, mg_flop(MG_EDGE) / r, jitter).comm_share
    });
    let lu_share = |e: u32| run(AppKind::Lu, e, lu_flop(e) / mflops, jitter).comm_share;
    let lu = (LU_MIN_EDGE..=102)
        .find(|&e| lu_share(e) <= share(AppKind::Lu))
        .map(|e| {
            // The edge whose share is nearer 16 %: e or the one before it.
            if e > LU_MIN_EDGE
                && (lu_share(e - 1) - share(AppKind::Lu)).abs()
                    < (lu_share(e) - share(AppKind::Lu)).abs()
            {
                e - 1
            } else {
                e
            }
        })
        .unwrap_or(LU_MIN_EDGE);
    let mk = |kind, size, compute_us| {
        with_iterations(
            costs,
            kind,
            AppModel {
                iterations: 1,
                size,
                compute_us,
                jitter,
                spin_time_us: 100.0,
            },
        )
    };
    let ep = AppModel {
        iterations: 100,
        size: 0,
        compute_us: ALONE_S * 1e6 / 100.0,
        jitter,
        spin_time_us: 100.0,
    };
    Calibration {
        costs,
        jitter,
        mflops,
        models: [
            mk(AppKind::Life3_5, life35, c35),
            mk(AppKind::Life12, life12, life_compute_us(life12)),
            mk(AppKind::Mg, MG_EDGE, mg_flop(MG_EDGE) / mflops),
            mk(AppKind::Lu, lu, lu_flop(lu) / mflops),
            ep,
        ],
    }
}

impl Calibration {
    /// The calibration for a machine with these message costs
    /// ([`Costs::paper`] for the paper's): the procedure of the module
    /// documentation, so that each application communicates its Table 2
    /// share on that machine (a sensitivity of the sizes to the costs the
    /// paper does not state). Deterministic; about 50 ms.
    pub fn of(costs: Costs) -> Calibration {
        compute(costs)
    }

    /// `kind`'s calibrated model.
    pub fn model(&self, kind: AppKind) -> AppModel {
        self.models[kind.index()]
    }

    /// The share `kind` communicates alone under its calibrated model, by
    /// [`dedicated`].
    pub fn dedicated_share(&self, kind: AppKind) -> f64 {
        let m = self.model(kind);
        run(self.costs, kind, m.size, m.compute_us, m.jitter).comm_share
    }
}

/// One application's row of [`report`].
#[derive(Debug, Clone, serde::Serialize)]
pub struct AppRow {
    pub app: &'static str,
    /// Matrix or grid edge (0 for EP).
    pub size: u32,
    pub iterations: u64,
    pub compute_us: f64,
    /// Its share communicating alone by [`dedicated`], and the paper's.
    pub share: f64,
    pub paper_share: f64,
}

/// The calibration as data: the constants it assumed, the two it solved and
/// each application's outcome (what `reproduce cosched` prints).
#[derive(Debug, Clone, serde::Serialize)]
pub struct Report {
    pub life_cell_us: f64,
    pub process_memory_mib: f64,
    pub mg_edge: u32,
    pub lu_min_edge: u32,
    pub lu_sweep_share: f64,
    pub alone_s: f64,
    /// Solved from LIFE(3.5)'s share.
    pub jitter: f64,
    /// Solved from MG's share.
    pub mflops: f64,
    pub apps: Vec<AppRow>,
}

/// The report of a calibration ([`Calibration::of`]).
pub fn report(cal: &Calibration) -> Report {
    Report {
        life_cell_us: LIFE_CELL_US,
        process_memory_mib: PROCESS_MEMORY_B / (1024.0 * 1024.0),
        mg_edge: MG_EDGE,
        lu_min_edge: LU_MIN_EDGE,
        lu_sweep_share: LU_SWEEP_SHARE,
        alone_s: ALONE_S,
        jitter: cal.jitter,
        mflops: cal.mflops,
        apps: AppKind::ALL
            .iter()
            .zip(cal.models)
            .map(|(&k, m)| AppRow {
                app: k.name(),
                size: m.size,
                iterations: m.iterations,
                compute_us: m.compute_us,
                share: cal.dedicated_share(k),
                paper_share: k.comm_share(),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use parsched_core::program::Peer;

    #[test]
    fn dedicated_exchange_costs_one_latency_and_the_bytes() {
        // Two ranks swap one 1000-byte message after 100 µs of compute.
        let body = vec![
            Step::Compute {
                demand: Dist::Const { value: 100.0 },
            },
            Step::Send {
                to: Peer::Xor { mask: 1 },
                bytes: 1000,
            },
            Step::Receive {
                from: Peer::Xor { mask: 1 },
            },
        ];
        let c = Costs {
            send_us: 5.0,
            recv_us: 5.0,
            wire_us: 22.0,
            per_byte_us: 0.03,
        };
        let d = dedicated(&body, 2, c, 4, 1);
        assert!(
            (d.iteration_us - (100.0 + 32.0 + 30.0)).abs() < 1e-9,
            "{d:?}"
        );
        assert!((d.comm_share - 62.0 / 162.0).abs() < 1e-9);
    }

    #[test]
    fn costlier_messages_make_a_coarser_life12_with_the_same_share() {
        let paper = Calibration::of(Costs::paper());
        let slow = Costs {
            send_us: 12.0,
            recv_us: 12.0,
            wire_us: 8.0,
            ..Costs::paper()
        };
        let cal = Calibration::of(slow);
        assert_eq!(cal, Calibration::of(slow), "deterministic");
        assert_eq!(cal.costs, slow);
        let (a, b) = (paper.models[1], cal.models[1]);
        assert!(
            b.size > a.size && b.iterations < a.iterations,
            "{a:?} {b:?}"
        );
        let d = run(slow, AppKind::Life12, b.size, b.compute_us, b.jitter);
        assert!((d.comm_share - 0.12).abs() < 0.003, "{d:?}");
    }

    #[test]
    fn the_shares_come_out_as_table_2_says() {
        let cal = Calibration::of(Costs::paper());
        assert!(cal.jitter > 0.0 && cal.jitter < 0.2, "{cal:?}");
        assert!(cal.mflops > 5.0 && cal.mflops < 100.0, "{cal:?}");
        for k in AppKind::ALL {
            let s = cal.dedicated_share(k);
            if k == AppKind::Ep {
                assert!(s < 0.01);
            } else if k != AppKind::Lu {
                assert!((s - k.comm_share()).abs() < 0.002, "{k}: {s}");
            }
            let m = cal.model(k);
            let d = run(Costs::paper(), k, m.size, m.compute_us, m.jitter);
            let alone = d.iteration_us * m.iterations as f64 * 1e-6;
            // 25 s to within half an iteration
            let tol = 0.5 * d.iteration_us * 1e-6 + 1e-9;
            assert!(
                (alone - ALONE_S).abs() <= tol || k == AppKind::Ep,
                "{k}: {alone}"
            );
        }
        // LIFE(3.5) is the larger matrix and the coarser grain.
        let [l35, l12, ..] = cal.models;
        assert!(l35.size > 4 * l12.size && l35.compute_us > 20.0 * l12.compute_us);
    }
}
