//! The machine: threads running touch programs on the caches, under the
//! standard scheduler or region scheduling (engine loop, micro-schedules).

use super::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ev {
    /// Thread `t` is ready for its next step (or the next chunk of a touch).
    Ready(usize),
    /// Online regioning: scan the access bits, re-balance.
    Scan,
}

pub(super) struct Thread {
    cursor: Cursor,
    rng: StreamRng,
    proc: ProcId,
    /// The touch in progress: (region index, accesses left, pattern).
    touch: Option<(usize, u64, Pattern)>,
    /// Next line of each region for sequential touches.
    pos: Vec<u64>,
    finished: Option<f64>,
    /// The region of the touch in progress, or of the last one.
    last_region: Option<usize>,
    /// Online: a micro-schedule decided while the thread ran a chunk (a
    /// swap), paid at its next event, ps.
    penalty: u64,
    /// Online: uniformly random accesses per region since the last scan.
    since: Vec<u64>,
    /// Online: pages swept per region since the last scan (sequential).
    swept: Vec<Vec<bool>>,
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
        let bins: Vec<Bin> = llc
            .iter()
            .zip(&cache_bytes)
            .map(|(&c, &b)| Bin {
                cache: c,
                capacity_bytes: b,
            })
            .collect();
        let online = self.online.filter(|_| scheduler == Scheduler::Region);
        if scheduler == Scheduler::Standard {
            for (i, p) in self.programs.iter().enumerate() {
                loads[llc_of(p.proc)] += p.program.regions.iter().map(|r| r.bytes).sum::<u64>();
                let _ = i;
            }
        } else if online.is_some() {
            // Nothing known yet: every region unmapped with no estimate; a
            // touch opens it where the thread runs (its standard processor).
            for (i, p) in self.programs.iter().enumerate() {
                for r in 0..p.program.regions.len() {
                    map.insert(RegionId(key_of(i, r)), 0);
                }
                decisions[i] = "regioning:online".into();
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
            let a = balance(&items, &bins).map_err(|e| RegionMachineError::Policy(e.0))?;
            for (id, c) in &a.placed {
                for (prog, r) in self.item_regions(*id) {
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
                last_region: None,
                penalty: 0,
                since: vec![0; self.programs[i].program.regions.len()],
                swept: vec![Vec::new(); self.programs[i].program.regions.len()],
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
        let mut est = online.map(|o| WssEstimator::new(o.page_bytes, HistogramReading::OnesCount));
        let scan_ps = online.map_or(0, |o| (o.scan_ns * PS).round().max(1.0) as u64);
        let mut scan_rng = stream(self.seed, Stream::Accesses, 1 << 32);
        let (mut rebalances, mut last_rebalance_ns) = (0u64, 0.0f64);
        if online.is_some() {
            engine.schedule_at(Time(scan_ps), Ev::Scan);
        }
        while let Some(ev) = engine.pop() {
            let now = engine.now();
            let i = match ev {
                Ev::Ready(i) => i,
                Ev::Scan => {
                    if threads.iter().all(|t| t.finished.is_some()) {
                        continue;
                    }
                    let (o, est) = (
                        online.expect("scans run online"),
                        est.as_mut().expect("online"),
                    );
                    if self.scan(o, est, &mut threads, &mut map, &bins, &mut scan_rng)? {
                        rebalances += 1;
                        last_rebalance_ns = now.0 as f64 / PS;
                    }
                    engine.schedule_at(now + scan_ps, Ev::Scan);
                    continue;
                }
            };
            if threads[i].penalty > 0 {
                let p = std::mem::take(&mut threads[i].penalty);
                engine.schedule_at(now + p, Ev::Ready(i));
                continue;
            }
            let prog = &self.programs[i].program;
            let t = &mut threads[i];
            if t.touch.is_none() {
                match t.cursor.next(prog, &mut step_rng) {
                    Op::Exit => {
                        t.finished = Some(now.0 as f64 / PS);
                        occupied[t.proc.idx()] = 0;
                        continue;
                    }
                    Op::Compute { units } => {
                        engine.schedule_at(now + (units * 1e6).round() as u64, Ev::Ready(i));
                        continue;
                    }
                    op @ (Op::ForkJoin { .. } | Op::Barrier | Op::Send { .. } | Op::Receive { .. }) => {
                        return Err(RegionMachineError::Program(format!(
                            "program {i}: the region machine runs single-threaded programs of touches and computes, not {op:?}"
                        )))
                    }
                    Op::Touch { region, accesses, pattern } => {
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
                        t.last_region = Some(region.idx());
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
                                TouchDecision::MicroSchedule { cache, .. } if online.is_some() => {
                                    // Online, the region's cache is full: swap
                                    // with a thread there whose region is
                                    // mapped here (both pay a micro-schedule);
                                    // else open the region here.
                                    let here = llc[llc_of(threads[i].proc)];
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
                                        usched += 2;
                                        engine.schedule_at(now + mu_ps, Ev::Ready(i));
                                        continue;
                                    }
                                    map.map_to(rid, here).map_err(|e| RegionMachineError::Policy(e.0))?;
                                    opens += 1;
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
            let t = &mut threads[i];
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
                    if let Some(o) = online {
                        let pages = bytes.div_ceil(o.page_bytes).max(1) as usize;
                        let sw = &mut t.swept[r];
                        sw.resize(pages, false);
                        for l in 0..n.min(lines) {
                            sw[(((p0 + l) % lines) * line / o.page_bytes) as usize] = true;
                        }
                    }
                    caches[k].sweep(p0, lines, n, base, line)
                }
            };
            if online.is_some() && pattern == Pattern::UniformRandom {
                t.since[r] += n;
            }
            acc[k].0 += n;
            acc[k].1 += misses;
            let ns = n as f64 * self.timing.hit_ns + misses * self.timing.miss_ns;
            t.touch = (left > n).then_some((r, left - n, pattern));
            engine.schedule_at(now + (ns * PS).round() as u64, Ev::Ready(i));
        }
        if online.is_some() {
            for (k, &c) in llc.iter().enumerate() {
                loads[k] = map.load(c);
            }
        }
        let placement = (0..self.programs.len())
            .map(|i| {
                (0..self.programs[i].program.regions.len())
                    .map(|r| match map.mapping(RegionId(key_of(i, r))) {
                        Some(Mapping::Local(c)) => Some(c.0),
                        _ => None,
                    })
                    .collect()
            })
            .collect();
        let estimates = self
            .programs
            .iter()
            .enumerate()
            .map(|(i, p)| {
                p.program
                    .regions
                    .iter()
                    .enumerate()
                    .map(|(r, d)| map.wss(RegionId(key_of(i, r))).unwrap_or(d.bytes))
                    .collect()
            })
            .collect();
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
            placement,
            estimates,
            rebalances,
            last_rebalance_ns,
        })
    }

    /// The (program, region) pairs a balancer item stands for: one region
    /// (`key_of(program, region)`), or every region of a program balanced as
    /// a whole (`key_of(program, 0xffff)`).
    fn item_regions(&self, id: u64) -> impl Iterator<Item = (usize, usize)> {
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
    fn scan(
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
