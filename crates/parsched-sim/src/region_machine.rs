//! The simulated machine of region scheduling (seed 004, Lee & Schwan,
//! ASPLOS 2012): threads run programs whose [`Step::Touch`] steps access
//! regions, the last-level caches hold what they touched, and each touch is
//! timed by a miss model given what else occupies the cache. The same work
//! runs under the standard scheduler and under region scheduling (the
//! policies of [`parsched_core::policy::regions`]); `normalized_performance`
//! is the standard time over the region time.
//!
//! **Threads and processors.** One thread per program (memlat and the
//! balancing programs are single-threaded, as in the paper), at most one
//! thread per processor (no time sharing: the workloads here never have more
//! threads than processors; a configuration that would is refused).
//! `Compute { units }` takes `units` µs; fork, barrier and messages are
//! refused (a program error).
//!
//! **Standard scheduler.** Each thread stays on its initial processor (the
//! "region-unaware mapping" of §5.2; for memlat, processor 0), so all its
//! regions share that processor's last-level cache.
//!
//! **Region scheduling.** Regions are entered in a [`RegionMap`] with their
//! declared sizes as working-set estimates (uniformly random touches keep
//! every page referenced, so the §4 estimator converges to the size; the
//! estimator itself is tested in core). A program whose working set fits one
//! cache is one balancing item; otherwise each region is one (unification).
//! [`balance`] packs the items over the last-level caches; each thread starts
//! on a processor of its first region's cache. At every touch,
//! [`on_touch`] decides: proceed, open the region here (unmapped), or
//! micro-schedule to a free processor of the region's cache at the paper's
//! cost (§5.1: 15.86 µs Clovertown, 6.357 µs Westmere); if every processor of
//! that cache is taken, the region is opened here instead (idle prevention,
//! §2.2.2). With `fallback` on, [`Conditions`] (conditions 1–3) decide per
//! program before the run: a program that fails them has its regions made
//! global and runs as under the standard scheduler (one that merely fits one
//! cache is still balanced as a whole). Figure 9 forces unification
//! (`fallback` off, the default for memlat).
//!
//! **Cache models** ([`CacheModel`]): `footprint` (fast, the default) is a
//! fluid model of random replacement — per chunk of accesses to a region of
//! N lines holding x of them, misses are `n (1 − x/N)`; misses fill empty
//! lines first, then evict resident lines in proportion to their share
//! (every region's, its own included). Alone, a region converges to
//! `min(N, C)` lines (miss 1 − C/S); interleaved regions share by rate (Che's
//! regime). `lru` (exact) draws each access's line from the thread's own
//! random stream and runs [`LruCache`] at the machine's geometry. Under LRU,
//! memlat's standard schedule misses slightly more near a ≈ N (the remnant
//! eviction of `parsched_core::cache::visit`); the tests check one model
//! against the other. Touches run in chunks of `chunk` accesses so that
//! co-running threads interleave in time order (engine events by
//! `(time, seq)`); a chunk takes `n·hit + misses·miss` ns. There is no
//! bandwidth contention between co-runners (only cache sharing).

use crate::engine::Engine;
use crate::pools::Value;
use crate::regions::RegionTiming;
use crate::rng::{mix64, stream, Stream, StreamRng};
use parsched_core::cache::LruCache;
use parsched_core::policy::regions::{
    balance, on_touch, Bin, Conditions, Item, Observation, RegionDecision, RegionMap,
    TouchDecision, TouchRule,
};
use parsched_core::program::{Cursor, Op, Pattern, Program, Step, Touching};
use parsched_core::topology::{Topology, MIB};
use parsched_core::{CacheId, ConfigError, ProcId, RegionId, Time};
use rand::Rng;
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Ticks per ns (time is counted in picoseconds).
const PS: f64 = 1000.0;

/// Which miss model times the touches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CacheModel {
    #[default]
    Footprint,
    Lru,
}

/// Which scheduler runs the work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scheduler {
    Standard,
    Region,
}

/// One program and its processor under the standard scheduler.
#[derive(Debug, Clone, PartialEq)]
pub struct Placed {
    pub program: Program,
    pub proc: ProcId,
}

/// A run of the machine.
#[derive(Debug, Clone)]
pub struct MachineSpec {
    pub topology: Topology,
    pub timing: RegionTiming,
    pub cache_model: CacheModel,
    pub programs: Vec<Placed>,
    /// Accesses per chunk (interleaving granularity).
    pub chunk: u64,
    /// Conditions 1–3 per program before the run (`None`: forced regioning).
    pub fallback: Option<Conditions>,
    pub seed: u64,
}

/// Errors of the machine.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum RegionMachineError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("program error: {0}")]
    Program(String),
    #[error("policy error: {0}")]
    Policy(String),
}

/// Per-cache measures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CacheStats {
    pub cache: u32,
    pub accesses: u64,
    pub misses: f64,
    pub miss_ratio: f64,
    /// Working set mapped to this cache (region map for region scheduling;
    /// the regions of the threads placed here for the standard scheduler).
    pub load_bytes: u64,
}

/// The outcome of one run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MachineRun {
    pub scheduler: Scheduler,
    /// Finish time of each program, ns.
    pub finish_ns: Vec<f64>,
    pub makespan_ns: f64,
    pub microschedules: u64,
    pub opens: u64,
    pub microschedules_per_s: f64,
    pub caches: Vec<CacheStats>,
    /// Per program: `regioning` or the fallback's reason.
    pub decisions: Vec<String>,
}

enum CacheState {
    /// Resident lines per region instance key, and the capacity in lines.
    Footprint {
        content: Vec<(u64, f64)>,
        lines: f64,
    },
    Lru(Box<LruCache>),
}

impl CacheState {
    /// `n` accesses to instance `key` of `region_lines` lines; returns misses.
    fn touch(
        &mut self,
        key: u64,
        region_lines: u64,
        n: u64,
        base: u64,
        line: u64,
        rng: &mut StreamRng,
    ) -> f64 {
        match self {
            CacheState::Lru(c) => {
                let mut m = 0u64;
                for _ in 0..n {
                    let l = rng.random_range(0..region_lines);
                    if !c.access(base + l * line) {
                        m += 1;
                    }
                }
                m as f64
            }
            CacheState::Footprint { content, lines } => {
                let cap = *lines;
                // (see `sweep` for sequential touches: exact LRU only)
                let big_n = region_lines as f64;
                let i = match content.iter().position(|e| e.0 == key) {
                    Some(i) => i,
                    None => {
                        content.push((key, 0.0));
                        content.len() - 1
                    }
                };
                // Euler steps no longer than 1/8 of the smaller of N and C.
                let h_max = (big_n.min(cap) / 8.0).max(1.0);
                let steps = ((n as f64 / h_max).ceil() as u64).clamp(1, 1 << 16);
                let h = n as f64 / steps as f64;
                let mut misses = 0.0;
                for _ in 0..steps {
                    let x = content[i].1;
                    let m = h * (1.0 - x / big_n).max(0.0);
                    misses += m;
                    let total: f64 = content.iter().map(|e| e.1).sum();
                    let fill = m.min((cap - total).max(0.0));
                    let evict = m - fill;
                    if evict > 0.0 && total > 0.0 {
                        let f = (evict / total).min(1.0);
                        for e in content.iter_mut() {
                            e.1 -= e.1 * f;
                        }
                    }
                    content[i].1 = (content[i].1 + m).min(big_n).min(cap);
                }
                misses
            }
        }
    }
}

impl CacheState {
    /// `n` sequential accesses from line `from` of a region of
    /// `region_lines` lines (cyclic); exact LRU only (checked before).
    fn sweep(&mut self, from: u64, region_lines: u64, n: u64, base: u64, line: u64) -> f64 {
        match self {
            CacheState::Lru(c) => {
                let mut m = 0u64;
                for k in 0..n {
                    if !c.access(base + ((from + k) % region_lines) * line) {
                        m += 1;
                    }
                }
                m as f64
            }
            CacheState::Footprint { .. } => unreachable!("sequential touches need the LRU model"),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ev {
    /// Thread `t` is ready for its next step (or the next chunk of a touch).
    Ready(usize),
}

struct Thread {
    cursor: Cursor,
    rng: StreamRng,
    proc: ProcId,
    /// The touch in progress: (region index, accesses left, pattern).
    touch: Option<(usize, u64, Pattern)>,
    /// Next line of each region for sequential touches.
    pos: Vec<u64>,
    finished: Option<f64>,
}

fn key_of(program: usize, region: usize) -> u64 {
    (program as u64) << 16 | region as u64
}

fn first_touch(steps: &[Step]) -> Option<(usize, u64)> {
    for s in steps {
        match s {
            Step::Touch {
                region, accesses, ..
            } => return Some((region.idx(), *accesses)),
            Step::Repeat { body, .. } => {
                if let Some(x) = first_touch(body) {
                    return Some(x);
                }
            }
            _ => {}
        }
    }
    None
}

impl MachineSpec {
    fn validate(&self) -> Result<Vec<CacheId>, RegionMachineError> {
        let llc = self.topology.last_level_caches();
        if llc.is_empty() {
            return Err(ConfigError::new(
                "machine",
                "the topology has no caches",
                "a topology with cache domains",
            )
            .into());
        }
        if self.programs.len() > self.topology.num_procs() as usize {
            return Err(ConfigError::new(
                "programs",
                format!(
                    "{} programs on {} processors",
                    self.programs.len(),
                    self.topology.num_procs()
                ),
                "at most one program per processor",
            )
            .into());
        }
        if self.chunk == 0 {
            return Err(ConfigError::new("chunk", "got 0", "an integer >= 1").into());
        }
        let mut seen = vec![false; self.topology.num_procs() as usize];
        for (i, p) in self.programs.iter().enumerate() {
            let k = p.proc.idx();
            if k >= seen.len() || seen[k] {
                return Err(ConfigError::new(
                    "programs",
                    format!("program {i} placed on {} (taken or absent)", p.proc),
                    "distinct processors of the machine",
                )
                .into());
            }
            seen[k] = true;
            if p.program.regions.iter().any(|r| r.bytes == 0) {
                return Err(RegionMachineError::Program(format!(
                    "program {i} declares an empty region"
                )));
            }
        }
        Ok(llc)
    }

    /// Run the programs under `scheduler`.
    pub fn run(&self, scheduler: Scheduler) -> Result<MachineRun, RegionMachineError> {
        let llc = self.validate()?;
        let topo = &self.topology;
        let line = topo.cache(llc[0]).line_bytes as u64;
        let llc_of = |p: ProcId| -> usize {
            llc.iter()
                .position(|&c| topo.cache(c).serves(p))
                .expect("every processor has a last-level cache")
        };
        let mut caches: Vec<CacheState> = llc
            .iter()
            .map(|&c| {
                let d = topo.cache(c);
                match self.cache_model {
                    CacheModel::Footprint => Ok(CacheState::Footprint {
                        content: Vec::new(),
                        lines: d.lines() as f64,
                    }),
                    CacheModel::Lru => LruCache::of(d).map(|x| CacheState::Lru(Box::new(x))),
                }
            })
            .collect::<Result<_, _>>()?;
        let cache_bytes: Vec<u64> = llc.iter().map(|&c| topo.cache(c).size_bytes).collect();

        // The region map and the placement.
        let mut map = RegionMap::new(llc.clone());
        let mut decisions = vec!["standard".to_string(); self.programs.len()];
        let mut procs: Vec<ProcId> = self.programs.iter().map(|p| p.proc).collect();
        let mut loads = vec![0u64; llc.len()];
        if scheduler == Scheduler::Standard {
            for (i, p) in self.programs.iter().enumerate() {
                loads[llc_of(p.proc)] += p.program.regions.iter().map(|r| r.bytes).sum::<u64>();
                let _ = i;
            }
        } else {
            let mut items = Vec::new();
            let mut whole = vec![false; self.programs.len()];
            for (i, p) in self.programs.iter().enumerate() {
                let wss: u64 = p.program.regions.iter().map(|r| r.bytes).sum();
                for (r, d) in p.program.regions.iter().enumerate() {
                    map.insert(RegionId(key_of(i, r)), d.bytes);
                }
                let decision = match &self.fallback {
                    None => RegionDecision::Regioning,
                    Some(c) => c.decide(&Observation {
                        access_time: first_touch(&p.program.steps).map_or(0.0, |x| x.1 as f64),
                        total_wss_bytes: wss,
                        microschedules_per_s: 0.0,
                        idle_while_waiting: false,
                    }),
                };
                decisions[i] = match decision {
                    RegionDecision::Regioning => "regioning".into(),
                    RegionDecision::Fallback(c) => format!("fallback:{}", c.name()),
                };
                use parsched_core::policy::regions::Condition;
                match decision {
                    RegionDecision::Fallback(Condition::FitsOneCache) => whole[i] = true,
                    RegionDecision::Fallback(_) => {
                        for r in 0..p.program.regions.len() {
                            map.make_global(RegionId(key_of(i, r)))
                                .map_err(|e| RegionMachineError::Policy(e.0))?;
                        }
                        continue;
                    }
                    // Forced (Figure 9) or passed conditions 1–3: unify a
                    // program of several regions; a single region is one item.
                    RegionDecision::Regioning => whole[i] = p.program.regions.len() < 2,
                }
                if whole[i] {
                    items.push(Item {
                        id: key_of(i, 0xffff),
                        wss_bytes: wss,
                    });
                } else {
                    for (r, d) in p.program.regions.iter().enumerate() {
                        items.push(Item {
                            id: key_of(i, r),
                            wss_bytes: d.bytes,
                        });
                    }
                }
            }
            let bins: Vec<Bin> = llc
                .iter()
                .zip(&cache_bytes)
                .map(|(&c, &b)| Bin {
                    cache: c,
                    capacity_bytes: b,
                })
                .collect();
            let a = balance(&items, &bins).map_err(|e| RegionMachineError::Policy(e.0))?;
            for (id, c) in &a.placed {
                let prog = (*id >> 16) as usize;
                let regs: Vec<usize> = if *id & 0xffff == 0xffff {
                    (0..self.programs[prog].program.regions.len()).collect()
                } else {
                    vec![(*id & 0xffff) as usize]
                };
                for r in regs {
                    map.map_to(RegionId(key_of(prog, r)), *c)
                        .map_err(|e| RegionMachineError::Policy(e.0))?;
                }
            }
            // Initial processors: a free processor of the first touched
            // region's cache (the standard placement if global).
            let mut taken = vec![false; topo.num_procs() as usize];
            let mut order: Vec<usize> = (0..self.programs.len()).collect();
            order.sort_by_key(|&i| self.programs[i].proc);
            let mut want: Vec<Option<CacheId>> = vec![None; self.programs.len()];
            for &i in &order {
                let r = first_touch(&self.programs[i].program.steps).map_or(0, |x| x.0);
                if let Some(parsched_core::policy::regions::Mapping::Local(c)) =
                    map.mapping(RegionId(key_of(i, r)))
                {
                    want[i] = Some(c);
                } else {
                    taken[procs[i].idx()] = true;
                }
            }
            for &i in &order {
                if let Some(c) = want[i] {
                    let free = topo
                        .cache(c)
                        .procs
                        .iter()
                        .copied()
                        .find(|p| !taken[p.idx()]);
                    let p = free.unwrap_or_else(|| {
                        (0..taken.len())
                            .map(|k| ProcId(k as u32))
                            .find(|p| !taken[p.idx()])
                            .expect("at most one program per processor")
                    });
                    taken[p.idx()] = true;
                    procs[i] = p;
                }
            }
            for (k, &c) in llc.iter().enumerate() {
                loads[k] = map.load(c);
            }
        }

        // Threads.
        let mut threads: Vec<Thread> = procs
            .iter()
            .enumerate()
            .map(|(i, &p)| Thread {
                cursor: Cursor::new(1),
                rng: stream(self.seed, Stream::Accesses, i as u64),
                proc: p,
                touch: None,
                pos: vec![0; self.programs[i].program.regions.len()],
                finished: None,
            })
            .collect();
        let mut occupied = vec![0u32; topo.num_procs() as usize];
        for t in &threads {
            occupied[t.proc.idx()] = 1;
        }
        let mut step_rng = stream(self.seed, Stream::WorkSize, 0);
        let mut acc = vec![(0u64, 0.0f64); llc.len()];
        let (mut usched, mut opens) = (0u64, 0u64);
        let mu_ps = (self.timing.microschedule_us * 1e3 * PS).round() as u64;
        let mut engine: Engine<Ev> = Engine::new();
        for i in 0..threads.len() {
            engine.schedule_at(Time(0), Ev::Ready(i));
        }
        while let Some(Ev::Ready(i)) = engine.pop() {
            let now = engine.now();
            let prog = &self.programs[i].program;
            let t = &mut threads[i];
            if t.touch.is_none() {
                match t.cursor.next_touching(prog, &mut step_rng) {
                    Touching::Op(Op::Exit) => {
                        t.finished = Some(now.0 as f64 / PS);
                        occupied[t.proc.idx()] = 0;
                        continue;
                    }
                    Touching::Op(Op::Compute { units }) => {
                        engine.schedule_at(now + (units * 1e6).round() as u64, Ev::Ready(i));
                        continue;
                    }
                    Touching::Op(op) => {
                        return Err(RegionMachineError::Program(format!(
                            "program {i}: the region machine runs single-threaded programs of touches and computes, not {op:?}"
                        )))
                    }
                    Touching::Touch { region, accesses, pattern } => {
                        if pattern == Pattern::Sequential && self.cache_model == CacheModel::Footprint {
                            return Err(ConfigError::new(
                                "pattern",
                                "sequential touches have no footprint model",
                                "cache_model=lru with pattern=sequential",
                            )
                            .into());
                        }
                        if region.idx() >= prog.regions.len() {
                            return Err(RegionMachineError::Program(format!(
                                "program {i} touches region {} of {}",
                                region.idx(),
                                prog.regions.len()
                            )));
                        }
                        t.touch = Some((region.idx(), accesses, pattern));
                        if scheduler == Scheduler::Region {
                            let rid = RegionId(key_of(i, region.idx()));
                            let d = on_touch(&map, topo, t.proc, rid, TouchRule::MicroSchedule, |p| occupied[p.idx()])
                                .map_err(|e| RegionMachineError::Policy(e.0))?;
                            match d {
                                TouchDecision::Proceed => {}
                                TouchDecision::MicroSchedule { to, .. } if occupied[to.idx()] == 0 => {
                                    occupied[t.proc.idx()] = 0;
                                    occupied[to.idx()] = 1;
                                    t.proc = to;
                                    usched += 1;
                                    engine.schedule_at(now + mu_ps, Ev::Ready(i));
                                    continue;
                                }
                                TouchDecision::MicroSchedule { .. } | TouchDecision::OpenLocally { .. } => {
                                    let here = llc[llc_of(t.proc)];
                                    map.map_to(rid, here).map_err(|e| RegionMachineError::Policy(e.0))?;
                                    opens += 1;
                                }
                            }
                        }
                    }
                }
            }
            // Run one chunk of the touch in progress.
            let (r, left, pattern) = t.touch.expect("a touch in progress");
            let n = left.min(self.chunk);
            let k = llc_of(t.proc);
            let bytes = prog.regions[r].bytes;
            let lines = bytes.div_ceil(line).max(1);
            let key = key_of(i, r);
            let sets = topo.cache(llc[k]).sets();
            let base = ((key + 1) << 40) | ((mix64(key) % sets) * line);
            let misses = match pattern {
                Pattern::UniformRandom => caches[k].touch(key, lines, n, base, line, &mut t.rng),
                Pattern::Sequential => {
                    let p0 = t.pos[r];
                    t.pos[r] = (p0 + n) % lines;
                    caches[k].sweep(p0, lines, n, base, line)
                }
            };
            acc[k].0 += n;
            acc[k].1 += misses;
            let ns = n as f64 * self.timing.hit_ns + misses * self.timing.miss_ns;
            t.touch = (left > n).then_some((r, left - n, pattern));
            engine.schedule_at(now + (ns * PS).round() as u64, Ev::Ready(i));
        }
        let finish_ns: Vec<f64> = threads
            .iter()
            .map(|t| t.finished.unwrap_or(f64::NAN))
            .collect();
        let makespan_ns = finish_ns.iter().copied().fold(0.0, f64::max);
        Ok(MachineRun {
            scheduler,
            microschedules_per_s: if makespan_ns > 0.0 {
                usched as f64 / (makespan_ns * 1e-9)
            } else {
                0.0
            },
            finish_ns,
            makespan_ns,
            microschedules: usched,
            opens,
            caches: llc
                .iter()
                .enumerate()
                .map(|(k, c)| CacheStats {
                    cache: c.0,
                    accesses: acc[k].0,
                    misses: acc[k].1,
                    miss_ratio: if acc[k].0 > 0 {
                        acc[k].1 / acc[k].0 as f64
                    } else {
                        0.0
                    },
                    load_bytes: loads[k],
                })
                .collect(),
            decisions,
        })
    }
}

fn set_pattern(steps: &mut [Step], p: Pattern) {
    for s in steps {
        match s {
            Step::Touch { pattern, .. } => *pattern = p,
            Step::Repeat { body, .. } => set_pattern(body, p),
            _ => {}
        }
    }
}

/// The workloads of `parsched simulate regions`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Workload {
    /// Figure 9: two-region memlat, one thread.
    Memlat,
    /// §5.2: two large and two small single-region programs.
    Balance,
}

/// The typed configuration of `simulate regions` (keys in [`KEYS`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RegionsConfig {
    /// `clovertown` or `westmere`.
    pub machine: String,
    pub workload: Workload,
    /// memlat: total working set (both regions), MB.
    pub wss_mb: f64,
    /// Accesses per visit to a region (memlat's "access time"; the
    /// balancing programs' touch length).
    pub access_time: u64,
    /// Accesses per program in all (the run length).
    pub accesses: u64,
    /// balance: the large and small programs' working sets (default: the
    /// paper's, 4 MB and 16 KB on Clovertown, 12 MB and 512 KB on Westmere).
    pub large_mb: Option<f64>,
    pub small_kb: Option<f64>,
    pub cache_model: CacheModel,
    /// How touches fall in a region: `uniform_random` (memlat, the
    /// default) or `sequential` (a cyclic sweep; `cache_model=lru` only).
    pub pattern: Pattern,
    /// Apply conditions 1–3 (the paper's thresholds for the machine).
    pub fallback: bool,
    /// Timing overrides (defaults: [`RegionTiming`] of the machine).
    pub hit_ns: Option<f64>,
    pub miss_ns: Option<f64>,
    pub microschedule_us: Option<f64>,
    pub chunk: u64,
    pub seed: u64,
}

impl Default for RegionsConfig {
    fn default() -> Self {
        RegionsConfig {
            machine: "clovertown".into(),
            workload: Workload::Memlat,
            wss_mb: 6.0,
            access_time: 65_536,
            accesses: 1 << 24,
            large_mb: None,
            small_kb: None,
            cache_model: CacheModel::Footprint,
            pattern: Pattern::UniformRandom,
            fallback: false,
            hit_ns: None,
            miss_ns: None,
            microschedule_us: None,
            chunk: 4096,
            seed: 1,
        }
    }
}

/// The keys of [`RegionsConfig`], in documentation order.
pub const KEYS: &[&str] = &[
    "machine",
    "workload",
    "wss_mb",
    "access_time",
    "accesses",
    "large_mb",
    "small_kb",
    "cache_model",
    "pattern",
    "fallback",
    "hit_ns",
    "miss_ns",
    "microschedule_us",
    "chunk",
    "seed",
];

pub const MACHINES: &[&str] = &["clovertown", "westmere"];

/// Most engine events per program a configuration may ask for.
pub const MAX_EVENTS: u64 = 1 << 26;

fn positive(key: &str, v: f64) -> Result<f64, ConfigError> {
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(ConfigError::new(
            key,
            format!("got {v}"),
            "a finite number > 0",
        ))
    }
}

impl RegionsConfig {
    /// Set one key from a value (CLI `--set key=value`, Python keyword).
    pub fn set(&mut self, key: &str, v: &Value) -> Result<(), ConfigError> {
        let none = matches!(v, Value::Str(s) if s.trim().is_empty() || s.trim().eq_ignore_ascii_case("none"));
        let opt = |v: &Value| -> Result<Option<f64>, ConfigError> {
            if none {
                Ok(None)
            } else {
                positive(key, v.as_f64(key)?).map(Some)
            }
        };
        match key {
            "machine" => self.machine = v.as_str(key, MACHINES)?,
            "workload" => {
                self.workload = match v.as_str(key, &["memlat", "balance"])?.as_str() {
                    "memlat" => Workload::Memlat,
                    _ => Workload::Balance,
                }
            }
            "wss_mb" => self.wss_mb = positive(key, v.as_f64(key)?)?,
            "access_time" => self.access_time = v.as_u64(key)?,
            "accesses" => self.accesses = v.as_u64(key)?,
            "large_mb" => self.large_mb = opt(v)?,
            "small_kb" => self.small_kb = opt(v)?,
            "cache_model" => {
                self.cache_model = match v.as_str(key, &["footprint", "lru"])?.as_str() {
                    "lru" => CacheModel::Lru,
                    _ => CacheModel::Footprint,
                }
            }
            "pattern" => {
                self.pattern = match v.as_str(key, &["uniform_random", "sequential"])?.as_str() {
                    "sequential" => Pattern::Sequential,
                    _ => Pattern::UniformRandom,
                }
            }
            "fallback" => self.fallback = v.as_bool(key)?,
            "hit_ns" => self.hit_ns = opt(v)?,
            "miss_ns" => {
                self.miss_ns = if none {
                    None
                } else {
                    let x = v.as_f64(key)?;
                    if !(x.is_finite() && x >= 0.0) {
                        return Err(ConfigError::new(
                            key,
                            format!("got {x}"),
                            "a finite number >= 0",
                        ));
                    }
                    Some(x)
                }
            }
            "microschedule_us" => {
                self.microschedule_us = if none {
                    None
                } else {
                    let x = v.as_f64(key)?;
                    if !(x.is_finite() && x >= 0.0) {
                        return Err(ConfigError::new(
                            key,
                            format!("got {x}"),
                            "a finite number >= 0",
                        ));
                    }
                    Some(x)
                }
            }
            "chunk" => self.chunk = v.as_u64(key)?,
            "seed" => self.seed = v.as_u64(key)?,
            _ => return Err(ConfigError::new(key, "unknown key", KEYS.join(", "))),
        }
        Ok(())
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        if !MACHINES.contains(&self.machine.as_str()) {
            return Err(ConfigError::new(
                "machine",
                format!("{:?}", self.machine),
                MACHINES.join("|"),
            ));
        }
        positive("wss_mb", self.wss_mb)?;
        if self.wss_mb > 4096.0 {
            return Err(ConfigError::new(
                "wss_mb",
                format!("got {}", self.wss_mb),
                "a number in (0, 4096]",
            ));
        }
        if self.access_time == 0 || self.access_time > 1 << 32 {
            return Err(ConfigError::new(
                "access_time",
                format!("got {}", self.access_time),
                "an integer in [1, 2^32]",
            ));
        }
        let most: u64 = if self.cache_model == CacheModel::Lru {
            1 << 26
        } else {
            1 << 34
        };
        if self.accesses == 0 || self.accesses > most {
            return Err(ConfigError::new(
                "accesses",
                format!("got {}", self.accesses),
                if self.cache_model == CacheModel::Lru {
                    "an integer in [1, 2^26] with cache_model=lru"
                } else {
                    "an integer in [1, 2^34]"
                },
            ));
        }
        // Engine events: one per chunk or touch, whichever is shorter.
        let events = self.accesses / self.access_time.min(self.chunk).max(1);
        if events > MAX_EVENTS {
            return Err(ConfigError::new(
                "accesses",
                format!(
                    "{} accesses in touches of {} make {events} events per program",
                    self.accesses,
                    self.access_time.min(self.chunk)
                ),
                "at most 2^26 events per program: fewer accesses or a longer access_time",
            ));
        }
        if self.chunk == 0 || self.chunk > 1 << 24 {
            return Err(ConfigError::new(
                "chunk",
                format!("got {}", self.chunk),
                "an integer in [1, 2^24]",
            ));
        }
        if self.pattern == Pattern::Sequential && self.cache_model != CacheModel::Lru {
            return Err(ConfigError::new(
                "pattern",
                "sequential touches have no footprint model",
                "uniform_random, or sequential with cache_model=lru",
            ));
        }
        if let Some(x) = self.large_mb {
            if x > 4096.0 {
                return Err(ConfigError::new(
                    "large_mb",
                    format!("got {x}"),
                    "a number in (0, 4096]",
                ));
            }
        }
        if let Some(x) = self.small_kb {
            if x > 4.0 * 1024.0 * 1024.0 {
                return Err(ConfigError::new(
                    "small_kb",
                    format!("got {x}"),
                    "a number in (0, 4194304]",
                ));
            }
        }
        Ok(())
    }

    pub fn topology(&self) -> Topology {
        if self.machine == "westmere" {
            Topology::westmere()
        } else {
            Topology::clovertown()
        }
    }

    pub fn timing(&self) -> RegionTiming {
        let t = if self.machine == "westmere" {
            RegionTiming::westmere()
        } else {
            RegionTiming::clovertown()
        };
        RegionTiming {
            hit_ns: self.hit_ns.unwrap_or(t.hit_ns),
            miss_ns: self.miss_ns.unwrap_or(t.miss_ns),
            microschedule_us: self.microschedule_us.unwrap_or(t.microschedule_us),
            ..t
        }
    }

    /// The paper's conditions for the machine.
    pub fn conditions(&self) -> Conditions {
        if self.machine == "westmere" {
            Conditions::paper_westmere()
        } else {
            Conditions::paper_clovertown()
        }
    }

    /// The programs and their standard placement.
    pub fn programs(&self) -> Vec<Placed> {
        let topo = self.topology();
        match self.workload {
            Workload::Memlat => {
                let region = ((self.wss_mb * MIB as f64) / 2.0).round().max(1.0) as u64;
                let rounds = (self.accesses / (2 * self.access_time)).max(1);
                let mut program = Program::memlat(region, self.access_time, rounds);
                set_pattern(&mut program.steps, self.pattern);
                vec![Placed {
                    program,
                    proc: ProcId(0),
                }]
            }
            Workload::Balance => {
                let west = self.machine == "westmere";
                let large = (self.large_mb.unwrap_or(if west { 12.0 } else { 4.0 }) * MIB as f64)
                    .round() as u64;
                let small = (self.small_kb.unwrap_or(if west { 512.0 } else { 16.0 }) * 1024.0)
                    .round() as u64;
                let rounds = (self.accesses / self.access_time).max(1);
                let prog = |bytes: u64| {
                    Program::with_regions(
                        vec![Step::Repeat {
                            count: rounds,
                            body: vec![Step::Touch {
                                region: parsched_core::program::RegionRef(0),
                                accesses: self.access_time,
                                pattern: self.pattern,
                            }],
                        }],
                        vec![parsched_core::program::RegionDecl {
                            bytes: bytes.max(1),
                            scope: parsched_core::program::RegionScope::Private,
                        }],
                    )
                };
                // The region-unaware mapping: both large programs on the
                // first cache's processors, both small on the second's.
                let llc = topo.last_level_caches();
                let c0 = &topo.cache(llc[0]).procs;
                let c1 = &topo.cache(llc[1 % llc.len()]).procs;
                vec![
                    Placed {
                        program: prog(large),
                        proc: c0[0],
                    },
                    Placed {
                        program: prog(large),
                        proc: c0[1 % c0.len()],
                    },
                    Placed {
                        program: prog(small),
                        proc: c1[0],
                    },
                    Placed {
                        program: prog(small),
                        proc: c1[1 % c1.len()],
                    },
                ]
            }
        }
    }

    pub fn spec(&self) -> MachineSpec {
        MachineSpec {
            topology: self.topology(),
            timing: self.timing(),
            cache_model: self.cache_model,
            programs: self.programs(),
            chunk: self.chunk,
            fallback: self.fallback.then(|| self.conditions()),
            seed: self.seed,
        }
    }
}

/// What `simulate regions` reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RegionsResult {
    pub machine: String,
    pub workload: Workload,
    /// Standard time / region-scheduling time (makespan) on the same work.
    pub normalized_performance: f64,
    /// balance: the same ratio, named as the issue names it.
    pub speedup: Option<f64>,
    /// Per program: standard finish / region finish.
    pub speedup_per_program: Vec<f64>,
    pub microschedules_per_s: f64,
    pub microschedules: u64,
    /// Per-cache working set mapped under region scheduling, bytes.
    pub cache_loads: Vec<u64>,
    /// Per-cache working set under the standard placement, bytes.
    pub cache_loads_standard: Vec<u64>,
    pub miss_ratio_standard: f64,
    pub miss_ratio_region: f64,
    pub standard: MachineRun,
    pub region: MachineRun,
    pub timing: RegionTiming,
}

fn miss_ratio(r: &MachineRun) -> f64 {
    let a: u64 = r.caches.iter().map(|c| c.accesses).sum();
    let m: f64 = r.caches.iter().map(|c| c.misses).sum();
    if a > 0 {
        m / a as f64
    } else {
        0.0
    }
}

/// Run `simulate regions`: the same work under both schedulers.
pub fn run(cfg: &RegionsConfig) -> Result<RegionsResult, RegionMachineError> {
    cfg.validate()?;
    let spec = cfg.spec();
    let standard = spec.run(Scheduler::Standard)?;
    let region = spec.run(Scheduler::Region)?;
    let np = standard.makespan_ns / region.makespan_ns;
    Ok(RegionsResult {
        machine: cfg.machine.clone(),
        workload: cfg.workload,
        normalized_performance: np,
        speedup: (cfg.workload == Workload::Balance).then_some(np),
        speedup_per_program: standard
            .finish_ns
            .iter()
            .zip(&region.finish_ns)
            .map(|(s, r)| s / r)
            .collect(),
        microschedules_per_s: region.microschedules_per_s,
        microschedules: region.microschedules,
        cache_loads: region.caches.iter().map(|c| c.load_bytes).collect(),
        cache_loads_standard: standard.caches.iter().map(|c| c.load_bytes).collect(),
        miss_ratio_standard: miss_ratio(&standard),
        miss_ratio_region: miss_ratio(&region),
        standard,
        region,
        timing: spec.timing,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use parsched_core::topology::CacheDomain;

    /// Two 256 KB 16-way caches, each shared by two processors (a
    /// Clovertown scaled down 16×, so the exact LRU runs fast).
    fn small_machine() -> Topology {
        let cache = |procs: Vec<u32>| CacheDomain {
            level: 2,
            size_bytes: 256 << 10,
            ways: 16,
            line_bytes: 64,
            procs: procs.into_iter().map(ProcId).collect(),
        };
        Topology::flat(4)
            .unwrap()
            .with_caches(vec![cache(vec![0, 2]), cache(vec![1, 3])])
            .unwrap()
    }

    fn memlat_spec(region_kb: u64, a: u64, model: CacheModel) -> MachineSpec {
        MachineSpec {
            topology: small_machine(),
            timing: RegionTiming::clovertown(),
            cache_model: model,
            programs: vec![Placed {
                program: Program::memlat(region_kb << 10, a, (1 << 20) / (2 * a)),
                proc: ProcId(0),
            }],
            chunk: 4096,
            fallback: None,
            seed: 5,
        }
    }

    /// The fast model against the exact one, on memlat's two schedules:
    /// within ±0.05 miss ratio (LRU's remnant eviction makes the standard
    /// schedule miss a little more near a ≈ N; see the module doc).
    #[test]
    fn footprint_matches_exact_lru_on_memlat() {
        let mut worst: f64 = 0.0;
        for (kb, a) in [
            (192, 1 << 10),
            (192, 1 << 12),
            (192, 1 << 14),
            (384, 1 << 12),
            (96, 1 << 12),
        ] {
            for s in [Scheduler::Standard, Scheduler::Region] {
                let f = memlat_spec(kb, a, CacheModel::Footprint).run(s).unwrap();
                let l = memlat_spec(kb, a, CacheModel::Lru).run(s).unwrap();
                let (mf, ml) = (miss_ratio(&f), miss_ratio(&l));
                worst = worst.max((mf - ml).abs());
                assert!(
                    (mf - ml).abs() < 0.05,
                    "{kb} KB a={a} {s:?}: footprint {mf:.4} lru {ml:.4}"
                );
            }
        }
        assert!(worst > 0.0, "the two models are distinct computations");
    }

    /// Co-runners sharing a cache (balancing's case): the fluid model against
    /// exact LRU within ±0.03 per cache.
    #[test]
    fn footprint_matches_exact_lru_for_co_runners() {
        let prog = |kb: u64| {
            Program::with_regions(
                vec![Step::Repeat {
                    count: 64,
                    body: vec![Step::Touch {
                        region: parsched_core::program::RegionRef(0),
                        accesses: 4096,
                        pattern: Pattern::UniformRandom,
                    }],
                }],
                vec![parsched_core::program::RegionDecl {
                    bytes: kb << 10,
                    scope: parsched_core::program::RegionScope::Private,
                }],
            )
        };
        let spec = |model| MachineSpec {
            topology: small_machine(),
            timing: RegionTiming::clovertown(),
            cache_model: model,
            programs: vec![
                Placed {
                    program: prog(256),
                    proc: ProcId(0),
                },
                Placed {
                    program: prog(256),
                    proc: ProcId(2),
                },
                Placed {
                    program: prog(1),
                    proc: ProcId(1),
                },
                Placed {
                    program: prog(1),
                    proc: ProcId(3),
                },
            ],
            chunk: 1024,
            fallback: None,
            seed: 9,
        };
        for s in [Scheduler::Standard, Scheduler::Region] {
            let f = spec(CacheModel::Footprint).run(s).unwrap();
            let l = spec(CacheModel::Lru).run(s).unwrap();
            for (a, b) in f.caches.iter().zip(&l.caches) {
                assert!(
                    (a.miss_ratio - b.miss_ratio).abs() < 0.03,
                    "{s:?}: {a:?} vs {b:?}"
                );
            }
        }
    }

    /// §5.2 on the Clovertown-like machine: pairing 4 MB with 16 KB per cache
    /// beats two 4 MB programs sharing one by more than 50 %.
    #[test]
    fn balancing_pairs_large_with_small_and_is_over_50_percent_faster() {
        for model in [CacheModel::Footprint, CacheModel::Lru] {
            let cfg = RegionsConfig {
                workload: Workload::Balance,
                cache_model: model,
                accesses: 1 << 21,
                ..RegionsConfig::default()
            };
            let r = run(&cfg).unwrap();
            let s = r.speedup.unwrap();
            assert!(s > 1.5, "{model:?}: speedup {s}");
            let four = 4 * MIB + (16 << 10);
            assert_eq!(r.cache_loads, vec![four, four]);
            assert_eq!(r.cache_loads_standard, vec![8 * MIB, 32 << 10]);
            assert_eq!(
                r.microschedules, 0,
                "one region per program: no micro-schedule"
            );
            // Large programs gain; the small ones are not slowed by > 5 %.
            assert!(r.speedup_per_program[0] > 1.5 && r.speedup_per_program[1] > 1.5);
            assert!(r.speedup_per_program[2] > 0.95 && r.speedup_per_program[3] > 0.95);
        }
    }

    /// Figure 9's forced unification: one micro-schedule per visit after the
    /// first; the rate is visits per second; the loads are one region per
    /// cache.
    #[test]
    fn memlat_unification_microschedules_every_visit() {
        let cfg = RegionsConfig {
            wss_mb: 6.0,
            access_time: 1 << 16,
            accesses: 1 << 22,
            ..RegionsConfig::default()
        };
        let r = run(&cfg).unwrap();
        let visits = (1u64 << 22) / (1 << 16);
        assert_eq!(r.microschedules, visits - 1);
        assert_eq!(r.cache_loads, vec![3 * MIB, 3 * MIB]);
        assert_eq!(r.cache_loads_standard, vec![6 * MIB, 0]);
        let rate = r.microschedules as f64 / (r.region.makespan_ns * 1e-9);
        assert!((r.microschedules_per_s - rate).abs() < 1e-6);
        assert!(
            r.normalized_performance > 1.2,
            "{}",
            r.normalized_performance
        );
        assert!(r.miss_ratio_region < r.miss_ratio_standard);
        // Fits one cache: only the micro-schedule cost, a loss.
        let small = run(&RegionsConfig {
            wss_mb: 2.0,
            access_time: 1 << 12,
            ..cfg.clone()
        })
        .unwrap();
        assert!(small.normalized_performance < 1.0);
        // Same inputs and seed: bit-identical.
        assert_eq!(run(&cfg).unwrap(), r);
    }

    /// With the fallback on, what conditions 1–3 reject runs exactly as the
    /// standard scheduler (normalized performance 1, no micro-schedule), and
    /// what they accept is unified.
    #[test]
    fn fallback_does_no_harm() {
        for (mb, a, why) in [
            (2.0, 1 << 16, "fallback:fits_one_cache"),
            (6.0, 1 << 12, "fallback:access_time"),
            (12.0, 1 << 16, "fallback:exceeds_unified"),
        ] {
            let cfg = RegionsConfig {
                wss_mb: mb,
                access_time: a,
                accesses: 1 << 22,
                fallback: true,
                ..RegionsConfig::default()
            };
            let r = run(&cfg).unwrap();
            assert_eq!(r.region.decisions, vec![why.to_string()]);
            assert_eq!(
                r.normalized_performance,
                1.0,
                "{mb} MB 2^{}",
                a.trailing_zeros()
            );
            assert_eq!(r.microschedules, 0);
        }
        let ok = run(&RegionsConfig {
            fallback: true,
            accesses: 1 << 22,
            ..RegionsConfig::default()
        })
        .unwrap();
        assert_eq!(ok.region.decisions, vec!["regioning".to_string()]);
        assert!(ok.microschedules > 0 && ok.normalized_performance > 1.0);
    }

    /// A sequential (cyclic) sweep under exact LRU gives the paper's sharp
    /// Condition 2 and 3 boundaries: a gain only when the working set
    /// exceeds one cache and fits two; past two caches each region misses
    /// on every line in both schedules, so only the micro-schedules remain.
    #[test]
    fn sequential_sweeps_under_lru_lose_past_two_caches() {
        let gain = |kb: u64| {
            let mut spec = memlat_spec(kb, 1 << 14, CacheModel::Lru);
            set_pattern(&mut spec.programs[0].program.steps, Pattern::Sequential);
            let s = spec.run(Scheduler::Standard).unwrap();
            let r = spec.run(Scheduler::Region).unwrap();
            (
                s.makespan_ns / r.makespan_ns,
                miss_ratio(&s),
                miss_ratio(&r),
            )
        };
        let (fits, _, _) = gain(96); // 192 KB: one 256 KB cache holds both
        let (band, ms, mr) = gain(192); // 384 KB: two caches hold it
        let (past, ps, pr) = gain(320); // 640 KB: past two caches
        assert!(fits < 1.0, "{fits}");
        // Standard: each visit misses its first sweep of the region (3072 of
        // 16384 accesses); unified: only the cold misses.
        assert!(band > 2.0 && ms > 0.18 && mr < 0.05, "{band} {ms} {mr}");
        assert!(past < 1.0 && ps > 0.99 && pr > 0.99, "{past} {ps} {pr}");
        let mut spec = memlat_spec(192, 1 << 14, CacheModel::Footprint);
        set_pattern(&mut spec.programs[0].program.steps, Pattern::Sequential);
        let e = spec.run(Scheduler::Standard).unwrap_err();
        assert!(e.to_string().starts_with("pattern:"), "{e}");
    }

    #[test]
    fn bad_keys_name_the_field() {
        let mut c = RegionsConfig::default();
        let e = c.set("machine", &Value::Str("cray".into())).unwrap_err();
        assert!(e.to_string().starts_with("machine:"), "{e}");
        assert!(e.to_string().contains("clovertown|westmere"), "{e}");
        assert!(c
            .set("wss_mb", &Value::Float(-1.0))
            .unwrap_err()
            .to_string()
            .starts_with("wss_mb:"));
        assert!(c
            .set("nope", &Value::Int(1))
            .unwrap_err()
            .to_string()
            .starts_with("nope:"));
        c.set("access_time", &Value::Int(0)).unwrap();
        assert!(c
            .validate()
            .unwrap_err()
            .to_string()
            .starts_with("access_time:"));
        // A run too long to simulate is refused before it starts.
        let long = RegionsConfig {
            access_time: 1,
            accesses: 1 << 30,
            ..RegionsConfig::default()
        };
        assert!(long
            .validate()
            .unwrap_err()
            .to_string()
            .starts_with("accesses:"));
        assert!(RegionsConfig {
            access_time: 1 << 12,
            ..long
        }
        .validate()
        .is_ok());
        for &k in KEYS {
            let mut c = RegionsConfig::default();
            let e = c.set(k, &Value::Str("not-a-value".into()));
            assert!(e.is_err(), "{k} accepted a bad value");
            assert!(e.unwrap_err().to_string().starts_with(k));
        }
    }
}
