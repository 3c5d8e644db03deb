//! Before a run: the spec's validation, the last-level caches, and the
//! initial placement by the core policies (the region map, conditions 1–3,
//! the balancer, each thread's first processor).

use super::*;
use parsched_core::policy::regions::Condition;

/// The last-level caches: what each holds and what it saw.
pub(super) struct Caches {
    /// The last-level caches, in topology order.
    pub(super) llc: Vec<CacheId>,
    /// Each processor's last-level cache (an index into `llc`).
    of_proc: Vec<Option<usize>>,
    /// Line size of the last-level caches, bytes.
    pub(super) line: u64,
    /// Each cache's content (footprint model or exact LRU).
    pub(super) states: Vec<CacheState>,
    /// Accesses and misses per cache.
    pub(super) seen: Vec<(u64, f64)>,
}

impl Caches {
    pub(super) fn new(spec: &MachineSpec, llc: Vec<CacheId>) -> Result<Caches, ConfigError> {
        let topo = &spec.topology;
        let states = llc
            .iter()
            .map(|&c| {
                let d = topo.cache(c);
                match spec.cache_model {
                    CacheModel::Footprint => Ok(CacheState::Footprint {
                        content: Vec::new(),
                        lines: d.lines() as f64,
                    }),
                    CacheModel::Lru => LruCache::of(d).map(|x| CacheState::Lru(Box::new(x))),
                }
            })
            .collect::<Result<_, _>>()?;
        let of_proc = (0..topo.num_procs())
            .map(|p| llc.iter().position(|&c| topo.cache(c).serves(ProcId(p))))
            .collect();
        Ok(Caches {
            line: topo.cache(llc[0]).line_bytes as u64,
            seen: vec![(0, 0.0); llc.len()],
            llc,
            of_proc,
            states,
        })
    }

    /// The index (into `llc`) of `p`'s last-level cache.
    #[inline]
    pub(super) fn of(&self, p: ProcId) -> usize {
        self.of_proc[p.idx()].expect("every processor has a last-level cache")
    }

    /// The balancer's bins: one per cache, its whole capacity.
    pub(super) fn bins(&self, topo: &Topology) -> Vec<Bin> {
        self.llc
            .iter()
            .map(|&c| Bin {
                cache: c,
                capacity_bytes: topo.cache(c).size_bytes,
            })
            .collect()
    }
}

/// Where a run starts: the region map, each program's decision and
/// processor, each cache's mapped working set.
pub(super) struct Placement {
    pub(super) map: RegionMap,
    /// Per program: `standard`, `regioning`, `regioning:online` or the
    /// fallback's reason.
    pub(super) decisions: Vec<String>,
    pub(super) procs: Vec<ProcId>,
    /// Working set mapped to each cache, bytes.
    pub(super) loads: Vec<u64>,
}

fn policy_err(e: parsched_core::PolicyError) -> RegionMachineError {
    RegionMachineError::Policy(e.0)
}

impl MachineSpec {
    pub(super) fn validate(&self) -> Result<Vec<CacheId>, RegionMachineError> {
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

    /// The initial placement under `scheduler` (online: with `online` set).
    pub(super) fn place(
        &self,
        scheduler: Scheduler,
        online: bool,
        caches: &Caches,
    ) -> Result<Placement, RegionMachineError> {
        let mut p = Placement {
            map: RegionMap::new(caches.llc.clone()),
            decisions: vec!["standard".to_string(); self.programs.len()],
            procs: self.programs.iter().map(|p| p.proc).collect(),
            loads: vec![0u64; caches.llc.len()],
        };
        if scheduler == Scheduler::Standard {
            for prog in &self.programs {
                p.loads[caches.of(prog.proc)] +=
                    prog.program.regions.iter().map(|r| r.bytes).sum::<u64>();
            }
        } else if online {
            // Nothing known yet: every region unmapped with no estimate; a
            // touch opens it where the thread runs (its standard processor).
            for (i, prog) in self.programs.iter().enumerate() {
                for r in 0..prog.program.regions.len() {
                    p.map.insert(RegionId(key_of(i, r)), 0);
                }
                p.decisions[i] = "regioning:online".into();
            }
        } else {
            self.place_declared(&mut p, caches)?;
        }
        Ok(p)
    }

    /// Region scheduling from the declared regions: conditions 1–3 per
    /// program (if `fallback`), the balancer over the caches, then each
    /// thread's first processor.
    fn place_declared(&self, p: &mut Placement, caches: &Caches) -> Result<(), RegionMachineError> {
        let mut items = Vec::new();
        for (i, prog) in self.programs.iter().enumerate() {
            let wss: u64 = prog.program.regions.iter().map(|r| r.bytes).sum();
            for (r, d) in prog.program.regions.iter().enumerate() {
                p.map.insert(RegionId(key_of(i, r)), d.bytes);
            }
            let decision = match &self.fallback {
                None => RegionDecision::Regioning,
                Some(c) => c.decide(&Observation {
                    access_time: first_touch(&prog.program.steps).map_or(0.0, |x| x.1 as f64),
                    total_wss_bytes: wss,
                    microschedules_per_s: 0.0,
                    idle_while_waiting: false,
                }),
            };
            p.decisions[i] = match decision {
                RegionDecision::Regioning => "regioning".into(),
                RegionDecision::Fallback(c) => format!("fallback:{}", c.name()),
            };
            let whole = match decision {
                RegionDecision::Fallback(Condition::FitsOneCache) => true,
                RegionDecision::Fallback(_) => {
                    for r in 0..prog.program.regions.len() {
                        p.map
                            .make_global(RegionId(key_of(i, r)))
                            .map_err(policy_err)?;
                    }
                    continue;
                }
                // Forced (Figure 9) or passed conditions 1–3: unify a
                // program of several regions; a single region is one item.
                RegionDecision::Regioning => prog.program.regions.len() < 2,
            };
            if whole {
                items.push(Item {
                    id: key_of(i, 0xffff),
                    wss_bytes: wss,
                });
            } else {
                for (r, d) in prog.program.regions.iter().enumerate() {
                    items.push(Item {
                        id: key_of(i, r),
                        wss_bytes: d.bytes,
                    });
                }
            }
        }
        let a = balance(&items, &caches.bins(&self.topology)).map_err(policy_err)?;
        for (id, c) in &a.placed {
            for (prog, r) in self.item_regions(*id) {
                p.map
                    .map_to(RegionId(key_of(prog, r)), *c)
                    .map_err(policy_err)?;
            }
        }
        self.first_processors(p);
        for (k, &c) in caches.llc.iter().enumerate() {
            p.loads[k] = p.map.load(c);
        }
        Ok(())
    }

    /// Initial processors: a free processor of the first touched region's
    /// cache (the standard placement if global).
    fn first_processors(&self, p: &mut Placement) {
        let topo = &self.topology;
        let mut taken = vec![false; topo.num_procs() as usize];
        let mut order: Vec<usize> = (0..self.programs.len()).collect();
        order.sort_by_key(|&i| self.programs[i].proc);
        let mut want: Vec<Option<CacheId>> = vec![None; self.programs.len()];
        for &i in &order {
            let r = first_touch(&self.programs[i].program.steps).map_or(0, |x| x.0);
            if let Some(Mapping::Local(c)) = p.map.mapping(RegionId(key_of(i, r))) {
                want[i] = Some(c);
            } else {
                taken[p.procs[i].idx()] = true;
            }
        }
        for &i in &order {
            if let Some(c) = want[i] {
                let free = topo
                    .cache(c)
                    .procs
                    .iter()
                    .copied()
                    .find(|q| !taken[q.idx()]);
                let q = free.unwrap_or_else(|| {
                    (0..taken.len())
                        .map(|k| ProcId(k as u32))
                        .find(|q| !taken[q.idx()])
                        .expect("at most one program per processor")
                });
                taken[q.idx()] = true;
                p.procs[i] = q;
            }
        }
    }
}
