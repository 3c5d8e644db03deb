//! The machine: threads running touch programs on the caches, under the
//! standard scheduler or region scheduling (engine loop, micro-schedules).

use super::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ev {
    /// Thread `t` is ready for its next step (or the next chunk of a touch).
    Ready(usize),
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
