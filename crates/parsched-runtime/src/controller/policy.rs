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
//! [`POLICIES`] is the one list of policies: each policy's file
//! (`default.rs`, `pools.rs`, `gang.rs`, `fcs.rs`, `regions.rs`,
//! `cosched.rs`) declares its [`PolicyEntry`] — name, doc, its table of the
//! run spec ([`Fragment`], on the schema machinery of the models) and
//! constructor — and [`build`] looks the spec's policy up there. Adding a
//! runtime policy: its file, plus one line in [`POLICIES`] (and, if it has a
//! table, its field in `RunSpec`).

use super::mechanism::Mechanism;
use crate::error::Result;
use crate::spec::{JobReport, RunSpec};
use crate::topology::MachineTopology;
use parsched_core::policy::fcs::Step;
use parsched_core::schema::{KeyInfo, Schema};
use parsched_core::{ConfigError, Value};
use serde::Serialize;

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

/// A constructor of a policy for a run on a topology.
pub(crate) type Build = fn(&RunSpec, &MachineTopology) -> Result<Box<dyn RuntimePolicy>>;

/// A policy's own table of the run spec (`[fcs]`, `[cosched]`), declared in
/// the policy's file on the schema machinery of the models
/// ([`parsched_core::schema`]): its keys, kinds, defaults and docs are the
/// fragment's [`Schema`](parsched_core::schema::Schema); TOML, Python and
/// `parsched run --help` take them from it.
pub(crate) struct Fragment {
    /// The table's name in the run spec (`fcs` for `[fcs]`).
    pub(crate) table: &'static str,
    /// The flat spellings of its keys still accepted at the top level of a
    /// spec (`fcs_window_s` for `[fcs] window_s`): `(flat, key)`.
    pub(crate) flat: &'static [(&'static str, &'static str)],
    /// Every key with its default.
    pub(crate) describe: fn() -> Vec<KeyInfo>,
    /// Sets one key of the spec's table (errors name the key).
    pub(crate) set: fn(&mut RunSpec, &str, &Value) -> std::result::Result<(), ConfigError>,
    /// The table's checks (per-key ranges, then its own cross-key checks),
    /// errors naming `table.key`.
    pub(crate) check: fn(&RunSpec) -> std::result::Result<(), ConfigError>,
    /// The table's keys and values (for serialising a spec).
    pub(crate) values: fn(&RunSpec) -> serde_json::Map<String, serde_json::Value>,
}

/// One runtime policy: its name, other names, one-paragraph doc, its table
/// of the run spec (if it has one) and its constructor. Each policy's file
/// declares its entry (`ENTRY`); [`POLICIES`] lists them.
pub(crate) struct PolicyEntry {
    pub(crate) name: &'static str,
    pub(crate) aliases: &'static [&'static str],
    pub(crate) doc: &'static str,
    pub(crate) fragment: Option<&'static Fragment>,
    pub(crate) build: Build,
}

/// Every runtime policy, in the order `parsched run --help` lists them: the
/// one place policies are listed.
pub(crate) static POLICIES: &[&PolicyEntry] = &[
    &super::gang::ENTRY,
    &super::pools::ENTRY,
    &super::fcs::ENTRY,
    &super::regions::ENTRY,
    &super::cosched::ENTRY,
    &super::default::ENTRY,
];

/// The policy of the spec when it names none.
pub(crate) const DEFAULT_POLICY: &str = "gang";

/// The entry of the policy called `name` (or one of its aliases).
pub(crate) fn entry(name: &str) -> Option<&'static PolicyEntry> {
    POLICIES
        .iter()
        .copied()
        .find(|e| e.name == name || e.aliases.contains(&name))
}

/// Every policy's name and alias, for error messages.
pub(crate) fn names() -> String {
    let mut out = Vec::new();
    for e in POLICIES {
        out.push(e.name.to_string());
        out.extend(e.aliases.iter().map(|a| format!("{a} (= {})", e.name)));
    }
    out.join(", ")
}

/// Every key of `cfg` with its value, through `schema`'s getters (for
/// serialising a spec).
pub(crate) fn schema_values<C>(
    schema: &Schema<C>,
    cfg: &C,
) -> serde_json::Map<String, serde_json::Value> {
    // (an unset optional key is left out: absent is how a spec leaves it unset)
    schema
        .fields
        .iter()
        .map(|f| {
            (
                f.key,
                serde_json::to_value((f.get)(cfg)).unwrap_or_default(),
            )
        })
        .filter(|(_, v)| !v.is_null())
        .map(|(k, v)| (k.to_string(), v))
        .collect()
}

/// Every fragment, in [`POLICIES`] order.
pub(crate) fn fragments() -> impl Iterator<Item = &'static Fragment> {
    POLICIES.iter().filter_map(|e| e.fragment)
}

/// What a runtime policy is, as the bindings and `parsched run --help` show
/// it: the key descriptions have the shape of the models' schemas.
#[derive(Debug, Clone, Serialize)]
pub struct PolicyInfo {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub doc: &'static str,
    /// Whether it is the policy of a spec that names none.
    pub default: bool,
    /// The policy's table in the run spec (`fcs` for `[fcs]`), if it has one.
    pub table: Option<&'static str>,
    /// The table's keys (empty without one).
    pub keys: Vec<KeyInfo>,
    /// The flat spellings still accepted at the top level: `(flat, key)`.
    pub flat: &'static [(&'static str, &'static str)],
}

/// Every runtime policy described, in `POLICIES` order.
pub fn policies() -> Vec<PolicyInfo> {
    POLICIES
        .iter()
        .map(|e| PolicyInfo {
            name: e.name,
            aliases: e.aliases,
            doc: e.doc,
            default: e.name == DEFAULT_POLICY,
            table: e.fragment.map(|f| f.table),
            keys: e.fragment.map(|f| (f.describe)()).unwrap_or_default(),
            flat: e.fragment.map_or(&[], |f| f.flat),
        })
        .collect()
}

/// The implementation of `spec.policy` on `topo`: its entry's constructor.
pub(crate) fn build(spec: &RunSpec, topo: &MachineTopology) -> Result<Box<dyn RuntimePolicy>> {
    let e = entry(spec.policy.name()).ok_or_else(|| {
        ConfigError::new(
            "policy",
            format!("unknown policy {:?}", spec.policy.name()),
            names(),
        )
    })?;
    (e.build)(spec, topo)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Policy;
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
            (
                Policy::named("default").unwrap(),
                false,
                "default",
                false,
                None,
            ),
            (Policy::named("gang").unwrap(), false, "gang", true, None),
            (Policy::named("fcs").unwrap(), false, "fcs", true, None),
            (
                Policy::named("pools").unwrap(),
                false,
                "pools",
                false,
                Some("pools"),
            ),
            (
                Policy::named("regions").unwrap(),
                false,
                "regions",
                false,
                None,
            ),
            (
                Policy::named("regions").unwrap(),
                true,
                "regions",
                false,
                Some("regions"),
            ),
            (
                Policy::named("cosched").unwrap(),
                false,
                "cosched",
                true,
                None,
            ),
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

    #[test]
    fn every_listed_policy_is_named_once_built_by_its_entry_and_described() {
        let topo = MachineTopology::explicit(Topology::flat(4).unwrap(), vec![0, 1, 2, 3]).unwrap();
        let info = policies();
        assert_eq!(info.len(), POLICIES.len());
        let mut seen: Vec<&str> = Vec::new();
        for (e, i) in POLICIES.iter().zip(&info) {
            for n in std::iter::once(&e.name).chain(e.aliases) {
                assert!(!seen.contains(n), "{n} twice");
                seen.push(n);
                assert_eq!(Policy::named(n).unwrap().name(), e.name);
            }
            assert_eq!(i.name, e.name);
            let p = build(&spec(Policy::named(e.name).unwrap(), false), &topo).unwrap();
            assert_eq!(p.name(), e.name);
            // a table's keys are described with their defaults
            assert_eq!(i.keys.is_empty(), e.fragment.is_none(), "{}", e.name);
        }
        let fcs = info.iter().find(|i| i.name == "fcs").unwrap();
        assert_eq!(fcs.table, Some("fcs"));
        assert!(fcs.keys.iter().any(|k| k.key == "dc_min_share"));
        let cosched = info.iter().find(|i| i.name == "cosched").unwrap();
        let scheme = cosched.keys.iter().find(|k| k.key == "scheme").unwrap();
        assert_eq!(
            scheme.kind,
            parsched_core::schema::Kind::Choice {
                choices: &parsched_core::policy::cosched::TABLE1_NAMES
            }
        );
        assert_eq!(scheme_names_len(), 10);
        assert!(Policy::named("fifo").is_err());
    }

    fn scheme_names_len() -> usize {
        parsched_core::policy::cosched::TABLE1_NAMES.len()
    }
}
