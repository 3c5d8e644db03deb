//! Priority time-sharing driven by a dispatch table: the Solaris TS class,
//! the local scheduler of every workstation in Nagar, Banerjee,
//! Sivasubramaniam and Das, "A closer look at coscheduling approaches for a
//! network of workstations", SPAA 1999 (seed 003, §2–3: Solaris 2.x nodes).
//!
//! The seed does not print the table. The shipped default is the standard
//! Solaris time-sharing dispatcher parameter table (`ts_dptbl(4)`), as
//! `dispadmin -c TS -g` prints it on a stock system (Sun/Oracle, *System
//! Administration Guide*, "Timesharing Parameter Table", RES=1000, i.e.
//! quanta in milliseconds): 60 levels, 0 lowest. Each level has
//!
//! * `quantum_ms` (`ts_quantum`): the time slice at that level (200 ms at
//!   level 0 down to 20 ms at 59);
//! * `tqexp` (`ts_tqexp`): the level after the thread used up its quantum
//!   (lower: CPU-bound threads sink);
//! * `slpret` (`ts_slpret`): the level after it returns from sleep
//!   (50–59: woken threads rise);
//! * `maxwait_s` (`ts_maxwait`) and `lwait` (`ts_lwait`): a ready thread that
//!   has waited more than `maxwait_s` seconds (counted once per second, as
//!   the kernel's `ts_dispwait`) moves to `lwait` — starvation promotion.
//!
//! [`TimeSharing`] is the policy of one run queue: the highest non-empty
//! level runs first, FIFO within a level; a woken thread preempts a running
//! one of lower level; a boost (seed 003's interrupt-and-boost and periodic
//! boost: "set the target to TS 59", the digest's choice) raises a thread to
//! the top level. Tables load from TOML (`[[level]]` entries) or from
//! `dispadmin -c TS -g` text ([`DispatchTable::parse_dispadmin`]).

use crate::error::ConfigError;
use crate::ids::ThreadId;
use crate::policy::local::{EnqueueReason, LocalScheduler};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

mod solaris;

/// Which rules move a thread between levels (the `ts_semantics` option of
/// the cosched model; see `docs/policies/time-sharing.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TsSemantics {
    /// parsched's earlier rules (an option): every wake-up gets `ts_slpret`
    /// and a full quantum; once a second a running thread is aged to
    /// `ts_lwait` like a queued one.
    Parsched,
    /// The rules of Solaris' `ts.c` (the cosched model's default; Solaris 2.6's `ts.c` 1.80
    /// of 96/10/17, the public release nearest the paper's 2.5.1, and
    /// unchanged in these rules through Solaris 8): a
    /// sleep or wake-up gets `ts_slpret` and a new quantum only when
    /// `ts_dispwait > ts_maxwait` (else the thread keeps its level and the
    /// rest of its quantum); `ts_update` counts `ts_dispwait` for every
    /// thread, ages queued ones to `ts_lwait` and only marks the others for
    /// `ts_trapret` (see the `solaris` rules).
    Solaris,
}

/// One priority level of a dispatch table (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DispatchLevel {
    pub quantum_ms: u32,
    pub tqexp: u8,
    pub slpret: u8,
    pub maxwait_s: u32,
    pub lwait: u8,
}

/// A time-sharing dispatch table: level 0 (lowest) first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DispatchTable {
    pub level: Vec<DispatchLevel>,
}

/// The stock Solaris table as `dispadmin -c TS -g` prints it (RES=1000).
const SOLARIS_TS: &str = "\
# Time Sharing Dispatcher Configuration
RES=1000
# ts_quantum  ts_tqexp  ts_slpret  ts_maxwait ts_lwait  PRIORITY LEVEL
200 0 50 0 50 # 0
200 0 50 0 50 # 1
200 0 50 0 50 # 2
200 0 50 0 50 # 3
200 0 50 0 50 # 4
200 0 50 0 50 # 5
200 0 50 0 50 # 6
200 0 50 0 50 # 7
200 0 50 0 50 # 8
200 0 50 0 50 # 9
160 0 51 0 51 # 10
160 1 51 0 51 # 11
160 2 51 0 51 # 12
160 3 51 0 51 # 13
160 4 51 0 51 # 14
160 5 51 0 51 # 15
160 6 51 0 51 # 16
160 7 51 0 51 # 17
160 8 51 0 51 # 18
160 9 51 0 51 # 19
120 10 52 0 52 # 20
120 11 52 0 52 # 21
120 12 52 0 52 # 22
120 13 52 0 52 # 23
120 14 52 0 52 # 24
120 15 52 0 52 # 25
120 16 52 0 52 # 26
120 17 52 0 52 # 27
120 18 52 0 52 # 28
120 19 52 0 52 # 29
80 20 53 0 53 # 30
80 21 53 0 53 # 31
80 22 53 0 53 # 32
80 23 53 0 53 # 33
80 24 53 0 53 # 34
80 25 54 0 54 # 35
80 26 54 0 54 # 36
80 27 54 0 54 # 37
80 28 54 0 54 # 38
80 29 54 0 54 # 39
40 30 55 0 55 # 40
40 31 55 0 55 # 41
40 32 55 0 55 # 42
40 33 55 0 55 # 43
40 34 55 0 55 # 44
40 35 56 0 56 # 45
40 36 57 0 57 # 46
40 37 58 0 58 # 47
40 38 58 0 58 # 48
40 39 58 0 59 # 49
40 40 58 0 59 # 50
40 41 58 0 59 # 51
40 42 58 0 59 # 52
40 43 58 0 59 # 53
40 44 58 0 59 # 54
40 45 58 0 59 # 55
40 46 58 0 59 # 56
40 47 58 0 59 # 57
40 48 58 0 59 # 58
20 49 59 32000 59 # 59
";

impl DispatchTable {
    /// The table as `dispadmin -c TS -g` prints it (RES=1000): the text
    /// [`DispatchTable::parse_dispadmin`] reads back to the same table.
    pub fn dispadmin_text(&self) -> String {
        let mut s = String::from(
            "RES=1000\n# ts_quantum  ts_tqexp  ts_slpret  ts_maxwait ts_lwait  PRIORITY LEVEL\n",
        );
        for (i, l) in self.level.iter().enumerate() {
            s.push_str(&format!(
                "{} {} {} {} {} # {i}\n",
                l.quantum_ms, l.tqexp, l.slpret, l.maxwait_s, l.lwait
            ));
        }
        s
    }

    /// The stock Solaris TS table (60 levels; see the module documentation).
    pub fn solaris() -> DispatchTable {
        DispatchTable::parse_dispadmin(SOLARIS_TS).expect("the shipped table is valid")
    }

    /// Parses `dispadmin -c TS -g` output: `RES=n` (quanta in 1/n s; 1000 if
    /// absent), then one line per level, `quantum tqexp slpret maxwait
    /// lwait`, comments after `#`. Errors name the line.
    pub fn parse_dispadmin(text: &str) -> Result<DispatchTable, ConfigError> {
        let mut res: u64 = 1000;
        let mut level = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let bad = |what: &str| {
                ConfigError::new(
                    "dispatch_table",
                    format!(
                        "line {}: {what}: {:?}",
                        i + 1,
                        crate::clip(raw, crate::ECHO_MAX)
                    ),
                    "RES=n, then lines 'quantum tqexp slpret maxwait lwait'",
                )
            };
            if let Some(v) = line.strip_prefix("RES=") {
                res = v
                    .trim()
                    .parse()
                    .ok()
                    .filter(|&r| r > 0)
                    .ok_or_else(|| bad("RES is not a positive integer"))?;
                continue;
            }
            let f: Vec<u64> = line
                .split_whitespace()
                .map(|w| w.parse::<u64>())
                .collect::<Result<_, _>>()
                .map_err(|_| bad("not five non-negative integers"))?;
            let [q, tqexp, slpret, maxwait, lwait] = f[..] else {
                return Err(bad("not five fields"));
            };
            let small = |v: u64| u8::try_from(v).map_err(|_| bad("a level above 255"));
            let quantum_ms = q
                .checked_mul(1000)
                .and_then(|v| u32::try_from(v / res).ok())
                .filter(|&ms| ms > 0)
                .ok_or_else(|| bad("quantum rounds to 0 ms or is too large"))?;
            level.push(DispatchLevel {
                quantum_ms,
                tqexp: small(tqexp)?,
                slpret: small(slpret)?,
                maxwait_s: u32::try_from(maxwait).map_err(|_| bad("maxwait too large"))?,
                lwait: small(lwait)?,
            });
        }
        let t = DispatchTable { level };
        t.validate()?;
        Ok(t)
    }

    /// Every level names levels of the table; quanta are positive; 1 to 256
    /// levels.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let n = self.level.len();
        if n == 0 || n > 256 {
            return Err(ConfigError::new(
                "dispatch_table",
                format!("{n} levels"),
                "1 to 256 levels",
            ));
        }
        for (i, l) in self.level.iter().enumerate() {
            for (name, v) in [("tqexp", l.tqexp), ("slpret", l.slpret), ("lwait", l.lwait)] {
                if v as usize >= n {
                    return Err(ConfigError::new(
                        "dispatch_table",
                        format!("level {i}: {name} = {v} is not a level"),
                        format!("0..={}", n - 1),
                    ));
                }
            }
            if l.quantum_ms == 0 {
                return Err(ConfigError::new(
                    "dispatch_table",
                    format!("level {i}: quantum_ms = 0"),
                    "a positive quantum",
                ));
            }
        }
        Ok(())
    }

    /// The highest level.
    pub fn top(&self) -> u8 {
        (self.level.len() - 1) as u8
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct ThreadState {
    level: u8,
    /// Seconds waited on the queue since the last expiry or wake-up.
    dispwait: u32,
    queued: bool,
    /// With a transient boost: the level before the boost, until the boost
    /// ends.
    unboosted: Option<u8>,
    /// [`TsSemantics::Solaris`]: the rest of the quantum in ticks
    /// (`ts_timeleft`); `None`: a full quantum of its level.
    timeleft: Option<u64>,
    /// [`TsSemantics::Solaris`]: `ts_update` asked for `ts_trapret`
    /// (`t_trapret`).
    trapret: bool,
}

/// Where a boost puts a thread. Seed 003 does not say: its handler and timer
/// "boost the priority of the destination process causing it to be scheduled
/// almost immediately" (§2, DCS), with an unmodified Solaris 2.5.1 kernel
/// and "without requiring any modifications to the Solaris kernel" (§1). A
/// boost never lowers a thread; a queued thread moves to the head of its
/// new level's queue. From then on the table moves it as any other thread:
/// its quantum ends at `tqexp` of the boosted level, ageing sends it to
/// that level's `lwait`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BoostTo {
    /// The top level (TS 59 in the stock table), at the head of its queue.
    #[default]
    Top,
    /// The level's sleep-return level (`ts_slpret`, what a wake-up gives:
    /// 50-59 in the stock table), never lower than the current level.
    SleepReturn,
    /// `k` levels above the level's sleep-return level, at most the top
    /// (`sleep_return+k`): a boost that beats a wake-up from the same level
    /// (and the `lwait` that ageing gives it, the same as `slpret` in the
    /// stock table) by `k` levels.
    AboveSleepReturn(u8),
    /// A fixed level (at most the top; never lower than the current level):
    /// a driver that sets its target's time-sharing level to this.
    Level(u8),
}

impl BoostTo {
    /// What [`BoostTo::from_str`](std::str::FromStr) accepts.
    pub const ALLOWED: &'static str =
        "top, sleep_return, sleep_return+K (K levels above it) or a level of the table (0..=59)";

    /// The level a boost gives a thread at `level` of `table`.
    pub fn target(self, table: &DispatchTable, level: u8) -> u8 {
        let top = table.top();
        let slpret = table.level[level as usize].slpret;
        match self {
            BoostTo::Top => top,
            BoostTo::SleepReturn => slpret.max(level),
            BoostTo::AboveSleepReturn(k) => slpret.saturating_add(k).min(top).max(level),
            BoostTo::Level(n) => n.min(top).max(level),
        }
    }

    /// Checks a fixed level against `table`; errors name `boost_to`.
    pub fn validate(self, table: &DispatchTable) -> Result<(), ConfigError> {
        match self {
            BoostTo::Level(n) if n > table.top() => Err(ConfigError::new(
                "boost_to",
                format!("{n} is not a level of the table"),
                format!(
                    "top, sleep_return, sleep_return+K or a level 0..={}",
                    table.top()
                ),
            )),
            _ => Ok(()),
        }
    }
}

impl std::fmt::Display for BoostTo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BoostTo::Top => f.write_str("top"),
            BoostTo::SleepReturn => f.write_str("sleep_return"),
            BoostTo::AboveSleepReturn(k) => write!(f, "sleep_return+{k}"),
            BoostTo::Level(n) => write!(f, "{n}"),
        }
    }
}

impl std::str::FromStr for BoostTo {
    type Err = ConfigError;

    /// `top`, `sleep_return`, `sleep_return+K` or a level (`57`); errors are
    /// one line naming `boost_to`.
    fn from_str(s: &str) -> Result<BoostTo, ConfigError> {
        let t = s.trim();
        let bad = |why: String| ConfigError::new("boost_to", why, BoostTo::ALLOWED);
        match t {
            "top" => return Ok(BoostTo::Top),
            "sleep_return" => return Ok(BoostTo::SleepReturn),
            _ => {}
        }
        if let Some(k) = t.strip_prefix("sleep_return+") {
            return match k.trim().parse::<u8>() {
                Ok(0) => Ok(BoostTo::SleepReturn),
                Ok(k) if k < 64 => Ok(BoostTo::AboveSleepReturn(k)),
                _ => Err(bad(format!(
                    "{t:?}: K must be a whole number of levels below 64"
                ))),
            };
        }
        if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
            return match t.parse::<u8>() {
                Ok(n) if n < 64 => Ok(BoostTo::Level(n)),
                _ => Err(bad(format!("{t} is not a level"))),
            };
        }
        Err(bad(format!("{t:?} is not allowed")))
    }
}

impl Serialize for BoostTo {
    /// As the text [`FromStr`](std::str::FromStr) reads (`"top"`, `"57"`).
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for BoostTo {
    /// From that text or from an integer level.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<BoostTo, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Level(u64),
            Text(String),
        }
        let text = match Raw::deserialize(d)? {
            Raw::Level(n) => n.to_string(),
            Raw::Text(t) => t,
        };
        text.parse().map_err(|e: ConfigError| {
            serde::de::Error::custom(format!("{}; allowed: {}", e.message, e.allowed))
        })
    }
}

/// The time-sharing policy of one run queue (see the module documentation).
#[derive(Debug, Clone)]
pub struct TimeSharing {
    table: DispatchTable,
    boost_to: BoostTo,
    /// A boosted queued thread goes to the tail of its new level's queue
    /// (default: the head).
    boost_at_tail: bool,
    /// A boost ends when the thread's quantum ends or it sleeps.
    boost_transient: bool,
    semantics: TsSemantics,
    ticks_per_ms: u64,
    initial: u8,
    queues: Vec<VecDeque<ThreadId>>,
    /// Bit `l` set: level `l`'s queue is not empty.
    nonempty: [u64; 4],
    threads: Vec<ThreadState>,
    ready: usize,
}

impl TimeSharing {
    /// A run queue over `table`, with `ticks_per_ms` ticks per millisecond;
    /// new threads start at `initial` (Solaris gives new processes their
    /// parent's level; a shell's user processes usually start mid-table, so
    /// 29 is the usual choice for the 60-level table).
    pub fn new(
        table: DispatchTable,
        ticks_per_ms: u64,
        initial: u8,
    ) -> Result<TimeSharing, ConfigError> {
        table.validate()?;
        if initial as usize >= table.level.len() {
            return Err(ConfigError::new(
                "initial_level",
                format!("{initial} is not a level"),
                format!("0..={}", table.top()),
            ));
        }
        let n = table.level.len();
        Ok(TimeSharing {
            table,
            boost_to: BoostTo::Top,
            boost_at_tail: false,
            boost_transient: false,
            semantics: TsSemantics::Parsched,
            ticks_per_ms,
            initial,
            queues: vec![VecDeque::new(); n],
            nonempty: [0; 4],
            threads: Vec::new(),
            ready: 0,
        })
    }

    /// Where [`LocalScheduler::boost`] puts a thread (default: the top).
    pub fn with_boost_to(mut self, to: BoostTo) -> TimeSharing {
        self.boost_to = to;
        self
    }

    /// Where in its new level's queue a boosted queued thread goes: the
    /// head (default, the digest's reading) or, with `tail`, the tail, as
    /// Solaris does when a thread's priority is changed from outside the
    /// dispatcher (`ts_parmsset` → `thread_change_pri` puts a thread on a
    /// run queue at the back unless it is an interactive-class thread).
    pub fn with_boost_at_tail(mut self, tail: bool) -> TimeSharing {
        self.boost_at_tail = tail;
        self
    }

    /// With `transient`, a boost lasts until the thread's quantum ends or it
    /// sleeps: the table then moves it from the level it had before the
    /// boost (`tqexp`, `slpret` of that level), not from the boosted one.
    /// Default (off): the boosted level is its level, and with the stock
    /// table a boost to 59 ends at `tqexp` 49, whose `lwait` is 59 again.
    pub fn with_boost_transient(mut self, transient: bool) -> TimeSharing {
        self.boost_transient = transient;
        self
    }

    /// Which rules move threads between levels ([`TimeSharing::new`] starts
    /// with [`TsSemantics::Parsched`], the rules this module's own tests
    /// exercise; the cosched model sets its `ts_semantics`, by default
    /// [`TsSemantics::Solaris`]).
    pub fn with_semantics(mut self, semantics: TsSemantics) -> TimeSharing {
        self.semantics = semantics;
        self
    }

    /// The level the table moves `thread` from at its quantum's end or its
    /// wake-up: the level before a transient boost, else its level.
    fn base_level(&self, thread: ThreadId) -> u8 {
        self.threads
            .get(thread.0 as usize)
            .and_then(|s| s.unboosted)
            .unwrap_or_else(|| self.level(thread))
    }

    /// The table.
    pub fn table(&self) -> &DispatchTable {
        &self.table
    }

    /// `thread`'s current level (its initial level if it was never seen).
    pub fn level(&self, thread: ThreadId) -> u8 {
        self.threads
            .get(thread.0 as usize)
            .map_or(self.initial, |s| s.level)
    }

    fn state(&mut self, thread: ThreadId) -> &mut ThreadState {
        let i = thread.0 as usize;
        if i >= self.threads.len() {
            let initial = self.initial;
            self.threads.resize(
                i + 1,
                ThreadState {
                    level: initial,
                    ..ThreadState::default()
                },
            );
        }
        &mut self.threads[i]
    }

    #[inline]
    fn highest_queued(&self) -> Option<u8> {
        (0..4).rev().find_map(|w| {
            let bits = self.nonempty[w];
            (bits != 0).then(|| (w * 64 + 63 - bits.leading_zeros() as usize) as u8)
        })
    }

    #[inline]
    fn mark(&mut self, level: usize) {
        if self.queues[level].is_empty() {
            self.nonempty[level / 64] &= !(1u64 << (level % 64));
        } else {
            self.nonempty[level / 64] |= 1u64 << (level % 64);
        }
    }

    fn unqueue(&mut self, thread: ThreadId) -> bool {
        let level = self.level(thread) as usize;
        let q = &mut self.queues[level];
        match q.iter().position(|&t| t == thread) {
            Some(k) => {
                q.remove(k);
                self.mark(level);
                self.ready -= 1;
                self.state(thread).queued = false;
                true
            }
            None => false,
        }
    }

    fn push(&mut self, thread: ThreadId, level: u8, front: bool) {
        let s = self.state(thread);
        debug_assert!(!s.queued, "{thread} queued twice");
        s.level = level;
        s.queued = true;
        let q = &mut self.queues[level as usize];
        if front {
            q.push_front(thread)
        } else {
            q.push_back(thread)
        }
        self.mark(level as usize);
        self.ready += 1;
    }
}

impl LocalScheduler for TimeSharing {
    fn enqueue(&mut self, thread: ThreadId, reason: EnqueueReason) {
        if self.semantics == TsSemantics::Solaris {
            return self.solaris_enqueue(thread, reason);
        }
        let cur = self.level(thread);
        let ends = matches!(reason, EnqueueReason::QuantumExpired | EnqueueReason::Woken);
        let base = if ends { self.base_level(thread) } else { cur };
        if ends {
            self.state(thread).unboosted = None;
        }
        let entry = self.table.level[base as usize];
        let level = match reason {
            EnqueueReason::New | EnqueueReason::Yielded => cur,
            EnqueueReason::QuantumExpired => entry.tqexp,
            EnqueueReason::Woken => entry.slpret,
            EnqueueReason::Boosted => self.boost_to.target(&self.table, cur),
            EnqueueReason::Preempted => cur,
        };
        if matches!(reason, EnqueueReason::QuantumExpired | EnqueueReason::Woken) {
            self.state(thread).dispwait = 0;
        }
        self.push(thread, level, reason == EnqueueReason::Preempted);
    }

    fn pick_next(&mut self) -> Option<ThreadId> {
        let level = self.highest_queued()?;
        let t = self.queues[level as usize].pop_front()?;
        self.mark(level as usize);
        self.ready -= 1;
        self.state(t).queued = false;
        Some(t)
    }

    fn remove(&mut self, thread: ThreadId) -> bool {
        self.unqueue(thread)
    }

    fn peek_next(&self) -> Option<ThreadId> {
        let level = self.highest_queued()?;
        self.queues[level as usize].front().copied()
    }

    fn quantum(&self, thread: ThreadId) -> u64 {
        if self.semantics == TsSemantics::Solaris {
            return self.solaris_quantum(thread);
        }
        self.table.level[self.level(thread) as usize].quantum_ms as u64 * self.ticks_per_ms
    }

    fn len(&self) -> usize {
        self.ready
    }

    fn queued(&self) -> Vec<ThreadId> {
        self.queues.iter().rev().flatten().copied().collect()
    }

    /// The expired thread drops to `tqexp` and yields to anyone queued at or
    /// above that level.
    fn should_preempt(&self, running: ThreadId) -> bool {
        let after = self.table.level[self.base_level(running) as usize].tqexp;
        self.highest_queued().is_some_and(|h| h >= after)
    }

    fn continue_running(&mut self, running: ThreadId) {
        let after = self.table.level[self.base_level(running) as usize].tqexp;
        let s = self.state(running);
        s.level = after;
        s.dispwait = 0;
        s.unboosted = None;
        s.timeleft = None;
        s.trapret = false;
    }

    fn preempts(&self, woken: ThreadId, running: ThreadId) -> bool {
        self.level(woken) > self.level(running)
    }

    /// Every queued thread waited one more second; past its level's
    /// `maxwait_s` it moves to `lwait` (the tail of that queue).
    fn on_second(&mut self) {
        if self.semantics == TsSemantics::Solaris {
            return self.ts_update();
        }
        let mut promote = Vec::new();
        for (level, q) in self.queues.iter().enumerate() {
            let entry = self.table.level[level];
            for &t in q {
                let s = &mut self.threads[t.0 as usize];
                s.dispwait += 1;
                if s.dispwait > entry.maxwait_s {
                    promote.push((t, entry.lwait));
                }
            }
        }
        for (t, lwait) in promote {
            self.unqueue(t);
            self.state(t).dispwait = 0;
            self.state(t).unboosted = None;
            self.push(t, lwait, false);
        }
    }

    /// A running thread ages as a queued one does: with the stock table
    /// (`maxwait` 0 below level 59) every thread, running or not, moves to
    /// its `lwait` once a second — the kernel's `ts_update` walks all
    /// time-sharing threads. Its quantum in progress is not changed.
    fn on_second_running(&mut self, running: ThreadId) {
        if self.semantics == TsSemantics::Solaris {
            // The AST `ts_update` posted is taken at the runner's next trap
            // (at the latest its next clock tick): `ts_trapret` now.
            return self.ts_trapret(running);
        }
        let level = self.level(running);
        let entry = self.table.level[level as usize];
        let s = self.state(running);
        s.dispwait += 1;
        if s.dispwait > entry.maxwait_s {
            s.dispwait = 0;
            s.level = entry.lwait;
            s.unboosted = None;
        }
    }

    /// To the level [`BoostTo::target`] says: by default the top (the
    /// digest's reading of seed 003's boost, "set the target to TS 59"); a
    /// queued thread moves to the head of that queue (the tail with
    /// [`TimeSharing::with_boost_at_tail`]).
    fn boost(&mut self, thread: ThreadId) -> bool {
        let level = self.level(thread);
        let to = self.boost_to.target(&self.table, level);
        if self.boost_transient && to > level {
            let s = self.state(thread);
            s.unboosted = s.unboosted.or(Some(level));
        }
        if self.unqueue(thread) {
            self.push(thread, to, !self.boost_at_tail);
            return true;
        }
        let s = self.state(thread);
        let changed = s.level != to;
        s.level = to;
        changed
    }

    /// [`TsSemantics::Solaris`]: `ts_sleep`.
    fn blocked(&mut self, thread: ThreadId) {
        if self.semantics == TsSemantics::Solaris {
            self.ts_sleep(thread, false);
        }
    }

    /// [`TsSemantics::Solaris`]: the thread's `ts_timeleft` runs down.
    fn charge(&mut self, thread: ThreadId, ran_ns: u64) {
        if self.semantics == TsSemantics::Solaris {
            self.solaris_charge(thread, ran_ns);
        }
    }

    /// To the lowest level (seed 003's spin-yield "lowers its own priority";
    /// the digest's choice: TS 0), to the tail.
    fn lower(&mut self, thread: ThreadId) -> bool {
        let level = self.level(thread);
        self.state(thread).unboosted = None;
        if level == 0 {
            return false;
        }
        if self.unqueue(thread) {
            self.push(thread, 0, false);
        } else {
            self.state(thread).level = 0;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn t(i: u32) -> ThreadId {
        ThreadId(i)
    }

    #[test]
    fn the_shipped_table_is_solaris() {
        let d = DispatchTable::solaris();
        assert_eq!(d.level.len(), 60);
        let l0 = d.level[0];
        assert_eq!(
            (l0.quantum_ms, l0.tqexp, l0.slpret, l0.maxwait_s, l0.lwait),
            (200, 0, 50, 0, 50)
        );
        let l59 = d.level[59];
        assert_eq!(
            (
                l59.quantum_ms,
                l59.tqexp,
                l59.slpret,
                l59.maxwait_s,
                l59.lwait
            ),
            (20, 49, 59, 32000, 59)
        );
        // Quanta shrink as levels rise; CPU-bound threads sink by 10 (above 10).
        for (i, l) in d.level.iter().enumerate() {
            assert!(i < 10 || l.tqexp as usize == i - 10, "level {i}");
            assert!(l.slpret >= 50);
        }
        assert!(d
            .level
            .windows(2)
            .all(|w| w[0].quantum_ms >= w[1].quantum_ms));
    }

    #[test]
    fn a_boost_goes_to_the_top_or_to_the_sleep_return_level() {
        let d = DispatchTable::solaris();
        for (to, want_from_0, want_from_45) in
            [(BoostTo::Top, 59, 59), (BoostTo::SleepReturn, 50, 56)]
        {
            let mut q = TimeSharing::new(d.clone(), 1, 0).unwrap().with_boost_to(to);
            q.enqueue(t(0), EnqueueReason::New);
            assert_eq!(q.level(t(0)), 0);
            assert!(q.boost(t(0)));
            assert_eq!(q.level(t(0)), want_from_0, "{to:?}");
            let mut q = TimeSharing::new(d.clone(), 1, 45)
                .unwrap()
                .with_boost_to(to);
            q.enqueue(t(1), EnqueueReason::New);
            q.boost(t(1));
            assert_eq!(q.level(t(1)), want_from_45, "{to:?}");
            // never lower: at the top a boost changes nothing
            let mut q = TimeSharing::new(d.clone(), 1, 59)
                .unwrap()
                .with_boost_to(to);
            q.enqueue(t(2), EnqueueReason::New);
            q.boost(t(2));
            assert_eq!(q.level(t(2)), 59);
        }
    }

    #[test]
    fn a_boost_to_a_fixed_level_or_above_the_sleep_return_level() {
        let d = DispatchTable::solaris();
        // (reading, from level 0, from 29, from 45, from 58)
        for (to, want) in [
            (BoostTo::Level(55), [55, 55, 55, 58]),
            (BoostTo::Level(30), [30, 30, 45, 58]),
            (BoostTo::AboveSleepReturn(2), [52, 54, 58, 59]),
            (BoostTo::AboveSleepReturn(9), [59, 59, 59, 59]),
            (BoostTo::Level(59), [59, 59, 59, 59]),
        ] {
            for (from, want) in [0u8, 29, 45, 58].into_iter().zip(want) {
                // queued: to the head of the new level's queue
                let mut q = TimeSharing::new(d.clone(), 1, from)
                    .unwrap()
                    .with_boost_to(to);
                q.enqueue(t(0), EnqueueReason::New);
                q.enqueue(t(1), EnqueueReason::New);
                q.boost(t(1));
                assert_eq!(q.level(t(1)), want, "{to:?} from {from}");
                assert_eq!(q.pick_next(), Some(t(1)), "{to:?} from {from}");
                // running: only the level changes
                let mut q = TimeSharing::new(d.clone(), 1, from)
                    .unwrap()
                    .with_boost_to(to);
                q.enqueue(t(2), EnqueueReason::New);
                assert_eq!(q.pick_next(), Some(t(2)));
                assert_eq!(q.boost(t(2)), want != from);
                assert_eq!(q.level(t(2)), want);
                assert_eq!(q.len(), 0);
            }
        }
        // From the boosted level the table takes over: a boosted thread's
        // quantum ends at tqexp of its new level, ageing sends it to lwait.
        let mut q = TimeSharing::new(d.clone(), 1, 0)
            .unwrap()
            .with_boost_to(BoostTo::Level(55));
        q.enqueue(t(0), EnqueueReason::New);
        q.boost(t(0));
        assert_eq!(q.pick_next(), Some(t(0)));
        assert_eq!(q.quantum(t(0)), 40);
        q.continue_running(t(0)); // quantum expired: tqexp(55) = 45
        assert_eq!(q.level(t(0)), 45);
        q.on_second_running(t(0)); // lwait(45) = 56
        assert_eq!(q.level(t(0)), 56);
        // a fixed level above a smaller table's top goes to its top
        let mut small = DispatchTable {
            level: d.level[..10].to_vec(),
        };
        for l in &mut small.level {
            (l.slpret, l.lwait) = (9, 9);
        }
        let mut q = TimeSharing::new(small.clone(), 1, 0)
            .unwrap()
            .with_boost_to(BoostTo::Level(55));
        q.enqueue(t(0), EnqueueReason::New);
        q.boost(t(0));
        assert_eq!(q.level(t(0)), 9);
        let e = BoostTo::Level(55).validate(&small).unwrap_err();
        assert_eq!(
            (e.field.as_str(), e.allowed.contains("0..=9")),
            ("boost_to", true)
        );
        assert!(BoostTo::Level(9).validate(&small).is_ok());
    }

    #[test]
    fn a_boost_puts_a_queued_thread_at_the_head_or_the_tail() {
        let d = DispatchTable::solaris();
        for (tail, want) in [(false, [t(2), t(1), t(0)]), (true, [t(1), t(2), t(0)])] {
            let mut q = TimeSharing::new(d.clone(), 1, 29)
                .unwrap()
                .with_boost_at_tail(tail);
            q.enqueue(t(0), EnqueueReason::New); // stays at 29
            q.enqueue(t(1), EnqueueReason::New);
            q.enqueue(t(2), EnqueueReason::New);
            q.boost(t(1)); // 59, alone there
            q.boost(t(2)); // 59: ahead of t(1), or behind it
            assert_eq!((q.level(t(1)), q.level(t(2))), (59, 59));
            let order: Vec<_> = std::iter::from_fn(|| q.pick_next()).collect();
            assert_eq!(order, want, "tail {tail}");
        }
    }

    #[test]
    fn a_transient_boost_ends_with_the_quantum_or_a_sleep() {
        let d = DispatchTable::solaris();
        for transient in [false, true] {
            let new = || {
                TimeSharing::new(d.clone(), 1, 29)
                    .unwrap()
                    .with_boost_transient(transient)
            };
            // quantum ends while running: tqexp of 29 (19), or of 59 (49)
            let mut q = new();
            q.enqueue(t(0), EnqueueReason::New);
            assert_eq!(q.pick_next(), Some(t(0)));
            q.boost(t(0));
            assert_eq!(q.level(t(0)), 59);
            q.enqueue(t(1), EnqueueReason::New); // at 29
                                                 // the expired thread gives way to t(1) only from 19
            assert_eq!(q.should_preempt(t(0)), transient);
            q.continue_running(t(0));
            assert_eq!(q.level(t(0)), if transient { 19 } else { 49 });
            // ... and a second quantum drops it further either way
            q.continue_running(t(0));
            assert_eq!(q.level(t(0)), if transient { 9 } else { 39 });
            // expired and queued
            let mut q = new();
            q.enqueue(t(0), EnqueueReason::New);
            q.boost(t(0));
            assert_eq!(q.pick_next(), Some(t(0)));
            q.enqueue(t(0), EnqueueReason::QuantumExpired);
            assert_eq!(q.level(t(0)), if transient { 19 } else { 49 });
            // sleeps and wakes: slpret of 29 (52), or of 59 (59)
            let mut q = new();
            q.enqueue(t(0), EnqueueReason::New);
            assert_eq!(q.pick_next(), Some(t(0)));
            q.boost(t(0));
            q.boost(t(0)); // a second boost keeps the first base
            q.enqueue(t(0), EnqueueReason::Woken);
            assert_eq!(q.level(t(0)), if transient { 52 } else { 59 });
            // preempted: the boost goes on (still 59 when queued again)
            let mut q = new();
            q.enqueue(t(0), EnqueueReason::New);
            q.boost(t(0));
            assert_eq!(q.pick_next(), Some(t(0)));
            q.enqueue(t(0), EnqueueReason::Preempted);
            assert_eq!(q.level(t(0)), 59);
            assert_eq!(q.pick_next(), Some(t(0)));
            q.continue_running(t(0));
            assert_eq!(q.level(t(0)), if transient { 19 } else { 49 });
            // lowered (spin-yield): the boost is over
            let mut q = new();
            q.enqueue(t(0), EnqueueReason::New);
            q.boost(t(0));
            q.lower(t(0));
            assert_eq!(q.pick_next(), Some(t(0)));
            q.continue_running(t(0));
            assert_eq!(q.level(t(0)), 0);
        }
    }

    #[test]
    fn boost_readings_parse_and_print() {
        for (text, want) in [
            ("top", BoostTo::Top),
            ("sleep_return", BoostTo::SleepReturn),
            ("sleep_return+0", BoostTo::SleepReturn),
            (" sleep_return+3 ", BoostTo::AboveSleepReturn(3)),
            ("57", BoostTo::Level(57)),
            ("0", BoostTo::Level(0)),
        ] {
            let got: BoostTo = text.parse().unwrap();
            assert_eq!(got, want, "{text}");
            assert_eq!(got.to_string().parse::<BoostTo>().unwrap(), want);
        }
        for bad in [
            "",
            "Top",
            "59.5",
            "-1",
            "64",
            "300",
            "sleep_return+",
            "sleep_return+x",
            "level",
        ] {
            let e = bad.parse::<BoostTo>().unwrap_err();
            assert_eq!(e.field, "boost_to", "{bad}");
            let line = e.to_string();
            assert!(
                !line.contains('\n') && line.starts_with("boost_to: "),
                "{line}"
            );
        }
        // serde: the same text, or an integer level
        #[derive(Debug, Serialize, Deserialize)]
        struct W {
            b: BoostTo,
        }
        let w: W = toml::from_str("b = 57").unwrap();
        assert_eq!(w.b, BoostTo::Level(57));
        let w: W = toml::from_str("b = \"sleep_return+2\"").unwrap();
        assert_eq!(w.b, BoostTo::AboveSleepReturn(2));
        assert_eq!(
            toml::to_string(&w).unwrap().trim(),
            "b = \"sleep_return+2\""
        );
        let e = toml::from_str::<W>("b = \"middle\"").unwrap_err();
        assert!(e.to_string().contains("is not allowed"), "{e}");
    }

    #[test]
    fn tables_load_from_toml() {
        let d = DispatchTable::solaris();
        let text = toml::to_string(&d).unwrap();
        assert!(text.contains("[[level]]"), "{text}");
        let back: DispatchTable = toml::from_str(&text).unwrap();
        assert_eq!(back, d);
        let two: DispatchTable = toml::from_str(
            "[[level]]\nquantum_ms = 100\ntqexp = 0\nslpret = 1\nmaxwait_s = 0\nlwait = 1\n\
             [[level]]\nquantum_ms = 10\ntqexp = 0\nslpret = 1\nmaxwait_s = 5\nlwait = 1\n",
        )
        .unwrap();
        assert!(two.validate().is_ok());
        assert!(toml::from_str::<DispatchTable>("[[level]]\nquantum = 1\n").is_err());
    }

    #[test]
    fn dispadmin_text_errors_name_the_line() {
        let e = DispatchTable::parse_dispadmin("RES=1000\n200 0 50 0\n").unwrap_err();
        assert_eq!(e.field, "dispatch_table");
        assert!(e.message.starts_with("line 2:"), "{e}");
        let e = DispatchTable::parse_dispadmin("100 0 5 0 0 # 0\n").unwrap_err();
        assert!(e.message.contains("slpret = 5 is not a level"), "{e}");
        // RES=100: quanta in 1/100 s.
        let d = DispatchTable::parse_dispadmin("RES=100\n20 0 1 0 1\n4 0 1 0 1\n").unwrap();
        assert_eq!(d.level[0].quantum_ms, 200);
        assert!(DispatchTable::parse_dispadmin("").is_err());
        assert!(DispatchTable::parse_dispadmin("RES=0\n1 0 0 0 0\n").is_err());
    }

    #[test]
    fn levels_move_as_the_table_says() {
        let mut ts = TimeSharing::new(DispatchTable::solaris(), 1000, 29).unwrap();
        ts.enqueue(t(1), EnqueueReason::New);
        ts.enqueue(t(2), EnqueueReason::New);
        assert_eq!(ts.pick_next(), Some(t(1)));
        assert_eq!(ts.quantum(t(1)), 120 * 1000);
        // t1 expires at 29: drops to 19 and t2 (29) goes first.
        assert!(ts.should_preempt(t(1)));
        ts.enqueue(t(1), EnqueueReason::QuantumExpired);
        assert_eq!(ts.level(t(1)), 19);
        assert_eq!(ts.pick_next(), Some(t(2)));
        // t2 expires too: t1 waits at 19, t2's expiry level, so t2 yields.
        assert!(ts.should_preempt(t(2)));
        ts.enqueue(t(2), EnqueueReason::QuantumExpired);
        assert_eq!(ts.pick_next(), Some(t(1)));
        // t1 expires with t2 queued at 19 above its expiry level 9: it
        // yields; alone, it keeps the processor and sinks to 9.
        assert!(ts.should_preempt(t(1)));
        assert_eq!(ts.pick_next(), Some(t(2)));
        assert!(!ts.should_preempt(t(2)));
        ts.continue_running(t(2));
        assert_eq!(ts.level(t(2)), 9);
        ts.enqueue(t(1), EnqueueReason::Yielded);
        assert_eq!(ts.level(t(1)), 19);
        assert_eq!(ts.pick_next(), Some(t(1)));
        // A woken thread returns high and preempts a lower runner.
        ts.enqueue(t(3), EnqueueReason::New);
        assert_eq!(ts.pick_next(), Some(t(3)));
        ts.enqueue(t(3), EnqueueReason::Woken); // from 29: slpret 52
        assert_eq!(ts.level(t(3)), 52);
        assert!(ts.preempts(t(3), t(2)));
        assert_eq!(ts.pick_next(), Some(t(3)));
        // Boost: top level, head of the queue.
        ts.enqueue(t(1), EnqueueReason::Yielded);
        ts.enqueue(t(2), EnqueueReason::Yielded);
        assert!(ts.boost(t(1)));
        assert_eq!(ts.level(t(1)), 59);
        assert_eq!(ts.queued(), vec![t(1), t(2)]);
        assert!(ts.lower(t(1)));
        assert_eq!(ts.level(t(1)), 0);
        assert_eq!(ts.pick_next(), Some(t(2)));
        assert_eq!(ts.pick_next(), Some(t(1)));
        assert_eq!(ts.pick_next(), None);
        // Boosting a running thread raises the level it will be queued at.
        assert!(ts.boost(t(2)));
        assert_eq!(ts.level(t(2)), 59);
    }

    #[test]
    fn starving_threads_are_promoted_after_maxwait() {
        let mut ts = TimeSharing::new(DispatchTable::solaris(), 1, 0).unwrap();
        ts.enqueue(t(1), EnqueueReason::New); // level 0: maxwait 0, lwait 50
        ts.on_second(); // waited 1 s > 0
        assert_eq!(ts.level(t(1)), 50);
        assert_eq!(ts.queued(), vec![t(1)]);
        // Level 59 waits 32000 s before promotion (to itself).
        ts.boost(t(1));
        for _ in 0..10 {
            ts.on_second();
        }
        assert_eq!(ts.level(t(1)), 59);
    }

    #[derive(Debug, Clone)]
    enum Op {
        Enqueue(u32, u8),
        Pick,
        Boost(u32),
        Lower(u32),
        Second,
        Continue(u32),
        Charge(u32, u8),
        Block(u32),
        SecondRunning(u32),
    }

    fn reason(k: u8) -> EnqueueReason {
        EnqueueReason::ALL[k as usize % EnqueueReason::ALL.len()]
    }

    proptest! {
        /// Levels stay in the table, the queue holds exactly the threads
        /// enqueued and not picked (each once), and picks are always from
        /// the highest non-empty level, under every reading of a boost (which
        /// never lowers a thread), with parsched's rules or Solaris'.
        #[test]
        fn time_sharing_invariants(
            initial in 0u8..60,
            to in prop_oneof![
                Just(BoostTo::Top),
                Just(BoostTo::SleepReturn),
                (1u8..64).prop_map(BoostTo::AboveSleepReturn),
                (0u8..60).prop_map(BoostTo::Level),
            ],
            tail in any::<bool>(),
            transient in any::<bool>(),
            solaris in any::<bool>(),
            ops in proptest::collection::vec(
                prop_oneof![
                    (0u32..12, any::<u8>()).prop_map(|(a, b)| Op::Enqueue(a, b)),
                    Just(Op::Pick),
                    (0u32..12).prop_map(Op::Boost),
                    (0u32..12).prop_map(Op::Lower),
                    Just(Op::Second),
                    (0u32..12).prop_map(Op::Continue),
                    (0u32..12, any::<u8>()).prop_map(|(a, b)| Op::Charge(a, b)),
                    (0u32..12).prop_map(Op::Block),
                    (0u32..12).prop_map(Op::SecondRunning),
                ],
                0..120,
            )
        ) {
            let mut ts = TimeSharing::new(DispatchTable::solaris(), 1, initial)
                .unwrap()
                .with_boost_to(to)
                .with_boost_at_tail(tail)
                .with_boost_transient(transient)
                .with_semantics(if solaris {
                    TsSemantics::Solaris
                } else {
                    TsSemantics::Parsched
                });
            let mut queued: std::collections::BTreeSet<u32> = Default::default();
            for op in ops {
                match op {
                    Op::Enqueue(i, r) => {
                        if queued.insert(i) {
                            ts.enqueue(t(i), reason(r));
                        }
                    }
                    Op::Pick => {
                        let top = queued.iter().map(|&i| ts.level(t(i))).max();
                        let got = ts.pick_next();
                        prop_assert_eq!(got.is_some(), top.is_some());
                        if let Some(g) = got {
                            prop_assert!(queued.remove(&g.0));
                            prop_assert_eq!(Some(ts.level(g)), top);
                        }
                    }
                    Op::Boost(i) => {
                        let before = ts.level(t(i));
                        ts.boost(t(i));
                        prop_assert!(ts.level(t(i)) >= before);
                        prop_assert_eq!(
                            ts.level(t(i)),
                            to.target(ts.table(), before)
                        );
                    }
                    Op::Lower(i) => { ts.lower(t(i)); }
                    Op::Second => ts.on_second(),
                    Op::Continue(i) => {
                        if !queued.contains(&i) {
                            ts.continue_running(t(i));
                        }
                    }
                    Op::Charge(i, ms) => ts.charge(t(i), ms as u64 * 1_000_000),
                    Op::Block(i) => {
                        if !queued.contains(&i) {
                            ts.blocked(t(i));
                        }
                    }
                    Op::SecondRunning(i) => {
                        if !queued.contains(&i) {
                            ts.on_second_running(t(i));
                        }
                    }
                }
                prop_assert_eq!(ts.len(), queued.len());
                let mut q: Vec<u32> = ts.queued().iter().map(|x| x.0).collect();
                q.sort_unstable();
                prop_assert_eq!(q, queued.iter().copied().collect::<Vec<_>>());
                for i in 0..12 {
                    prop_assert!(ts.level(t(i)) < 60);
                    let full = ts.table().level[ts.level(t(i)) as usize].quantum_ms as u64;
                    let q = ts.quantum(t(i));
                    prop_assert!(q > 0 && q <= 200);
                    prop_assert!(solaris || q == full);
                }
            }
        }
    }
}
