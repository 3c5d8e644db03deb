//! Building the machine from a configuration: the gangs (skewing threads,
//! the measured gang, the competitors) admitted to the matrix, their threads,
//! each processor's initial queue.

use super::*;

impl SyncMachine {
    /// Builds the machine for a validated configuration, each processor
    /// scheduled by round robin with quantum τq (seed 001 §3.1).
    pub fn new(cfg: &SyncConfig, opts: SyncOptions) -> Result<SyncMachine, ConfigError> {
        let capacity = cfg.l as usize + 2;
        SyncMachine::with_local_schedulers(cfg, opts, |_| {
            RoundRobin::with_capacity(ticks(cfg.tq), cfg.wakeup, capacity)
        })
    }
}

impl<L: LocalScheduler> SyncMachine<L> {
    /// Builds the machine with `local(p)` as processor p's local scheduler
    /// (any [`LocalScheduler`]; the periodic fast path applies only to round
    /// robin). The configuration's `tq` and `wakeup` are the round robin's.
    pub fn with_local_schedulers(
        cfg: &SyncConfig,
        opts: SyncOptions,
        mut local: impl FnMut(ProcId) -> L,
    ) -> Result<SyncMachine<L>, ConfigError> {
        match SyncMachine::build(cfg, opts, &mut local, None) {
            Ok(m) => Ok(m),
            Err(RunError::Config(e)) => Err(e),
            Err(RunError::Machine(e)) => unreachable!("only a slot chooser fails here: {e}"),
        }
    }

    /// [`SyncMachine::with_local_schedulers`] with each gang's slot chosen
    /// by `gang_place`, asked once per gang (skew, measured, competitors)
    /// and checked by the core: `None` or a bad answer is a [`PolicyError`]
    /// naming the gang.
    pub fn with_slot_chooser(
        cfg: &SyncConfig,
        opts: SyncOptions,
        mut local: impl FnMut(ProcId) -> L,
        gang_place: &mut dyn SlotChooser,
    ) -> Result<SyncMachine<L>, RunError> {
        SyncMachine::build(cfg, opts, &mut local, Some(gang_place))
    }

    /// Builds the machine. Every gang (skew, measured, competitors, in that
    /// order) is placed in the matrix: by its first fit without
    /// `gang_place`, else in the slot `gang_place` answers for a view of the
    /// matrix so far (`now` 0, the gang's index as the job's id, its width,
    /// an unbounded multiprogramming level), checked by the core
    /// ([`check_slot_for`]); its processors are the slot's lowest free ones.
    /// Every gang must be placed: `None` is an error, as is a bad answer
    /// (a [`PolicyError`] naming the gang).
    fn build(
        cfg: &SyncConfig,
        opts: SyncOptions,
        local: &mut dyn FnMut(ProcId) -> L,
        mut gang_place: Option<&mut dyn SlotChooser>,
    ) -> Result<SyncMachine<L>, RunError> {
        cfg.validate()?;
        let p = cfg.procs();
        let specs = gang_specs(cfg)?;
        let mut m = SyncMachine {
            params: Params {
                sched: cfg.sched,
                tq: ticks(cfg.tq),
                tcs: ticks(cfg.tcs),
                block_cost: ticks(cfg.alpha * cfg.tcs),
                spin_limit: ticks(cfg.spin_limit),
                k: cfg.k,
                audit: opts.audit,
                fast: opts.fast,
                periodic: opts.fast && !opts.audit && cfg.wait == WaitStrategy::Busy,
            },
            procs: (0..p)
                .map(|q| Proc {
                    thread: NONE,
                    last: NONE,
                    free_switch: true,
                    seg_start: Time::ZERO,
                    busy_until: Time::ZERO,
                    seg_timer: Timer::UNSET,
                    slice_end: Time::ZERO,
                    timer: false,
                    timer_fresh: false,
                    spin_timer: None,
                    queue: local(ProcId(q)),
                })
                .collect(),
            threads: Vec::new(),
            gangs: Vec::new(),
            measured: 0,
            gang: GangScheduler::new(GangMatrix::new(p, None)?, GangSchedOptions::default()),
            slot: SlotState {
                timer: Timer::UNSET,
                start: Time::ZERO,
                free: 0,
                end: Time::ZERO,
            },
            stats: SyncStats::default(),
            measure: Measurement::new(cfg),
            max_pending: 0,
            watch: crate::cancel::Watch::new(),
        };
        for (g, spec) in specs.into_iter().enumerate() {
            let alloc = match gang_place.as_deref_mut() {
                None => m.first_fit(g as u32, spec.1)?,
                Some(chooser) => m.place(g as u32, spec.0, spec.1, chooser)?,
            };
            m.add_gang(g as u32, spec, alloc, cfg);
        }
        m.initial_queues(cfg);
        Ok(m)
    }

    /// Admits gang `g` to the matrix by its own rule (first fit, lowest
    /// processors).
    fn first_fit(&mut self, g: u32, width: u32) -> Result<Allocation, ConfigError> {
        let Admission::Placed(alloc) = self
            .gang
            .admit(GangId(g as u64), width)
            .map_err(|e| ConfigError::new("n", e.to_string(), "n <= P"))?
        else {
            unreachable!("an unbounded matrix always has room")
        };
        Ok(alloc)
    }

    /// Admits gang `g` to the slot `chooser` answers, checked by the core.
    fn place(
        &mut self,
        g: u32,
        kind: Kind,
        width: u32,
        chooser: &mut dyn SlotChooser,
    ) -> Result<Allocation, RunError> {
        let name = format!("{g} ({})", kind.name());
        let fail = |what: String| {
            RunError::Machine(MachineError::Policy(PolicyError(format!(
                "gang_place for gang {name}: {what}"
            ))))
        };
        let m = self.gang.matrix();
        let n = m.num_slots();
        let free: Vec<u32> = (0..n).map(|s| m.free_cells(SlotId(s))).collect();
        let jobs: Vec<u32> = (0..n).map(|s| m.gangs_of(SlotId(s)).len() as u32).collect();
        let view = SlotView {
            now: 0,
            job: SlotJob {
                id: i64::from(g),
                requested: 0,
                submit: 0,
            },
            procs: width,
            slot_free: &free,
            slot_jobs: &jobs,
            mpl: u32::MAX,
        };
        let slot = match chooser.choose(&view).map_err(fail)? {
            Some(s) => s,
            None => {
                return Err(fail(format!(
                    "returned None; allowed: a slot index in 0..={n} (every gang is placed \
                     when the machine is built)"
                )))
            }
        };
        let slot = check_slot_for(
            &view,
            slot,
            |s| m.fits_in(SlotId(s as u32), width),
            "gang",
            &name,
        )
        .map_err(MachineError::from)?;
        let gang = GangId(u64::from(g));
        match self.gang.admit_in(gang, width, slot) {
            Ok(Some(a)) => Ok(a),
            Ok(None) => Err(fail(format!("{gang} does not fit in {slot}"))),
            Err(e) => Err(fail(e.to_string())),
        }
    }

    /// Creates gang `g`'s threads on the processors of its allocation.
    fn add_gang(
        &mut self,
        g: u32,
        (kind, width, program): (Kind, u32, Program),
        alloc: Allocation,
        cfg: &SyncConfig,
    ) {
        let p = self.procs.len();
        let rng = match kind {
            Kind::Skew => stream(cfg.seed, Stream::Skew, 0),
            _ => stream(cfg.seed, Stream::ThreadDemand, g as u64),
        };
        if kind == Kind::Measured {
            self.measured = g;
        }
        let (batchable, count) = match program.steps.as_slice() {
            [Step::Repeat { count, body }]
                if matches!(body.as_slice(), [Step::Compute { .. }, Step::Barrier]) =>
            {
                (true, *count)
            }
            _ => (false, 0),
        };
        let mut on_proc = vec![NONE; p];
        let mut threads = Vec::with_capacity(width as usize);
        for &q in &alloc.procs {
            let th = self.threads.len() as u32;
            on_proc[q.idx()] = th;
            threads.push(th);
            self.threads.push(Thread {
                gang: g,
                proc: q.0,
                cursor: Cursor::new(width),
                remaining: 0,
                deferred: None,
                state: St::Ready,
                waiting: false,
                spin_left: 0,
            });
        }
        self.gangs.push(Gang {
            kind,
            program,
            rng,
            width,
            arrived: 0,
            waiters: Vec::with_capacity(width as usize),
            wait: cfg.wait,
            runnable: width,
            alive: width,
            on_proc,
            threads,
            first: self.threads.len() as u32 - width,
            batchable,
            count,
            batch: Batch::default(),
            iterations: 0,
            voluntary: 0,
        });
    }

    /// Each thread's first step prepared; under local scheduling, each
    /// processor's queue in its initial order (shuffled past the skewing
    /// thread with `shuffle`).
    fn initial_queues(&mut self, cfg: &SyncConfig) {
        let mut initial: Vec<Vec<u32>> = vec![Vec::new(); self.procs.len()];
        for th in 0..self.threads.len() as u32 {
            self.prepare(th);
            initial[self.threads[th as usize].proc as usize].push(th);
        }
        if self.params.sched == SyncSched::Local {
            let first = usize::from(cfg.skew);
            for (q, v) in initial.iter_mut().enumerate() {
                if cfg.shuffle && v.len() > first {
                    let mut rng = stream(cfg.seed, Stream::Skew, q as u64 + 1);
                    let rest = &mut v[first..];
                    for i in (1..rest.len()).rev() {
                        rest.swap(i, rng.random_range(0..=i));
                    }
                }
                for &th in v.iter() {
                    self.procs[q]
                        .queue
                        .enqueue(ThreadId(th), EnqueueReason::New);
                }
            }
        }
    }
}

/// The gangs of a configuration, in allocation order: (kind, width,
/// program) of the skewing threads, the measured gang, the competitors.
fn gang_specs(cfg: &SyncConfig) -> Result<Vec<(Kind, u32, Program)>, ConfigError> {
    let p = cfg.procs();
    let iterate = |count: u64| {
        Program::new(vec![Step::Repeat {
            count,
            body: vec![
                Step::Compute {
                    demand: cfg.compute_dist(),
                },
                Step::Barrier,
            ],
        }])
    };
    let mut specs: Vec<(Kind, u32, Program)> = Vec::new();
    if cfg.skew {
        specs.push((
            Kind::Skew,
            p,
            Program::new(vec![Step::Compute {
                demand: Dist::Uniform {
                    lo: 0.0,
                    hi: cfg.tq,
                },
            }]),
        ));
    }
    specs.push((Kind::Measured, cfg.n, iterate(cfg.k)));
    for _ in 1..cfg.l {
        match cfg.competitors {
            Competitors::Same => specs.push((Kind::Same, cfg.n, iterate(u64::MAX))),
            Competitors::Compute => specs.push((
                Kind::Compute,
                p,
                Program::new(vec![Step::Compute {
                    demand: Dist::Const { value: 1e12 },
                }]),
            )),
        }
    }
    // The machine builds its programs; it models no caches, so a
    // program that touches regions would be refused here (typed error).
    if specs.iter().any(|(_, _, prog)| prog.touches_regions()) {
        return Err(ConfigError::new(
            "program",
            "a program touches regions",
            "the barrier machine models no caches: use parsched simulate regions",
        ));
    }
    Ok(specs)
}
