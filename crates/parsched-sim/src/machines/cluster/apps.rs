//! The applications of seed 003 (§3.1) as message-passing programs, shaped
//! after the real codes; their sizes come from the paper's Table 2 and text
//! by the procedure of `calibrate.rs`, which imports this module (never
//! from Tables 3–5).
//!
//! * **LIFE(3.5), LIFE(12)**: the MPICH Game of Life — the N × N matrix split
//!   over a 2 × 4 torus of blocks (N/2 rows × N/4 columns); every iteration
//!   computes N²/8 cells, sends its boundary to its four neighbours (columns
//!   of N/2 cells to ranks ±1, rows of N/4 cells to ranks ±4, 4 bytes a
//!   cell), receives theirs, and ends with a barrier (paper: "four nearest
//!   neighbors", "a barrier separating the iterations").
//! * **MG**: NPB mg.f on its 2 × 2 × 2 process grid — per V-cycle 3·lt − 1
//!   `comm3` calls (levels 4,3,2,1 down, 1 at the bottom, 2,2,3,3,4,4 up, 5,5
//!   on the finest and the main loop's `resid` on 5), each after its share of
//!   the cycle's compute (17 flops per point of its level) and each three
//!   dependent pairwise exchanges, one per axis with the rank `XOR 2^axis`,
//!   two faces of 8·(n/2 + 2)² bytes each way; no reduction inside the loop.
//! * **LU**: NPB lu.f's SSOR on its 4 × 2 grid (not periodic) — `rhs` with
//!   its two halo exchanges (40·N² bytes north–south, 20·N² east–west), then
//!   the lower sweep as a wavefront over N − 2 planes (receive from north and
//!   west, compute the plane, send 20·N and 10·N bytes south and east) and
//!   the upper sweep mirrored; no reduction inside the loop.
//! * **EP**: one long computation in chunks, then four global sums (three
//!   results and the timer).

use parsched_core::program::{Dist, Peer, Program, Step};
use parsched_core::ConfigError;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Share of an LU iteration's flops in the two SSOR sweeps (jacld/blts,
/// jacu/buts); the rest is `rhs` \[estimate\].
pub const LU_SWEEP_SHARE: f64 = 0.6;

/// An application of the paper.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AppKind {
    #[serde(rename = "LIFE3.5")]
    Life3_5,
    #[serde(rename = "LIFE12")]
    Life12,
    #[serde(rename = "MG")]
    Mg,
    #[serde(rename = "LU")]
    Lu,
    #[serde(rename = "EP")]
    Ep,
}

impl AppKind {
    pub const ALL: [AppKind; 5] = [
        AppKind::Life3_5,
        AppKind::Life12,
        AppKind::Mg,
        AppKind::Lu,
        AppKind::Ep,
    ];

    pub fn name(self) -> &'static str {
        match self {
            AppKind::Life3_5 => "LIFE3.5",
            AppKind::Life12 => "LIFE12",
            AppKind::Mg => "MG",
            AppKind::Lu => "LU",
            AppKind::Ep => "EP",
        }
    }

    /// The share of its alone time the paper says it communicates.
    pub fn comm_share(self) -> f64 {
        match self {
            AppKind::Life3_5 => 0.035,
            AppKind::Life12 => 0.12,
            AppKind::Mg => 0.26,
            AppKind::Lu => 0.16,
            AppKind::Ep => 0.005,
        }
    }

    /// Its position in [`AppKind::ALL`] (and in a calibration's models).
    pub fn index(self) -> usize {
        AppKind::ALL.iter().position(|&a| a == self).unwrap_or(0)
    }
}

impl fmt::Display for AppKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for AppKind {
    type Err = ConfigError;
    /// Case-insensitive; `LIFE(12)`, `life12` and `LIFE12` are the same.
    fn from_str(s: &str) -> Result<AppKind, ConfigError> {
        let key: String = s
            .trim()
            .chars()
            .filter(|c| !matches!(c, '(' | ')' | ' ' | '_' | '-'))
            .collect::<String>()
            .to_ascii_uppercase();
        AppKind::ALL
            .into_iter()
            .find(|a| a.name() == key)
            .ok_or_else(|| {
                ConfigError::new(
                    "jobs",
                    format!(
                        "unknown application {:?}",
                        parsched_core::clip(s, parsched_core::ECHO_MAX)
                    ),
                    "LIFE3.5, LIFE12, MG, LU, EP",
                )
            })
    }
}

/// An application's parameters (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AppModel {
    /// Iterations (LIFE: generations, MG: V-cycles, LU: SSOR iterations,
    /// EP: compute chunks).
    pub iterations: u64,
    /// Problem size: the matrix or grid edge N (LIFE, MG, LU; 0 for EP).
    pub size: u32,
    /// Mean compute per iteration and process (µs).
    pub compute_us: f64,
    /// Each compute is uniform within ±`jitter` of its mean (the machine's
    /// load imbalance and daemon noise).
    pub jitter: f64,
    /// The spin time (µs) before blocking or yielding when no `app_spin_us`
    /// or `spin_time_us` is given; `parsched tune cosched` chooses them by
    /// the paper's procedure.
    pub spin_time_us: f64,
}

fn compute(mean_us: f64, jitter: f64) -> Step {
    Step::Compute {
        demand: if jitter > 0.0 {
            Dist::Uniform {
                lo: mean_us * (1.0 - jitter),
                hi: mean_us * (1.0 + jitter),
            }
        } else {
            Dist::Const { value: mean_us }
        },
    }
}

fn send(to: Peer, bytes: u32) -> Step {
    Step::Send { to, bytes }
}

fn recv(from: Peer) -> Step {
    Step::Receive { from }
}

fn grid(dx: i32, dy: i32, xdim: u32) -> Peer {
    Peer::Grid { dx, dy, xdim }
}

impl AppModel {
    /// MG's `comm3` calls in V-cycle order, as the level each runs on
    /// (level k has a 2^k edge), for a grid of edge `edge`.
    pub fn mg_levels(edge: u32) -> Vec<u32> {
        let lt = edge.max(2).ilog2();
        let mut v: Vec<u32> = (1..lt).rev().collect(); // down
        v.push(1); // psinv at the bottom
        for k in 2..lt {
            v.extend([k, k]); // resid and psinv going up
        }
        v.extend([lt, lt, lt]); // finest resid, psinv; the main loop's resid
        v
    }

    /// The body of one iteration for a `width`-wide job.
    pub fn body(&self, kind: AppKind, width: u32) -> Vec<Step> {
        let (c, j, n) = (self.compute_us, self.jitter, self.size);
        match kind {
            AppKind::Life3_5 | AppKind::Life12 => {
                let half = width.div_ceil(2).max(1) as i32;
                let col = 4 * n.div_ceil(2);
                let row = 4 * n.div_ceil(4);
                let by = |k| Peer::Offset { by: k };
                let mut b = vec![
                    compute(c, j),
                    send(by(1), col),
                    send(by(-1), col),
                    send(by(half), row),
                    send(by(-half), row),
                    recv(by(-1)),
                    recv(by(1)),
                    recv(by(-half)),
                    recv(by(half)),
                ];
                b.extend(Program::message_barrier(width, 4));
                b
            }
            AppKind::Mg => {
                let levels = Self::mg_levels(n);
                let total: f64 = levels.iter().map(|&k| (1u64 << (3 * k)) as f64).sum();
                let mut b = Vec::new();
                for k in levels {
                    b.push(compute(c * (1u64 << (3 * k)) as f64 / total, j));
                    let face = 8 * ((1u32 << k) / 2 + 2).pow(2);
                    for axis in 0..3 {
                        let p = Peer::Xor { mask: 1 << axis };
                        b.extend([send(p, face), send(p, face), recv(p), recv(p)]);
                    }
                }
                b
            }
            AppKind::Lu => {
                // proc_grid.f: ydim = 2^floor(log2(width)/2), xdim = width / ydim.
                let ydim = 1u32 << (width.max(1).ilog2() / 2);
                let xdim = (width / ydim).max(1);
                let planes = n.saturating_sub(2).max(1) as u64;
                let sweep = c * LU_SWEEP_SHARE / (2 * planes) as f64;
                let rhs = c * (1.0 - LU_SWEEP_SHARE) / 2.0;
                let (ns, ew) = (40 * n * n, 20 * n * n);
                let (north, south) = (grid(-1, 0, xdim), grid(1, 0, xdim));
                let (west, east) = (grid(0, -1, xdim), grid(0, 1, xdim));
                // rhs: a halo exchange along x, then along y, each after half its compute
                let halo = |a: Peer, b: Peer, bytes: u32| {
                    vec![
                        compute(rhs, j),
                        send(a, bytes),
                        send(b, bytes),
                        recv(b),
                        recv(a),
                    ]
                };
                // an SSOR sweep: a wavefront from the `up` neighbours to the `down` ones
                let sweep_from = |up: [Peer; 2], down: [Peer; 2]| Step::Repeat {
                    count: planes,
                    body: vec![
                        recv(up[0]),
                        recv(up[1]),
                        compute(sweep, j),
                        send(down[0], 20 * n),
                        send(down[1], 10 * n),
                    ],
                };
                let mut b = halo(north, south, ns);
                b.extend(halo(east, west, ew));
                b.push(sweep_from([north, west], [south, east])); // lower
                b.push(sweep_from([south, east], [north, west])); // upper
                b
            }
            AppKind::Ep => vec![compute(c, j)],
        }
    }

    /// The program every process of a `width`-wide job runs (compute in
    /// µs), with iteration counts multiplied by `scale`.
    pub fn program(&self, kind: AppKind, width: u32, scale: f64) -> Program {
        let iters = ((self.iterations as f64 * scale).round() as u64).max(1);
        let mut steps = vec![Step::Repeat {
            count: iters,
            body: self.body(kind, width),
        }];
        if kind == AppKind::Ep {
            steps.push(Step::Repeat {
                count: 4,
                body: Program::all_reduce(width, 8),
            });
        }
        Program::new(steps)
    }
}
