//! The implicit-coscheduling schemes of seed 003 (spin-block, spin-yield,
//! DCS, periodic boost and their combinations: the core's
//! `parsched_core::policy::cosched::Scheme`): a component of the cluster
//! machine ([`Implicit`]) with its own state — each node's periodic boost
//! function, the daemons' period, the costs and the random stream of its
//! mechanisms. The machine calls it when a message arrives (interrupt, wake
//! or boost: [`ClusterMachine::implicit_arrival`]), when a receiver's spin
//! runs out ([`ClusterMachine::spin_limited`]), and on its own events (the
//! boost timer, the interface's samples, the daemons). The gang references
//! have none.

use super::*;

/// An implicit-coscheduling scheme's state in the machine.
pub(crate) struct Implicit {
    pub scheme: Scheme,
    /// Each node's periodic boost function (PB schemes; empty otherwise).
    boosters: Vec<PeriodicBooster>,
    /// The boost function's period and the cost of one invocation (ns).
    pub boost_period: u64,
    timer_cost: u64,
    /// A wake-up interrupt is lost with this probability.
    wake_loss: f64,
    /// PB-SB wakes blocked receivers by interrupt (false: only the timer).
    pb_sb_wake_interrupts: bool,
    /// The draws of lost wake-ups.
    rng: StreamRng,
    /// The daemons' period and activation (ns).
    daemon_period: u64,
    daemon_run: u64,
}

impl Implicit {
    pub fn new(cfg: &ClusterConfig, scheme: Scheme, seed: u64) -> Implicit {
        Implicit {
            scheme,
            boosters: (0..cfg.nodes)
                .filter_map(|_| PeriodicBooster::new(scheme))
                .map(|b| {
                    b.with_skip_running(cfg.pb_skip_running)
                        .with_wake_by_driver_flag(cfg.pb_sb_driver_flag)
                })
                .collect(),
            boost_period: ms(cfg.boost_period_ms),
            timer_cost: us(cfg.timer_us),
            wake_loss: cfg.wake_loss,
            pb_sb_wake_interrupts: cfg.pb_sb_wake_interrupts,
            rng: stream(seed, Stream::Policy, 0),
            daemon_period: ms(cfg.daemon_period_ms),
            daemon_run: us(cfg.daemon_run_us),
        }
    }

    /// The daemons' period (ns; 0: no daemons).
    pub fn daemon_period(&self) -> u64 {
        self.daemon_period
    }
}

impl ClusterMachine {
    fn implicit(&mut self) -> &mut Implicit {
        self.implicit.as_mut().expect("an implicit scheme")
    }

    /// Whether `p`'s receives spin for a limited time, then act.
    pub(super) fn spin_limited(&self, p: &Proc) -> bool {
        !p.daemon
            && self
                .implicit
                .as_ref()
                .is_some_and(|i| i.scheme.spins_then_acts())
    }

    /// A message reached launched process `dest` (of node `node`): the
    /// interface interrupts, wakes or boosts as the scheme decides.
    pub(super) fn implicit_arrival(
        &mut self,
        dest: u32,
        node: usize,
        now: u64,
        eng: &mut Engine<Ev>,
    ) {
        let pr = &self.procs[dest as usize];
        let view = EndpointView {
            state: pr.state,
            pending: pr.pending,
            last_arrival: Time(now),
            in_driver: pr.in_driver,
        };
        let believed = pr.believed;
        let imp = self.implicit();
        let scheme = imp.scheme;
        let mut decision = scheme.on_arrival(&view, believed);
        if decision == ArrivalDecision::InterruptWake
            && scheme.has_periodic_boost()
            && !imp.pb_sb_wake_interrupts
        {
            decision = ArrivalDecision::Deposit;
        }
        if decision.interrupts() {
            self.counters.interrupts += 1;
            self.counters.interrupt_ns += self.intr;
            self.interrupt(node, now, self.intr, eng);
        }
        match decision {
            ArrivalDecision::InterruptWake => {
                let imp = self.implicit();
                if imp.wake_loss > 0.0 && imp.rng.random::<f64>() < imp.wake_loss {
                    self.counters.lost_wakeups += 1;
                } else {
                    self.wake(dest, now, eng);
                }
            }
            ArrivalDecision::InterruptBoost => self.boost(dest, now, eng),
            ArrivalDecision::InterruptOnly | ArrivalDecision::Deposit => {}
        }
    }

    /// A node's periodic boost function runs: it wakes or boosts one
    /// process, as the core's `PeriodicBooster` decides (its target chosen
    /// by `hook` when given, the answer checked by the core; a refused one
    /// ends the run with [`ClusterError::Policy`]).
    pub(super) fn on_boost_timer(
        &mut self,
        node: usize,
        now: u64,
        eng: &mut Engine<Ev>,
        hook: Option<&mut dyn BoostChooser>,
    ) {
        self.counters.timer_invocations += 1;
        let cost = self.implicit().timer_cost;
        if cost > 0 {
            self.interrupt(node, now, cost, eng);
        }
        self.fill_view(node);
        let view = std::mem::take(&mut self.view);
        let booster = self.implicit().boosters.get_mut(node);
        let decision = match (booster, hook) {
            (Some(b), None) => b.tick(&view),
            (Some(b), Some(h)) => match b.tick_with(h, node, Time(now), &view) {
                Ok(d) => d,
                Err(e) => {
                    self.error = Some(ClusterError::Policy(e));
                    None
                }
            },
            (None, _) => None,
        };
        self.view = view;
        match decision {
            Some(BoostDecision::Wake(i)) => {
                let p = self.nodes[node].procs[i];
                self.wake(p, now, eng);
            }
            Some(BoostDecision::Boost(i)) => {
                let p = self.nodes[node].procs[i];
                self.boost(p, now, eng);
            }
            None => {}
        }
        let period = self.implicit().boost_period;
        eng.schedule_at(
            Time(now + period),
            Ev::BoostTimerFired { node: node as u32 },
        );
    }

    /// The network interface sampled which process runs (DCS).
    pub(super) fn on_nic_sampled(&mut self, node: u32, now: u64, eng: &mut Engine<Ev>) {
        for &p in &self.nodes[node as usize].procs {
            let pr = &mut self.procs[p as usize];
            pr.believed = pr.state == ProcState::Running;
        }
        eng.schedule_at(Time(now + self.nic_sample), Ev::NicSampled { node });
    }

    /// A node's daemon woke up: it wants the processor for its activation.
    pub(super) fn on_daemon_woke(&mut self, proc: u32, now: u64, eng: &mut Engine<Ev>) {
        if self.jobs_left > 0 {
            let run = self.implicit().daemon_run;
            let pr = &mut self.procs[proc as usize];
            pr.act = Act::Daemon;
            pr.left = run;
            self.make_ready(proc, now, eng);
        }
    }
}
