//! Integer simulated time.
//!
//! Time is counted in *ticks* (`u64`). What a tick means is fixed by each model:
//! the processor-pool model of seed 000 uses [`TICKS_PER_UNIT`] ticks per abstract
//! time unit, so that overheads of 0.003 units are represented exactly.
//!
//! **The one convention.** Every machine says which unit its tick is with a
//! [`TickUnit`] constant (`TICK` in its module) and documents it in its module
//! header; results are reported in the unit the paper uses.
//!
//! | machine | one tick | reported in |
//! |---|---|---|
//! | pools (seed 000) | 10^-6 abstract unit ([`TickUnit::MicroUnit`]) | units |
//! | barrier (seed 001) | 1 ns ([`TickUnit::Nanosecond`]; 1 ms = [`TICKS_PER_UNIT`]) | ms |
//! | cluster (seeds 002, 003) | 1 ns ([`TickUnit::Nanosecond`]) | s |
//! | batch (traces) | 1 s ([`TickUnit::Second`], SWF's resolution) | s |
//! | regions (seed 004) | 1 ps ([`TickUnit::Picosecond`]) | ns |

use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// Ticks per model time unit used by the abstract-unit models (seed 000).
pub const TICKS_PER_UNIT: u64 = 1_000_000;

/// What one engine tick stands for in a machine (see the module
/// documentation's table). Conversions stay in each machine (they are part
/// of its results); this names the unit so that it is stated once and can be
/// checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TickUnit {
    /// 10^-6 of an abstract model time unit (no physical time).
    MicroUnit,
    /// One second.
    Second,
    /// One nanosecond.
    Nanosecond,
    /// One picosecond.
    Picosecond,
}

impl TickUnit {
    /// Ticks per second of physical time (`None` for abstract units).
    pub const fn per_second(self) -> Option<u64> {
        match self {
            TickUnit::MicroUnit => None,
            TickUnit::Second => Some(1),
            TickUnit::Nanosecond => Some(1_000_000_000),
            TickUnit::Picosecond => Some(1_000_000_000_000),
        }
    }

    /// `ticks` in seconds (`None` for abstract units).
    pub fn seconds(self, ticks: u64) -> Option<f64> {
        self.per_second().map(|n| ticks as f64 / n as f64)
    }

    /// The unit's short name (`µunit`, `s`, `ns`, `ps`).
    pub const fn symbol(self) -> &'static str {
        match self {
            TickUnit::MicroUnit => "µunit",
            TickUnit::Second => "s",
            TickUnit::Nanosecond => "ns",
            TickUnit::Picosecond => "ps",
        }
    }
}

/// A point in simulated time, in ticks.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Time(pub u64);

impl Time {
    pub const ZERO: Time = Time(0);
    pub const MAX: Time = Time(u64::MAX);

    /// Converts model units (a non-negative float) to ticks, rounding to nearest.
    #[inline]
    pub fn from_units(units: f64) -> Time {
        Time(units_to_ticks(units))
    }

    /// This time in model units.
    #[inline]
    pub fn as_units(self) -> f64 {
        self.0 as f64 / TICKS_PER_UNIT as f64
    }

    #[inline]
    pub fn saturating_sub(self, other: Time) -> u64 {
        self.0.saturating_sub(other.0)
    }
}

/// Converts a non-negative duration in model units to ticks (rounded to nearest).
#[inline]
pub fn units_to_ticks(units: f64) -> u64 {
    debug_assert!(units >= 0.0 && units.is_finite());
    (units * TICKS_PER_UNIT as f64).round() as u64
}

/// Converts ticks to model units.
#[inline]
pub fn ticks_to_units(ticks: u64) -> f64 {
    ticks as f64 / TICKS_PER_UNIT as f64
}

impl Add<u64> for Time {
    type Output = Time;
    #[inline]
    fn add(self, rhs: u64) -> Time {
        Time(self.0 + rhs)
    }
}

impl AddAssign<u64> for Time {
    #[inline]
    fn add_assign(&mut self, rhs: u64) {
        self.0 += rhs;
    }
}

impl Sub for Time {
    type Output = u64;
    #[inline]
    fn sub(self, rhs: Time) -> u64 {
        self.0 - rhs.0
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.6}", self.as_units())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tick_units_convert_to_seconds() {
        assert_eq!(TickUnit::Nanosecond.seconds(1_500_000_000), Some(1.5));
        assert_eq!(TickUnit::Picosecond.seconds(2_000_000_000_000), Some(2.0));
        assert_eq!(TickUnit::Second.seconds(7), Some(7.0));
        assert_eq!(TickUnit::MicroUnit.seconds(1), None);
        assert_eq!(
            TickUnit::Picosecond.per_second().unwrap() / TickUnit::Nanosecond.per_second().unwrap(),
            1000
        );
        assert_eq!(TickUnit::Nanosecond.symbol(), "ns");
    }

    #[test]
    fn units_round_trip() {
        assert_eq!(Time::from_units(0.003).0, 3_000);
        assert_eq!(Time::from_units(10.0).as_units(), 10.0);
        assert_eq!(Time(5) + 7, Time(12));
        assert_eq!(Time(12) - Time(5), 7);
    }
}
