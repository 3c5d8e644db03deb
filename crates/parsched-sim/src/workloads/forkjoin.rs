//! Workload generators: seed 000's fork-join jobs (bounded-geometric desired
//! parallelism, Poisson arrivals at a target load, correlated or uncorrelated
//! PARA work) and user-supplied arrival lists. Jobs are produced lazily, one at
//! a time, so memory does not grow with the number of jobs.

use crate::rng::{stream, Stream, StreamRng};
use parsched_core::program::Program;
use parsched_core::{ConfigError, Time};
use rand::Rng;
use serde::{Deserialize, Serialize};

/// A job to admit: when it arrives and what its master thread runs.
#[derive(Debug, Clone)]
pub struct JobSpec {
    pub arrival: Time,
    /// Desired parallelism d (for reporting; the program's fork carries it too).
    pub desired: u32,
    pub program: Program,
}

/// Produces jobs in non-decreasing arrival order.
pub trait JobSource {
    fn next_job(&mut self) -> Option<JobSpec>;
}

/// The bounded-geometric distribution on `1..=max` with a given true mean
/// (seed 000 section 2): a geometric distribution with a parameter solved so
/// that, truncated at `max`, its mean is exactly `mean`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BoundedGeometric {
    /// Success probability of the underlying geometric distribution.
    pub q: f64,
    pub max: u32,
}

impl BoundedGeometric {
    /// The largest mean a bounded geometric on `1..=max` can have (the uniform's).
    pub fn mean_limit(max: u32) -> f64 {
        (max as f64 + 1.0) / 2.0
    }

    /// Solves for `q` so that the truncated mean equals `mean`.
    pub fn with_mean(mean: f64, max: u32) -> Result<BoundedGeometric, ConfigError> {
        let limit = Self::mean_limit(max);
        if !(mean >= 1.0 && (mean < limit || (max == 1 && mean == 1.0))) {
            return Err(ConfigError::new(
                "D",
                format!(
                    "mean desired parallelism {mean} cannot be reached with at most {max} threads"
                ),
                format!("1 <= D < (P+1)/2 = {limit}"),
            ));
        }
        if mean == 1.0 {
            return Ok(BoundedGeometric { q: 1.0, max });
        }
        // mean(q) decreases from (max+1)/2 at q → 0 to 1 at q = 1.
        let (mut lo, mut hi) = (1e-12_f64, 1.0_f64);
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if Self::mean_of(mid, max) > mean {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        Ok(BoundedGeometric {
            q: 0.5 * (lo + hi),
            max,
        })
    }

    /// Mean of the truncated distribution for parameter `q`.
    pub fn mean_of(q: f64, max: u32) -> f64 {
        if q >= 1.0 {
            return 1.0;
        }
        let r = 1.0 - q;
        let rn = r.powi(max as i32);
        1.0 / q - max as f64 * rn / (1.0 - rn)
    }

    /// P(X <= k).
    pub fn cdf(&self, k: u32) -> f64 {
        if k >= self.max {
            return 1.0;
        }
        if self.q >= 1.0 {
            return if k >= 1 { 1.0 } else { 0.0 };
        }
        let r = 1.0 - self.q;
        (1.0 - r.powi(k as i32)) / (1.0 - r.powi(self.max as i32))
    }

    /// Draws by inversion (one uniform per value: the same draw for the same
    /// job whatever else changes).
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> u32 {
        if self.q >= 1.0 {
            return 1;
        }
        let u: f64 = rng.random();
        let r = 1.0 - self.q;
        let tail = 1.0 - r.powi(self.max as i32);
        let k = ((1.0 - u * tail).ln() / r.ln()).ceil();
        (k as u32).clamp(1, self.max)
    }
}

/// Whether a job's PARA work grows with its parallelism (seed 000 section 2)
/// or not (section 4.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum WorkloadKind {
    /// PARA work = `para_unit · d`.
    #[default]
    Correlated,
    /// PARA work = `para_unit · d′`, with d′ an independent draw from the same
    /// bounded-geometric distribution: same mean work, independent of d.
    Uncorrelated,
}

/// Parameters of seed 000's synthetic workload.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ForkJoinWorkload {
    pub procs: u32,
    pub load: f64,
    pub mean_parallelism: f64,
    pub init: f64,
    pub final_: f64,
    /// Work per unit of desired parallelism in the PARA phase (100).
    pub para_unit: f64,
    /// Half-width of the per-thread demand spread (10).
    pub spread: f64,
    pub kind: WorkloadKind,
    pub jobs: u64,
}

impl ForkJoinWorkload {
    /// Mean CPU demand of a job without overheads.
    pub fn mean_demand(&self) -> f64 {
        self.init + self.para_unit * self.mean_parallelism + self.final_
    }

    /// Poisson arrival rate giving load L: `P · L / mean demand`.
    pub fn arrival_rate(&self) -> f64 {
        self.procs as f64 * self.load / self.mean_demand()
    }

    /// A lazy generator of this workload for one replication.
    pub fn generator(&self, seed: u64) -> Result<ForkJoinGenerator, ConfigError> {
        Ok(ForkJoinGenerator {
            w: *self,
            dist: BoundedGeometric::with_mean(self.mean_parallelism, self.procs)?,
            rate: self.arrival_rate(),
            arrivals: stream(seed, Stream::Arrivals, 0),
            parallelism: stream(seed, Stream::Parallelism, 0),
            work: stream(seed, Stream::WorkSize, 0),
            clock: 0.0,
            made: 0,
        })
    }
}

/// Generates seed 000's jobs one at a time.
pub struct ForkJoinGenerator {
    w: ForkJoinWorkload,
    dist: BoundedGeometric,
    rate: f64,
    arrivals: StreamRng,
    parallelism: StreamRng,
    work: StreamRng,
    clock: f64,
    made: u64,
}

impl JobSource for ForkJoinGenerator {
    fn next_job(&mut self) -> Option<JobSpec> {
        if self.made >= self.w.jobs {
            return None;
        }
        self.made += 1;
        let u: f64 = self.arrivals.random();
        self.clock += -(1.0 - u).ln() / self.rate;
        let d = self.dist.sample(&mut self.parallelism);
        // Drawn for every job, so the streams stay aligned whatever the kind.
        let d_work = self.dist.sample(&mut self.work);
        let para = match self.w.kind {
            WorkloadKind::Correlated => self.w.para_unit * d as f64,
            WorkloadKind::Uncorrelated => self.w.para_unit * d_work as f64,
        };
        Some(JobSpec {
            arrival: Time::from_units(self.clock),
            desired: d,
            program: Program::fork_join(self.w.init, d, para, self.w.spread, self.w.final_),
        })
    }
}

/// One line of a user-supplied arrivals list.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Arrival {
    /// Arrival time in model units.
    pub arrival: f64,
    /// Desired parallelism d.
    pub d: u32,
    /// Total PARA work; `None` means `para_unit · d`.
    pub para_work: Option<f64>,
}

/// Validates an arrivals list against a machine of `procs` processors.
pub fn check_arrivals(list: &[Arrival], procs: u32) -> Result<(), ConfigError> {
    if list.is_empty() {
        return Err(ConfigError::new("arrivals", "no jobs", "at least one row"));
    }
    let mut last = 0.0f64;
    for (i, a) in list.iter().enumerate() {
        let row = i + 1;
        if !(a.arrival >= 0.0 && a.arrival.is_finite()) || a.arrival < last {
            return Err(ConfigError::new(
                format!("arrivals row {row}: arrival"),
                format!(
                    "{} is negative or earlier than the previous arrival",
                    a.arrival
                ),
                "non-negative, non-decreasing times",
            ));
        }
        last = a.arrival;
        if a.d == 0 || a.d > procs {
            return Err(ConfigError::new(
                format!("arrivals row {row}: d"),
                format!("{} is out of range", a.d),
                format!("1 <= d <= P = {procs}"),
            ));
        }
        if let Some(w) = a.para_work {
            if !(w > 0.0 && w.is_finite()) {
                return Err(ConfigError::new(
                    format!("arrivals row {row}: para_work"),
                    format!("{w} is not a positive finite number"),
                    "a positive number (a job's parallel work)",
                ));
            }
        }
    }
    Ok(())
}

/// Jobs read from an arrivals list (the same list in every replication).
pub struct ArrivalList<'a> {
    pub list: &'a [Arrival],
    pub init: f64,
    pub final_: f64,
    pub para_unit: f64,
    pub spread: f64,
    pub next: usize,
}

impl JobSource for ArrivalList<'_> {
    fn next_job(&mut self) -> Option<JobSpec> {
        let a = self.list.get(self.next)?;
        self.next += 1;
        let para = a.para_work.unwrap_or(self.para_unit * a.d as f64);
        Some(JobSpec {
            arrival: Time::from_units(a.arrival),
            desired: a.d,
            program: Program::fork_join(self.init, a.d, para, self.spread, self.final_),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_geometric_hits_its_mean() {
        for (mean, max) in [(20.0, 60), (5.0, 60), (10.0, 120), (40.0, 120), (1.4, 2)] {
            let g = BoundedGeometric::with_mean(mean, max).unwrap();
            assert!((BoundedGeometric::mean_of(g.q, max) - mean).abs() < 1e-9);
        }
        assert!(BoundedGeometric::with_mean(31.0, 60).is_err());
        assert!(BoundedGeometric::with_mean(0.5, 60).is_err());
        assert_eq!(BoundedGeometric::with_mean(1.0, 60).unwrap().q, 1.0);
    }

    /// Section 2: for P = 60 and D = 20, "15.7% of the jobs have parallelism
    /// < 4" and 6% have 50 <= d <= 60. The distribution with true mean 20 gives
    /// P(d <= 4) = 15.69% (P(d <= 3) = 11.99%): the paper's "< 4" counts d = 4.
    #[test]
    fn paper_percentages_for_p60_d20() {
        let g = BoundedGeometric::with_mean(20.0, 60).unwrap();
        let small = g.cdf(4);
        let large = 1.0 - g.cdf(49);
        assert!((small - 0.157).abs() < 0.002, "{small}");
        assert!((large - 0.06).abs() < 0.005, "{large}");
    }

    #[test]
    fn sampling_matches_the_mean() {
        let g = BoundedGeometric::with_mean(20.0, 60).unwrap();
        let mut rng = stream(3, Stream::Parallelism, 0);
        let n = 200_000;
        let sum: u64 = (0..n).map(|_| g.sample(&mut rng) as u64).sum();
        let m = sum as f64 / n as f64;
        assert!((m - 20.0).abs() < 0.15, "{m}");
    }

    #[test]
    fn paper_arrival_rate() {
        let w = ForkJoinWorkload {
            procs: 60,
            load: 0.6,
            mean_parallelism: 20.0,
            init: 10.0,
            final_: 10.0,
            para_unit: 100.0,
            spread: 10.0,
            kind: WorkloadKind::Correlated,
            jobs: 10,
        };
        // 60 × 60% / (10 + 100 × 20 + 10) = 0.0178
        assert!((w.arrival_rate() - 0.0178).abs() < 5e-5);
        let mut g = w.generator(1).unwrap();
        let mut n = 0;
        let mut last = Time::ZERO;
        while let Some(j) = g.next_job() {
            assert!(j.arrival >= last);
            last = j.arrival;
            n += 1;
        }
        assert_eq!(n, 10);
    }

    #[test]
    fn arrivals_are_checked() {
        let ok = [
            Arrival {
                arrival: 0.0,
                d: 3,
                para_work: None,
            },
            Arrival {
                arrival: 1.0,
                d: 60,
                para_work: Some(5.0),
            },
        ];
        assert!(check_arrivals(&ok, 60).is_ok());
        let bad = [
            Arrival {
                arrival: 2.0,
                d: 3,
                para_work: None,
            },
            Arrival {
                arrival: 1.0,
                d: 3,
                para_work: None,
            },
        ];
        let e = check_arrivals(&bad, 60).unwrap_err();
        assert!(e.field.contains("row 2"));
        let wide = [Arrival {
            arrival: 0.0,
            d: 61,
            para_work: None,
        }];
        assert!(check_arrivals(&wide, 60).unwrap_err().field.ends_with("d"));
    }
}
