//! The working-set estimator (seed 004 §4, Figure 15). Every scan period
//! (100 ms of the address space's virtual time in the paper) the access bits
//! of a region's pages are read and shifted into a 32-bit history per page
//! (bit 0 = the latest period; 32 periods = 3.2 s). A region's histogram
//! `H(i)` is the number of its pages whose history has `i` ones, and its
//! working set in pages is
//!
//! `y = Σ_{i=26..31} H(i) + ¾ Σ_{i=20..25} H(i) + ½ Σ_{i=14..19} H(i) + ¼ Σ_{i=8..13} H(i)`.
//!
//! Open choices ([`HistogramReading`]):
//! * `H(32)` — a page referenced in every one of the 32 periods — is not in
//!   the paper's sum (its indices stop at 31), which would count the hottest
//!   pages as zero; we weight it 1 like `H(26..31)` (the default reading,
//!   [`HistogramReading::OnesCount`]). So `y ≤` the page count.
//! * The other reading, `H(i)` = the number of pages whose bit `i` is set
//!   ([`HistogramReading::PerBit`], bit 31 the most recent), counts an
//!   always-referenced page 15 times; it is divided by 15 here so that both
//!   readings agree on a page referenced in every period.

use crate::ids::RegionId;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The paper's scan period: 100 ms of the address space's virtual time, in ns.
pub const SCAN_PERIOD_NS: u64 = 100_000_000;

/// How `H(i)` is read (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HistogramReading {
    #[default]
    OnesCount,
    PerBit,
}

/// §4's weight of a histogram index `i` (a number of ones, 0..=32).
pub fn weight(i: usize) -> f64 {
    match i {
        26..=32 => 1.0,
        20..=25 => 0.75,
        14..=19 => 0.5,
        8..=13 => 0.25,
        _ => 0.0,
    }
}

/// `H(i)`, i = 0..=32: how many of `histories` have `i` ones.
pub fn ones_histogram(histories: &[u32]) -> [u64; 33] {
    let mut h = [0u64; 33];
    for &x in histories {
        h[x.count_ones() as usize] += 1;
    }
    h
}

/// The weighted working set, in pages, of a set of page histories.
pub fn weighted_pages(histories: &[u32], reading: HistogramReading) -> f64 {
    match reading {
        HistogramReading::OnesCount => ones_histogram(histories)
            .iter()
            .enumerate()
            .map(|(i, &n)| weight(i) * n as f64)
            .sum(),
        HistogramReading::PerBit => {
            // Bit 31 is the most recent period in this reading: bit b of the
            // paper's word is our bit (31 - b).
            let mut s = 0.0;
            for b in 8..32usize {
                let ours = 31 - b;
                let n = histories.iter().filter(|&&x| x >> ours & 1 == 1).count();
                s += weight(b) * n as f64;
            }
            s / 15.0
        }
    }
}

/// Access-bit histories per region and page, and the estimates from them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WssEstimator {
    page_bytes: u64,
    reading: HistogramReading,
    /// Per region: the history of each page (index = the page's position in
    /// the region as the caller numbers it).
    histories: BTreeMap<RegionId, Vec<u32>>,
}

impl WssEstimator {
    pub fn new(page_bytes: u64, reading: HistogramReading) -> WssEstimator {
        WssEstimator {
            page_bytes,
            reading,
            histories: BTreeMap::new(),
        }
    }

    /// One scan of `region`: `referenced[k]` is page k's access bit this
    /// period. The region grows to `referenced.len()` pages if it was smaller
    /// (new pages start with an empty history); pages beyond are shifted with
    /// a zero.
    pub fn observe(&mut self, region: RegionId, referenced: &[bool]) {
        let h = self.histories.entry(region).or_default();
        if h.len() < referenced.len() {
            h.resize(referenced.len(), 0);
        }
        for (k, x) in h.iter_mut().enumerate() {
            let bit = referenced.get(k).copied().unwrap_or(false);
            *x = (*x << 1) | u32::from(bit);
        }
    }

    /// One scan where only a count is known (e.g. the `Referenced:` bytes of
    /// `/proc/<pid>/smaps` over `pages` pages): the first `referenced` pages
    /// are taken as referenced — the same pages every period, the reading
    /// under which a steady working set keeps full histories [open choice].
    pub fn observe_count(&mut self, region: RegionId, pages: usize, referenced: usize) {
        let bits: Vec<bool> = (0..pages).map(|k| k < referenced).collect();
        self.observe(region, &bits);
    }

    /// The estimate of `region`, in bytes (0 for an unknown region).
    pub fn estimate_bytes(&self, region: RegionId) -> u64 {
        self.histories
            .get(&region)
            .map(|h| (weighted_pages(h, self.reading) * self.page_bytes as f64).round() as u64)
            .unwrap_or(0)
    }

    /// The region's histogram `H(0..=32)`.
    pub fn histogram(&self, region: RegionId) -> [u64; 33] {
        self.histories
            .get(&region)
            .map(|h| ones_histogram(h))
            .unwrap_or([0; 33])
    }

    /// Forget a region (freed, torn down).
    pub fn remove(&mut self, region: RegionId) {
        self.histories.remove(&region);
    }

    /// The regions with histories, in id order.
    pub fn regions(&self) -> impl Iterator<Item = RegionId> + '_ {
        self.histories.keys().copied()
    }
}
