//! The controller applies what a policy decides: a scripted policy (one
//! decision per timer tick) run with the Mock freezer, which records what
//! the mechanism did.

use super::mechanism::{Decision, Mechanism};
use super::policy::PolicyReport;
use super::policy::RuntimePolicy;
use super::*;
use crate::cgroup::{Mock, MockCall};
use crate::spec::{JobSpec, Policy};
use parsched_core::topology::Topology;

/// Starts every job, then applies one scripted decision per tick.
struct Script {
    script: Vec<Decision>,
    next: usize,
    period_ns: u64,
    deadline: Option<u64>,
    /// (job, whether it had its report) at each `on_job_exit`.
    exits: Vec<(usize, bool)>,
    exit_wakeups: u32,
    /// Jobs not started (given back by `on_stop`).
    held: Vec<usize>,
    /// Raise SIGHUP at this tick instead of applying a decision.
    hangup_at: Option<usize>,
    /// Job 0's leader once the script is done: its allowed CPUs and
    /// scheduling policy.
    seen: Option<(Option<Vec<u32>>, i32)>,
}

impl Script {
    fn new(script: Vec<Decision>) -> Script {
        Script {
            script,
            next: 0,
            period_ns: 10_000_000,
            deadline: None,
            exits: Vec::new(),
            exit_wakeups: 0,
            held: Vec::new(),
            hangup_at: None,
            seen: None,
        }
    }
}

impl RuntimePolicy for Script {
    fn name(&self) -> &'static str {
        "script"
    }

    fn start(&mut self, m: &mut Mechanism) -> Result<()> {
        for i in 0..m.jobs().len() {
            if !self.held.contains(&i) {
                m.apply(Decision::spawn(i))?;
            }
        }
        self.deadline = Some(mono_ns() + self.period_ns);
        Ok(())
    }

    fn next_deadline(&self) -> Option<u64> {
        self.deadline
    }

    fn on_timer(&mut self, m: &mut Mechanism, now: u64) -> Result<()> {
        if self.hangup_at == Some(self.next) {
            // SAFETY: the controller's signal guard is installed.
            unsafe { libc::raise(libc::SIGHUP) };
            self.deadline = None;
            return Ok(());
        }
        if let Some(d) = self.script.get(self.next).cloned() {
            m.apply(d)?;
            self.next += 1;
            self.deadline = Some(now + self.period_ns);
        } else {
            // The script is done: no timer any more, exits only.
            self.deadline = None;
            if let Some(pid) = m.job(0).pid().filter(|_| m.job(0).live()) {
                let allowed = crate::procfs::cpus_allowed(pid, pid);
                // SAFETY: plain query of our child.
                let policy = unsafe { libc::sched_getscheduler(pid) };
                self.seen = Some((allowed, policy));
            }
        }
        Ok(())
    }

    fn on_exit(&mut self, _m: &mut Mechanism) -> Result<()> {
        self.exit_wakeups += 1;
        Ok(())
    }

    fn on_job_exit(&mut self, m: &mut Mechanism, i: usize) -> Result<()> {
        let reported = m.report_mut(i).is_some();
        self.exits.push((i, reported));
        Ok(())
    }

    fn annotate(&self, i: usize, r: &mut JobReport) {
        r.pool = Some(100 + i as u32);
    }

    fn on_stop(&mut self, _m: &mut Mechanism) -> Vec<usize> {
        std::mem::take(&mut self.held)
    }

    /// Its records, through the report (as any policy's counters).
    fn report(&self, _m: &Mechanism) -> PolicyReport {
        let v = serde_json::json!({
            "next": self.next,
            "exits": self.exits,
            "exit_wakeups": self.exit_wakeups,
            "seen": self.seen,
        });
        v.as_object().cloned().unwrap_or_default()
    }
}

/// No unit test raising a signal runs meanwhile.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    crate::safety::SIGNAL_TESTS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
}

fn spec(jobs: &[&str]) -> RunSpec {
    RunSpec {
        policy: Policy::named("default").unwrap(),
        topology: Some(Topology::flat(2).unwrap()),
        cpus: Some(vec![0, 1]),
        realtime: false,
        supervisor: false,
        recover: false,
        jobs: jobs.iter().map(|s| JobSpec::new(["sleep", s])).collect(),
        ..Default::default()
    }
}

#[test]
fn the_controller_applies_a_policys_decisions_in_order() {
    use Decision::*;
    let _serial = serial();
    let script = vec![
        Freeze(0),
        Freeze(1),
        // Already frozen: nothing reaches the freezer.
        RequestFreeze(1),
        Thaw(0),
        Thaw(1),
        Freeze(0),
        ThawOutsideSlot(0),
        SetWidth(1, 7),
    ];
    let n = script.len();
    let mock = Mock::new();
    let log = mock.log();
    let mut c = Controller::with_policy(
        spec(&["1.5", "1.5"]),
        Box::new(mock),
        Box::new(Script::new(script)),
    )
    .unwrap();
    assert_eq!(c.policy_name(), "script");
    let reports = c.run().unwrap();
    assert!(reports.iter().all(|r| r.success), "{reports:?}");
    let ops: Vec<MockCall> = log
        .lock()
        .unwrap()
        .iter()
        .filter(|c| matches!(c, MockCall::Freeze(_) | MockCall::Thaw(_)))
        .cloned()
        .collect();
    let f = |g: &str| MockCall::Freeze(g.into());
    let t = |g: &str| MockCall::Thaw(g.into());
    assert_eq!(
        ops,
        [
            f("job0"),
            f("job1"),
            t("job0"),
            t("job1"),
            f("job0"),
            t("job0")
        ]
    );
    // Thaw counts a slot; a thaw outside one does not.
    assert_eq!(reports[0].slots_run, 1);
    assert_eq!(reports[1].slots_run, 1);
    assert_eq!(reports[1].width, 7);
    // Frozen for at least one tick each time.
    assert!(reports[0].suspended_s >= 0.015, "{reports:?}");
    assert!(reports[1].suspended_s >= 0.015, "{reports:?}");
    // The policy's report additions.
    assert_eq!(reports[0].pool, Some(100));
    assert_eq!(reports[1].pool, Some(101));
    // The policy's records reach the run's statistics through its report.
    let st = c.stats();
    assert_eq!(
        st.reported::<usize>("next"),
        Some(n),
        "every decision applied"
    );
    let mut exits: Vec<(usize, bool)> = st.reported("exits").unwrap();
    exits.sort_unstable();
    assert_eq!(exits, [(0, true), (1, true)], "each exit once, reported");
    assert!(st.reported::<u32>("exit_wakeups").unwrap() >= 1);
    let json = serde_json::to_value(st).unwrap();
    assert_eq!(json["next"], n, "{json}");
}

#[test]
fn a_policy_without_a_timer_is_woken_by_exits_only() {
    let _serial = serial();
    let mock = Mock::new();
    let log = mock.log();
    let mut script = Script::new(vec![Decision::Freeze(0)]);
    // A deadline far away: the one decision is never applied.
    script.period_ns = 3_600_000_000_000;
    let mut c = Controller::with_policy(spec(&["0.05"]), Box::new(mock), Box::new(script)).unwrap();
    let reports = c.run().unwrap();
    assert!(reports[0].success);
    assert!(!log
        .lock()
        .unwrap()
        .iter()
        .any(|c| matches!(c, MockCall::Freeze(_))));
    assert_eq!(c.stats().reported::<usize>("next"), Some(0));
    assert_eq!(
        c.stats().reported::<Vec<(usize, bool)>>("exits").unwrap(),
        [(0, true)]
    );
    // One wake-up per event: the exit (no timer fired).
    assert_eq!(c.stats().wakeups, 1);
}

#[test]
fn a_signal_stops_the_jobs_thawed_and_reports_those_the_policy_never_started() {
    let _serial = serial();
    let mock = Mock::new();
    let log = mock.log();
    let mut script = Script::new(vec![Decision::Freeze(0)]);
    script.held = vec![1];
    script.hangup_at = Some(1);
    let mut c =
        Controller::with_policy(spec(&["30", "30"]), Box::new(mock), Box::new(script)).unwrap();
    let t = Instant::now();
    let reports = c.run().unwrap();
    assert!(
        t.elapsed() < Duration::from_secs(10),
        "stopped, not run out"
    );
    // The frozen job was thawed to receive the signal, and died of it.
    let calls = log.lock().unwrap().clone();
    let ops: Vec<&MockCall> = calls
        .iter()
        .filter(|c| matches!(c, MockCall::Freeze(_) | MockCall::Thaw(_)))
        .collect();
    assert_eq!(
        ops,
        [
            &MockCall::Freeze("job0".into()),
            &MockCall::Thaw("job0".into())
        ]
    );
    assert_eq!(reports[0].status.signal, Some(libc::SIGHUP), "{reports:?}");
    // The held job never started: reported, not run, no group.
    assert_eq!((reports[1].pid, reports[1].success), (0, false));
    assert!(!calls.contains(&MockCall::Create("job1".into())));
    assert!(c.warnings().iter().any(|w| w.contains("received signal")));
}

#[test]
fn confine_and_set_idle_reach_the_jobs_threads() {
    let _serial = serial();
    let script = vec![
        Decision::Confine {
            job: 0,
            cpus: vec![0],
        },
        Decision::SetIdle(0, true),
    ];
    let mut c = Controller::with_policy(
        spec(&["0.5"]),
        Box::new(Mock::new()),
        Box::new(Script::new(script)),
    )
    .unwrap();
    let reports = c.run().unwrap();
    assert!(reports[0].success, "{reports:?}");
    assert_eq!(
        reports[0].cpus,
        [0],
        "the report says where it was confined"
    );
    let seen: Option<(Option<Vec<u32>>, i32)> = c.stats().reported("seen").unwrap();
    let (allowed, policy) = seen.expect("seen while it ran");
    assert_eq!(allowed.as_deref(), Some(&[0u32][..]));
    assert_eq!(policy, libc::SCHED_IDLE);
}
