//! Online regioning's scan (`regioning=online`): simulated access bits into
//! §4's estimator, then the regions re-balanced with their estimates.

use super::machine::Thread;
use super::*;

impl MachineSpec {
    /// The (program, region) pairs a balancer item stands for: one region
    /// (`key_of(program, region)`), or every region of a program balanced as
    /// a whole (`key_of(program, 0xffff)`).
    pub(super) fn item_regions(&self, id: u64) -> impl Iterator<Item = (usize, usize)> {
        let prog = (id >> 16) as usize;
        let regions = if id & 0xffff == 0xffff {
            0..self.programs[prog].program.regions.len()
        } else {
            let r = (id & 0xffff) as usize;
            r..r + 1
        };
        regions.map(move |r| (prog, r))
    }

    /// Online regioning's scan: each region's access bits since the last
    /// scan into the estimator (uniformly random touches: each page
    /// referenced with probability 1 − (1 − 1/P)^n after n accesses, drawn
    /// from the scan's own stream; sweeps: the pages swept), then the
    /// regions re-balanced with their estimates (a program of one region is
    /// one item, a program of several is unified; regions not yet estimated
    /// stay where they are; a finished program's regions are no longer
    /// scanned nor balanced). Returns whether the placement changed.
    pub(super) fn scan(
        &self,
        o: Online,
        est: &mut WssEstimator,
        threads: &mut [Thread],
        map: &mut RegionMap,
        bins: &[Bin],
        rng: &mut StreamRng,
    ) -> Result<bool, RegionMachineError> {
        let policy = |e: parsched_core::PolicyError| RegionMachineError::Policy(e.0);
        let mut items = Vec::new();
        for (i, t) in threads.iter_mut().enumerate() {
            if t.finished.is_some() {
                continue; // its regions keep their last estimate and cache
            }
            let prog = &self.programs[i].program;
            let mut whole = 0u64;
            for (r, d) in prog.regions.iter().enumerate() {
                let pages = d.bytes.div_ceil(o.page_bytes).max(1) as usize;
                let n = std::mem::take(&mut t.since[r]);
                let q = if n == 0 {
                    0.0
                } else {
                    1.0 - (1.0 - 1.0 / pages as f64).powf(n as f64)
                };
                let swept = std::mem::take(&mut t.swept[r]);
                let bits: Vec<bool> = (0..pages)
                    .map(|k| {
                        let drawn = q > 0.0 && rng.random::<f64>() < q;
                        drawn || swept.get(k).copied().unwrap_or(false)
                    })
                    .collect();
                let rid = RegionId(key_of(i, r));
                est.observe(rid, &bits);
                let b = est.estimate_bytes(rid);
                map.set_wss(rid, b).map_err(policy)?;
                if prog.regions.len() < 2 {
                    whole += b;
                } else if b > 0 {
                    items.push(Item {
                        id: key_of(i, r),
                        wss_bytes: b,
                    });
                }
            }
            if prog.regions.len() < 2 && whole > 0 {
                items.push(Item {
                    id: key_of(i, 0xffff),
                    wss_bytes: whole,
                });
            }
        }
        if items.is_empty() {
            return Ok(false);
        }
        let a = balance(&items, bins).map_err(policy)?;
        let mut changed = false;
        for (id, c) in &a.placed {
            for (prog, r) in self.item_regions(*id) {
                let rid = RegionId(key_of(prog, r));
                if !matches!(map.mapping(rid), Some(Mapping::Local(x)) if x == *c) {
                    map.map_to(rid, *c).map_err(policy)?;
                    changed = true;
                }
            }
        }
        Ok(changed)
    }
}
