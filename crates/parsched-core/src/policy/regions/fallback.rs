//! The fallback to the standard scheduler (seed 004 §3.1, Figure 10; §2.2.2).
//! Regioning pays only where all of these hold; otherwise the regions are
//! made global and the standard scheduler runs as if there were none:
//!
//! * **Condition 1** (access time): the accesses per region visit must
//!   exceed `min_access` — "when access times are too short (≤ 2^12), the
//!   large number of micro-scheduling actions create overheads that outweigh
//!   the utility of cache unification". The paper calls gains at ≥ 2^16
//!   "marginal" on Clovertown, not harmful, so the upper bound
//!   `max_access` is off by default [open choice].
//! * **Condition 2**: the total working set must be larger than one cache —
//!   harmful at ≤ 2 × 1.8 MB on Clovertown and ≤ 2 × 4 MB on Westmere.
//! * **Condition 3**: the working set must fit the unified caches.
//! * A micro-schedule rate above `max_microschedules_per_s` (the paper's
//!   "abnormally high" rate is not given; default 5000/s, the top of the
//!   paper's winning Westmere band [open choice]).
//! * Idle prevention (§2.2.2, Figure 6): region constraints leave a
//!   processor idle while threads wait for another cache's processors — "our
//!   final solution is to simply permit the region framework to make
//!   regions global (region opening) to prevent CPU idleness".

use crate::error::ConfigError;
use serde::{Deserialize, Serialize};

/// Why regioning does not pay.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Condition {
    /// Condition 1: access time out of the paying range.
    AccessTime,
    /// Condition 2: the working set fits one cache.
    FitsOneCache,
    /// Condition 3: the working set exceeds the unified caches.
    ExceedsUnified,
    /// Micro-schedules too frequent.
    MicroScheduleRate,
    /// Region constraints leave processors idle.
    IdlePrevention,
}

impl Condition {
    /// The condition's name as it serializes (`access_time`, …).
    pub fn name(self) -> &'static str {
        match self {
            Condition::AccessTime => "access_time",
            Condition::FitsOneCache => "fits_one_cache",
            Condition::ExceedsUnified => "exceeds_unified",
            Condition::MicroScheduleRate => "micro_schedule_rate",
            Condition::IdlePrevention => "idle_prevention",
        }
    }
}

/// The decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "condition")]
pub enum RegionDecision {
    /// Keep region scheduling.
    Regioning,
    /// Make the regions global and let the standard scheduler run.
    Fallback(Condition),
}

/// What the policy observes of a program (or address space).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Observation {
    /// Mean accesses per region visit (memlat's "access time").
    pub access_time: f64,
    /// The program's total working set (sum of its regions), bytes.
    pub total_wss_bytes: u64,
    /// Micro-schedules per second of the program's CPU time.
    pub microschedules_per_s: f64,
    /// A processor is idle while threads of this program wait for a
    /// processor of another cache.
    pub idle_while_waiting: bool,
}

/// The thresholds of conditions 1–3.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Conditions {
    /// Condition 1: access time must exceed this.
    pub min_access: f64,
    /// Condition 1, upper end (off by default).
    pub max_access: Option<f64>,
    /// Condition 2: total working set must exceed this (bytes).
    pub min_total_wss_bytes: u64,
    /// Condition 3: total working set must not exceed this (bytes).
    pub max_total_wss_bytes: u64,
    pub max_microschedules_per_s: f64,
}

const MB: u64 = 1 << 20;

impl Default for Conditions {
    /// The paper's Clovertown values.
    fn default() -> Self {
        Conditions::paper_clovertown()
    }
}

impl Conditions {
    /// Clovertown (§3.1): > 2^12 accesses, > 2 × 1.8 MB, ≤ 2 × 4 MB.
    pub fn paper_clovertown() -> Conditions {
        Conditions {
            min_access: 4096.0,
            max_access: None,
            min_total_wss_bytes: (2.0 * 1.8 * MB as f64) as u64,
            max_total_wss_bytes: 8 * MB,
            max_microschedules_per_s: 5000.0,
        }
    }

    /// Westmere (§3.1): > 2^12 accesses, > 2 × 4 MB, ≤ 2 × 12 MB.
    pub fn paper_westmere() -> Conditions {
        Conditions {
            min_access: 4096.0,
            max_access: None,
            min_total_wss_bytes: 8 * MB,
            max_total_wss_bytes: 24 * MB,
            max_microschedules_per_s: 5000.0,
        }
    }

    /// From the caches themselves: more than the largest, at most their sum.
    pub fn for_caches(cache_bytes: &[u64]) -> Conditions {
        Conditions {
            min_total_wss_bytes: cache_bytes.iter().copied().max().unwrap_or(0),
            max_total_wss_bytes: cache_bytes.iter().sum(),
            ..Conditions::paper_clovertown()
        }
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        if !(self.min_access.is_finite() && self.min_access >= 0.0) {
            return Err(ConfigError::new(
                "min_access",
                format!("got {}", self.min_access),
                "a finite number >= 0",
            ));
        }
        if let Some(m) = self.max_access {
            if !(m.is_finite() && m > self.min_access) {
                return Err(ConfigError::new(
                    "max_access",
                    format!("got {m}"),
                    "a finite number above min_access",
                ));
            }
        }
        if self.max_total_wss_bytes < self.min_total_wss_bytes {
            return Err(ConfigError::new(
                "max_total_wss_bytes",
                "below min_total_wss_bytes",
                "at least min_total_wss_bytes",
            ));
        }
        if self.max_microschedules_per_s.is_nan() || self.max_microschedules_per_s <= 0.0 {
            return Err(ConfigError::new(
                "max_microschedules_per_s",
                format!("got {}", self.max_microschedules_per_s),
                "a number > 0",
            ));
        }
        Ok(())
    }

    /// Conditions 1–3, the rate and idle prevention, in that order; the
    /// first that fails is the reason.
    pub fn decide(&self, o: &Observation) -> RegionDecision {
        use Condition::*;
        let fail = if o.access_time <= self.min_access
            || self.max_access.is_some_and(|m| o.access_time > m)
        {
            Some(AccessTime)
        } else if o.total_wss_bytes <= self.min_total_wss_bytes {
            Some(FitsOneCache)
        } else if o.total_wss_bytes > self.max_total_wss_bytes {
            Some(ExceedsUnified)
        } else if o.microschedules_per_s > self.max_microschedules_per_s {
            Some(MicroScheduleRate)
        } else if o.idle_while_waiting {
            Some(IdlePrevention)
        } else {
            None
        };
        fail.map_or(RegionDecision::Regioning, RegionDecision::Fallback)
    }
}
