//! The cosched policy: seed 003's communication-driven coscheduling (Nagar,
//! Banerjee, Sivasubramaniam and Das, SPAA 1999, §2 and Table 1) on this
//! machine, for MPI jobs whose ranks load `libparsched_mpi`
//! (crates/parsched-runtime/mpi, docs/runtime.md "MPI programs").
//!
//! * **Waiting** (Table 1's columns) is the library's: each job is started
//!   with its statistics file (`PARSCHED_FCS_SYNC_FILE`) and the scheme's
//!   waiting strategy (`PARSCHED_MPI_WAIT`: Local busy, SB spin-block, SY
//!   spin-yield) and spin time (`PARSCHED_MPI_SPIN_US`).
//! * **Layout** `workstations`: every `period` the policy reads which ranks
//!   have started (their pids, from the file) and pins each rank's MPI
//!   thread to CPU `rank mod CPUs` ([`Decision::PinThread`], which checks
//!   the thread is the job's): every CPU is a workstation whose local
//!   scheduler knows nothing of the others.
//! * **Periodic boost** (PB, PBT with busy waiting): every `period` (10 ms,
//!   the paper's), on each CPU, the boost of the last period ends and the
//!   core's [`PeriodicBooster`] (the simulator's, the same code) picks among
//!   the ranks pinned there the one to boost — PB the next with a message
//!   pending (round robin), PBT the one whose pending message is the most
//!   recent — from what the library publishes (sent − consumed, the last
//!   arrival); the boost is `SCHED_FIFO` priority 1 ([`Decision::Boost`]:
//!   Linux's EEVDF only lets a real-time class preempt at once,
//!   `tools/boost_latency.py`) until the rank has received (the library
//!   drops it, flagged in the rank's slot) or the next period.
//! * **PB-SB, PB-SY**: the same timer over ranks that spin-block or
//!   spin-yield. PB-SB's timer "preferentially wakes up sleeping (blocked)
//!   processes which have pending messages": the library's senders already
//!   wake a blocked rank through its doorbell, so the timer's wake is a
//!   boost of the blocked rank (it runs at once when it wakes).
//! * **Not yet available**: the DCS family (an immediate boost on
//!   arrival); `RunSpec::validate` refuses it.

use super::fcs_files::{read_ranks, ClassFiles, RankView, Waiting, SYNC_FILE_ENV};
use super::mechanism::{mono_ns, Decision, Mechanism};
use super::policy::{Needs, RuntimePolicy};
use crate::error::{Result, RuntimeError};
use crate::spec::{CoschedLayout, JobReport, RunSpec};
use crate::topology::MachineTopology;
use parsched_core::policy::cosched::{
    BoostDecision, CoschedScheme, EndpointView, PeriodicBooster, ProcState, Scheme, WaitKind,
};
use parsched_core::Time;
use std::any::Any;
use std::collections::BTreeMap;

/// How often the policy looks for newly started ranks.
const PERIOD_NS: u64 = 10_000_000;

/// The library's name for a waiting strategy.
pub(crate) fn wait_env(w: WaitKind) -> &'static str {
    match w {
        WaitKind::Busy => "busy",
        WaitKind::SpinBlock => "spin-block",
        WaitKind::SpinYield => "spin-yield",
    }
}

pub(crate) struct CoschedPolicy {
    scheme: Scheme,
    layout: CoschedLayout,
    spin_us: u32,
    cpus: Vec<u32>,
    files: Option<ClassFiles>,
    /// Per job: rank → (tid, CPU) pinned.
    pinned: Vec<BTreeMap<u32, (u32, u32)>>,
    next: Option<u64>,
    /// PB, PBT: one timer function per CPU (workstation), and who holds
    /// its boost now (job, pid, tid).
    boosters: Vec<PeriodicBooster>,
    boosted: Vec<Option<(usize, i32, i32)>>,
}

impl CoschedPolicy {
    pub(crate) fn new(spec: &RunSpec, topo: &MachineTopology) -> Result<CoschedPolicy> {
        let scheme = match spec.cosched_scheme {
            CoschedScheme::Dynamic(s) => s,
            other => {
                return Err(RuntimeError::Unsupported(format!(
                    "cosched_scheme {} under the cosched policy",
                    other.name()
                )))
            }
        };
        let boosters: Vec<PeriodicBooster> = match PeriodicBooster::new(scheme) {
            Some(b) => vec![b; topo.cpus.len()],
            None => Vec::new(),
        };
        Ok(CoschedPolicy {
            scheme,
            layout: spec.cosched_layout,
            spin_us: spec.cosched_spin_us,
            cpus: topo.cpus.clone(),
            files: None,
            pinned: vec![BTreeMap::new(); spec.jobs.len()],
            next: None,
            boosted: vec![None; boosters.len()],
            boosters,
        })
    }

    fn env(&self, i: usize) -> Vec<(String, String)> {
        let mut env = vec![
            (
                "PARSCHED_MPI_WAIT".to_string(),
                wait_env(self.scheme.wait).to_string(),
            ),
            ("PARSCHED_MPI_SPIN_US".to_string(), self.spin_us.to_string()),
        ];
        if let Some(p) = self.files.as_ref().and_then(|f| f.sync_path(i)) {
            env.push((SYNC_FILE_ENV.to_string(), p.to_string_lossy().into_owned()));
        }
        env
    }

    /// Every job's started ranks, as its statistics file says now (read once
    /// per timer run; nothing for jobs no longer live).
    fn read_all_ranks(&self, m: &Mechanism) -> Vec<Vec<RankView>> {
        (0..m.jobs().len())
            .map(|i| match self.files.as_ref().and_then(|f| f.sync_file(i)) {
                Some(f) if m.job(i).live() => read_ranks(f),
                _ => Vec::new(),
            })
            .collect()
    }

    /// Pins the ranks of job `i` that started since the last look.
    fn pin_new_ranks(&mut self, m: &mut Mechanism, i: usize, ranks: &[RankView]) -> Result<()> {
        for r in ranks {
            let rank = r.rank as u32;
            if self.pinned[i]
                .get(&rank)
                .is_some_and(|&(tid, _)| tid == r.tid)
            {
                continue;
            }
            let cpu = self.cpus[r.rank % self.cpus.len()];
            m.apply(Decision::PinThread {
                job: i,
                pid: r.pid as i32,
                tid: r.tid as i32,
                cpu,
            })?;
            self.pinned[i].insert(rank, (r.tid, cpu));
        }
        Ok(())
    }

    /// One run of every CPU's timer function: the last boost ends, the next
    /// is chosen from the ranks pinned to that CPU.
    fn periodic_boost(&mut self, m: &mut Mechanism, ranks: &[Vec<RankView>]) -> Result<()> {
        for (c, &cpu) in self.cpus.iter().enumerate() {
            if let Some((job, pid, tid)) = self.boosted[c].take() {
                m.apply(Decision::Boost {
                    job,
                    pid,
                    tid,
                    on: false,
                })?;
            }
            let here: Vec<(usize, RankView)> = ranks
                .iter()
                .enumerate()
                .flat_map(|(i, rs)| rs.iter().map(move |r| (i, *r)))
                .filter(|(i, r)| {
                    self.pinned[*i]
                        .get(&(r.rank as u32))
                        .is_some_and(|&(tid, on)| on == cpu && tid == r.tid)
                })
                .collect();
            let view: Vec<EndpointView> = here
                .iter()
                .map(|(_, r)| EndpointView {
                    state: if r.waiting == Waiting::Blocked {
                        ProcState::Blocked
                    } else {
                        ProcState::Ready
                    },
                    pending: r.pending.min(u32::MAX as u64) as u32,
                    last_arrival: Time(r.last_arrival_ns),
                    in_driver: r.waiting == Waiting::Blocked,
                })
                .collect();
            if let Some(BoostDecision::Boost(k) | BoostDecision::Wake(k)) =
                self.boosters[c].tick(&view)
            {
                let (job, r) = here[k];
                let (pid, tid) = (r.pid as i32, r.tid as i32);
                // The rank drops the boost itself once it has received
                // (the paper's point: run the destination until it has
                // absorbed its message); the controller ends it at the
                // next period in any case.
                if let Some(f) = &self.files {
                    let _ = f.flag_boost(job, r.rank);
                }
                m.apply(Decision::Boost {
                    job,
                    pid,
                    tid,
                    on: true,
                })?;
                self.boosted[c] = Some((job, pid, tid));
            }
        }
        Ok(())
    }
}

impl RuntimePolicy for CoschedPolicy {
    fn name(&self) -> &'static str {
        "cosched"
    }

    /// Jobs run in cgroups (never frozen) so that every rank, however deep
    /// in mpirun's process tree, is known to be the job's.
    fn needs(&self) -> Needs {
        Needs {
            freezer: true,
            cpusets: None,
        }
    }

    fn start(&mut self, m: &mut Mechanism) -> Result<()> {
        match ClassFiles::create(m.jobs().len(), true) {
            Ok(f) => self.files = Some(f),
            Err(e) => m.warn(format!(
                "no statistics files ({e}): the ranks are not pinned"
            )),
        }
        for i in 0..m.jobs().len() {
            let env = self.env(i);
            m.apply(Decision::Spawn { job: i, env })?;
        }
        if self.layout == CoschedLayout::Workstations && self.files.is_some() {
            self.next = Some(mono_ns() + PERIOD_NS);
        }
        Ok(())
    }

    fn next_deadline(&self) -> Option<u64> {
        self.next
    }

    fn on_timer(&mut self, m: &mut Mechanism, now: u64) -> Result<()> {
        let ranks = self.read_all_ranks(m);
        for (i, rs) in ranks.iter().enumerate() {
            self.pin_new_ranks(m, i, rs)?;
        }
        if !self.boosters.is_empty() {
            self.periodic_boost(m, &ranks)?;
        }
        self.next = Some(now + PERIOD_NS);
        Ok(())
    }

    fn annotate(&self, i: usize, r: &mut JobReport) {
        r.ranks = self.pinned[i]
            .iter()
            .map(|(&rank, &(_, cpu))| (rank, cpu))
            .collect();
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}
