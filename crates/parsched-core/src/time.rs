//! Integer simulated time.
//!
//! Time is counted in *ticks* (`u64`). What a tick means is fixed by each model:
//! the processor-pool model of seed 000 uses [`TICKS_PER_UNIT`] ticks per abstract
//! time unit, so that overheads of 0.003 units are represented exactly.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// Ticks per model time unit used by the abstract-unit models (seed 000).
pub const TICKS_PER_UNIT: u64 = 1_000_000;

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
    fn units_round_trip() {
        assert_eq!(Time::from_units(0.003).0, 3_000);
        assert_eq!(Time::from_units(10.0).as_units(), 10.0);
        assert_eq!(Time(5) + 7, Time(12));
        assert_eq!(Time(12) - Time(5), 7);
    }
}
