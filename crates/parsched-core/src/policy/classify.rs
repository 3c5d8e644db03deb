//! The coscheduling classifier of flexible coscheduling (FCS): from what was
//! observed of a job, does it need to be gang scheduled?
//!
//! Seed 002 (Frachtenberg, "Process Scheduling for the Parallel Desktop",
//! `seeds/002_f89b85c3eb86e2ff.txt` §4.2; digest in
//! `notes/seed-targets.md`, section 002) uses FCS on its load-imbalanced
//! workload: FCS "monitors MPI communication to measure the synchronization
//! effectiveness and requirements of each process. After a short discovery
//! period, it classifies job 3 as *CS* (requires coscheduling), and jobs 1 and
//! 2 as *F* (prefer, but do not require coscheduling)"; CS jobs always get
//! dedicated gang slots, F processes "can be descheduled if they stall too
//! long". The classification itself is that of the paper seed 002 cites:
//! Frachtenberg, Feitelson, Petrini and Fernandez, "Flexible CoScheduling:
//! mitigating load imbalance and improving utilization of heterogeneous
//! resources", IPDPS 2003. Per process it measures the average computation
//! granularity between synchronizations and the average wait per
//! synchronization, and decides:
//!
//! * coarse granularity → **DC**, "does not care": synchronizes so rarely
//!   that coscheduling buys nothing; it may run whenever a processor is idle;
//! * fine granularity, short waits → **CS**, "requires coscheduling": it
//!   synchronizes often and, coscheduled, waits little;
//! * fine granularity, long waits → **F**, "prefers coscheduling"
//!   (frustrated): it synchronizes often but waits long even when coscheduled
//!   (load imbalance), so it gains from coscheduling but may be descheduled
//!   while it stalls.
//!
//! The DC class is not named in seed 002 itself (the digest's §4); it comes
//! from the cited FCS paper.
//!
//! # The two rules of [`Classifier::classify`]
//!
//! Nothing is decided before [`ClassifierConfig::discovery_s`] seconds of the
//! job were observed ([`Observation::wall_s`]); then:
//!
//! 1. **With synchronization data** ([`Observation::sync_events`] is `Some`,
//!    a machine that sees the barriers or receives, such as the simulator):
//!    the FCS decision tree above. Granularity = CPU seconds spent computing
//!    (`cpu_s - spin_s`) per synchronization event; wait = `wait_s` per event.
//!    Granularity ≥ [`ClassifierConfig::coarse_grain_s`] (or no
//!    synchronization at all) → DC; otherwise wait > granularity ×
//!    [`ClassifierConfig::frustrated_wait_ratio`] → F; otherwise CS.
//! 2. **With /proc data only** (`sync_events` is `None`, the Linux runtime,
//!    which cannot see a program's synchronization): voluntary context
//!    switches per thread-second ([`Observation::voluntary_rate`]) below
//!    [`ClassifierConfig::blocking_rate`] → the job's threads keep running
//!    (they spin while they wait) → CS, it stays gang scheduled. At or above
//!    it the threads block, and:
//!    * without CPU data ([`Observation::cpu_s`] = 0) → DC, released to fill
//!      idle time (the runtime's first flexible rule, which never answered
//!      F);
//!    * with CPU data, each voluntary switch is taken as about one
//!      synchronization (a thread that blocks at a barrier switches once per
//!      barrier): granularity ≈ `cpu_s` / voluntary switches, wait ≈
//!      [`Observation::blocked_s`] (thread-seconds neither running nor
//!      runnable) / voluntary switches, and rule 1's decision tree with the
//!      same thresholds decides CS / F / DC ([`Observation::proc_as_sync`]).
//!      A balanced job whose threads block briefly at each barrier is CS, an
//!      imbalanced one whose early threads block long F, a job that blocks
//!      rarely for its CPU use (I/O, coarse phases) DC. Spinning before
//!      blocking (spin-block) counts as computation, as the kernel cannot
//!      tell it apart.
//!
//! The defaults of `discovery_s` and `blocking_rate` are the runtime's
//! (`flexible_observe_s = 0.2`, `flexible_blocking_rate = 25`). Seed 002 does
//! not state FCS's thresholds (NS); `coarse_grain_s` and
//! `frustrated_wait_ratio` are our choices \[ext\], explained on the fields.
//!
//! # Revising the class: [`ClassTracker`]
//!
//! Behaviour changes (a job that starts to spin, one that stops
//! synchronizing), and FCS revises its classes. A [`ClassTracker`] follows one
//! job: it is fed one [`Observation`] per period (a slot, a monitoring
//! interval), classifies the most recent periods covering at least
//! [`ClassifierConfig::window_s`] observed seconds (and at least
//! `discovery_s`), and changes the job's class only once the same new class
//! came out of [`ClassifierConfig::revise_after`] consecutive periods
//! (hysteresis, so one noisy period does not move a job). The first decision,
//! once `discovery_s` was observed, is taken at once. A behaviour that stays
//! the same never changes the class; a changed one is followed after at most
//! the periods that fill the window plus `revise_after`.
//!
//! Pure: no I/O, no clock. The caller gathers [`Observation`]s (the runtime
//! from `/proc/PID/task/TID/status`, the simulator from simulated blocking)
//! and applies the class.

use crate::error::ConfigError;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::fmt;

/// What was seen of one job over some observed time. All sums over the job's
/// threads; [`Observation::add`] accumulates successive periods.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Observation {
    /// Observed (wall-clock) seconds, e.g. the time the job held its slot.
    pub wall_s: f64,
    /// Thread-seconds observed: each period's seconds × the job's threads.
    pub thread_s: f64,
    /// CPU seconds the job used while observed (0 where not measured; the
    /// /proc rule does not use it).
    pub cpu_s: f64,
    /// Voluntary context switches (a thread blocked).
    pub voluntary: u64,
    /// Involuntary context switches (a thread was preempted).
    pub involuntary: u64,
    /// Synchronization events completed (barriers passed, messages received)
    /// where the machine knows them; `None` where it does not (then `wait_s`
    /// and `spin_s` are meaningless and the /proc rule applies).
    pub sync_events: Option<u64>,
    /// Thread-seconds spent waiting for synchronization (spinning or blocked).
    pub wait_s: f64,
    /// CPU seconds used while waiting (spinning), part of `cpu_s`.
    pub spin_s: f64,
    /// /proc rule: thread-seconds the job's threads were blocked (neither
    /// running nor waiting on a run queue: wall − run − run-queue wait from
    /// `/proc/PID/task/TID/schedstat`) while observed; 0 where not measured.
    #[serde(default)]
    pub blocked_s: f64,
}

impl Observation {
    /// Adds `other` (a later period) to `self`. Synchronization counts add
    /// where known; a period without them (`None`) adds nothing to them.
    pub fn add(&mut self, other: &Observation) {
        self.wall_s += other.wall_s;
        self.thread_s += other.thread_s;
        self.cpu_s += other.cpu_s;
        self.voluntary += other.voluntary;
        self.involuntary += other.involuntary;
        self.sync_events = match (self.sync_events, other.sync_events) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
        self.wait_s += other.wait_s;
        self.spin_s += other.spin_s;
        self.blocked_s += other.blocked_s;
    }

    /// /proc data read as synchronization data: each voluntary switch one
    /// synchronization, the blocked time the wait, nothing spun (see the
    /// module header). `sync_events` is `Some(voluntary)`.
    pub fn proc_as_sync(&self) -> Observation {
        Observation {
            sync_events: Some(self.voluntary),
            wait_s: self.blocked_s,
            spin_s: 0.0,
            ..*self
        }
    }

    /// Voluntary context switches per thread-second (thread-seconds floored
    /// at 1 ns, so an empty observation has rate 0 rather than NaN).
    pub fn voluntary_rate(&self) -> f64 {
        self.voluntary as f64 / self.thread_s.max(1e-9)
    }

    /// Involuntary context switches per thread-second.
    pub fn involuntary_rate(&self) -> f64 {
        self.involuntary as f64 / self.thread_s.max(1e-9)
    }

    /// Mean computation granularity: CPU seconds not spent waiting, per
    /// synchronization event. `None` without synchronization data or events.
    pub fn granularity_s(&self) -> Option<f64> {
        match self.sync_events {
            Some(n) if n > 0 => Some((self.cpu_s - self.spin_s).max(0.0) / n as f64),
            _ => None,
        }
    }

    /// Mean wait per synchronization event, seconds. `None` without
    /// synchronization data or events.
    pub fn wait_per_sync_s(&self) -> Option<f64> {
        match self.sync_events {
            Some(n) if n > 0 => Some(self.wait_s.max(0.0) / n as f64),
            _ => None,
        }
    }
}

/// FCS's classes of a job (or process).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CoschedClass {
    /// CS: fine-grained and waits little when coscheduled; keep it gang
    /// scheduled.
    RequiresCoscheduling,
    /// F (frustrated): fine-grained but waits long even coscheduled (load
    /// imbalance); gains from coscheduling, may be descheduled while it stalls.
    PrefersCoscheduling,
    /// DC: coarse-grained or blocking; may run whenever a processor is idle.
    DoesNotCare,
}

impl CoschedClass {
    /// FCS's short name: `CS`, `F` or `DC`.
    pub fn short_name(self) -> &'static str {
        match self {
            CoschedClass::RequiresCoscheduling => "CS",
            CoschedClass::PrefersCoscheduling => "F",
            CoschedClass::DoesNotCare => "DC",
        }
    }

    /// Whether the job keeps its place in the gang matrix (CS and F).
    pub fn is_coscheduled(self) -> bool {
        self != CoschedClass::DoesNotCare
    }
}

impl fmt::Display for CoschedClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.short_name())
    }
}

/// The classifier's thresholds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ClassifierConfig {
    /// FCS's discovery period: observed seconds before any decision.
    /// Default 0.2 s (the runtime's `flexible_observe_s`).
    pub discovery_s: f64,
    /// /proc rule: voluntary context switches per thread-second at or above
    /// which a job counts as blocking (DC). Default 25 (the runtime's
    /// `flexible_blocking_rate`): a spinning thread switches voluntarily
    /// almost never, a thread that blocks at every 1–10 ms synchronization
    /// 100–1000 times a second.
    pub blocking_rate: f64,
    /// Sync rule: mean computation granularity (seconds per synchronization)
    /// at or above which a job does not care about coscheduling. Default
    /// 0.01 s \[ext\]: ten times seed 002's basic granularity of 1 ms and a
    /// fifth of a 50 ms slot, where a descheduled partner costs a job a small
    /// part of its computation.
    pub coarse_grain_s: f64,
    /// Sync rule: mean wait per synchronization divided by the granularity
    /// above which a fine-grained job is frustrated (F). Default 0.25 \[ext\]:
    /// seed 002's imbalanced jobs wait on average 1/3 of their granularity
    /// (half their processes compute 1 ms and wait 1 ms, the other half
    /// compute 2 ms), its balanced job, coscheduled, close to 0.
    pub frustrated_wait_ratio: f64,
    /// [`ClassTracker`]: the revision window. A tracked job is classified
    /// over its most recent periods covering at least this many observed
    /// seconds (and at least `discovery_s`). Default 1.0 s \[ext\]: five
    /// discovery periods, twenty 50 ms slots; long enough to average over
    /// several slots, short enough to follow a job whose behaviour changes
    /// within a few seconds. Seed 002 does not revise classes (NS).
    pub window_s: f64,
    /// [`ClassTracker`]: a new class must come out of this many consecutive
    /// periods before a tracked job's class changes (hysteresis). Default 2
    /// \[ext\]: one period that disagrees is not enough. At least 1.
    pub revise_after: u32,
}

impl Default for ClassifierConfig {
    fn default() -> Self {
        ClassifierConfig {
            discovery_s: 0.2,
            blocking_rate: 25.0,
            coarse_grain_s: 0.01,
            frustrated_wait_ratio: 0.25,
            window_s: 1.0,
            revise_after: 2,
        }
    }
}

impl ClassifierConfig {
    /// Every threshold finite and non-negative; `coarse_grain_s` positive.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let check = |field: &str, v: f64, positive: bool| {
            let ok = v.is_finite() && if positive { v > 0.0 } else { v >= 0.0 };
            if ok {
                Ok(())
            } else {
                Err(ConfigError::new(
                    field,
                    format!("{v}"),
                    if positive {
                        "a finite number > 0"
                    } else {
                        "a finite number >= 0"
                    },
                ))
            }
        };
        check("discovery_s", self.discovery_s, false)?;
        check("blocking_rate", self.blocking_rate, false)?;
        check("coarse_grain_s", self.coarse_grain_s, true)?;
        check("frustrated_wait_ratio", self.frustrated_wait_ratio, false)?;
        check("window_s", self.window_s, false)?;
        if self.revise_after == 0 {
            return Err(ConfigError::new("revise_after", "0", "an integer >= 1"));
        }
        Ok(())
    }
}

/// Below this share of its thread-seconds in CPU use, and without a single
/// synchronization, an observation is of a job that did not run: no class
/// follows from it ([`Classifier::classify`] answers `None`).
pub const STARVED_CPU_SHARE: f64 = 0.01;

/// Classifies jobs from their [`Observation`]s (see the module header for the
/// rules).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Classifier {
    config: ClassifierConfig,
}

impl Classifier {
    /// A classifier with validated thresholds.
    pub fn new(config: ClassifierConfig) -> Result<Classifier, ConfigError> {
        config.validate()?;
        Ok(Classifier { config })
    }

    pub fn config(&self) -> &ClassifierConfig {
        &self.config
    }

    /// The job's class, or `None` while less than `discovery_s` was observed.
    pub fn classify(&self, obs: &Observation) -> Option<CoschedClass> {
        if obs.wall_s < self.config.discovery_s {
            return None;
        }
        if obs.sync_events == Some(0) && obs.cpu_s <= STARVED_CPU_SHARE * obs.thread_s {
            // Neither synchronized nor computed: the job did not run (it was
            // starved); that says nothing about its behaviour.
            return None;
        }
        Some(match obs.sync_events {
            Some(_) => self.classify_sync(obs),
            None => self.classify_proc(obs),
        })
    }

    /// Rule 1: FCS's decision tree over granularity and wait.
    fn classify_sync(&self, obs: &Observation) -> CoschedClass {
        let (Some(grain), Some(wait)) = (obs.granularity_s(), obs.wait_per_sync_s()) else {
            // No synchronization at all: as coarse as it gets.
            return CoschedClass::DoesNotCare;
        };
        if grain >= self.config.coarse_grain_s {
            CoschedClass::DoesNotCare
        } else if wait > grain * self.config.frustrated_wait_ratio {
            CoschedClass::PrefersCoscheduling
        } else {
            CoschedClass::RequiresCoscheduling
        }
    }

    /// Rule 2: blocking rate from /proc; with CPU data, a blocking job goes
    /// through rule 1 with each voluntary switch as one synchronization.
    fn classify_proc(&self, obs: &Observation) -> CoschedClass {
        if obs.voluntary_rate() < self.config.blocking_rate {
            CoschedClass::RequiresCoscheduling
        } else if obs.cpu_s > 0.0 {
            self.classify_sync(&obs.proc_as_sync())
        } else {
            CoschedClass::DoesNotCare
        }
    }
}

/// At most this many periods are kept in a [`ClassTracker`]'s window, whatever
/// their length (periods of zero seconds would otherwise never fill it).
pub const MAX_WINDOW_PERIODS: usize = 4096;

/// Tracks one job's class over time: classify over a sliding window of recent
/// periods, revise with hysteresis (see the module header).
#[derive(Debug, Clone)]
pub struct ClassTracker {
    classifier: Classifier,
    /// The most recent periods, oldest first.
    window: VecDeque<Observation>,
    /// Observed seconds so far (all periods).
    observed_s: f64,
    class: Option<CoschedClass>,
    /// A class differing from `class` and the consecutive periods it came out.
    candidate: Option<(CoschedClass, u32)>,
    history: Vec<(f64, CoschedClass)>,
}

impl ClassTracker {
    pub fn new(classifier: Classifier) -> ClassTracker {
        ClassTracker {
            classifier,
            window: VecDeque::new(),
            observed_s: 0.0,
            class: None,
            candidate: None,
            history: Vec::new(),
        }
    }

    pub fn classifier(&self) -> &Classifier {
        &self.classifier
    }

    /// Adds one observed period (e.g. one slot, or one monitoring interval);
    /// returns `Some(new)` when the class changed (including the first
    /// decision after discovery).
    pub fn observe(&mut self, period: &Observation) -> Option<CoschedClass> {
        self.observed_s += period.wall_s.max(0.0);
        self.window.push_back(*period);
        let cfg = self.classifier.config();
        let cover = cfg.window_s.max(cfg.discovery_s);
        // Drop the oldest periods while the rest still cover the window.
        let mut total: f64 = self.window.iter().map(|o| o.wall_s.max(0.0)).sum();
        while self.window.len() > 1 {
            let oldest = self.window[0].wall_s.max(0.0);
            if total - oldest >= cover || self.window.len() > MAX_WINDOW_PERIODS {
                self.window.pop_front();
                total -= oldest;
            } else {
                break;
            }
        }
        let now = self.classifier.classify(&self.window_observation())?;
        match self.class {
            None => {
                self.set(now);
                Some(now)
            }
            Some(c) if c == now => {
                self.candidate = None;
                None
            }
            Some(_) => {
                let seen = match self.candidate {
                    Some((k, n)) if k == now => n + 1,
                    _ => 1,
                };
                if seen >= self.classifier.config().revise_after {
                    self.set(now);
                    Some(now)
                } else {
                    self.candidate = Some((now, seen));
                    None
                }
            }
        }
    }

    fn set(&mut self, class: CoschedClass) {
        self.class = Some(class);
        self.candidate = None;
        self.history.push((self.observed_s, class));
    }

    /// Forgets the periods observed so far (the class stays): the next
    /// revision rests only on periods observed from now on, once they cover
    /// `discovery_s` (for a job whose behaviour follows its class).
    pub fn forget_window(&mut self) {
        self.window.clear();
        self.candidate = None;
    }

    /// The current class; `None` before the discovery period.
    pub fn class(&self) -> Option<CoschedClass> {
        self.class
    }

    /// Classes over time: (observed seconds at the change, class).
    pub fn history(&self) -> &[(f64, CoschedClass)] {
        &self.history
    }

    /// Observed seconds so far.
    pub fn observed_s(&self) -> f64 {
        self.observed_s
    }

    /// The sum of the periods in the window (what the class is decided on).
    pub fn window_observation(&self) -> Observation {
        let mut sum = Observation::default();
        for o in &self.window {
            sum.add(o);
        }
        sum
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn proc_obs(wall_s: f64, threads: f64, voluntary: u64) -> Observation {
        Observation {
            wall_s,
            thread_s: wall_s * threads,
            voluntary,
            ..Default::default()
        }
    }

    /// `n` syncs of `grain` s computation and `wait` s waiting each, spinning
    /// (spin = wait) or blocking (spin = 0).
    fn sync_obs(n: u64, grain: f64, wait: f64, spin: bool) -> Observation {
        let spin_s = if spin { n as f64 * wait } else { 0.0 };
        Observation {
            wall_s: 1.0,
            thread_s: 1.0,
            cpu_s: n as f64 * grain + spin_s,
            sync_events: Some(n),
            wait_s: n as f64 * wait,
            spin_s,
            ..Default::default()
        }
    }

    #[test]
    fn a_job_that_did_not_run_gets_no_class() {
        let c = Classifier::default();
        let starved = Observation {
            wall_s: 1.0,
            thread_s: 4.0,
            cpu_s: 0.0,
            sync_events: Some(0),
            wait_s: 2.0,
            ..Default::default()
        };
        assert_eq!(c.classify(&starved), None);
        let busy = Observation {
            cpu_s: 4.0,
            ..starved
        };
        assert_eq!(c.classify(&busy), Some(CoschedClass::DoesNotCare));
    }

    #[test]
    fn nothing_before_the_discovery_period() {
        let c = Classifier::default();
        assert_eq!(c.classify(&proc_obs(0.19, 2.0, 0)), None);
        assert_eq!(
            c.classify(&proc_obs(0.2, 2.0, 0)),
            Some(CoschedClass::RequiresCoscheduling)
        );
        assert!(c.classify(&sync_obs(10, 0.001, 0.0, true)).is_some());
        let mut short = sync_obs(10, 0.001, 0.0, true);
        short.wall_s = 0.1;
        assert_eq!(c.classify(&short), None);
    }

    #[test]
    fn proc_rule_is_the_runtimes_blocking_rate() {
        let c = Classifier::default();
        // 0.5 s × 2 threads = 1 thread-second: 24 switches spin, 25 block.
        assert_eq!(
            c.classify(&proc_obs(0.5, 2.0, 24)),
            Some(CoschedClass::RequiresCoscheduling)
        );
        assert_eq!(
            c.classify(&proc_obs(0.5, 2.0, 25)),
            Some(CoschedClass::DoesNotCare)
        );
        // Zero thread-seconds: rate from a 1 ns floor, not NaN.
        let o = Observation {
            wall_s: 1.0,
            voluntary: 1,
            ..Default::default()
        };
        assert!((o.voluntary_rate() - 1e9).abs() < 1.0);
        assert_eq!(c.classify(&o), Some(CoschedClass::DoesNotCare));
        assert_eq!(Observation::default().voluntary_rate(), 0.0);
    }

    #[test]
    fn proc_rule_with_cpu_and_blocked_time_decides_f() {
        let c = Classifier::default();
        // Seed 002's jobs blocking at each 1 ms barrier, 2 threads, 1 s:
        // the thread that arrives first blocks, once per iteration.
        let blocking = |iters: u64, cpu_per_iter: f64, blocked_per_iter: f64| Observation {
            wall_s: 1.0,
            thread_s: 2.0,
            cpu_s: iters as f64 * cpu_per_iter,
            voluntary: iters,
            blocked_s: iters as f64 * blocked_per_iter,
            ..Default::default()
        };
        // Balanced (job 3): 2 ms CPU per iteration, blocks ~0.05 ms → CS.
        assert_eq!(
            c.classify(&blocking(1000, 0.002, 0.00005)),
            Some(CoschedClass::RequiresCoscheduling)
        );
        // Imbalanced (jobs 1, 2): 3 ms CPU, the fast thread blocks 1 ms → F.
        assert_eq!(
            c.classify(&blocking(333, 0.003, 0.001)),
            Some(CoschedClass::PrefersCoscheduling)
        );
        // Blocks 30 times per thread-second for 30 ms of CPU each → DC.
        assert_eq!(
            c.classify(&blocking(60, 0.03, 0.0)),
            Some(CoschedClass::DoesNotCare)
        );
        // Without CPU data: the first flexible rule, DC.
        let mut no_cpu = blocking(333, 0.003, 0.001);
        no_cpu.cpu_s = 0.0;
        assert_eq!(c.classify(&no_cpu), Some(CoschedClass::DoesNotCare));
        // Spinning (rate below the threshold) stays CS whatever the CPU.
        assert_eq!(
            c.classify(&blocking(10, 0.1, 0.0)),
            Some(CoschedClass::RequiresCoscheduling)
        );
        let s = blocking(333, 0.003, 0.001).proc_as_sync();
        assert_eq!(s.sync_events, Some(333));
        assert!((s.wait_per_sync_s().unwrap() - 0.001).abs() < 1e-12);
    }

    #[test]
    fn sync_rule_is_fcs_decision_tree() {
        let c = Classifier::default();
        // Seed 002 job 3: 1 ms grain, coscheduled, waits ~0 → CS.
        assert_eq!(
            c.classify(&sync_obs(1000, 0.001, 0.00005, true)),
            Some(CoschedClass::RequiresCoscheduling)
        );
        // Seed 002 jobs 1, 2: mean grain 1.5 ms, mean wait 0.5 ms → F.
        assert_eq!(
            c.classify(&sync_obs(1000, 0.0015, 0.0005, true)),
            Some(CoschedClass::PrefersCoscheduling)
        );
        // Coarse grain → DC, whatever the wait.
        assert_eq!(
            c.classify(&sync_obs(10, 0.05, 0.05, false)),
            Some(CoschedClass::DoesNotCare)
        );
        // Sync data, computing, but no synchronization seen → DC.
        let computing = Observation {
            cpu_s: 1.0,
            ..sync_obs(0, 0.0, 0.0, false)
        };
        assert_eq!(c.classify(&computing), Some(CoschedClass::DoesNotCare));
        // Neither computing nor synchronizing (starved): no class.
        assert_eq!(c.classify(&sync_obs(0, 0.0, 0.0, false)), None);
        // The spin time is not computation.
        let o = sync_obs(100, 0.001, 0.004, true);
        assert!((o.granularity_s().unwrap() - 0.001).abs() < 1e-12);
        assert!((o.wait_per_sync_s().unwrap() - 0.004).abs() < 1e-12);
    }

    #[test]
    fn names_and_serde() {
        assert_eq!(CoschedClass::RequiresCoscheduling.to_string(), "CS");
        assert_eq!(CoschedClass::PrefersCoscheduling.to_string(), "F");
        assert_eq!(CoschedClass::DoesNotCare.to_string(), "DC");
        assert!(CoschedClass::PrefersCoscheduling.is_coscheduled());
        assert!(!CoschedClass::DoesNotCare.is_coscheduled());
        use serde::de::{value::Error, IntoDeserializer};
        let name = |s: &str| CoschedClass::deserialize(s.into_deserializer()).map_err(|e: Error| e);
        assert_eq!(name("does_not_care"), Ok(CoschedClass::DoesNotCare));
        assert_eq!(
            name("requires_coscheduling"),
            Ok(CoschedClass::RequiresCoscheduling)
        );
        assert!(name("DC").is_err());
    }

    #[test]
    fn config_validation_names_the_field() {
        assert!(ClassifierConfig::default().validate().is_ok());
        let bad = |f: fn(&mut ClassifierConfig)| {
            let mut c = ClassifierConfig::default();
            f(&mut c);
            Classifier::new(c).unwrap_err().field
        };
        assert_eq!(bad(|c| c.discovery_s = -1.0), "discovery_s");
        assert_eq!(bad(|c| c.blocking_rate = f64::NAN), "blocking_rate");
        assert_eq!(bad(|c| c.coarse_grain_s = 0.0), "coarse_grain_s");
        assert_eq!(
            bad(|c| c.frustrated_wait_ratio = f64::INFINITY),
            "frustrated_wait_ratio"
        );
    }

    fn tracker() -> ClassTracker {
        ClassTracker::new(Classifier::default())
    }

    /// One 50 ms monitoring period of a 2-thread job with `voluntary`
    /// switches (≥ 3 is ≥ 30 per thread-second: blocking).
    fn period(voluntary: u64) -> Observation {
        proc_obs(0.05, 2.0, voluntary)
    }

    #[test]
    fn tracker_decides_nothing_before_discovery_then_at_once() {
        let mut t = tracker();
        for _ in 0..3 {
            assert_eq!(t.observe(&period(0)), None);
            assert_eq!(t.class(), None);
        }
        // 4 × 50 ms = 0.2 s: the first decision, reported as a change.
        assert_eq!(
            t.observe(&period(0)),
            Some(CoschedClass::RequiresCoscheduling)
        );
        assert_eq!(t.class(), Some(CoschedClass::RequiresCoscheduling));
        assert_eq!(t.history().len(), 1);
        assert!((t.history()[0].0 - 0.2).abs() < 1e-9);
    }

    #[test]
    fn tracker_follows_spin_to_block_and_back_with_hysteresis() {
        let mut t = tracker();
        for _ in 0..40 {
            t.observe(&period(0));
        }
        assert_eq!(t.class(), Some(CoschedClass::RequiresCoscheduling));
        // One noisy period is not enough; the window holds 20 periods of
        // 50 ms (1 s), so the job must block for a while before it leaves.
        let mut changed_at = None;
        for i in 1..=40 {
            if let Some(c) = t.observe(&period(20)) {
                assert_eq!(c, CoschedClass::DoesNotCare);
                changed_at = Some(i);
                break;
            }
        }
        let i = changed_at.expect("a job that blocks leaves");
        // 20 switches per period = 200 per thread-second: after 3 blocking
        // periods the window's rate is 60/2 ≥ 25, twice in a row → period 4.
        assert_eq!(i, 4, "changed after {i} periods");
        // It starts to spin again: taken back into the matrix.
        let mut back = None;
        for i in 1..=40 {
            if t.observe(&period(0)).is_some() {
                back = Some(i);
                break;
            }
        }
        let back = back.expect("a job that spins again is taken back");
        assert!(back <= 20 + 2, "back after {back} periods");
        assert_eq!(t.class(), Some(CoschedClass::RequiresCoscheduling));
        let classes: Vec<_> = t.history().iter().map(|h| h.1).collect();
        assert_eq!(
            classes,
            vec![
                CoschedClass::RequiresCoscheduling,
                CoschedClass::DoesNotCare,
                CoschedClass::RequiresCoscheduling
            ]
        );
        // Times are observed seconds, increasing.
        assert!(t.history().windows(2).all(|w| w[0].0 < w[1].0));
    }

    #[test]
    fn tracker_smooths_a_single_outlier_period() {
        let mut t = tracker();
        for _ in 0..40 {
            t.observe(&period(0));
        }
        // One period of 20 switches in a 1 s window of 2 thread-seconds is a
        // rate of 10: the job still spins.
        assert_eq!(t.observe(&period(20)), None);
        for _ in 0..30 {
            assert_eq!(t.observe(&period(0)), None);
        }
        assert_eq!(t.history().len(), 1);
        // With a window of just discovery_s (4 periods), the same period
        // makes the window's rate 20/0.4 = 50 for 4 periods: a change, since
        // it outlasts revise_after.
        let cfg = ClassifierConfig {
            window_s: 0.0,
            ..ClassifierConfig::default()
        };
        let mut t = ClassTracker::new(Classifier::new(cfg).unwrap());
        for _ in 0..10 {
            t.observe(&period(0));
        }
        assert_eq!(t.observe(&period(20)), None);
        assert_eq!(t.observe(&period(0)), Some(CoschedClass::DoesNotCare));
    }

    #[test]
    fn tracker_revises_sync_classes() {
        // CS (balanced, coscheduled) → F (imbalanced) → DC (coarse).
        let mut t = tracker();
        let periods = |o: Observation, n: usize, t: &mut ClassTracker| {
            for _ in 0..n {
                t.observe(&o);
            }
        };
        let p = |n, g, w| {
            let mut o = sync_obs(n, g, w, true);
            o.wall_s = 0.05;
            o
        };
        let cs = p(50, 0.001, 0.0);
        let f = p(50, 0.0015, 0.0005);
        let dc = p(2, 0.02, 0.001);
        periods(cs, 30, &mut t);
        assert_eq!(t.class(), Some(CoschedClass::RequiresCoscheduling));
        periods(f, 30, &mut t);
        assert_eq!(t.class(), Some(CoschedClass::PrefersCoscheduling));
        periods(dc, 30, &mut t);
        assert_eq!(t.class(), Some(CoschedClass::DoesNotCare));
    }

    #[test]
    fn tracker_config_is_validated() {
        let mut c = ClassifierConfig {
            revise_after: 0,
            ..ClassifierConfig::default()
        };
        assert_eq!(Classifier::new(c).unwrap_err().field, "revise_after");
        c.revise_after = 1;
        c.window_s = -0.5;
        assert_eq!(Classifier::new(c).unwrap_err().field, "window_s");
        // Both keys have serde defaults.
        let parsed: ClassifierConfig = toml::from_str("window_s = 2.0").unwrap();
        assert_eq!(parsed.window_s, 2.0);
        assert_eq!(parsed.revise_after, 2);
    }

    fn arb_obs() -> impl Strategy<Value = Observation> {
        (
            0u32..1000,
            0u32..4000,
            0u32..1000,
            0u64..10_000,
            0u64..10_000,
            proptest::option::of(0u64..10_000),
            0u32..1000,
            0u32..1000,
        )
            .prop_map(|(w, t, c, v, n, s, wait, spin)| Observation {
                // Multiples of 1/64 add exactly, so sums are associative.
                wall_s: w as f64 / 64.0,
                thread_s: t as f64 / 64.0,
                cpu_s: (c + spin) as f64 / 64.0,
                voluntary: v,
                involuntary: n,
                sync_events: s,
                wait_s: (wait + spin) as f64 / 64.0,
                spin_s: spin as f64 / 64.0,
                blocked_s: wait as f64 / 64.0,
            })
    }

    fn arb_config() -> impl Strategy<Value = ClassifierConfig> {
        (0.0f64..2.0, 0.0f64..200.0, 1e-4f64..0.1, 0.0f64..2.0).prop_map(|(d, b, g, r)| {
            ClassifierConfig {
                discovery_s: d,
                blocking_rate: b,
                coarse_grain_s: g,
                frustrated_wait_ratio: r,
                ..ClassifierConfig::default()
            }
        })
    }

    fn sum(a: &Observation, b: &Observation) -> Observation {
        let mut s = *a;
        s.add(b);
        s
    }

    proptest! {
        #[test]
        fn add_is_associative_and_commutative_with_identity(
            a in arb_obs(), b in arb_obs(), c in arb_obs()
        ) {
            prop_assert_eq!(sum(&sum(&a, &b), &c), sum(&a, &sum(&b, &c)));
            prop_assert_eq!(sum(&a, &b), sum(&b, &a));
            prop_assert_eq!(sum(&a, &Observation::default()), a);
        }


        #[test]
        fn tracker_nothing_before_discovery(cfg in arb_config(), o in arb_obs(), n in 1usize..40) {
            let mut t = ClassTracker::new(Classifier::new(cfg).unwrap());
            for _ in 0..n {
                let change = t.observe(&o);
                let decided = t.observed_s() >= cfg.discovery_s;
                prop_assert_eq!(t.class().is_some(), decided);
                if !decided {
                    prop_assert_eq!(change, None);
                }
            }
        }

        #[test]
        fn tracker_constant_behaviour_never_flips(
            cfg in arb_config(), o in arb_obs(), n in 1usize..200, revise in 1u32..4
        ) {
            let cfg = ClassifierConfig { revise_after: revise, window_s: cfg.discovery_s * 2.0, ..cfg };
            let mut t = ClassTracker::new(Classifier::new(cfg).unwrap());
            for _ in 0..n {
                t.observe(&o);
            }
            prop_assert!(t.history().len() <= 1);
            if let Some(c) = t.class() {
                prop_assert_eq!(Some(c), t.classifier().classify(&t.window_observation()));
            }
        }

        #[test]
        fn tracker_follows_a_changed_behaviour(
            cfg in arb_config(), a in arb_obs(), b in arb_obs(),
            window in 0u32..128, revise in 1u32..4
        ) {
            let cfg = ClassifierConfig {
                window_s: window as f64 / 64.0,
                revise_after: revise,
                ..cfg
            };
            let cover = cfg.window_s.max(cfg.discovery_s);
            let (mut a, mut b) = (a, b);
            a.wall_s = a.wall_s.max(1.0 / 64.0);
            b.wall_s = b.wall_s.max(1.0 / 64.0);
            let classifier = Classifier::new(cfg).unwrap();
            let periods = |o: &Observation| (cover / o.wall_s).ceil().max(1.0) as usize;
            let settle = |o: &Observation| {
                let mut t = ClassTracker::new(classifier);
                for _ in 0..periods(o) + 1 {
                    t.observe(o);
                }
                t
            };
            let mut t = settle(&a);
            let ca = t.class().unwrap();
            let cb = settle(&b).class().unwrap();
            let bound = periods(&b) + revise as usize;
            for _ in 0..bound {
                t.observe(&b);
            }
            prop_assert_eq!(t.class(), Some(cb));
            if ca != cb {
                prop_assert!(t.history().len() >= 2);
            }
        }

        #[test]
        fn none_before_discovery_some_after(cfg in arb_config(), o in arb_obs()) {
            let c = Classifier::new(cfg).unwrap();
            prop_assert_eq!(c.classify(&o).is_some(), o.wall_s >= cfg.discovery_s);
        }

        #[test]
        fn more_blocking_never_moves_dc_to_cs(
            cfg in arb_config(), mut o in arb_obs(), extra in 0u64..100_000
        ) {
            // Without CPU data: the first flexible rule.
            o.sync_events = None;
            o.cpu_s = 0.0;
            let c = Classifier::new(cfg).unwrap();
            let before = c.classify(&o);
            o.voluntary += extra;
            let after = c.classify(&o);
            if before == Some(CoschedClass::DoesNotCare) {
                prop_assert_eq!(after, Some(CoschedClass::DoesNotCare));
            }
            // The /proc rule without CPU data never answers F.
            prop_assert_ne!(after, Some(CoschedClass::PrefersCoscheduling));
        }

        #[test]
        fn proc_rule_with_cpu_data_is_the_sync_rule_for_blocking_jobs(
            cfg in arb_config(), mut o in arb_obs()
        ) {
            o.sync_events = None;
            let c = Classifier::new(cfg).unwrap();
            let proc = c.classify(&o);
            if o.wall_s < cfg.discovery_s {
                prop_assert_eq!(proc, None);
            } else if o.voluntary_rate() < cfg.blocking_rate {
                prop_assert_eq!(proc, Some(CoschedClass::RequiresCoscheduling));
            } else if o.cpu_s > 0.0 {
                prop_assert_eq!(proc, c.classify(&o.proc_as_sync()));
            } else {
                prop_assert_eq!(proc, Some(CoschedClass::DoesNotCare));
            }
        }

        #[test]
        fn coarser_grain_never_leaves_dc_and_longer_waits_never_make_cs(
            cfg in arb_config(), o in arb_obs(), more in 0u32..1000
        ) {
            let c = Classifier::new(cfg).unwrap();
            let mut o = o;
            o.sync_events = Some(o.sync_events.unwrap_or(1).max(1));
            o.wall_s = o.wall_s.max(cfg.discovery_s);
            let before = c.classify(&o).unwrap();
            // More computation between the same synchronizations.
            let mut coarser = o;
            coarser.cpu_s += more as f64 / 64.0;
            if before == CoschedClass::DoesNotCare {
                prop_assert_eq!(c.classify(&coarser), Some(CoschedClass::DoesNotCare));
            }
            // Longer waits at the same granularity.
            let mut longer = o;
            longer.wait_s += more as f64 / 64.0;
            let after = c.classify(&longer).unwrap();
            if before == CoschedClass::PrefersCoscheduling {
                prop_assert_eq!(after, CoschedClass::PrefersCoscheduling);
            }
            prop_assert_eq!(
                after == CoschedClass::DoesNotCare,
                before == CoschedClass::DoesNotCare
            );
        }
    }
}
