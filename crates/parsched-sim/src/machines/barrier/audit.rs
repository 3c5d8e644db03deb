//! Invariant checks after every event (`SyncOptions::audit`).

use super::*;

impl<L: LocalScheduler> SyncMachine<L> {
    /// Invariants (audit mode).
    pub(super) fn check(&self, now: Time) -> Result<(), MachineError> {
        let err = |msg: String| MachineError::Invariant {
            time: now.as_units(),
            msg,
        };
        let mut seen = vec![0u8; self.threads.len()];
        for (i, proc) in self.procs.iter().enumerate() {
            if proc.thread != NONE {
                let th = proc.thread as usize;
                let t = &self.threads[th];
                if t.state != St::Running || t.proc != i as u32 {
                    return Err(err(format!(
                        "processor {i} holds thread {th} in state {:?} pinned to {}",
                        t.state, t.proc
                    )));
                }
                if self.params.sched == SyncSched::Gang {
                    let slot = self.gang.matrix().slot_of(GangId(t.gang as u64));
                    if slot.is_none() || slot != self.gang.current() {
                        return Err(err(format!(
                            "thread {th} of gang {} runs outside its slot ({slot:?}, current {:?})",
                            t.gang,
                            self.gang.current()
                        )));
                    }
                }
                seen[th] += 1;
            }
            for ThreadId(q) in proc.queue.queued() {
                let t = &self.threads[q as usize];
                if t.state != St::Ready || t.proc != i as u32 {
                    return Err(err(format!(
                        "thread {q} queued on {i} is {:?}, pinned to {}",
                        t.state, t.proc
                    )));
                }
                seen[q as usize] += 1;
            }
            if self.params.sched == SyncSched::Gang && !proc.queue.is_empty() {
                return Err(err("gang scheduling uses no run queues".into()));
            }
        }
        if let Some(t) = seen.iter().position(|&c| c > 1) {
            return Err(err(format!("thread {t} is in two places at once")));
        }
        if let (SyncSched::Gang, Some(s)) = (self.params.sched, self.gang.current()) {
            // Coscheduling: every thread of the current slot's gangs that can
            // run holds its processor (all of a gang's threads run together).
            for (th, t) in self.threads.iter().enumerate() {
                if t.state == St::Ready
                    && self.gang.matrix().slot_of(GangId(t.gang as u64)) == Some(s)
                {
                    return Err(err(format!(
                        "thread {th} of gang {} is ready but not running in its gang's slot",
                        t.gang
                    )));
                }
            }
        }
        for (gi, g) in self.gangs.iter().enumerate() {
            let mut runnable = 0;
            let mut waiting = 0;
            for (th, t) in self.threads.iter().enumerate() {
                if t.gang as usize != gi {
                    continue;
                }
                if matches!(t.state, St::Ready | St::Running) {
                    runnable += 1;
                }
                if t.waiting {
                    waiting += 1;
                }
                if t.state == St::Blocked && (!t.waiting || seen[th] != 0) {
                    return Err(err(format!(
                        "blocked thread {th} is not waiting or holds a processor/queue place"
                    )));
                }
                if self.params.sched == SyncSched::Local && t.state == St::Ready && seen[th] != 1 {
                    return Err(err(format!("ready thread {th} is in no run queue")));
                }
            }
            if runnable != g.runnable {
                return Err(err(format!("gang {gi} runnable count is off")));
            }
            if waiting != g.waiters.len() || waiting as u32 != g.arrived {
                return Err(err(format!("gang {gi} barrier count is off")));
            }
        }
        Ok(())
    }
}
