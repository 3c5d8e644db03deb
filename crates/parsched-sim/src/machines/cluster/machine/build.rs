//! Building the cluster machine from a [`ClusterConfig`], in named steps:
//! the programs, the nodes and their local schedulers, the processors, the
//! global scheme (its own component: [`Global`]), the processes (placed by
//! the scheme or by `placement`), the daemons, the machine's costs, and the
//! first events. The random draws happen in a fixed order (the daemons'
//! phases, then the nodes' clocks, the launch skew, the seconds, the boost
//! timers and the interface samples), so a seed gives the same run.

use super::*;
use parsched_core::policy::ts::TsSemantics;

impl Proc {
    /// Rank `rank` of job `job` (width `width`), ready at its start.
    fn new(job: u32, rank: u32, width: u32, node: u32, local: u32, rng: StreamRng) -> Proc {
        Proc {
            job,
            rank,
            node,
            local,
            state: ProcState::Ready,
            act: Act::Compute,
            left: 0,
            cursor: Cursor::new(width),
            rng,
            quantum_left: None,
            spin_deadline: NEVER,
            inbox: VecDeque::new(),
            pending: 0,
            last_arrival: 0,
            sent_seq: vec![0; width as usize],
            last_arrival_to: vec![0; width as usize],
            recv_seq: vec![0; width as usize],
            comm_since: None,
            comm_ns: 0,
            spin_ns: 0,
            cpu_ns: 0,
            waking: false,
            in_driver: false,
            believed: false,
            timer: Timer::UNSET,
            daemon: false,
            cpu: NONE,
            started: true,
            boosts_this_s: 0,
            mult: 1.0,
            parked: false,
            recv_n: 0,
        }
    }

    /// Node `node`'s daemon: asleep until its first activation.
    fn daemon(node: u32, local: u32, rng: StreamRng) -> Proc {
        Proc {
            job: NONE,
            state: ProcState::Blocked,
            act: Act::Daemon,
            sent_seq: Vec::new(),
            last_arrival_to: Vec::new(),
            recv_seq: Vec::new(),
            daemon: true,
            ..Proc::new(NONE, 0, 1, node, local, rng)
        }
    }
}

/// The jobs' programs, checked: valid, and without region touches.
fn checked_programs(plans: &[JobPlan]) -> Result<Vec<Arc<Program>>, ClusterError> {
    let programs: Vec<Arc<Program>> = plans.iter().map(|p| Arc::new(p.program.clone())).collect();
    for p in &programs {
        p.validate().map_err(ClusterError::Program)?;
        if p.touches_regions() {
            return Err(ClusterError::Program(NO_CACHES.into()));
        }
    }
    Ok(programs)
}

/// Each job's spin before it acts (ns). PB-SB: "the spin is limited to the
/// period of the kernel function".
fn job_spins(cfg: &ClusterConfig, plans: &[JobPlan], dynamic: Option<Scheme>) -> Vec<u64> {
    let boost_period = ms(cfg.boost_period_ms);
    plans
        .iter()
        .map(|a| {
            let s = us(a.spin_us);
            match dynamic {
                Some(d) if d.has_periodic_boost() && cfg.spin_cap_at_boost_period => {
                    s.min(boost_period)
                }
                _ => s,
            }
        })
        .collect()
}

/// A node's local scheduler.
fn local_scheduler(cfg: &ClusterConfig, table: &DispatchTable) -> Result<NodeSched, ClusterError> {
    Ok(match cfg.local {
        LocalKind::Ts => NodeSched::Ts(
            TimeSharing::new(table.clone(), 1_000_000, cfg.initial_level)?
                .with_boost_to(cfg.boost_to)
                .with_boost_at_tail(cfg.boost_queue == BoostQueue::Tail)
                .with_boost_transient(cfg.boost_transient)
                .with_semantics(cfg.ts_semantics),
        ),
        LocalKind::Rr => NodeSched::Rr(RoundRobin::new(ms(cfg.rr_quantum_ms), Wakeup::Tail)),
        LocalKind::O1 => NodeSched::O1(Box::new(O1::new(O1Config {
            sleep_bonus: cfg.o1_sleep_bonus,
            ..O1Config::default()
        })?)),
        LocalKind::Fair => NodeSched::Fair(Box::new(Fair::new(FairConfig::default())?)),
    })
}

fn build_nodes(cfg: &ClusterConfig) -> Result<Vec<Node>, ClusterError> {
    let table = cfg.table();
    (0..cfg.nodes)
        .map(|n| {
            Ok(Node {
                sched: local_scheduler(cfg, &table)?,
                procs: Vec::new(),
                cpu0: n * cfg.cpus_per_node,
                yield_next: 0,
                tick_phase: 0,
                link_free: 0,
                fill: VecDeque::new(),
            })
        })
        .collect()
}

fn build_cpus(cfg: &ClusterConfig, eng: &mut Engine<Ev>) -> Vec<Cpu> {
    (0..cfg.nodes * cfg.cpus_per_node)
        .map(|c| Cpu {
            node: c / cfg.cpus_per_node,
            running: None,
            last: None,
            seg_start: 0,
            quantum_end: NEVER,
            acct_since: 0,
            timer: eng.timer(),
            rate: 1.0,
        })
        .collect()
}

/// The global scheme's component: the gang or FCFS reference (which also
/// places the processes: `placement[job][rank]` = processor), FCS over an
/// implicit scheme, or none.
fn build_global(
    cfg: &ClusterConfig,
    plans: &[JobPlan],
    dynamic: Option<Scheme>,
    job_spin: &[u64],
) -> Result<(Global, Vec<Vec<u32>>), ClusterError> {
    match (dynamic, &cfg.flexible) {
        (None, _) => {
            let (g, placement) = GangRef::new(cfg, plans)?;
            Ok((Global::Gang(g), placement))
        }
        (Some(_), Some(f)) => Ok((
            // Every row's gang is as wide as the machine: the processes sit
            // on nodes by `placement`, not on the gang's cells, so two rows
            // in one slot could share a node's processors (a CS job's
            // process would wait for another's). One row a slot.
            Global::Fcs(Box::new(FcsRun::new(
                *f,
                vec![cfg.nodes * cfg.cpus_per_node; plans.len()],
                cfg.nodes * cfg.cpus_per_node,
                job_spin.to_vec(),
            )?)),
            Vec::new(),
        )),
        (Some(_), None) => Ok((Global::Local, Vec::new())),
    }
}

/// The jobs' processes, on the processors the gang matrix gave them or on
/// the nodes `placement` says.
fn build_procs(
    cfg: &ClusterConfig,
    plans: &[JobPlan],
    seed: u64,
    placement: &[Vec<u32>],
    global: &mut Global,
    nodes: &mut [Node],
    eng: &mut Engine<Ev>,
) -> (Vec<Proc>, Vec<JobState>) {
    let mut procs = Vec::new();
    let mut jobs = Vec::new();
    for (j, plan) in plans.iter().enumerate() {
        let base = procs.len() as u32;
        let width = plan.width;
        jobs.push(JobState {
            base,
            width,
            left: width,
            finish: None,
            background: plan.background,
        });
        for r in 0..width {
            let node = match global {
                Global::Gang(g) => {
                    let cpu = placement[j][r as usize];
                    g.pin(cpu, j as u32, base + r);
                    cpu / cfg.cpus_per_node
                }
                _ => match cfg.placement {
                    Placement::Cyclic => r % cfg.nodes,
                    Placement::Block => {
                        (r as u64 * cfg.nodes as u64 / width as u64) as u32 % cfg.nodes
                    }
                },
            };
            let local = nodes[node as usize].procs.len() as u32;
            nodes[node as usize].procs.push(base + r);
            let rng = stream(seed, Stream::ThreadDemand, plan.stream_key | r as u64);
            procs.push(Proc {
                timer: eng.timer(),
                mult: plan.mult[r as usize],
                ..Proc::new(j as u32, r, width, node, local, rng)
            });
        }
    }
    (procs, jobs)
}

/// One daemon per node (`daemon_period_ms`, dynamic schemes), each first
/// waking at a random phase of its period.
fn add_daemons(
    cfg: &ClusterConfig,
    seed: u64,
    procs: &mut Vec<Proc>,
    nodes: &mut [Node],
    phase_rng: &mut StreamRng,
    eng: &mut Engine<Ev>,
) {
    let period = ms(cfg.daemon_period_ms);
    for n in 0..cfg.nodes {
        let id = procs.len() as u32;
        let local = nodes[n as usize].procs.len() as u32;
        nodes[n as usize].procs.push(id);
        let rng = stream(seed, Stream::Policy, 1 + n as u64);
        procs.push(Proc {
            timer: eng.timer(),
            ..Proc::daemon(n, local, rng)
        });
        let at = phase_rng.random_range(0..period);
        eng.schedule_at(Time(at), Ev::DaemonWoke { proc: id });
    }
}

/// The parts [`ClusterMachine::new`] built before the machine itself.
struct Parts {
    implicit: Option<Implicit>,
    programs: Vec<Arc<Program>>,
    procs: Vec<Proc>,
    nodes: Vec<Node>,
    cpus: Vec<Cpu>,
    jobs: Vec<JobState>,
    job_spin: Vec<u64>,
    global: Global,
}

impl ClusterMachine {
    /// The machine of `cfg` running `plans` (`ClusterConfig::plans`, planned
    /// once for all of a run's replications).
    pub fn new(
        cfg: &ClusterConfig,
        plans: &[JobPlan],
        seed: u64,
        audit: bool,
        eng: &mut Engine<Ev>,
    ) -> Result<ClusterMachine, ClusterError> {
        cfg.validate()?;
        let dynamic = match cfg.scheme {
            CoschedScheme::Dynamic(s) => Some(s),
            _ => None,
        };
        let programs = checked_programs(plans)?;
        let job_spin = job_spins(cfg, plans, dynamic);
        let mut nodes = build_nodes(cfg)?;
        let cpus = build_cpus(cfg, eng);
        let (mut global, placement) = build_global(cfg, plans, dynamic, &job_spin)?;
        let (mut procs, jobs) =
            build_procs(cfg, plans, seed, &placement, &mut global, &mut nodes, eng);
        let mut phase_rng = stream(seed, Stream::Phase, 0);
        if ms(cfg.daemon_period_ms) > 0 && dynamic.is_some() {
            add_daemons(cfg, seed, &mut procs, &mut nodes, &mut phase_rng, eng);
        }
        let parts = Parts {
            implicit: dynamic.map(|s| Implicit::new(cfg, s, seed)),
            programs,
            procs,
            nodes,
            cpus,
            jobs,
            job_spin,
            global,
        };
        let mut m = ClusterMachine::assemble(cfg, audit, parts, eng);
        m.first_events(cfg, &mut phase_rng, eng);
        Ok(m)
    }

    /// The machine from its parts and the configuration's costs (ns).
    fn assemble(
        cfg: &ClusterConfig,
        audit: bool,
        p: Parts,
        eng: &mut Engine<Ev>,
    ) -> ClusterMachine {
        let njobs = p.jobs.len();
        let foreground = p.jobs.iter().filter(|j| !j.background).count() as u32;
        let solaris =
            matches!(cfg.local, LocalKind::Ts) && cfg.ts_semantics == TsSemantics::Solaris;
        ClusterMachine {
            implicit: p.implicit,
            programs: p.programs,
            procs: p.procs,
            nodes: p.nodes,
            cpus: p.cpus,
            jobs: p.jobs,
            job_spin: p.job_spin,
            global: p.global,
            slot_timer: eng.timer(),
            send_ov: us(cfg.send_overhead_us),
            recv_ov: us(cfg.recv_overhead_us),
            wire: us(cfg.latency_us - cfg.send_overhead_us - cfg.recv_overhead_us),
            per_byte: cfg.per_byte_ns,
            ctx: us(cfg.context_switch_us),
            intr: us(cfg.interrupt_us),
            sys: us(cfg.syscall_us),
            nic_sample: us(cfg.nic_sample_us),
            wake_delay: us(cfg.wake_delay_us),
            block_timeout: ms(cfg.block_timeout_ms),
            slot: ms(cfg.gang_slot_ms),
            tick: ms(cfg.tick_ms),
            probe: ms(cfg.probe_ms),
            probe_node: cfg.probe_node,
            max_time: (cfg.max_time_s * TICKS_PER_S as f64) as u64,
            max_events: if cfg.max_events == 0 {
                u64::MAX
            } else {
                cfg.max_events
            },
            audit,
            literal_pending: cfg.pending == PendingRule::Unconsumed,
            age_running: cfg.age_running || solaris,
            boost_refreshes_quantum: cfg.boost_refreshes_quantum,
            boost_cap: cfg.boost_cap,
            view: Vec::new(),
            counters: Counters::default(),
            job_finish: vec![None; njobs],
            probe_rows: Vec::new(),
            probe_acc: vec![0; njobs],
            jobs_left: foreground,
            end: 0,
            error: None,
            timed: matches!(cfg.local, LocalKind::O1 | LocalKind::Fair) || solaris,
            smt: cfg.smt_threads_per_core == 2,
            smt_speed: cfg.smt_speed,
        }
    }

    /// The first events: the probe, and either the dynamic schemes' start
    /// (launches, clocks, boost timers, interface samples, dispatch) or the
    /// gang reference's first slot; then the global scheme's own start.
    fn first_events(
        &mut self,
        cfg: &ClusterConfig,
        phase_rng: &mut StreamRng,
        eng: &mut Engine<Ev>,
    ) {
        // Start: every process is ready (new) at time 0.
        eng.schedule_at(Time(self.probe), Ev::ProbeTicked);
        self.prepare_global();
        if let Some(d) = self.implicit.as_ref().map(|i| i.scheme) {
            self.start_dynamic(cfg, d, phase_rng, eng);
        }
        self.start_global(eng);
    }

    fn start_dynamic(
        &mut self,
        cfg: &ClusterConfig,
        d: Scheme,
        phase_rng: &mut StreamRng,
        eng: &mut Engine<Ev>,
    ) {
        if self.tick > 0 {
            for node in &mut self.nodes {
                node.tick_phase = phase_rng.random_range(0..self.tick);
            }
        }
        let skew = ms(cfg.start_skew_ms);
        let gap = ms(cfg.launch_gap_ms);
        for n in 0..self.nodes.len() {
            for k in 0..self.nodes[n].procs.len() {
                let p = self.nodes[n].procs[k];
                if self.procs[p as usize].daemon {
                    continue;
                }
                let at = self.procs[p as usize].job as u64 * gap
                    + if skew > 0 {
                        phase_rng.random_range(0..skew)
                    } else {
                        0
                    };
                if at == 0 {
                    self.enqueue_proc(p, EnqueueReason::New);
                } else {
                    self.procs[p as usize].state = ProcState::Blocked;
                    self.procs[p as usize].started = false;
                    eng.schedule_at(Time(at), Ev::ProcStarted { proc: p });
                }
            }
        }
        for n in 0..self.nodes.len() as u32 {
            let at = phase_rng.random_range(1..=TICKS_PER_S);
            eng.schedule_at(Time(at), Ev::SecondElapsed { node: n });
        }
        if d.has_periodic_boost() {
            for n in 0..self.nodes.len() as u32 {
                let period = self.implicit.as_ref().map_or(1, |i| i.boost_period);
                let at = phase_rng.random_range(0..period.max(1));
                eng.schedule_at(Time(at), Ev::BoostTimerFired { node: n });
            }
        }
        if self.nic_sample > 0 && d.arrival == ArrivalAction::Dcs {
            for n in 0..self.nodes.len() as u32 {
                let at = phase_rng.random_range(0..self.nic_sample);
                eng.schedule_at(Time(at), Ev::NicSampled { node: n });
            }
        }
        for c in 0..self.cpus.len() {
            self.dispatch(c, 0, eng);
        }
    }
}
