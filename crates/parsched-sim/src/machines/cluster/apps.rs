//! The applications of seed 003 (§3.1) as message-passing programs.
//!
//! The paper gives each application's share of time spent communicating and
//! its alone time (about 25 s on 8 nodes); it gives no problem sizes,
//! message sizes or iteration counts. Each model below is a loop whose
//! compute per iteration, message sizes and iteration count were calibrated
//! (by simulation, `cluster::tests::applications_are_calibrated`) so that,
//! alone on 8 nodes with the default costs, it runs about 25 s and spends its
//! stated share communicating (time inside sends and receives, waits
//! included, over run time, averaged over its processes).
//!
//! * **LIFE(3.5), LIFE(12)**: the MPICH Game of Life — the matrix split over
//!   a 2 × (n/2) torus; every iteration computes, sends its boundary to its
//!   four neighbours (ranks ±1 and ±n/2), receives theirs, and ends with a
//!   barrier (dissemination, from messages). The two differ in matrix size
//!   per iteration (compute and boundary bytes) and iteration count.
//! * **MG**: multigrid V-cycles — four levels whose compute shrinks 8× and
//!   whose boundary messages shrink 4× per level, each exchanged with six
//!   neighbours (ranks ±1, ±2, ±4), and a global reduction (the residual
//!   norm) per cycle.
//! * **LU**: SSOR sweeps pipelined over the ranks — many short compute steps
//!   each followed by a small message to the next rank and one from the
//!   previous ("a large number of small messages"), a reduction per sweep.
//! * **EP**: one long computation in chunks, then three global sums.

use parsched_core::program::{Dist, Peer, Program, Step};
use parsched_core::ConfigError;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

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

    /// The calibrated model (see the module documentation).
    pub fn model(self) -> AppModel {
        match self {
            AppKind::Life3_5 => AppModel {
                iterations: 120,
                compute_us: 200_000.0,
                jitter: 0.01,
                bytes: 47_000,
                spin_time_us: 100.0,
            },
            AppKind::Life12 => AppModel {
                iterations: 6_100,
                compute_us: 3_650.0,
                jitter: 0.02,
                bytes: 2_830,
                spin_time_us: 100.0,
            },
            AppKind::Mg => AppModel {
                iterations: 2_320,
                compute_us: 7_950.0,
                jitter: 0.02,
                bytes: 10_400,
                spin_time_us: 100.0,
            },
            AppKind::Lu => AppModel {
                iterations: 1_450,
                compute_us: 14_000.0,
                jitter: 0.02,
                bytes: 40,
                spin_time_us: 100.0,
            },
            AppKind::Ep => AppModel {
                iterations: 100,
                compute_us: 249_800.0,
                jitter: 0.002,
                bytes: 8,
                spin_time_us: 100.0,
            },
        }
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
    /// Iterations (LIFE, MG: V-cycles, LU: sweeps, EP: compute chunks).
    pub iterations: u64,
    /// Mean compute per iteration and process (µs).
    pub compute_us: f64,
    /// Each compute is uniform within ±`jitter` of its mean (load imbalance).
    pub jitter: f64,
    /// Boundary message size (bytes; MG's finest level, LU's pipeline
    /// messages, EP's sums).
    pub bytes: u32,
    /// The spin time (µs) before blocking or yielding: what the paper's
    /// procedure (§2, "the optimal spin time for a given application")
    /// chooses on this model, `parsched tune cosched` (SB on four copies of
    /// the application, the lowest time over a grid of 0.1–300 ms; the
    /// shortest spin wins for every application, quick and full runs alike).
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

fn exchange(offsets: &[i32], bytes: u32) -> Vec<Step> {
    let mut steps: Vec<Step> = offsets
        .iter()
        .map(|&by| Step::Send {
            to: Peer::Offset { by },
            bytes,
        })
        .collect();
    steps.extend(offsets.iter().map(|&by| Step::Receive {
        from: Peer::Offset { by: -by },
    }));
    steps
}

impl AppModel {
    /// The program every process of a `width`-wide job runs (compute in
    /// µs), with iteration counts multiplied by `scale`.
    pub fn program(&self, kind: AppKind, width: u32, scale: f64) -> Program {
        let iters = ((self.iterations as f64 * scale).round() as u64).max(1);
        let c = self.compute_us;
        let j = self.jitter;
        let half = width.div_ceil(2).max(1) as i32;
        let body = match kind {
            AppKind::Life3_5 | AppKind::Life12 => {
                let mut b = vec![compute(c, j)];
                b.extend(exchange(&[1, -1, half, -half], self.bytes));
                b.extend(Program::message_barrier(width, 4));
                b
            }
            AppKind::Mg => {
                let mut b = Vec::new();
                let weights = [1.0, 1.0 / 8.0, 1.0 / 64.0, 1.0 / 512.0];
                let total: f64 = weights.iter().sum();
                let mut offsets = Vec::new();
                let mut k = 1i32;
                while (k as u32) < width {
                    offsets.extend([k, -k]);
                    k *= 2;
                }
                for (l, w) in weights.iter().enumerate() {
                    b.push(compute(c * w / total, j));
                    let bytes = (self.bytes >> (2 * l)).max(8);
                    b.extend(exchange(&offsets, bytes));
                }
                b.extend(Program::all_reduce(width, 8));
                b
            }
            AppKind::Lu => {
                let stages = 64u64;
                let mut b = vec![Step::Repeat {
                    count: stages,
                    body: {
                        let mut s = vec![compute(c / stages as f64, j)];
                        s.extend(exchange(&[1], self.bytes));
                        s
                    },
                }];
                b.extend(Program::all_reduce(width, 8));
                b
            }
            AppKind::Ep => vec![compute(c, j)],
        };
        let mut steps = vec![Step::Repeat { count: iters, body }];
        if kind == AppKind::Ep {
            steps.push(Step::Repeat {
                count: 3,
                body: Program::all_reduce(width, self.bytes),
            });
        }
        Program::new(steps)
    }
}
