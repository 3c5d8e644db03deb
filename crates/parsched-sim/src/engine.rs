//! The discrete-event engine: a clock and a queue of events ordered by
//! `(time, sequence)`, so that events at equal times are handled in the order
//! they were scheduled and every run is deterministic.

use parsched_core::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

struct Entry<E> {
    key: (u64, u64),
    event: E,
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
    queue: BinaryHeap<Entry<E>>,
    processed: u64,
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
            queue: BinaryHeap::with_capacity(256),
            processed: 0,
        }
    }

    /// Current simulated time.
    #[inline]
    pub fn now(&self) -> Time {
        self.now
    }

    /// Events handled so far.
    #[inline]
    pub fn processed(&self) -> u64 {
        self.processed
    }

    /// Events still pending.
    pub fn pending(&self) -> usize {
        self.queue.len()
    }

    /// The time of the earliest pending event, if any.
    #[inline]
    pub fn next_time(&self) -> Option<Time> {
        self.queue.peek().map(|e| Time(e.key.0))
    }

    /// Schedules `event` at absolute time `at` (not before now).
    #[inline]
    pub fn schedule_at(&mut self, at: Time, event: E) {
        debug_assert!(at >= self.now, "event scheduled in the past");
        self.seq += 1;
        self.queue.push(Entry {
            key: (at.0, self.seq),
            event,
        });
    }

    /// Schedules `event` `delay` ticks from now.
    #[inline]
    pub fn schedule_in(&mut self, delay: u64, event: E) {
        let at = self.now + delay;
        self.schedule_at(at, event);
    }

    /// Removes the earliest event and advances the clock to it.
    #[inline]
    pub fn pop(&mut self) -> Option<E> {
        let e = self.queue.pop()?;
        self.now = Time(e.key.0);
        self.processed += 1;
        Some(e.event)
    }
}

/// A model handles the events of its own type.
pub trait Model {
    type Event;
    type Error;
    /// Handles one event; may schedule more through `engine`.
    fn handle(
        &mut self,
        event: Self::Event,
        engine: &mut Engine<Self::Event>,
    ) -> Result<(), Self::Error>;
}

/// Runs `model` until no event is left.
pub fn run<M: Model>(model: &mut M, engine: &mut Engine<M::Event>) -> Result<(), M::Error> {
    while let Some(ev) = engine.pop() {
        model.handle(ev, engine)?;
    }
    Ok(())
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
}
