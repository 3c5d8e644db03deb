//! Seed 001's analytic model: equations (6), (8), (12) and (13) for a
//! configuration (see docs/policies/gang-analytic-model.md).

use super::*;

impl SyncConfig {
    /// Equation (6): busy waiting with gang scheduling.
    pub fn eq6(&self) -> f64 {
        (1.0 + self.tcs / self.tq) * (self.t_p() + self.t_w()) * self.l as f64
    }

    /// Equation (8), capped at (τq + τcs)ℓ as the paper says: busy waiting,
    /// uncoordinated, fine grain.
    pub fn eq8(&self) -> f64 {
        let n = self.n as i32;
        let l = self.l as f64;
        let t = (1.0 + self.tcs / self.tq).powi(n) * (self.t_p() + self.t_w()) * l.powi(n);
        t.min((self.tq + self.tcs) * l)
    }

    /// Equation (12): blocking, same competitors, fine grain.
    pub fn eq12(&self) -> f64 {
        let n = self.n as f64;
        let tp = self.t_p();
        (1.0 + (n - 1.0) * self.alpha * self.tcs / (n * tp)) * tp * self.l as f64
    }

    /// Equation (13): blocking, compute-bound competitors, fine grain.
    pub fn eq13(&self) -> f64 {
        let l = self.l as f64;
        self.t_p() + (l - 1.0) * self.tq + (l + self.alpha - 1.0) * self.tcs
    }
}
