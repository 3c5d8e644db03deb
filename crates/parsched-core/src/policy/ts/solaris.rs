//! The Solaris time-sharing rules ([`TsSemantics::Solaris`]), one function
//! per rule of Solaris 8's `osnet_volume/usr/src/uts/common/disp/ts.c`
//! (public repository Arquivotheca/Solaris-8; line numbers below are that
//! file's). The table of rules, and how parsched's own rules differ, is
//! `docs/policies/time-sharing.md`.
//!
//! Not modelled: the kernel-priority path (`t_kpri_req`, `TSKPRI`,
//! `ts_kmdpris`). Solaris 8 requests a kernel priority only for a thread
//! holding certain kernel locks, never for a blocking receive, so the
//! machine's sleeps are all user-mode sleeps ([`TimeSharing::ts_sleep`]
//! takes the flag so the rule is complete, and ignores a request).
//! Preemption control (`schedctl`) and the interactive class (`TSIA`) are
//! not modelled either.

use super::{TimeSharing, TsSemantics};
use crate::ids::ThreadId;
use crate::policy::local::EnqueueReason;

impl TimeSharing {
    /// The condition every Solaris boost shares (`ts_sleep` l. 1346,
    /// `ts_setrun` l. 1291, `ts_trapret` l. 1602, `ts_wakeup` l. 1797):
    /// `ts_dispwait > ts_dptbl[ts_umdpri].ts_maxwait`.
    fn waited_past_maxwait(&self, thread: ThreadId) -> bool {
        let s = self
            .threads
            .get(thread.0 as usize)
            .copied()
            .unwrap_or_default();
        s.dispwait > self.table.level[self.level(thread) as usize].maxwait_s
    }

    /// The boost the four rules above give past `maxwait`: `ts_cpupri =
    /// ts_slpret`, a new quantum (`ts_timeleft = ts_quantum`), `ts_dispwait
    /// = 0`. Returns the new level; a queued thread is not moved.
    fn sleep_return(&mut self, thread: ThreadId) -> u8 {
        let to = self.table.level[self.base_level(thread) as usize].slpret;
        let s = self.state(thread);
        s.level = to;
        s.timeleft = None;
        s.dispwait = 0;
        s.unboosted = None;
        s.trapret = false;
        to
    }

    /// `ts_sleep` (l. 1323–1378): a thread going to sleep. With a
    /// kernel-priority request (`t_kpri_req`) Solaris gives it
    /// `ts_kmdpris[disp]` and marks it for `ts_trapret` (not modelled, see
    /// the module documentation); otherwise, past `maxwait`, it takes
    /// `ts_slpret` and a new quantum now; else nothing changes.
    pub(super) fn ts_sleep(&mut self, thread: ThreadId, kpri_req: bool) {
        if !kpri_req && self.waited_past_maxwait(thread) {
            self.sleep_return(thread);
        }
    }

    /// `ts_wakeup` (l. 1781–1821), and `ts_setrun` (l. 1283–1315), which
    /// applies the same rule to a thread made runnable otherwise: past
    /// `maxwait` the thread takes `ts_slpret` and a new quantum; otherwise
    /// it keeps its level and the rest of its quantum. Either way it goes
    /// to the back of its level's queue (`setbackdq`: the machine never
    /// wakes a thread in the tick it was last dispatched in, the case
    /// where Solaris uses `setfrontdq`).
    pub(super) fn ts_wakeup(&mut self, thread: ThreadId) {
        let level = if self.waited_past_maxwait(thread) {
            self.sleep_return(thread)
        } else {
            self.level(thread)
        };
        self.push(thread, level, false);
    }

    /// `ts_trapret` (l. 1587–1648): on the way back to user mode, a thread
    /// `ts_update` marked (or that slept at a kernel priority) takes
    /// `ts_slpret` and a new quantum past `maxwait`; else it keeps its
    /// level. A running thread it lowers below a queued one gives way
    /// (`cpu_surrender`: the machine's preemption check after the second).
    pub(super) fn ts_trapret(&mut self, thread: ThreadId) {
        if !self.state(thread).trapret {
            return;
        }
        self.state(thread).trapret = false;
        if self.waited_past_maxwait(thread) {
            self.sleep_return(thread);
        }
    }

    /// `ts_tick` (l. 1511–1577) at the quantum's end: `ts_cpupri =
    /// ts_tqexp`, `ts_dispwait = 0`, a new quantum, and to the back of the
    /// queue (`TSBACKQ`, then `ts_preempt` l. 1260). Returns the new level.
    fn ts_tick_expired(&mut self, thread: ThreadId) -> u8 {
        let to = self.table.level[self.base_level(thread) as usize].tqexp;
        let s = self.state(thread);
        s.level = to;
        s.dispwait = 0;
        s.timeleft = None;
        s.unboosted = None;
        s.trapret = false;
        to
    }

    /// `ts_preempt` (l. 1193–1281) without `TSBACKQ`: a thread preempted
    /// before its quantum ran out goes to the front of its level's queue
    /// (`setfrontdq`) and keeps its level and the rest of its quantum.
    fn ts_preempt(&mut self, thread: ThreadId) {
        let level = self.level(thread);
        self.push(thread, level, true);
    }

    /// `ts_yield` (l. 1827–1856): to the back of its level's queue, with its
    /// level and the rest of its quantum (the `ts_timeleft <= 0` branch is
    /// preemption control's, not modelled).
    fn ts_yield(&mut self, thread: ThreadId) {
        let level = self.level(thread);
        self.push(thread, level, false);
    }

    /// `ts_update` / `ts_update_list` (l. 1673–1769), once a second: every
    /// time-sharing thread's `ts_dispwait` grows by one, queued, running or
    /// asleep. Past `maxwait`, a queued thread (`TS_RUN`) moves to
    /// `ts_lwait` (to the back of that queue; it stays in place when the
    /// level does not change) with `ts_dispwait = 0`; any other thread is
    /// only marked for `ts_trapret` (`t_trapret = 1; aston`).
    pub(super) fn ts_update(&mut self) {
        for i in 0..self.threads.len() {
            let s = &mut self.threads[i];
            s.dispwait += 1;
            let entry = self.table.level[s.level as usize];
            if !s.queued && s.dispwait > entry.maxwait_s {
                s.trapret = true;
            }
        }
        let mut promote = Vec::new();
        for (level, q) in self.queues.iter().enumerate() {
            let entry = self.table.level[level];
            for &t in q {
                if self.threads[t.0 as usize].dispwait > entry.maxwait_s {
                    promote.push((t, level as u8, entry.lwait));
                }
            }
        }
        for (t, level, lwait) in promote {
            let s = self.state(t);
            s.dispwait = 0;
            s.unboosted = None;
            if lwait != level {
                self.unqueue(t);
                self.push(t, lwait, false);
            }
        }
    }

    /// [`LocalScheduler::enqueue`](crate::policy::local::LocalScheduler)
    /// under [`TsSemantics::Solaris`]: each reason by its rule.
    pub(super) fn solaris_enqueue(&mut self, thread: ThreadId, reason: EnqueueReason) {
        debug_assert_eq!(self.semantics, TsSemantics::Solaris);
        match reason {
            EnqueueReason::New => {
                let level = self.level(thread);
                self.push(thread, level, false);
            }
            EnqueueReason::QuantumExpired => {
                let level = self.ts_tick_expired(thread);
                self.push(thread, level, false);
            }
            EnqueueReason::Woken => self.ts_wakeup(thread),
            EnqueueReason::Yielded => self.ts_yield(thread),
            EnqueueReason::Preempted => self.ts_preempt(thread),
            EnqueueReason::Boosted => {
                let level = self.boost_to.target(&self.table, self.level(thread));
                self.push(thread, level, false);
            }
        }
    }

    /// The quantum at dispatch: the rest of `ts_timeleft`, or a full
    /// quantum of the thread's level when it has none left or starts anew.
    pub(super) fn solaris_quantum(&self, thread: ThreadId) -> u64 {
        let full =
            self.table.level[self.level(thread) as usize].quantum_ms as u64 * self.ticks_per_ms;
        match self.threads.get(thread.0 as usize).and_then(|s| s.timeleft) {
            Some(left) if left > 0 => left,
            _ => full,
        }
    }

    /// `ts_tick`'s `--ts_timeleft`: `thread` ran `ran_ns`.
    pub(super) fn solaris_charge(&mut self, thread: ThreadId, ran_ns: u64) {
        let ran = ran_ns.saturating_mul(self.ticks_per_ms) / 1_000_000;
        let full = self.solaris_quantum(thread);
        let s = self.state(thread);
        s.timeleft = Some(s.timeleft.unwrap_or(full).saturating_sub(ran));
    }
}

#[cfg(test)]
mod tests {
    use super::super::DispatchTable;
    use super::*;
    use crate::policy::local::LocalScheduler;

    fn t(i: u32) -> ThreadId {
        ThreadId(i)
    }

    /// A Solaris-rules queue over the stock table, 1 tick per ms (quanta
    /// in ms), new threads at `initial`.
    fn sol(initial: u8) -> TimeSharing {
        TimeSharing::new(DispatchTable::solaris(), 1, initial)
            .unwrap()
            .with_semantics(TsSemantics::Solaris)
    }

    fn dispatch(ts: &mut TimeSharing) -> ThreadId {
        ts.pick_next().expect("a thread is queued")
    }

    /// `ts_wakeup`: no boost while `ts_dispwait <= ts_maxwait`; the thread
    /// keeps its level and the rest of its quantum, to the back.
    #[test]
    fn ts_wakeup_keeps_level_and_quantum_left_before_maxwait() {
        let mut ts = sol(29);
        ts.enqueue(t(1), EnqueueReason::New);
        assert_eq!(dispatch(&mut ts), t(1));
        assert_eq!(ts.quantum(t(1)), 120); // level 29: 120 ms
        ts.charge(t(1), 30_000_000); // ran 30 ms
        ts.blocked(t(1));
        ts.enqueue(t(2), EnqueueReason::New);
        ts.enqueue(t(1), EnqueueReason::Woken);
        assert_eq!(
            ts.level(t(1)),
            29,
            "no ts_slpret without dispwait > maxwait"
        );
        assert_eq!(ts.quantum(t(1)), 90, "the rest of its quantum");
        assert_eq!(ts.queued(), vec![t(2), t(1)], "setbackdq");
        // parsched's rule: every wake-up boosts (level 29's slpret is 52).
        let mut p = TimeSharing::new(DispatchTable::solaris(), 1, 29).unwrap();
        p.enqueue(t(1), EnqueueReason::Woken);
        assert_eq!(p.level(t(1)), 52);
    }

    /// `ts_wakeup`: past `ts_maxwait` (a second's `ts_update` while asleep)
    /// the thread takes `ts_slpret` and a new quantum.
    #[test]
    fn ts_wakeup_boosts_to_slpret_after_dispwait_passes_maxwait() {
        let mut ts = sol(29);
        ts.enqueue(t(1), EnqueueReason::New);
        dispatch(&mut ts);
        ts.charge(t(1), 30_000_000);
        ts.blocked(t(1));
        ts.on_second(); // asleep: dispwait 1 > maxwait 0
        assert_eq!(ts.level(t(1)), 29, "ts_update does not move a sleeper");
        ts.enqueue(t(1), EnqueueReason::Woken);
        assert_eq!(ts.level(t(1)), 52);
        assert_eq!(ts.quantum(t(1)), 40, "a full quantum of level 52");
    }

    /// `ts_sleep`: past `ts_maxwait` the sleeper takes `ts_slpret` and a new
    /// quantum when it goes to sleep; otherwise nothing changes.
    #[test]
    fn ts_sleep_boosts_only_past_maxwait() {
        let mut ts = sol(10);
        ts.enqueue(t(1), EnqueueReason::New);
        dispatch(&mut ts);
        ts.charge(t(1), 50_000_000);
        ts.ts_sleep(t(1), false);
        assert_eq!((ts.level(t(1)), ts.quantum(t(1))), (10, 110));
        ts.on_second(); // running: dispwait 1, marked for trapret
        ts.ts_sleep(t(1), false);
        assert_eq!((ts.level(t(1)), ts.quantum(t(1))), (51, 40));
        assert!(!ts.threads[1].trapret, "the boost clears the mark");
    }

    /// `ts_trapret`: a marked thread takes `ts_slpret` past `ts_maxwait`; an
    /// unmarked one is untouched.
    #[test]
    fn ts_trapret_applies_slpret_only_to_marked_threads() {
        let mut ts = sol(52);
        ts.enqueue(t(1), EnqueueReason::New);
        dispatch(&mut ts);
        ts.ts_trapret(t(1));
        assert_eq!(ts.level(t(1)), 52, "not marked");
        ts.on_second();
        assert!(ts.threads[1].trapret);
        ts.on_second_running(t(1));
        assert_eq!(ts.level(t(1)), 58, "level 52's slpret, not its lwait 59");
        assert_eq!(ts.threads[1].dispwait, 0);
        assert!(!ts.threads[1].trapret);
    }

    /// `ts_update`: queued threads age to `ts_lwait`; a running thread is
    /// only marked, so it no longer ties with them (parsched's rule ages it
    /// to `ts_lwait` too).
    #[test]
    fn ts_update_ages_queued_threads_and_marks_running_ones() {
        let mut ts = sol(52);
        ts.enqueue(t(1), EnqueueReason::New);
        ts.enqueue(t(2), EnqueueReason::New);
        assert_eq!(dispatch(&mut ts), t(1));
        ts.on_second();
        assert_eq!(ts.level(t(2)), 59, "queued: lwait");
        assert_eq!(ts.level(t(1)), 52, "running: unchanged until trapret");
        assert!(ts.threads[1].trapret && !ts.threads[2].trapret);
        ts.on_second_running(t(1));
        assert!(ts.level(t(1)) < ts.level(t(2)), "the runner yields");
        let mut p = TimeSharing::new(DispatchTable::solaris(), 1, 52).unwrap();
        p.enqueue(t(1), EnqueueReason::New);
        p.enqueue(t(2), EnqueueReason::New);
        p.pick_next();
        p.on_second();
        p.on_second_running(t(1));
        assert_eq!(p.level(t(1)), p.level(t(2)), "parsched: a tie at lwait");
    }

    /// `ts_update_list`: a queued thread whose `ts_lwait` is its own level
    /// stays in place ("it should just round-robin here").
    #[test]
    fn ts_update_leaves_a_thread_in_place_when_lwait_is_its_level() {
        let mut ts = sol(50);
        for i in 1..=3 {
            ts.enqueue(t(i), EnqueueReason::New);
        }
        ts.boost(t(1)); // 59 (maxwait 32000)
        ts.on_second(); // 50's lwait is 59: t2, t3 follow t1 there
        assert_eq!(ts.queued(), vec![t(1), t(2), t(3)]);
        let mut lw = sol(39); // 39's lwait is 54 — moves
        lw.enqueue(t(1), EnqueueReason::New);
        lw.on_second();
        assert_eq!(lw.level(t(1)), 54);
    }

    /// `ts_tick`: at the quantum's end `ts_tqexp`, `ts_dispwait = 0`, a new
    /// quantum, to the back.
    #[test]
    fn ts_tick_expiry_drops_to_tqexp_with_a_new_quantum() {
        let mut ts = sol(40);
        ts.enqueue(t(1), EnqueueReason::New);
        ts.enqueue(t(2), EnqueueReason::New);
        dispatch(&mut ts);
        ts.charge(t(1), 40_000_000);
        ts.enqueue(t(1), EnqueueReason::QuantumExpired);
        assert_eq!(ts.level(t(1)), 30);
        assert_eq!(ts.quantum(t(1)), 80);
        assert_eq!(ts.queued(), vec![t(2), t(1)]);
    }

    /// `ts_preempt`: before the quantum's end, to the front with the rest of
    /// the quantum.
    #[test]
    fn ts_preempt_goes_to_the_front_with_the_rest_of_the_quantum() {
        let mut ts = sol(40);
        ts.enqueue(t(2), EnqueueReason::New);
        ts.enqueue(t(1), EnqueueReason::New);
        assert_eq!(dispatch(&mut ts), t(2));
        ts.charge(t(2), 15_000_000);
        ts.enqueue(t(2), EnqueueReason::Preempted);
        assert_eq!(ts.queued(), vec![t(2), t(1)]);
        assert_eq!((ts.level(t(2)), ts.quantum(t(2))), (40, 25));
    }

    /// `ts_yield`: to the back, with its level and the rest of its quantum.
    #[test]
    fn ts_yield_goes_to_the_back_with_the_rest_of_the_quantum() {
        let mut ts = sol(40);
        ts.enqueue(t(2), EnqueueReason::New);
        ts.enqueue(t(1), EnqueueReason::New);
        assert_eq!(dispatch(&mut ts), t(2));
        ts.charge(t(2), 10_000_000);
        ts.enqueue(t(2), EnqueueReason::Yielded);
        assert_eq!(ts.queued(), vec![t(1), t(2)]);
        assert_eq!((ts.level(t(2)), ts.quantum(t(2))), (40, 30));
    }
}
