//! The discrete-event engine: a clock and a queue of events ordered by
//! `(time, sequence)`, so that events at equal times are handled in the order
//! they were scheduled and every run is deterministic.
//!
//! Every simulated machine (every model of [`crate::models::MODELS`], and the later
//! ones) is a [`Model`] on this one engine, run by [`run_watched`] (which
//! looks at the cancel flag of [`crate::cancel`] every
//! [`CHECK_EVERY`](crate::cancel::CHECK_EVERY) events). Events are named in
//! the past tense (`QuantumExpired`, `SlotEnded`, `StepEnded`), as things
//! that happened. What one tick is belongs to each machine
//! ([`TickUnit`](parsched_core::time::TickUnit), its `TICK` constant).
//!
//! **Cancellable timers.** A [`Timer`] is a named, re-armable event source
//! (a processor's "current segment ends", the global "slot ends"): setting it
//! again or cancelling it makes its pending event stale, and the engine drops
//! stale events when they reach the head of the queue, so a model never sees
//! them (they are counted in [`Engine::processed`] and
//! [`Engine::cancelled`]). This replaces per-model generation counters.
//!
//! **The queue.** A binary heap plus a `front` slot holding the earliest
//! event when it was scheduled after everything already queued was (a model
//! scheduling its very next event: the next arrival, the end of a short
//! segment or quantum): that event is stored and taken without touching the
//! heap. The order is the `(time, sequence)` order either way.

use parsched_core::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

struct Entry<E> {
    /// `time << 64 | sequence`: the `(time, sequence)` order as one
    /// comparison.
    key: u128,
    /// The timer this event belongs to and the timer's generation when it
    /// was set (`NO_TIMER` for a plain event).
    timer: u32,
    gen: u32,
    event: E,
}

const NO_TIMER: u32 = u32::MAX;

impl<E> Entry<E> {
    #[inline]
    fn time(&self) -> u64 {
        (self.key >> 64) as u64
    }
}

#[inline]
fn key(at: Time, seq: u64) -> u128 {
    (at.0 as u128) << 64 | seq as u128
}

/// A cancellable, re-armable event source (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Timer(u32);

impl Timer {
    /// A placeholder for a timer not created yet (setting it panics).
    pub const UNSET: Timer = Timer(u32::MAX - 1);
}

/// What a model tells the engine after an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Go on with the next event.
    Continue,
    /// Stop the run (the model's end condition holds).
    Stop,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    /// Reversed so that `BinaryHeap` (a max-heap) pops the earliest entry.
    fn cmp(&self, other: &Self) -> Ordering {
        other.key.cmp(&self.key)
    }
}

/// Clock plus pending events.
pub struct Engine<E> {
    now: Time,
    seq: u64,
    /// If set, earlier than every entry of `queue`.
    front: Option<Entry<E>>,
    /// Whether new earliest entries go to `front` (see [`Engine::with_front_slot`]).
    use_front: bool,
    queue: BinaryHeap<Entry<E>>,
    processed: u64,
    cancelled: u64,
    /// Current generation of each timer: an entry is live iff it carries it.
    timers: Vec<u32>,
}

impl<E> Default for Engine<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> Engine<E> {
    pub fn new() -> Engine<E> {
        Engine {
            now: Time::ZERO,
            seq: 0,
            front: None,
            use_front: false,
            queue: BinaryHeap::with_capacity(256),
            processed: 0,
            cancelled: 0,
            timers: Vec::new(),
        }
    }

    /// An engine whose queue keeps the earliest entry in a front slot when it
    /// is scheduled after everything queued, and takes it without heap
    /// operations. It pays where a model mostly schedules its next event
    /// earliest (the batch models: a job's end, then the pass at that instant;
    /// ~10% faster) and costs where new events often land in front of
    /// earlier-scheduled ones (the barrier machine's per-processor segments
    /// under blocking: ~12% slower), so a model chooses it. The order is
    /// (time, sequence) either way.
    pub fn with_front_slot() -> Engine<E> {
        Engine {
            use_front: true,
            ..Engine::new()
        }
    }

    /// A new timer, not armed.
    pub fn timer(&mut self) -> Timer {
        self.timers.push(0);
        Timer(self.timers.len() as u32 - 1)
    }

    /// Arms `timer` to fire `event` at `at`; its previously pending event, if
    /// any, is cancelled.
    #[inline]
    pub fn set_timer(&mut self, timer: Timer, at: Time, event: E) {
        debug_assert!(at >= self.now, "timer set in the past");
        let g = &mut self.timers[timer.0 as usize];
        *g = g.wrapping_add(1);
        let gen = *g;
        self.seq += 1;
        self.push(Entry {
            key: key(at, self.seq),
            timer: timer.0,
            gen,
            event,
        });
    }

    /// Cancels `timer`'s pending event, if any.
    #[inline]
    pub fn cancel(&mut self, timer: Timer) {
        let g = &mut self.timers[timer.0 as usize];
        *g = g.wrapping_add(1);
    }

    /// [`Engine::pop`] for a model that ends its run at `limit`: the next
    /// live event at or before `limit`, or `None` when the queue is empty or
    /// its head lies beyond `limit` — that head entry (live or cancelled) is
    /// then removed unhandled, counted as processed, as the entry that showed
    /// the instant was over.
    #[inline(always)]
    pub fn pop_through(&mut self, limit: Time) -> Option<E> {
        loop {
            let e = self.take_head()?;
            self.now = Time(e.time());
            self.processed += 1;
            if e.time() > limit.0 {
                return None;
            }
            if self.is_live(&e) {
                return Some(e.event);
            }
            self.cancelled += 1;
        }
    }

    /// Whether an entry is still wanted: a plain event, or its timer's
    /// current setting.
    #[inline(always)]
    fn is_live(&self, e: &Entry<E>) -> bool {
        e.timer == NO_TIMER || self.timers[e.timer as usize] == e.gen
    }

    /// Stale events dropped so far (timers set again or cancelled).
    pub fn cancelled(&self) -> u64 {
        self.cancelled
    }

    /// Current simulated time.
    #[inline]
    pub fn now(&self) -> Time {
        self.now
    }

    /// Events taken from the queue so far: those handled and the cancelled
    /// ones dropped.
    #[inline]
    pub fn processed(&self) -> u64 {
        self.processed
    }

    /// Events still in the queue (cancelled ones not yet dropped included).
    pub fn pending(&self) -> usize {
        self.queue.len() + self.front.is_some() as usize
    }

    /// The time of the earliest queued event, if any (it may be a cancelled
    /// one).
    #[inline]
    pub fn next_time(&self) -> Option<Time> {
        self.head().map(|e| Time(e.time()))
    }

    /// The time of the earliest live event, if any: [`Engine::next_time`]
    /// after dropping the cancelled events at the head of the queue (counted
    /// in [`Engine::processed`] and [`Engine::cancelled`], as [`Engine::pop`]
    /// counts them). The clock does not move. A model handling an event
    /// learns from it whether more events share the current instant.
    #[inline]
    pub fn next_live_time(&mut self) -> Option<Time> {
        while let Some(e) = self.head() {
            if self.is_live(e) {
                return Some(Time(e.time()));
            }
            self.take_head();
            self.processed += 1;
            self.cancelled += 1;
        }
        None
    }

    /// Queues an entry: into `front` if it is earlier than everything queued
    /// (the previous front, if any, goes to the heap), else into the heap.
    #[inline(always)]
    fn push(&mut self, e: Entry<E>) {
        if !self.use_front {
            self.queue.push(e);
            return;
        }
        match &self.front {
            Some(f) if e.key > f.key => self.queue.push(e),
            Some(_) => {
                let old = self.front.replace(e).expect("front is set");
                self.queue.push(old);
            }
            None => {
                if self.queue.peek().is_some_and(|h| h.key < e.key) {
                    self.queue.push(e);
                } else {
                    self.front = Some(e);
                }
            }
        }
    }

    /// The earliest queued entry.
    #[inline]
    fn head(&self) -> Option<&Entry<E>> {
        self.front.as_ref().or_else(|| self.queue.peek())
    }

    /// Removes the earliest queued entry.
    #[inline]
    fn take_head(&mut self) -> Option<Entry<E>> {
        self.front.take().or_else(|| self.queue.pop())
    }

    /// Schedules `event` at absolute time `at` (not before now).
    #[inline]
    pub fn schedule_at(&mut self, at: Time, event: E) {
        debug_assert!(at >= self.now, "event scheduled in the past");
        self.seq += 1;
        self.push(Entry {
            key: key(at, self.seq),
            timer: NO_TIMER,
            gen: 0,
            event,
        });
    }

    /// Schedules `event` `delay` ticks from now.
    #[inline]
    pub fn schedule_in(&mut self, delay: u64, event: E) {
        let at = self.now + delay;
        self.schedule_at(at, event);
    }

    /// Removes the earliest live event and advances the clock to it
    /// (dropping the cancelled events before it).
    #[inline(always)]
    pub fn pop(&mut self) -> Option<E> {
        loop {
            let e = self.take_head()?;
            self.now = Time(e.time());
            self.processed += 1;
            if self.is_live(&e) {
                return Some(e.event);
            }
            self.cancelled += 1;
        }
    }
}

/// A model handles the events of its own type.
pub trait Model {
    type Event;
    type Error;
    /// Handles one event; may schedule more through `engine`. Returning
    /// [`Flow::Stop`] ends the run.
    fn handle(
        &mut self,
        event: Self::Event,
        engine: &mut Engine<Self::Event>,
    ) -> Result<Flow, Self::Error>;

    /// The last instant the run handles, once the model knows it: [`run`]
    /// and [`run_watched`] then take only the events up to it (the other
    /// events of that instant included, [`Engine::pop_through`]) and end
    /// with [`RunEnd::Horizon`]. The barrier machine sets it at the measured
    /// gang's last barrier; by default there is none.
    #[inline(always)]
    fn horizon(&self) -> Option<Time> {
        None
    }
}

/// The next event for `model`: [`Engine::pop`], or [`Engine::pop_through`]
/// its horizon.
#[inline(always)]
fn next_event<M: Model>(model: &M, engine: &mut Engine<M::Event>) -> Option<M::Event> {
    match model.horizon() {
        None => engine.pop(),
        Some(limit) => engine.pop_through(limit),
    }
}

/// How a run ended when no event was left for it.
#[inline]
fn ended<M: Model>(model: &M) -> RunEnd {
    if model.horizon().is_some() {
        RunEnd::Horizon
    } else {
        RunEnd::Drained
    }
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunEnd {
    /// No event was left.
    Drained,
    /// The model returned [`Flow::Stop`].
    Stopped,
    /// The next event lies beyond the horizon given to [`run_until`] or
    /// set by the model ([`Model::horizon`]).
    Horizon,
}

/// Runs `model` until no event is left or it stops.
pub fn run<M: Model>(model: &mut M, engine: &mut Engine<M::Event>) -> Result<RunEnd, M::Error> {
    while let Some(ev) = next_event(model, engine) {
        if model.handle(ev, engine)? == Flow::Stop {
            return Ok(RunEnd::Stopped);
        }
    }
    Ok(ended(model))
}

/// [`run`], watching this thread's cancel flag ([`crate::cancel`]): once it
/// is set the run ends within [`crate::cancel::CHECK_EVERY`] events with
/// `interrupted()`. Without a flag it is [`run`]; the flag is only read, so
/// the events handled are the same.
pub fn run_watched<M: Model>(
    model: &mut M,
    engine: &mut Engine<M::Event>,
    interrupted: impl Fn() -> M::Error,
) -> Result<RunEnd, M::Error> {
    run_watching(model, engine, &mut crate::cancel::Watch::new(), interrupted)
}

/// [`run_watched`] with the caller's `watch`, kept across runs: a model run
/// in short pieces (the Gymnasium stepper, a piece per decision) keeps
/// counting its events on the one cadence instead of restarting it.
pub fn run_watching<M: Model>(
    model: &mut M,
    engine: &mut Engine<M::Event>,
    watch: &mut crate::cancel::Watch,
    interrupted: impl Fn() -> M::Error,
) -> Result<RunEnd, M::Error> {
    // One loop (a second copy of it for the unwatched case made the
    // compiler stop inlining the models' event handlers into either).
    let armed = watch.is_armed();
    while let Some(ev) = next_event(model, engine) {
        if armed && watch.tick() {
            return Err(interrupted());
        }
        if model.handle(ev, engine)? == Flow::Stop {
            return Ok(RunEnd::Stopped);
        }
    }
    Ok(ended(model))
}

/// Runs `model` over the events at times up to `horizon` (inclusive); later
/// events stay queued, so the run can be resumed. The clock is left at the
/// last event handled. (The model's own [`Model::horizon`] is not looked
/// at here.)
pub fn run_until<M: Model>(
    model: &mut M,
    engine: &mut Engine<M::Event>,
    horizon: Time,
) -> Result<RunEnd, M::Error> {
    loop {
        match engine.next_time() {
            None => return Ok(RunEnd::Drained),
            Some(t) if t > horizon => return Ok(RunEnd::Horizon),
            Some(_) => {}
        }
        let Some(ev) = engine.pop() else {
            return Ok(RunEnd::Drained);
        };
        if model.handle(ev, engine)? == Flow::Stop {
            return Ok(RunEnd::Stopped);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_times_pop_in_schedule_order() {
        let mut e = Engine::new();
        e.schedule_at(Time(5), 'b');
        e.schedule_at(Time(3), 'a');
        e.schedule_at(Time(5), 'c');
        e.schedule_at(Time(5), 'd');
        let order: Vec<char> = std::iter::from_fn(|| e.pop()).collect();
        assert_eq!(order, vec!['a', 'b', 'c', 'd']);
        assert_eq!(e.now(), Time(5));
        assert_eq!(e.processed(), 4);
    }

    #[test]
    fn timers_cancel_their_pending_event() {
        let mut e: Engine<&str> = Engine::new();
        let a = e.timer();
        let b = e.timer();
        e.set_timer(a, Time(5), "a-old");
        e.schedule_at(Time(5), "plain");
        e.set_timer(b, Time(7), "b");
        e.set_timer(a, Time(6), "a-new"); // a-old is stale now
        e.cancel(b);
        let order: Vec<&str> = std::iter::from_fn(|| e.pop()).collect();
        assert_eq!(order, vec!["plain", "a-new"]);
        assert_eq!(e.processed(), 4);
        assert_eq!(e.cancelled(), 2);
        // Re-armed after a cancel, it fires again.
        e.set_timer(b, Time(9), "b2");
        assert_eq!(e.pop(), Some("b2"));
        // pop_through: live events up to the limit, then the head beyond it
        // is consumed (cancelled or not) and the run sees the end.
        e.set_timer(a, Time(10), "stale");
        e.schedule_at(Time(11), "late");
        e.set_timer(a, Time(12), "later");
        e.schedule_at(Time(10), "on time");
        assert_eq!(e.pop_through(Time(10)), Some("on time"));
        let before = e.processed();
        assert_eq!(e.pop_through(Time(10)), None);
        assert_eq!(
            e.processed(),
            before + 1,
            "the head beyond the limit, unhandled"
        );
        assert_eq!(e.now(), Time(11));
        assert_eq!(e.pop(), Some("later"));
        // The earliest live time skips the stale head without moving the
        // clock.
        e.set_timer(a, Time(20), "a-late");
        e.set_timer(b, Time(18), "b-old");
        e.set_timer(b, Time(22), "b-new");
        let now = e.now();
        assert_eq!(e.next_time(), Some(Time(18)));
        assert_eq!(e.next_live_time(), Some(Time(20)));
        assert_eq!((e.now(), e.cancelled(), e.pending()), (now, 4, 2));
        assert_eq!(e.pop(), Some("a-late"));
        assert_eq!(e.pop(), Some("b-new"));
        assert_eq!(e.next_live_time(), None);
    }

    /// The front slot and the heap together keep the `(time, sequence)`
    /// order: random schedules, timer re-arms, cancels and pops against a
    /// reference that searches a plain list.
    #[test]
    fn random_schedules_pop_in_time_then_schedule_order() {
        for front in [false, true] {
            let mut x = 0x9e37_79b9_7f4a_7c15u64;
            let mut rnd = |n: u64| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x % n
            };
            let mut e: Engine<u64> = if front {
                Engine::with_front_slot()
            } else {
                Engine::new()
            };
            let timers: Vec<Timer> = (0..4).map(|_| e.timer()).collect();
            // Reference: (time, sequence, id, timer) of live events.
            let mut live: Vec<(u64, u64, u64, Option<usize>)> = Vec::new();
            let (mut seq, mut id) = (0u64, 0u64);
            let mut popped = 0;
            for _ in 0..20_000 {
                let now = e.now().0;
                match rnd(8) {
                    0..=2 => {
                        let at = now + rnd(5);
                        seq += 1;
                        id += 1;
                        e.schedule_at(Time(at), id);
                        live.push((at, seq, id, None));
                    }
                    3 => {
                        let k = rnd(4) as usize;
                        let at = now + rnd(5);
                        seq += 1;
                        id += 1;
                        e.set_timer(timers[k], Time(at), id);
                        live.retain(|l| l.3 != Some(k));
                        live.push((at, seq, id, Some(k)));
                    }
                    4 => {
                        let k = rnd(4) as usize;
                        e.cancel(timers[k]);
                        live.retain(|l| l.3 != Some(k));
                    }
                    _ => {
                        let want = live
                            .iter()
                            .enumerate()
                            .min_by_key(|(_, l)| (l.0, l.1))
                            .map(|(i, l)| (i, l.0, l.2));
                        assert_eq!(e.next_live_time(), want.map(|w| Time(w.1)));
                        assert_eq!(e.pop(), want.map(|w| w.2));
                        if let Some((i, t, _)) = want {
                            live.remove(i);
                            assert_eq!(e.now(), Time(t));
                            popped += 1;
                        }
                    }
                }
            }
            assert!(popped > 5_000, "{popped}");
        }
    }

    struct Counter {
        seen: Vec<u64>,
        stop_at: u64,
    }

    impl Model for Counter {
        type Event = u64;
        type Error = ();
        fn handle(&mut self, ev: u64, eng: &mut Engine<u64>) -> Result<Flow, ()> {
            self.seen.push(ev);
            if ev < 10 {
                eng.schedule_in(1, ev + 1);
            }
            Ok(if ev == self.stop_at {
                Flow::Stop
            } else {
                Flow::Continue
            })
        }
    }

    #[test]
    fn run_stops_drains_or_halts_at_the_horizon() {
        let mut m = Counter {
            seen: vec![],
            stop_at: 4,
        };
        let mut e = Engine::new();
        e.schedule_at(Time(0), 0);
        assert_eq!(run(&mut m, &mut e), Ok(RunEnd::Stopped));
        assert_eq!(m.seen, vec![0, 1, 2, 3, 4]);
        m.stop_at = u64::MAX;
        assert_eq!(run_until(&mut m, &mut e, Time(7)), Ok(RunEnd::Horizon));
        assert_eq!(m.seen.last(), Some(&7));
        assert_eq!(e.now(), Time(7));
        assert_eq!(run(&mut m, &mut e), Ok(RunEnd::Drained));
        assert_eq!(m.seen.len(), 11);
    }

    /// Stops taking events after the first event at 3: the horizon is set
    /// then, and the other events of that instant are still handled.
    struct Horizon {
        seen: Vec<(u64, u64)>,
        limit: Option<Time>,
    }

    impl Model for Horizon {
        type Event = u64;
        type Error = ();
        fn handle(&mut self, ev: u64, eng: &mut Engine<u64>) -> Result<Flow, ()> {
            self.seen.push((eng.now().0, ev));
            if eng.now() == Time(3) && self.limit.is_none() {
                self.limit = Some(eng.now());
                eng.schedule_at(Time(3), 99);
            }
            eng.schedule_in(2, ev + 10);
            Ok(Flow::Continue)
        }
        fn horizon(&self) -> Option<Time> {
            self.limit
        }
    }

    #[test]
    fn a_model_horizon_ends_the_run_after_its_instant() {
        for watched in [false, true] {
            let mut m = Horizon {
                seen: vec![],
                limit: None,
            };
            let mut e = Engine::new();
            e.schedule_at(Time(1), 1);
            e.schedule_at(Time(3), 2);
            let end = if watched {
                run_watched(&mut m, &mut e, || ())
            } else {
                run(&mut m, &mut e)
            };
            assert_eq!(end, Ok(RunEnd::Horizon));
            assert_eq!(m.seen, vec![(1, 1), (3, 2), (3, 11), (3, 99)]);
            assert_eq!(e.now(), Time(5), "the head beyond the horizon, taken");
        }
    }
}
