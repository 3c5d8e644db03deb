//! The runtime's policies behind one trait, in the spirit of Linux's
//! `sched_ext_ops`: the controller's loop is the mechanism (timer, pidfds,
//! signals, freezing, affinity, cpusets, reaping, safety, statistics:
//! [`Mechanism`]); a policy only observes and decides, through the callbacks
//! of [`RuntimePolicy`], and hands its decisions to the mechanism as data
//! ([`Decision`], carried out at once by [`Mechanism::apply`]).
//!
//! The loop ([`super::Controller::run`]):
//!
//! 1. [`RuntimePolicy::start`] — start the jobs (each job's
//!    [`Decision::Spawn`] is the policy's: it decides when and how confined);
//! 2. until every job is reported: sleep until a job exits, a signal
//!    arrives, [`RuntimePolicy::next_deadline`] passes or the policy's
//!    [`RuntimePolicy::event_fd`] becomes readable; reap the jobs that
//!    exited (each gets its report, then [`RuntimePolicy::on_job_exit`] and
//!    [`RuntimePolicy::annotate`]); then [`RuntimePolicy::on_event`] if the
//!    descriptor was readable, and [`RuntimePolicy::on_timer`] if the
//!    deadline passed, else [`RuntimePolicy::on_exit`] if jobs exited;
//! 3. on a signal or an error, every job is thawed and signalled,
//!    [`RuntimePolicy::on_stop`] names the jobs that never started, and the
//!    jobs are reaped; [`RuntimePolicy::finish`] releases the policy's own
//!    resources.
//!
//! [`build`] is the one place that looks at [`Policy`]: it constructs the
//! implementation (`default.rs`, `pools.rs`, `gang.rs`, `fcs.rs`,
//! `regions.rs`, `cosched.rs`).

use super::cosched::CoschedPolicy;
use super::default::DefaultPolicy;
use super::fcs::FcsPolicy;
use super::gang::GangPolicy;
use super::mechanism::Mechanism;
use super::pools::PoolsPolicy;
use super::regions::RegionsPolicy;
use crate::error::Result;
use crate::spec::{JobReport, Policy, RunSpec};
use crate::topology::MachineTopology;
use parsched_core::policy::fcs::Step;

#[cfg(doc)]
use super::mechanism::Decision;

/// What a policy needs the mechanism to open for it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Needs {
    /// A cgroup freezer (else jobs are never frozen and signals do).
    pub(crate) freezer: bool,
    /// Cpuset groups, for the policy named (without them, affinity only).
    pub(crate) cpusets: Option<&'static str>,
}

/// A runtime policy: observation and decision callbacks (see the module
/// documentation for when each is called).
pub(crate) trait RuntimePolicy: Send {
    /// The policy's name (as in the spec).
    fn name(&self) -> &'static str;

    /// What the mechanism must open for it.
    fn needs(&self) -> Needs {
        Needs::default()
    }

    /// Starts the jobs.
    fn start(&mut self, m: &mut Mechanism) -> Result<()>;

    /// When the policy wants [`RuntimePolicy::on_timer`] next (absolute
    /// CLOCK_MONOTONIC ns); `None`: no timer, it acts only on exits.
    fn next_deadline(&self) -> Option<u64> {
        None
    }

    /// The deadline passed (`now`: CLOCK_MONOTONIC ns at the wake-up).
    fn on_timer(&mut self, _m: &mut Mechanism, _now: u64) -> Result<()> {
        Ok(())
    }

    /// A descriptor the loop also waits on (readable: [`RuntimePolicy::on_event`]),
    /// for a policy that must act on its jobs' events at once (cosched's
    /// arrival actions, woken by the MPI library).
    fn event_fd(&self) -> Option<std::os::fd::RawFd> {
        None
    }

    /// [`RuntimePolicy::event_fd`] became readable (`now`: CLOCK_MONOTONIC ns).
    fn on_event(&mut self, _m: &mut Mechanism, _now: u64) -> Result<()> {
        Ok(())
    }

    /// Jobs exited (and the deadline did not pass).
    fn on_exit(&mut self, _m: &mut Mechanism) -> Result<()> {
        Ok(())
    }

    /// Job `i` exited and was reported: forget it.
    fn on_job_exit(&mut self, _m: &mut Mechanism, _i: usize) -> Result<()> {
        Ok(())
    }

    /// Adds what the policy knows of job `i` to its report.
    fn annotate(&self, _i: usize, _r: &mut JobReport) {}

    /// The run stops (a signal or an error; every job was thawed): returns
    /// the jobs that will never start (waiting for admission).
    fn on_stop(&mut self, _m: &mut Mechanism) -> Vec<usize> {
        Vec::new()
    }

    /// Releases the policy's own resources (after the jobs exited).
    fn finish(&mut self) {}

    /// What the policy counted of the run (FCS's `dc_slots`, cosched's
    /// `boosts`, regions' `regions`): its keys join the controller's
    /// statistics ([`super::ControllerStats::policy`]). Asked once, when the
    /// run ends; `m` for what the mechanism counted on the policy's behalf.
    fn report(&self, _m: &Mechanism) -> PolicyReport {
        PolicyReport::new()
    }

    /// Records the policy's inputs and decisions from now on, for replay
    /// (FCS: the core policy's log; others record nothing).
    fn record_decisions(&mut self) {}

    /// What [`RuntimePolicy::record_decisions`] recorded (empty if nothing).
    fn decisions(&self) -> &[Step] {
        &[]
    }
}

/// A policy's own statistics: keys (as in the run's JSON) and values.
pub type PolicyReport = serde_json::Map<String, serde_json::Value>;

/// The implementation of `spec.policy` on `topo`.
pub(crate) fn build(spec: &RunSpec, topo: &MachineTopology) -> Result<Box<dyn RuntimePolicy>> {
    Ok(match spec.policy {
        Policy::Default => Box::new(DefaultPolicy),
        Policy::Gang => Box::new(GangPolicy::plain(spec, topo)?),
        Policy::Fcs => Box::new(FcsPolicy::new(spec, topo)?),
        Policy::Pools => Box::new(PoolsPolicy::new(spec, topo)?),
        Policy::Regions => Box::new(RegionsPolicy::new(spec, topo)),
        Policy::Cosched => Box::new(CoschedPolicy::new(spec, topo)?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use parsched_core::topology::Topology;

    fn spec(policy: Policy, cpusets: bool) -> RunSpec {
        let mut s = RunSpec {
            policy,
            ..Default::default()
        };
        s.regions.cpusets = cpusets;
        s
    }

    #[test]
    fn build_constructs_each_policy_with_what_it_needs() {
        let topo = MachineTopology::explicit(Topology::flat(4).unwrap(), vec![0, 1, 2, 3]).unwrap();
        let cases = [
            (Policy::Default, false, "default", false, None),
            (Policy::Gang, false, "gang", true, None),
            (Policy::Fcs, false, "fcs", true, None),
            (Policy::Pools, false, "pools", false, Some("pools")),
            (Policy::Regions, false, "regions", false, None),
            (Policy::Regions, true, "regions", false, Some("regions")),
            (Policy::Cosched, false, "cosched", true, None),
        ];
        for (policy, cpusets, name, freezer, sets) in cases {
            let p = build(&spec(policy, cpusets), &topo).unwrap();
            assert_eq!(p.name(), name);
            assert_eq!(
                p.needs(),
                Needs {
                    freezer,
                    cpusets: sets
                },
                "{name}"
            );
            // Only the timed policies ask to be woken before an exit.
            assert_eq!(p.next_deadline(), None, "{name}: no deadline before start");
        }
    }
}
