//! Regions policy: cache-aware placement of co-running jobs (seed 004's cache
//! balancing, at the granularity of whole jobs).
//!
//! The jobs start unconstrained (each in its own cpuset group spanning every
//! CPU, or with no affinity change). The controller wakes every
//! `regions.scan` of wall time and scans each live job that has run for
//! another `regions.scan` of CPU time since its last scan (the paper's
//! period is 100 ms of the address space's virtual time: a job that did not
//! run would show an empty period): its working set from /proc — the
//! `Referenced:` bytes of its private (anonymous, heap, stack) mappings in
//! `/proc/PID/smaps` since the previous clear, then a clear again
//! ([`procfs::clear_refs_flush`]: the referenced bits *and* the job's TLB —
//! without the flush, pages whose translations stay cached are touched
//! without being marked, and a working set that fits the TLB reads as a
//! random fraction of itself); code and shared libraries are seed 004's
//! global regions, left out — goes, as a count of referenced
//! pages, into the core crate's [`WssEstimator`] (§4's weights over 32-scan
//! histories; one "region" per job: its address space's working set). Once
//! every live job has `regions.place_after` scans (or after 16 ×
//! `place_after` wake-ups, for jobs that hardly run), and every
//! `regions.replace_every` wake-ups after that (and whenever a job exits),
//! the core crate decides:
//!
//! * the bins are the caches of `regions.cache_level` (default: the last
//!   level) serving the CPUs in use; jobs are packed onto them by
//!   [`balance`] (largest working set first, each to the emptiest cache);
//! * [`Conditions::decide`] with the caches' sizes: below Condition 2's
//!   threshold (the jobs' working sets together fit the largest cache)
//!   balancing cannot pay, and with one cache there is nothing to balance;
//!   idle prevention (§2.2.2) if a cache would get fewer runnable threads than
//!   it has CPUs while another gets more. Conditions 1 and 3 and the
//!   micro-schedule rate concern unifying one program by micro-schedules,
//!   which placement through cpusets does not do: they are passed as met
//!   (access time ∞, no upper bound on the total, rate 0).
//!
//! `Regioning`: each job is confined to its cache's CPUs (cpuset rewrite or
//! `sched_setaffinity` of its threads). `Fallback`: every job gets every CPU
//! back — the default scheduler's placement, untouched. Each decision is
//! recorded in [`RegionsStats`].
//!
//! Only the job's leader process is measured (its address space); children
//! it forks are not summed in (a job that is a process tree is measured by
//! its leader).
//!
//! Another user of the accessed bits makes the reading low: a kernel DAMON
//! monitor ([`crate::damon`]) clears them too, between a job's `clear_refs`
//! and its reading. Each scan asks [`crate::damon::status`] whether a running
//! monitor touches the job's pages; if one does, the estimate is kept (it is
//! all there is) but marked — the job's report (`wss_unreliable`), the
//! decision's record and [`RegionsStats::wss_unreliable`] name the monitor,
//! and the run warns once — never passed off as a clean measurement. (DAMON's
//! own virtual-address monitoring would be the kernel's estimate for the
//! job, but a kdamond can only be added through the admin interface by
//! rewriting `nr_kdamonds`, which the kernel refuses while one runs and
//! which would rebuild the running one's configuration: the runtime never
//! touches another user's monitor.)

use super::mechanism::{mono_ns, Decision, Mechanism};
use super::policy::{Fragment, Needs, PolicyEntry, PolicyReport, RuntimePolicy};
use crate::error::Result;
use crate::spec::{parse_duration, show_duration, JobReport, RunSpec};
use crate::topology::MachineTopology;
use crate::{damon, procfs};
use parsched_core::policy::regions::{
    balance, cpu_share_repair, keep_current, Bin, Conditions, HistogramReading, Item, Observation,
    RegionDecision, WssEstimator,
};
use parsched_core::schema::{Kind, Schema, Typed, U32};
use parsched_core::{field, CacheId, ConfigError, ProcId, RegionId, Value};
use serde::{Deserialize, Serialize};
use std::time::Duration;
use std::time::Instant;

/// The regions policy's table `[regions]` (`REGIONS_SCHEMA`).
#[derive(Debug, Clone, PartialEq)]
pub struct RegionsSpec {
    /// The cache level whose caches the jobs are balanced over; `None`: the
    /// last level the topology has.
    pub cache_level: Option<u8>,
    /// Working-set scan period, of each job's own CPU time.
    pub scan: Duration,
    /// Scans of every job before the first placement.
    pub place_after: u32,
    /// Re-place every this many wake-ups after the first (0: only at exits).
    pub replace_every: u32,
    /// Confine jobs with cpuset groups where possible (else affinity).
    pub cpusets: bool,
}

impl Default for RegionsSpec {
    fn default() -> Self {
        RegionsSpec {
            cache_level: None,
            scan: Duration::from_millis(100),
            place_after: 32,
            replace_every: 10,
            cpusets: true,
        }
    }
}

/// `scan`: `"100ms"`, `"0.1s"` or a number of ms.
fn set_scan(c: &mut RegionsSpec, v: &Value) -> std::result::Result<(), ConfigError> {
    let bad = |m: String| ConfigError::new("scan", m, "e.g. 100ms, 0.1s, 500us, or a number of ms");
    c.scan = match v {
        Value::Int(ms) if *ms >= 0 => Duration::from_millis(*ms as u64),
        Value::Float(ms) if ms.is_finite() && *ms >= 0.0 => Duration::from_secs_f64(ms / 1e3),
        Value::Str(t) => parse_duration(t).map_err(|e| bad(e.message))?,
        other => return Err(bad(format!("{other:?}"))),
    };
    Ok(())
}

/// `cache_level`: a level >= 1, or `auto` (the topology's last).
fn set_level(c: &mut RegionsSpec, v: &Value) -> std::result::Result<(), ConfigError> {
    c.cache_level = match v {
        Value::Str(t) if matches!(t.trim(), "" | "auto" | "none") => None,
        Value::Int(l) => Some(u8::try_from(*l).map_err(|_| {
            ConfigError::new("cache_level", l.to_string(), "a cache level >= 1, or auto")
        })?),
        other => {
            return Err(ConfigError::new(
                "cache_level",
                format!("{other:?}"),
                "a cache level >= 1, or auto",
            ))
        }
    };
    Ok(())
}

type G = RegionsSpec;

/// The keys of `[regions]`.
pub(crate) static REGIONS_SCHEMA: Schema<RegionsSpec> = Schema {
    model: "regions",
    fields: &[
        field!(
            G,
            "cache_level",
            custom(
                |c: &G| c.cache_level.map_or(Typed::None, |l| Typed::Int(l.into())),
                optional = true
            ),
            Kind::Int { min: 1, max: 255 },
            "",
            "",
            "",
            "the cache level whose caches the jobs are balanced over; auto: the last \
             level the topology has (on a machine whose last level is one cache for all CPUs, \
             the private level below, e.g. 2, is the one with something to balance)"
        )
        .worded("{} is not a cache level", "a cache level >= 1, or auto")
        .parsed(set_level),
        field!(
            G,
            "scan",
            custom(|c: &G| Typed::Text(show_duration(c.scan)), optional = false),
            Kind::Text,
            "",
            "",
            "§4",
            "working-set scan period, of each job's own CPU time (the \
             paper's 100 ms of virtual time), with its unit or a number of ms; the controller \
             wakes at this period of wall time to check"
        )
        .parsed(set_scan),
        field!(
            G,
            "scan_ms",
            custom(
                |c: &G| Typed::Float(c.scan.as_secs_f64() * 1e3),
                optional = false
            ),
            Kind::Text,
            "ms",
            "",
            "",
            "scan, as a number of ms"
        )
        .parsed(set_scan),
        field!(G, "place_after", place_after: u32, Kind::int_min(1, U32), "scans", "", "§4",
            "scans of every job before the first placement (the estimator counts a page only \
             once referenced in 8 scans, fully from 26)")
        .worded("{} scans", "a number of scans >= 1"),
        field!(G, "replace_every", replace_every: u32, Kind::int(U32), "wake-ups", "", "",
            "re-place every this many wake-ups after the first placement (0: only when a job \
             exits)"),
        field!(G, "cpusets", cpusets: bool, Kind::Bool, "", "", "",
            "confine jobs with cpuset groups where possible (else, and with false, with \
             sched_setaffinity on their threads)"),
    ],
};

/// `[regions]` in the run spec.
pub(crate) static FRAGMENT: Fragment = Fragment {
    table: "regions",
    flat: &[],
    describe: || REGIONS_SCHEMA.describe(&RegionsSpec::default()),
    set: |spec, key, v| REGIONS_SCHEMA.set(&mut spec.regions, key, v),
    check: |spec| {
        REGIONS_SCHEMA.check(&spec.regions)?;
        let scan = spec.regions.scan;
        if scan < Duration::from_millis(1) || scan > Duration::from_secs(60) {
            return Err(ConfigError::new("scan", format!("{scan:?}"), "1ms ..= 60s"));
        }
        Ok(())
    },
    values: |spec| {
        let mut m = super::policy::schema_values(&REGIONS_SCHEMA, &spec.regions);
        m.remove("scan_ms");
        m
    },
};

/// One cache the jobs are balanced over.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RegionsCache {
    pub level: u8,
    pub size_bytes: u64,
    /// OS CPUs it serves (among those in use).
    pub cpus: Vec<u32>,
}

/// One placement decision.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RegionsRecord {
    /// Seconds since the run started.
    pub at_s: f64,
    /// Each live job's working-set estimate (job name, bytes).
    pub wss_bytes: Vec<(String, u64)>,
    /// `regioning` (jobs confined to their caches) or a fallback with the
    /// failed condition (`one_cache` when there is only one cache).
    pub decision: String,
    /// Each live job's CPUs after the decision.
    pub placement: Vec<(String, Vec<u32>)>,
    /// Each cache's load (sum of its jobs' working sets), bytes, in cache
    /// order; empty on a fallback.
    pub loads: Vec<u64>,
    /// Why the working sets decided on are unreliable (a DAMON monitor
    /// cleared the jobs' accessed bits during their scans), `None` when
    /// every scan behind them was clean.
    pub wss_unreliable: Option<String>,
}

/// What the regions policy saw and did.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RegionsStats {
    pub caches: Vec<RegionsCache>,
    /// Controller wake-ups for scanning (every `regions.scan` of wall time).
    pub scans: u64,
    /// Job scans (a job is scanned once per `regions.scan` of its own CPU
    /// time), over all jobs.
    pub observations: u64,
    /// Time spent in scans (reading /proc, clear_refs and the TLB flush),
    /// seconds.
    pub scan_s: f64,
    pub decisions: Vec<RegionsRecord>,
    /// Why some working-set estimates of the run are unreliable (each
    /// distinct reason once: `unreliable: DAMON kdamond 0 (pid 77) with paddr
    /// operations clears accessed bits`); empty when every scan was clean.
    pub wss_unreliable: Vec<String>,
}

/// The regions policy's state.
#[derive(Debug)]
pub(crate) struct RegionsPolicy {
    cfg: RegionsSpec,
    /// The cache level balanced over.
    level: Option<u8>,
    caches: Vec<RegionsCache>,
    est: WssEstimator,
    page: u64,
    scans: u32,
    since_place: u32,
    /// Each job's CPU time at its last scan, seconds, and its scans.
    last_cpu_s: Vec<f64>,
    observed: Vec<u32>,
    bins: Vec<Bin>,
    /// What it saw and did: the policy's report.
    stats: RegionsStats,
    cache_cpus: Vec<Vec<u32>>,
    /// Each job's current CPUs (empty: not placed yet).
    current: Vec<Vec<u32>>,
    /// Each job's last working-set estimate, bytes.
    wss_bytes: Vec<Option<u64>>,
    /// Why a job's estimate is unreliable: the last reason one of its scans
    /// was disturbed (an estimate weighs past scans in: once disturbed, it
    /// stays marked).
    unreliable: Vec<Option<String>>,
    placed_once: bool,
    deadline: Option<u64>,
}

fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as u64
    } else {
        4096
    }
}

/// What one placement decided: its name, each live job's CPUs, the caches'
/// loads.
type Placement = (String, Vec<Vec<u32>>, Vec<u64>);

impl RegionsPolicy {
    /// The caches of the spec's level (default: the last) serving the CPUs
    /// in use are the bins.
    pub(crate) fn new(spec: &RunSpec, topo: &MachineTopology) -> RegionsPolicy {
        let t = &topo.topology;
        let level = spec.regions.cache_level.or_else(|| t.last_level());
        let ids: Vec<CacheId> = level.map(|l| t.caches_at(l)).unwrap_or_default();
        let mut bins = Vec::new();
        let mut cache_cpus = Vec::new();
        let mut caches = Vec::new();
        for id in ids {
            let c = t.cache(id);
            let cpus: Vec<u32> = c.procs.iter().map(|&p: &ProcId| topo.cpu(p)).collect();
            bins.push(Bin {
                cache: id,
                capacity_bytes: c.size_bytes,
            });
            caches.push(RegionsCache {
                level: c.level,
                size_bytes: c.size_bytes,
                cpus: cpus.clone(),
            });
            cache_cpus.push(cpus);
        }
        let page = page_size();
        let n = spec.jobs.len();
        RegionsPolicy {
            cfg: spec.regions.clone(),
            level,
            caches,
            est: WssEstimator::new(page, HistogramReading::default()),
            page,
            scans: 0,
            since_place: 0,
            last_cpu_s: vec![0.0; n],
            observed: vec![0; n],
            bins,
            stats: RegionsStats::default(),
            cache_cpus,
            current: vec![Vec::new(); n],
            wss_bytes: vec![None; n],
            unreliable: vec![None; n],
            placed_once: false,
            deadline: None,
        }
    }

    /// One scan period: measure, and place when due.
    fn tick(&mut self, m: &mut Mechanism) -> Result<()> {
        let t = Instant::now();
        if self.bins.len() < 2 {
            return Ok(());
        }
        let period = self.cfg.scan.as_secs_f64();
        let mut observations = 0;
        // Read once per wake-up, only when a job is scanned.
        let mut damon: Option<damon::DamonStatus> = None;
        for i in 0..m.jobs().len() {
            let j = m.job(i);
            if !j.live() {
                self.est.remove(RegionId(i as u64));
                continue;
            }
            let pid = j.pid().expect("live");
            // A scan per `scan` of the job's own CPU time (the paper's
            // virtual time): a job that did not run has nothing to show.
            let cpu = procfs::cpu_seconds_exact(pid).unwrap_or(0.0);
            if cpu - self.last_cpu_s[i] < period {
                continue;
            }
            self.last_cpu_s[i] = cpu;
            self.observed[i] += 1;
            observations += 1;
            if let Some((rss, refd)) = procfs::private_referenced(pid) {
                let pages = (rss / self.page) as usize;
                let r = ((refd / self.page) as usize).min(pages);
                self.est.observe_count(RegionId(i as u64), pages, r);
                self.wss_bytes[i] = Some(self.est.estimate_bytes(RegionId(i as u64)));
                let why = damon.get_or_insert_with(damon::status).disturbs(pid);
                if let Some(why) = why {
                    self.mark_unreliable(m, i, why);
                }
            }
            let _ = procfs::clear_refs_flush(pid);
        }
        self.scans += 1;
        self.since_place += 1;
        let need = self.cfg.place_after;
        let due = if !self.placed_once {
            let all_seen = (0..m.jobs().len())
                .filter(|&i| m.job(i).live())
                .all(|i| self.observed[i] >= need);
            all_seen || self.scans >= 16 * need
        } else {
            self.cfg.replace_every > 0 && self.since_place >= self.cfg.replace_every
        };
        let s = &mut self.stats;
        s.observations += observations;
        s.scans += 1;
        s.scan_s += t.elapsed().as_secs_f64();
        if due {
            self.place(m)?;
        }
        Ok(())
    }

    /// Job `i`'s estimate is unreliable for `why`: its report and the run's
    /// statistics say so, and the run warns the first time.
    fn mark_unreliable(&mut self, m: &mut Mechanism, i: usize, why: String) {
        let new = !self.stats.wss_unreliable.contains(&why);
        if new {
            self.stats.wss_unreliable.push(why.clone());
        }
        if new {
            m.warn(format!("regions: working-set estimates {why}"));
        }
        self.unreliable[i] = Some(why);
    }

    /// Decides with the core crate and applies.
    fn place(&mut self, m: &mut Mechanism) -> Result<()> {
        self.placed_once = true;
        self.since_place = 0;
        let live: Vec<usize> = (0..m.jobs().len()).filter(|&i| m.job(i).live()).collect();
        if live.is_empty() {
            return Ok(());
        }
        let items: Vec<Item> = live
            .iter()
            .map(|&i| Item {
                id: i as u64,
                wss_bytes: self.est.estimate_bytes(RegionId(i as u64)),
            })
            .collect();
        let all = m.topology().cpus.clone();
        let (decision, targets, loads) = if self.bins.len() < 2 {
            (
                "one_cache".to_string(),
                vec![all.clone(); live.len()],
                Vec::new(),
            )
        } else {
            self.decide(m, &live, &items)?
        };
        for (k, &i) in live.iter().enumerate() {
            if self.current[i] != targets[k] {
                self.current[i] = targets[k].clone();
                m.apply(Decision::Confine {
                    job: i,
                    cpus: targets[k].clone(),
                })?;
            }
        }
        let rec = RegionsRecord {
            at_s: m.elapsed().as_secs_f64(),
            wss_bytes: items
                .iter()
                .map(|it| (m.job(it.id as usize).name().to_string(), it.wss_bytes))
                .collect(),
            decision,
            placement: live
                .iter()
                .map(|&i| (m.job(i).name().to_string(), m.job(i).cpus().to_vec()))
                .collect(),
            loads,
            wss_unreliable: live.iter().find_map(|&i| self.unreliable[i].clone()),
        };
        self.stats.decisions.push(rec);
        Ok(())
    }

    /// Two caches or more: balance, repair the CPU shares, keep the current
    /// assignment where it is as good, then the conditions decide.
    fn decide(&self, m: &Mechanism, live: &[usize], items: &[Item]) -> Result<Placement> {
        let all = m.topology().cpus.clone();
        let total: u64 = items.iter().map(|it| it.wss_bytes).sum();
        let a = balance(items, &self.bins)?;
        let sizes: Vec<u64> = self.bins.iter().map(|b| b.capacity_bytes).collect();
        let cond = Conditions {
            max_total_wss_bytes: u64::MAX,
            ..Conditions::for_caches(&sizes)
        };
        // Each job's bin, then the CPU-share repair.
        let bin_of: Vec<usize> = live
            .iter()
            .map(|&i| {
                self.bins
                    .iter()
                    .position(|b| Some(b.cache) == a.cache_of(i as u64))
                    .expect("assigned to a bin")
            })
            .collect();
        let nthreads: Vec<usize> = live
            .iter()
            .map(|&i| m.job(i).pid().map_or(1, |p| procfs::tasks(p).len().max(1)))
            .collect();
        let ncpus: Vec<usize> = self.cache_cpus.iter().map(Vec::len).collect();
        let wss: Vec<u64> = items.iter().map(|it| it.wss_bytes).collect();
        let bin_of = cpu_share_repair(bin_of, &nthreads, &wss, &ncpus);
        // Hysteresis against the current assignment (every live job on
        // one cache), core `policy::regions::shares`.
        let cur: Option<Vec<usize>> = live
            .iter()
            .map(|&i| self.cache_cpus.iter().position(|c| *c == self.current[i]))
            .collect();
        let bin_of = keep_current(cur, bin_of, &nthreads, &wss, &sizes, &ncpus);
        let mut threads = vec![0usize; self.bins.len()];
        let mut bin_loads = vec![0u64; self.bins.len()];
        for (k, &b) in bin_of.iter().enumerate() {
            threads[b] += nthreads[k];
            bin_loads[b] += wss[k];
        }
        let short = (0..threads.len()).any(|k| threads[k] < self.cache_cpus[k].len());
        let over = (0..threads.len()).any(|k| threads[k] > self.cache_cpus[k].len());
        let obs = Observation {
            access_time: f64::INFINITY,
            total_wss_bytes: total,
            microschedules_per_s: 0.0,
            idle_while_waiting: short && over,
        };
        Ok(match cond.decide(&obs) {
            RegionDecision::Regioning => {
                let targets = bin_of.iter().map(|&b| self.cache_cpus[b].clone()).collect();
                ("regioning".to_string(), targets, bin_loads)
            }
            RegionDecision::Fallback(c) => {
                let name = serde_json::to_value(c)
                    .ok()
                    .and_then(|v| v.as_str().map(String::from))
                    .unwrap_or_else(|| format!("{c:?}"));
                (
                    format!("fallback: {name}"),
                    vec![all; live.len()],
                    Vec::new(),
                )
            }
        })
    }
}

/// `regions`, as [`super::policy::POLICIES`] lists it.
pub(crate) const ENTRY: PolicyEntry = PolicyEntry {
    name: "regions",
    aliases: &[],
    doc: "cache-aware placement of co-running jobs (seed 004): each job's working set \
          measured from /proc, jobs balanced over the caches of one level by working set and \
          confined to their cache's CPUs, or left to Linux where balancing cannot pay",
    fragment: Some(&FRAGMENT),
    build: |spec, topo| Ok(Box::new(RegionsPolicy::new(spec, topo))),
};

impl RuntimePolicy for RegionsPolicy {
    fn name(&self) -> &'static str {
        "regions"
    }

    fn needs(&self) -> Needs {
        Needs {
            freezer: false,
            cpusets: self.cfg.cpusets.then_some("regions"),
        }
    }

    fn start(&mut self, m: &mut Mechanism) -> Result<()> {
        if self.bins.is_empty() {
            m.warn(format!(
                "regions: no cache of level {} in the topology; jobs are left to Linux",
                self.level.map_or("(none)".into(), |l| l.to_string())
            ));
        }
        self.stats = RegionsStats {
            caches: self.caches.clone(),
            ..Default::default()
        };
        let all = m.topology().cpus.clone();
        // Fewer than two caches: nothing can ever be balanced; the jobs run
        // exactly as under the default policy (no groups, no scans).
        let static_fallback = self.bins.len() < 2;
        for i in 0..m.jobs().len() {
            if !static_fallback {
                // Its own cpuset group spanning every CPU, where there are
                // cpusets.
                m.apply(Decision::Confine {
                    job: i,
                    cpus: all.clone(),
                })?;
            }
            m.apply(Decision::spawn(i))?;
            if let Some(pid) = m.job(i).pid().filter(|_| !static_fallback) {
                let _ = procfs::clear_refs_flush(pid);
            }
        }
        if static_fallback {
            self.place(m)?;
        }
        self.deadline = Some(mono_ns() + self.cfg.scan.as_nanos() as u64);
        Ok(())
    }

    fn next_deadline(&self) -> Option<u64> {
        self.deadline
    }

    fn on_timer(&mut self, m: &mut Mechanism, now: u64) -> Result<()> {
        self.tick(m)?;
        self.deadline = Some(now + self.cfg.scan.as_nanos() as u64);
        Ok(())
    }

    /// A job exited: re-place the others (once placement has begun).
    fn on_exit(&mut self, m: &mut Mechanism) -> Result<()> {
        if self.placed_once && self.bins.len() >= 2 {
            self.place(m)?;
        }
        Ok(())
    }

    fn annotate(&self, i: usize, r: &mut JobReport) {
        r.wss_bytes = self.wss_bytes[i];
        r.wss_unreliable = self.unreliable[i].clone();
    }

    /// `regions`: the caches, the scans and every placement decision.
    fn report(&self, _m: &Mechanism) -> PolicyReport {
        let mut r = PolicyReport::new();
        if let Ok(v) = serde_json::to_value(&self.stats) {
            r.insert("regions".into(), v);
        }
        r
    }
}
