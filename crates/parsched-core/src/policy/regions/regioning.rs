//! Bottom-up regioning by idle-time merging (seed 004 §3.2–3.3, Table 2,
//! Figures 11–12).
//!
//! Pages start as single-page *seed* regions. During a regioning phase every
//! non-global region is closed except the current one, so every region
//! switch faults and is seen here ([`Regioner::touch`]). The regions form an
//! LRU stack by the time they were last left; entering region `R` whose
//! *idle time* (now − when `R` was last left) is below the threshold `q`
//! merges `R` with every region above it in the stack — the regions touched
//! since `R` was left, all within a short idle time — "we merge regions when
//! idle time is less than q and take no action otherwise" (Figure 12). A
//! long idle time is a locality change and merges nothing.
//!
//! After the phase ([`Regioner::end_phase`]) the caller opens all regions and
//! lets the cache balancer allocate them (Table 2 steps 3–4); then
//! [`Regioner::teardown`] turns the largest region merged in the phase back
//! into single-page seeds (step 5), never the same region twice in a row.
//! [`Regioner::exclude`] takes one page out of its region (the page behind an
//! abnormally high micro-schedule rate, §3.3).
//!
//! Time is the caller's clock (ns of the address space's CPU time, or
//! accesses); `q` is in the same unit. The paper does not give `q`; the
//! digest suggests the idle time of about 2^12 accesses, the Condition-1
//! boundary [open choice]. [`RegioningSchedule`] says when a phase runs:
//! p = 1 % of each period of 1 s of CPU time, from the end of the first
//! period (so programs living under 1 s are never regioned).

use crate::error::ConfigError;
use crate::ids::RegionId;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// When regioning phases run, in ns of an address space's CPU time.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RegioningSchedule {
    /// Share of the time in regioning mode (§3.2: 1 %).
    pub p: f64,
    /// Period (§3.3: every 1 s of CPU time).
    pub period_ns: u64,
}

impl Default for RegioningSchedule {
    fn default() -> Self {
        RegioningSchedule {
            p: 0.01,
            period_ns: 1_000_000_000,
        }
    }
}

impl RegioningSchedule {
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !(self.p > 0.0 && self.p <= 1.0) {
            return Err(ConfigError::new(
                "p",
                format!("got {}", self.p),
                "a fraction in (0, 1]",
            ));
        }
        if self.period_ns == 0 {
            return Err(ConfigError::new("period_ns", "got 0", "an integer > 0"));
        }
        Ok(())
    }

    /// Length of one phase, ns.
    pub fn phase_ns(&self) -> u64 {
        ((self.p * self.period_ns as f64).round() as u64).max(1)
    }

    /// Whether CPU time `t` falls in a regioning phase.
    pub fn in_phase(&self, t: u64) -> bool {
        t >= self.period_ns && t % self.period_ns < self.phase_ns()
    }

    /// The next phase starting at or after `t`: (start, end).
    pub fn next_phase(&self, t: u64) -> (u64, u64) {
        let k = t.div_ceil(self.period_ns).max(1);
        let s = k * self.period_ns;
        (s, s + self.phase_ns())
    }
}

/// The regioner's configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegioningConfig {
    /// Idle-time threshold: merge when the idle time is below `q`.
    pub q: u64,
}

/// Regions of one address space as regioning builds them.
#[derive(Debug, Clone)]
pub struct Regioner {
    q: u64,
    page_region: BTreeMap<u64, RegionId>,
    members: BTreeMap<RegionId, BTreeSet<u64>>,
    next_id: u64,
    /// LRU stack of the phase: (region, when it was last left), most recent last.
    stack: Vec<(RegionId, u64)>,
    current: Option<RegionId>,
    merged_in_phase: BTreeSet<RegionId>,
    last_torn: Option<RegionId>,
    merges: u64,
    in_phase: bool,
}

/// What a phase did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PhaseReport {
    /// Merges during the phase.
    pub merges: u64,
    /// Regions at the end of the phase.
    pub regions: usize,
}

impl Regioner {
    pub fn new(config: RegioningConfig) -> Regioner {
        Regioner {
            q: config.q,
            page_region: BTreeMap::new(),
            members: BTreeMap::new(),
            next_id: 0,
            stack: Vec::new(),
            current: None,
            merged_in_phase: BTreeSet::new(),
            last_torn: None,
            merges: 0,
            in_phase: false,
        }
    }

    fn seed(&mut self, page: u64) -> RegionId {
        let r = RegionId(self.next_id);
        self.next_id += 1;
        self.page_region.insert(page, r);
        self.members.insert(r, BTreeSet::from([page]));
        r
    }

    /// Table 2 step 1: start a phase (all regions closed).
    pub fn begin_phase(&mut self) {
        self.in_phase = true;
        self.stack.clear();
        self.current = None;
        self.merged_in_phase.clear();
        self.merges = 0;
    }

    pub fn in_phase(&self) -> bool {
        self.in_phase
    }

    /// A page touch at time `now` during a phase (outside a phase, only
    /// unknown pages are recorded, as seeds). Returns the page's region
    /// after any merge.
    pub fn touch(&mut self, page: u64, now: u64) -> RegionId {
        let r = match self.page_region.get(&page) {
            Some(&r) => r,
            None => self.seed(page),
        };
        if !self.in_phase || self.current == Some(r) {
            return r;
        }
        if let Some(c) = self.current.take() {
            self.stack.push((c, now));
        }
        let Some(k) = self.stack.iter().position(|&(x, _)| x == r) else {
            self.current = Some(r);
            return r;
        };
        let idle = now.saturating_sub(self.stack[k].1);
        if idle >= self.q {
            self.stack.remove(k);
            self.current = Some(r);
            return r;
        }
        let group: Vec<RegionId> = self.stack.drain(k..).map(|(x, _)| x).collect();
        let merged = self.merge(&group);
        self.current = Some(merged);
        merged
    }

    /// Merge `group` into its largest region (ties: lowest id).
    fn merge(&mut self, group: &[RegionId]) -> RegionId {
        let into = *group
            .iter()
            .max_by_key(|&&g| (self.members[&g].len(), std::cmp::Reverse(g)))
            .expect("a non-empty group");
        for &g in group {
            if g == into {
                continue;
            }
            let pages = self.members.remove(&g).expect("known region");
            for &p in &pages {
                self.page_region.insert(p, into);
            }
            self.members.get_mut(&into).expect("known").extend(pages);
            self.merged_in_phase.remove(&g);
            self.merges += 1;
        }
        if group.len() > 1 {
            self.merged_in_phase.insert(into);
        }
        into
    }

    /// Table 2 step 3: end the phase (all regions open).
    pub fn end_phase(&mut self) -> PhaseReport {
        self.in_phase = false;
        self.stack.clear();
        self.current = None;
        PhaseReport {
            merges: self.merges,
            regions: self.members.len(),
        }
    }

    /// Table 2 step 5: the largest region merged in the last phase (not the
    /// region torn down last time) goes back to single-page seeds. Returns
    /// the torn region and the new seeds.
    pub fn teardown(&mut self) -> Option<(RegionId, Vec<RegionId>)> {
        let r = self
            .merged_in_phase
            .iter()
            .copied()
            .filter(|&r| Some(r) != self.last_torn && self.members.contains_key(&r))
            .max_by_key(|&r| (self.members[&r].len(), std::cmp::Reverse(r)))?;
        self.last_torn = Some(r);
        self.merged_in_phase.remove(&r);
        let pages = self.members.remove(&r).expect("known");
        let seeds = pages.into_iter().map(|p| self.seed(p)).collect();
        Some((r, seeds))
    }

    /// Take `page` out of its region into a seed of its own (§3.3, a page
    /// behind an abnormally high micro-schedule rate). Returns the new seed.
    pub fn exclude(&mut self, page: u64) -> Option<RegionId> {
        let r = *self.page_region.get(&page)?;
        let m = self.members.get_mut(&r).expect("known");
        if m.len() == 1 {
            return Some(r);
        }
        m.remove(&page);
        Some(self.seed(page))
    }

    pub fn region_of(&self, page: u64) -> Option<RegionId> {
        self.page_region.get(&page).copied()
    }

    /// The pages of `region`, ascending.
    pub fn pages(&self, region: RegionId) -> Vec<u64> {
        self.members
            .get(&region)
            .map(|m| m.iter().copied().collect())
            .unwrap_or_default()
    }

    /// Every region with its page count, in id order.
    pub fn regions(&self) -> Vec<(RegionId, usize)> {
        self.members.iter().map(|(&r, m)| (r, m.len())).collect()
    }
}
