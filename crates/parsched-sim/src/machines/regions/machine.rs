//! The run: threads running touch programs on the caches, under the standard
//! scheduler or region scheduling, as a [`Model`] on the one [`Engine`] run
//! by [`run_watched`] (the cancel flag of [`crate::cancel`], looked at every
//! [`crate::cancel::CHECK_EVERY`] events, ends a run with
//! [`RegionMachineError::Interrupted`]).
//!
//! **Time.** One engine tick is one picosecond ([`PS`] ticks per ns): a
//! chunk of accesses takes `n·hit + misses·miss` ns, rounded to the ps.
//!
//! The state is in named parts: [`Caches`] (content and counts per
//! last-level cache), [`Threads`] (each program's thread, the processors
//! taken), [`SchedState`] (the region map, micro-schedule cost, online
//! regioning's estimator) and [`Stats`].

use super::placement::{Caches, Placement};
use super::*;
use crate::engine::{run_watched, Flow, Model};

/// Events of the region machine, named as things that happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ev {
    /// What thread `thread` was doing ended (its start at time 0, a compute
    /// step, a chunk of a touch, a micro-schedule): it takes its next step
    /// or the next chunk of its touch.
    StepEnded { thread: usize },
    /// Online regioning: the scan timer fired (scan the access bits,
    /// re-balance).
    ScanTimerFired,
}

/// One program's thread.
pub(super) struct Thread {
    pub(super) cursor: Cursor,
    pub(super) rng: StreamRng,
    pub(super) proc: ProcId,
    /// The touch in progress: (region index, accesses left, pattern).
    pub(super) touch: Option<(usize, u64, Pattern)>,
    /// Next line of each region for sequential touches.
    pub(super) pos: Vec<u64>,
    /// When the program ended, ns.
    pub(super) finished: Option<f64>,
    /// The region of the touch in progress, or of the last one.
    pub(super) last_region: Option<usize>,
    /// Online: a micro-schedule decided while the thread ran a chunk (a
    /// swap), paid at its next event, ps.
    pub(super) penalty: u64,
    /// Online: uniformly random accesses per region since the last scan.
    pub(super) since: Vec<u64>,
    /// Online: pages swept per region since the last scan (sequential).
    pub(super) swept: Vec<Vec<bool>>,
}

/// The threads and the processors they hold.
pub(super) struct Threads {
    pub(super) all: Vec<Thread>,
    /// 1 where a processor holds a thread (the policies' occupancy).
    occupied: Vec<u32>,
    /// The programs' step draws (one stream for all threads).
    step_rng: StreamRng,
}

/// Online regioning's state.
pub(super) struct OnlineState {
    cfg: Online,
    est: WssEstimator,
    /// The scans' draws of access bits.
    rng: StreamRng,
    /// Time between scans, ticks.
    scan_ps: u64,
    bins: Vec<Bin>,
}

/// The scheduler's state.
pub(super) struct SchedState {
    scheduler: Scheduler,
    map: RegionMap,
    /// Cost of one micro-schedule, ticks.
    mu_ps: u64,
    online: Option<OnlineState>,
}

/// Counters of one run.
#[derive(Debug, Default)]
pub(super) struct Stats {
    microschedules: u64,
    opens: u64,
    rebalances: u64,
    last_rebalance_ns: f64,
}

/// The machine during a run.
pub(super) struct RegionMachine<'a> {
    spec: &'a MachineSpec,
    caches: Caches,
    threads: Threads,
    sched: SchedState,
    stats: Stats,
    decisions: Vec<String>,
    loads: Vec<u64>,
}

pub(super) fn key_of(program: usize, region: usize) -> u64 {
    (program as u64) << 16 | region as u64
}

pub(super) fn first_touch(steps: &[Step]) -> Option<(usize, u64)> {
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

fn policy_err(e: parsched_core::PolicyError) -> RegionMachineError {
    RegionMachineError::Policy(e.0)
}

impl MachineSpec {
    /// Run the programs under `scheduler`.
    pub fn run(&self, scheduler: Scheduler) -> Result<MachineRun, RegionMachineError> {
        let llc = self.validate()?;
        let caches = Caches::new(self, llc)?;
        let online = self.online.filter(|_| scheduler == Scheduler::Region);
        let placement = self.place(scheduler, online.is_some(), &caches)?;
        let mut m = RegionMachine::new(self, scheduler, online, caches, placement);
        let mut engine: Engine<Ev> = Engine::new();
        m.start(&mut engine);
        run_watched(&mut m, &mut engine, || RegionMachineError::Interrupted)?;
        Ok(m.finish())
    }
}

impl<'a> RegionMachine<'a> {
    fn new(
        spec: &'a MachineSpec,
        scheduler: Scheduler,
        online: Option<Online>,
        caches: Caches,
        placement: Placement,
    ) -> RegionMachine<'a> {
        let all: Vec<Thread> = placement
            .procs
            .iter()
            .enumerate()
            .map(|(i, &p)| {
                let regions = spec.programs[i].program.regions.len();
                Thread {
                    cursor: Cursor::new(1),
                    rng: stream(spec.seed, Stream::Accesses, i as u64),
                    proc: p,
                    touch: None,
                    pos: vec![0; regions],
                    finished: None,
                    last_region: None,
                    penalty: 0,
                    since: vec![0; regions],
                    swept: vec![Vec::new(); regions],
                }
            })
            .collect();
        let mut occupied = vec![0u32; spec.topology.num_procs() as usize];
        for t in &all {
            occupied[t.proc.idx()] = 1;
        }
        let online = online.map(|o| OnlineState {
            cfg: o,
            est: WssEstimator::new(o.page_bytes, HistogramReading::OnesCount),
            rng: stream(spec.seed, Stream::Accesses, 1 << 32),
            scan_ps: (o.scan_ns * PS).round().max(1.0) as u64,
            bins: caches.bins(&spec.topology),
        });
        RegionMachine {
            spec,
            threads: Threads {
                all,
                occupied,
                step_rng: stream(spec.seed, Stream::WorkSize, 0),
            },
            sched: SchedState {
                scheduler,
                map: placement.map,
                mu_ps: (spec.timing.microschedule_us * 1e3 * PS).round() as u64,
                online,
            },
            caches,
            stats: Stats::default(),
            decisions: placement.decisions,
            loads: placement.loads,
        }
    }

    /// Every thread starts at time 0; online, the first scan is armed.
    fn start(&self, engine: &mut Engine<Ev>) {
        for i in 0..self.threads.all.len() {
            engine.schedule_at(Time(0), Ev::StepEnded { thread: i });
        }
        if let Some(o) = &self.sched.online {
            engine.schedule_at(Time(o.scan_ps), Ev::ScanTimerFired);
        }
    }

    /// The scan timer fired: scan and re-balance, then re-arm it (not once
    /// every program has ended).
    fn on_scan(&mut self, engine: &mut Engine<Ev>) -> Result<(), RegionMachineError> {
        let now = engine.now();
        if self.threads.all.iter().all(|t| t.finished.is_some()) {
            return Ok(());
        }
        let o = self.sched.online.as_mut().expect("scans run online");
        let changed = self.spec.scan(
            o.cfg,
            &mut o.est,
            &mut self.threads.all,
            &mut self.sched.map,
            &o.bins,
            &mut o.rng,
        )?;
        if changed {
            self.stats.rebalances += 1;
            self.stats.last_rebalance_ns = now.0 as f64 / PS;
        }
        engine.schedule_at(now + o.scan_ps, Ev::ScanTimerFired);
        Ok(())
    }

    /// Thread `i`'s step ended: it pays a pending swap, or takes its next
    /// step, or runs the next chunk of its touch.
    fn on_step_ended(
        &mut self,
        i: usize,
        engine: &mut Engine<Ev>,
    ) -> Result<(), RegionMachineError> {
        let now = engine.now();
        if self.threads.all[i].penalty > 0 {
            let p = std::mem::take(&mut self.threads.all[i].penalty);
            engine.schedule_at(now + p, Ev::StepEnded { thread: i });
            return Ok(());
        }
        if self.threads.all[i].touch.is_none() && !self.next_step(i, engine)? {
            return Ok(());
        }
        self.run_chunk(i, engine);
        Ok(())
    }

    /// Thread `i` takes its next step. Returns whether it is to run a chunk
    /// of a touch now (false: it ended, computes, or micro-schedules).
    fn next_step(&mut self, i: usize, engine: &mut Engine<Ev>) -> Result<bool, RegionMachineError> {
        let now = engine.now();
        let prog = &self.spec.programs[i].program;
        let t = &mut self.threads.all[i];
        match t.cursor.next(prog, &mut self.threads.step_rng) {
            Op::Exit => {
                t.finished = Some(now.0 as f64 / PS);
                self.threads.occupied[t.proc.idx()] = 0;
                Ok(false)
            }
            Op::Compute { units } => {
                engine.schedule_at(
                    now + (units * 1e6).round() as u64,
                    Ev::StepEnded { thread: i },
                );
                Ok(false)
            }
            op @ (Op::ForkJoin { .. } | Op::Barrier | Op::Send { .. } | Op::Receive { .. }) => {
                Err(RegionMachineError::Program(format!(
                    "program {i}: the region machine runs single-threaded programs of touches \
                     and computes, not {op:?}"
                )))
            }
            Op::Touch {
                region,
                accesses,
                pattern,
            } => {
                if pattern == Pattern::Sequential && self.spec.cache_model == CacheModel::Footprint
                {
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
                t.last_region = Some(region.idx());
                if self.sched.scheduler == Scheduler::Region {
                    return Ok(!self.on_touch(i, region.idx(), engine)?);
                }
                Ok(true)
            }
        }
    }

    /// Region scheduling's decision at thread `i`'s touch of region `r`
    /// ([`on_touch`]). Returns whether the thread micro-schedules (its
    /// touch then starts after the micro-schedule's cost).
    fn on_touch(
        &mut self,
        i: usize,
        r: usize,
        engine: &mut Engine<Ev>,
    ) -> Result<bool, RegionMachineError> {
        let now = engine.now();
        let topo = &self.spec.topology;
        let mu_ps = self.sched.mu_ps;
        let rid = RegionId(key_of(i, r));
        let occupied = &mut self.threads.occupied;
        let threads = &mut self.threads.all;
        let map = &mut self.sched.map;
        let here = self.caches.llc[self.caches.of(threads[i].proc)];
        let d = on_touch(
            map,
            topo,
            threads[i].proc,
            rid,
            TouchRule::MicroSchedule,
            |p| occupied[p.idx()],
        )
        .map_err(policy_err)?;
        match d {
            TouchDecision::Proceed => return Ok(false),
            TouchDecision::MicroSchedule { to, .. } if occupied[to.idx()] == 0 => {
                occupied[threads[i].proc.idx()] = 0;
                occupied[to.idx()] = 1;
                threads[i].proc = to;
                self.stats.microschedules += 1;
                engine.schedule_at(now + mu_ps, Ev::StepEnded { thread: i });
                return Ok(true);
            }
            TouchDecision::MicroSchedule { cache, .. } if self.sched.online.is_some() => {
                // Online, the region's cache is full: swap with a thread
                // there whose region is mapped here (both pay a
                // micro-schedule); else open the region here.
                let partner = (0..threads.len()).find(|&j| {
                    j != i
                        && threads[j].finished.is_none()
                        && topo.cache(cache).serves(threads[j].proc)
                        && threads[j].last_region.is_some_and(|r| {
                            matches!(map.mapping(RegionId(key_of(j, r))),
                                Some(Mapping::Local(c)) if c == here)
                        })
                });
                if let Some(j) = partner {
                    let (pi, pj) = (threads[i].proc, threads[j].proc);
                    threads[i].proc = pj;
                    threads[j].proc = pi;
                    threads[j].penalty += mu_ps;
                    self.stats.microschedules += 2;
                    engine.schedule_at(now + mu_ps, Ev::StepEnded { thread: i });
                    return Ok(true);
                }
            }
            TouchDecision::MicroSchedule { .. } | TouchDecision::OpenLocally { .. } => {}
        }
        map.map_to(rid, here).map_err(policy_err)?;
        self.stats.opens += 1;
        Ok(false)
    }

    /// Runs one chunk of thread `i`'s touch in progress on its cache.
    fn run_chunk(&mut self, i: usize, engine: &mut Engine<Ev>) {
        let now = engine.now();
        let spec = self.spec;
        let topo = &spec.topology;
        let line = self.caches.line;
        let t = &mut self.threads.all[i];
        let (r, left, pattern) = t.touch.expect("a touch in progress");
        let n = left.min(spec.chunk);
        let k = self.caches.of(t.proc);
        let bytes = spec.programs[i].program.regions[r].bytes;
        let lines = bytes.div_ceil(line).max(1);
        let key = key_of(i, r);
        let sets = topo.cache(self.caches.llc[k]).sets();
        let base = ((key + 1) << 40) | ((mix64(key) % sets) * line);
        let online = self.sched.online.as_ref().map(|o| o.cfg);
        let cache = &mut self.caches.states[k];
        let misses = match pattern {
            Pattern::UniformRandom => cache.touch(key, lines, n, base, line, &mut t.rng),
            Pattern::Sequential => {
                let p0 = t.pos[r];
                t.pos[r] = (p0 + n) % lines;
                if let Some(o) = online {
                    let pages = bytes.div_ceil(o.page_bytes).max(1) as usize;
                    let sw = &mut t.swept[r];
                    sw.resize(pages, false);
                    for l in 0..n.min(lines) {
                        sw[(((p0 + l) % lines) * line / o.page_bytes) as usize] = true;
                    }
                }
                cache.sweep(p0, lines, n, base, line)
            }
        };
        if online.is_some() && pattern == Pattern::UniformRandom {
            t.since[r] += n;
        }
        self.caches.seen[k].0 += n;
        self.caches.seen[k].1 += misses;
        let ns = n as f64 * spec.timing.hit_ns + misses * spec.timing.miss_ns;
        t.touch = (left > n).then_some((r, left - n, pattern));
        engine.schedule_at(now + (ns * PS).round() as u64, Ev::StepEnded { thread: i });
    }

    /// The outcome, once no event is left.
    fn finish(mut self) -> MachineRun {
        let spec = self.spec;
        let map = &self.sched.map;
        if self.sched.online.is_some() {
            for (k, &c) in self.caches.llc.iter().enumerate() {
                self.loads[k] = map.load(c);
            }
        }
        let regions = |i: usize| spec.programs[i].program.regions.iter().enumerate();
        let placement = (0..spec.programs.len())
            .map(|i| {
                regions(i)
                    .map(|(r, _)| match map.mapping(RegionId(key_of(i, r))) {
                        Some(Mapping::Local(c)) => Some(c.0),
                        _ => None,
                    })
                    .collect()
            })
            .collect();
        let estimates = (0..spec.programs.len())
            .map(|i| {
                regions(i)
                    .map(|(r, d)| map.wss(RegionId(key_of(i, r))).unwrap_or(d.bytes))
                    .collect()
            })
            .collect();
        let finish_ns: Vec<f64> = self
            .threads
            .all
            .iter()
            .map(|t| t.finished.unwrap_or(f64::NAN))
            .collect();
        let makespan_ns = finish_ns.iter().copied().fold(0.0, f64::max);
        let s = &self.stats;
        MachineRun {
            scheduler: self.sched.scheduler,
            microschedules_per_s: if makespan_ns > 0.0 {
                s.microschedules as f64 / (makespan_ns * 1e-9)
            } else {
                0.0
            },
            finish_ns,
            makespan_ns,
            microschedules: s.microschedules,
            opens: s.opens,
            caches: self.cache_stats(),
            decisions: self.decisions,
            placement,
            estimates,
            rebalances: s.rebalances,
            last_rebalance_ns: s.last_rebalance_ns,
        }
    }

    fn cache_stats(&self) -> Vec<CacheStats> {
        self.caches
            .llc
            .iter()
            .zip(&self.caches.seen)
            .zip(&self.loads)
            .map(|((c, &(accesses, misses)), &load_bytes)| CacheStats {
                cache: c.0,
                accesses,
                misses,
                miss_ratio: if accesses > 0 {
                    misses / accesses as f64
                } else {
                    0.0
                },
                load_bytes,
            })
            .collect()
    }
}

impl Model for RegionMachine<'_> {
    type Event = Ev;
    type Error = RegionMachineError;

    fn handle(&mut self, event: Ev, engine: &mut Engine<Ev>) -> Result<Flow, RegionMachineError> {
        match event {
            Ev::StepEnded { thread } => self.on_step_ended(thread, engine)?,
            Ev::ScanTimerFired => self.on_scan(engine)?,
        }
        Ok(Flow::Continue)
    }
}
