//! Programs are data: a thread runs a [`Program`], a small tree of [`Step`]s that is
//! interpreted lazily by a [`Cursor`].
//!
//! A `Repeat { count: 50_000, .. }` costs no memory per iteration: the cursor keeps
//! one frame per nesting level (at most [`MAX_DEPTH`]), and each `Compute` draws
//! its demand from its [`Dist`] only when the thread reaches it. The machine (the
//! simulator, or a real benchmark program driven by the runtime) asks the cursor
//! for the next [`Op`] and applies it; later issues add operations (send, receive,
//! touch a region, wait with a strategy) as new `Step`/`Op` variants, not new
//! engines.
//!
//! Memory regions (seed 004): a program declares its job's regions
//! ([`Program::regions`], each private to a thread or global to the job, with
//! a size in bytes) and [`Step::Touch`] makes a number of accesses within one.
//! A touch reaches the machine as one more operation, [`Op::Touch`]: machines
//! with a cache model time it; machines that model no caches reject programs
//! that [touch regions](Program::touches_regions) before running them with
//! their own typed error, and their `Op::Touch` arm returns that error too
//! (nothing panics on a touch).

use rand::Rng;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Deepest nesting of `Repeat` steps a program may have.
pub const MAX_DEPTH: usize = 8;

/// A distribution of a non-negative quantity in model time units.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Dist {
    /// Always `value`.
    Const { value: f64 },
    /// Uniform on `[lo, hi]`.
    Uniform { lo: f64, hi: f64 },
    /// Exponential with the given mean.
    Exponential { mean: f64 },
    /// `shift` plus an exponential of mean `mean` (mean `shift + mean`).
    ShiftedExponential { shift: f64, mean: f64 },
    /// A share of `total` split among the `width` siblings of a fork:
    /// uniform on `[m − s, m + s]` with `m = total / width` and
    /// `s = min(spread, m)` (so the share is never negative and its mean is `m`).
    /// Seed 000's PARA threads: `total = 100·d`, `spread = 10`.
    Share { total: f64, spread: f64 },
    /// One of `values`, each equally likely: any distribution a user brings
    /// as a sample (measured compute times, or draws from any law).
    Empirical { values: Arc<[f64]> },
}

impl Dist {
    /// Draws one value; `width` is the number of siblings (1 outside a fork).
    #[inline]
    pub fn sample<R: Rng + ?Sized>(&self, width: u32, rng: &mut R) -> f64 {
        match *self {
            Dist::Const { value } => value,
            Dist::Uniform { lo, hi } => lo + (hi - lo) * rng.random::<f64>(),
            Dist::Exponential { mean } => -mean * (1.0 - rng.random::<f64>()).ln(),
            Dist::ShiftedExponential { shift, mean } => {
                shift - mean * (1.0 - rng.random::<f64>()).ln()
            }
            Dist::Share { total, spread } => {
                let m = total / width.max(1) as f64;
                let s = spread.min(m);
                m - s + 2.0 * s * rng.random::<f64>()
            }
            Dist::Empirical { ref values } => values[rng.random_range(0..values.len())],
        }
    }

    /// The mean for a given width.
    pub fn mean(&self, width: u32) -> f64 {
        match *self {
            Dist::Const { value } => value,
            Dist::Uniform { lo, hi } => 0.5 * (lo + hi),
            Dist::Exponential { mean } => mean,
            Dist::ShiftedExponential { shift, mean } => shift + mean,
            Dist::Share { total, .. } => total / width.max(1) as f64,
            Dist::Empirical { ref values } => values.iter().sum::<f64>() / values.len() as f64,
        }
    }

    fn validate(&self) -> Result<(), String> {
        let ok = match *self {
            Dist::Empirical { ref values } => {
                !values.is_empty() && values.iter().all(|v| *v >= 0.0 && v.is_finite())
            }
            Dist::Const { value } => value >= 0.0 && value.is_finite(),
            Dist::Uniform { lo, hi } => lo >= 0.0 && hi >= lo && hi.is_finite(),
            Dist::Exponential { mean } => mean >= 0.0 && mean.is_finite(),
            Dist::ShiftedExponential { shift, mean } => {
                shift >= 0.0 && mean >= 0.0 && shift.is_finite() && mean.is_finite()
            }
            Dist::Share { total, spread } => {
                total >= 0.0 && spread >= 0.0 && total.is_finite() && spread.is_finite()
            }
        };
        if ok {
            Ok(())
        } else {
            Err(match self {
                Dist::Empirical { .. } => {
                    "invalid empirical distribution: it needs at least one value, all finite and \
                     non-negative"
                        .to_string()
                }
                _ => {
                    format!("invalid distribution {self:?}: values must be finite and non-negative")
                }
            })
        }
    }
}

/// One step of a program.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Step {
    /// Use the processor for a demand drawn from `demand` (before any overhead
    /// inflation the machine applies).
    Compute { demand: Dist },
    /// Fork a group of children running `child`, then wait for all of them.
    /// `desired` is the desired parallelism d; the number actually created, a,
    /// is decided by the scheduling policy when the fork is reached (moldable
    /// jobs with user-level parallelism restriction, seed 000 section 2).
    ForkJoin { desired: u32, child: Arc<Program> },
    /// Wait at a barrier shared by the job's threads (used from the
    /// synchronization issue on).
    Barrier,
    /// Run `body` `count` times, lazily.
    Repeat { count: u64, body: Vec<Step> },
    /// Send a message of `bytes` to a peer of the job (message passing, seed
    /// 003): the machine deposits it in the receiver's endpoint queue after
    /// the network's latency; the sender does not wait.
    Send { to: Peer, bytes: u32 },
    /// Receive the next message from a peer, waiting (with the job's waiting
    /// strategy) until one has arrived.
    Receive { from: Peer },
    /// Make `accesses` memory accesses within a region of the job (seed 004):
    /// `region` indexes the root program's [`Program::regions`]; `pattern`
    /// says how the accesses fall in it. How long they take is the machine's
    /// business (its cache model: hits, misses, and whether a region mapped
    /// to another cache is opened here or the thread micro-scheduled there).
    Touch {
        region: RegionRef,
        accesses: u64,
        #[serde(default)]
        pattern: Pattern,
    },
}

/// A region of the job: an index into the root program's
/// [`Program::regions`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RegionRef(pub u32);

impl RegionRef {
    pub fn idx(self) -> usize {
        self.0 as usize
    }
}

/// Who sees a region.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RegionScope {
    /// Each thread of the job has its own instance (heap or stack data of
    /// one thread; seed 004's private, possibly local, regions).
    #[default]
    Private,
    /// One instance shared by all the job's threads (code, shared data).
    /// Seed 004 maps global regions into every cache.
    Global,
}

/// A region declared by a job: its size and scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegionDecl {
    /// Size in bytes (> 0).
    pub bytes: u64,
    #[serde(default)]
    pub scope: RegionScope,
}

/// One instance of a region at run time: private regions have one per
/// thread (`rank` set), global ones one per job (`rank` is `None`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RegionInstance {
    pub region: RegionRef,
    pub rank: Option<u32>,
}

impl RegionInstance {
    /// The instance a thread of rank `rank` touches through `region`.
    pub fn of(region: RegionRef, decl: &RegionDecl, rank: u32) -> RegionInstance {
        RegionInstance {
            region,
            rank: match decl.scope {
                RegionScope::Private => Some(rank),
                RegionScope::Global => None,
            },
        }
    }
}

/// How a touch's accesses fall within its region. Later issues may add
/// patterns (strided, pointer chasing) as variants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    /// Independent uniformly random lines of the region (memlat).
    #[default]
    UniformRandom,
    /// A cyclic sweep through the region's lines in address order, each
    /// touch continuing where the thread's previous touch of the region
    /// stopped (the access pattern under which LRU loses a region that does
    /// not fit entirely: every line is evicted before it is reused).
    Sequential,
}

/// Another thread (rank) of the same job, named relative to the thread that
/// runs the step, so one program serves every rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "peer", rename_all = "snake_case")]
pub enum Peer {
    /// Rank `rank` (absolute).
    Rank { rank: u32 },
    /// Rank `(own + by) mod n`, for n ranks (neighbours, rings, butterflies).
    Offset { by: i32 },
    /// Rank `own XOR mask`: the partner along one axis of a hypercube of
    /// processes (NPB MG's 2 × 2 × 2 grid: one partner per axis). Absent
    /// when the partner is not below n.
    Xor { mask: u32 },
    /// The neighbour `(dx, dy)` away on a non-periodic grid `xdim` ranks
    /// wide, ranks numbered `x + xdim·y` (NPB LU's wavefront). Absent off
    /// the grid's edge: a send to or receive from an absent peer is skipped.
    Grid { dx: i32, dy: i32, xdim: u32 },
    /// Whoever sent (receive only).
    Any,
}

impl Peer {
    /// The peer's rank for a thread of rank `own` among `n` (`None` for
    /// [`Peer::Any`] or an absolute rank out of range).
    pub fn resolve(self, own: u32, n: u32) -> Option<u32> {
        match self {
            Peer::Rank { rank } => (rank < n).then_some(rank),
            Peer::Offset { by } => {
                let n = n as i64;
                (n > 0).then(|| (own as i64 + by as i64).rem_euclid(n) as u32)
            }
            Peer::Xor { mask } => Some(own ^ mask).filter(|&r| r < n),
            Peer::Grid { dx, dy, xdim } => {
                let w = xdim.max(1) as i64;
                let (x, y) = (own as i64 % w + dx as i64, own as i64 / w + dy as i64);
                let r = x + w * y;
                (x >= 0 && x < w && y >= 0 && r < n as i64).then_some(r as u32)
            }
            Peer::Any => None,
        }
    }

    /// True when the peer does not exist for rank `own` among `n` (an
    /// [`Peer::Xor`] partner or [`Peer::Grid`] neighbour outside the job):
    /// the step naming it is skipped.
    pub fn absent(self, own: u32, n: u32) -> bool {
        matches!(self, Peer::Xor { .. } | Peer::Grid { .. }) && self.resolve(own, n).is_none()
    }
}

/// A program: a sequence of steps, and (at the root of a job's program) the
/// job's memory regions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Program {
    pub steps: Vec<Step>,
    /// The job's regions, declared on the root program (fork children use
    /// the root's and declare none); [`Step::Touch`] names one by index.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub regions: Vec<RegionDecl>,
}

impl Program {
    pub fn new(steps: Vec<Step>) -> Program {
        Program {
            steps,
            regions: Vec::new(),
        }
    }

    /// A program with regions.
    pub fn with_regions(steps: Vec<Step>, regions: Vec<RegionDecl>) -> Program {
        Program { steps, regions }
    }

    /// Seed 004's memlat (§3.1): two private regions of `region_bytes` each;
    /// `access_time` uniformly random accesses within the first, then as many
    /// within the second, `rounds` times (lazily: one `Repeat` of two
    /// touches, whatever `rounds`).
    pub fn memlat(region_bytes: u64, access_time: u64, rounds: u64) -> Program {
        let touch = |r| Step::Touch {
            region: RegionRef(r),
            accesses: access_time,
            pattern: Pattern::UniformRandom,
        };
        let decl = RegionDecl {
            bytes: region_bytes,
            scope: RegionScope::Private,
        };
        Program::with_regions(
            vec![Step::Repeat {
                count: rounds,
                body: vec![touch(0), touch(1)],
            }],
            vec![decl, decl],
        )
    }

    /// Whether any step (in fork children too) touches a region: machines
    /// without a cache model reject such programs.
    pub fn touches_regions(&self) -> bool {
        fn any(steps: &[Step]) -> bool {
            steps.iter().any(|s| match s {
                Step::Touch { .. } => true,
                Step::Repeat { body, .. } => any(body),
                Step::ForkJoin { child, .. } => child.touches_regions(),
                _ => false,
            })
        }
        any(&self.steps)
    }

    /// The job's working set if every declared region is touched: global
    /// regions once, private ones once per thread of `threads`.
    pub fn region_bytes(&self, threads: u32) -> u64 {
        self.regions
            .iter()
            .map(|r| match r.scope {
                RegionScope::Global => r.bytes,
                RegionScope::Private => r.bytes * threads as u64,
            })
            .sum()
    }

    /// Seed 000's fork-join job: INIT on the master, a moldable PARA phase of
    /// desired parallelism `d` sharing `para_work` units, FINAL on the master.
    pub fn fork_join(init: f64, d: u32, para_work: f64, spread: f64, final_: f64) -> Program {
        let child = Program::new(vec![Step::Compute {
            demand: Dist::Share {
                total: para_work,
                spread,
            },
        }]);
        Program::new(vec![
            Step::Compute {
                demand: Dist::Const { value: init },
            },
            Step::ForkJoin {
                desired: d,
                child: Arc::new(child),
            },
            Step::Compute {
                demand: Dist::Const { value: final_ },
            },
        ])
    }

    /// A barrier of `n` ranks built from messages: the dissemination barrier
    /// (Hensgen, Finkel and Manber 1988), ⌈log2 n⌉ rounds; in round k each
    /// rank sends `bytes` to rank + 2^k and receives from rank − 2^k.
    pub fn message_barrier(n: u32, bytes: u32) -> Vec<Step> {
        let mut steps = Vec::new();
        let mut k = 1u64;
        while k < n as u64 {
            steps.push(Step::Send {
                to: Peer::Offset { by: k as i32 },
                bytes,
            });
            steps.push(Step::Receive {
                from: Peer::Offset { by: -(k as i32) },
            });
            k *= 2;
        }
        steps
    }

    /// A global reduction (all-reduce) of `n` ranks from messages: the same
    /// ⌈log2 n⌉ dissemination rounds carrying `bytes` of partial results,
    /// after which every rank holds the total (for n a power of two it is
    /// the recursive-doubling exchange; otherwise ranks may count a partial
    /// twice, which costs the same time — the simulator moves time, not
    /// values).
    pub fn all_reduce(n: u32, bytes: u32) -> Vec<Step> {
        Program::message_barrier(n, bytes)
    }

    /// Checks distributions, fork widths, nesting depth, and regions (sizes
    /// positive, touches naming a declared region, regions declared on the
    /// root program only).
    pub fn validate(&self) -> Result<(), String> {
        if let Some(i) = self.regions.iter().position(|r| r.bytes == 0) {
            return Err(format!(
                "region {i} has size 0: regions need at least one byte"
            ));
        }
        self.validate_with(self.regions.len())
    }

    fn validate_with(&self, regions: usize) -> Result<(), String> {
        fn walk(steps: &[Step], depth: usize, regions: usize) -> Result<(), String> {
            if depth >= MAX_DEPTH {
                return Err(format!(
                    "programs may nest Repeat at most {} deep",
                    MAX_DEPTH - 1
                ));
            }
            for s in steps {
                match s {
                    Step::Compute { demand } => demand.validate()?,
                    Step::ForkJoin { desired, child } => {
                        if *desired == 0 {
                            return Err("fork width (desired parallelism) must be >= 1".into());
                        }
                        if !child.regions.is_empty() {
                            return Err("regions are declared on the job's root program, \
                                        not in a fork's child"
                                .into());
                        }
                        child.validate_with(regions)?;
                    }
                    Step::Barrier => {}
                    Step::Repeat { body, .. } => walk(body, depth + 1, regions)?,
                    Step::Touch { region, .. } => {
                        if region.idx() >= regions {
                            return Err(format!(
                                "touch of region {} but the job declares {regions} region(s)",
                                region.0
                            ));
                        }
                    }
                    Step::Send { to, .. } => {
                        if *to == Peer::Any {
                            return Err(
                                "a send needs a destination (rank or offset), not any".into()
                            );
                        }
                    }
                    Step::Receive { .. } => {}
                }
            }
            Ok(())
        }
        walk(&self.steps, 0, regions)
    }
}

/// The next operation a thread performs, produced by a [`Cursor`].
#[derive(Debug, Clone, PartialEq)]
pub enum Op<'p> {
    /// Compute for this many model units (not yet inflated by overheads).
    Compute { units: f64 },
    /// Fork children running `child` (desired parallelism `desired`) and join them.
    ForkJoin {
        desired: u32,
        child: &'p Arc<Program>,
    },
    /// Wait at the job's barrier.
    Barrier,
    /// Send `bytes` to `to` (resolve it with the thread's rank).
    Send { to: Peer, bytes: u32 },
    /// Receive the next message from `from`.
    Receive { from: Peer },
    /// Make `accesses` accesses within `region` (of the job's regions; the
    /// thread's own instance if the region is private), falling as
    /// `pattern` says. Only machines with a cache model run it.
    Touch {
        region: RegionRef,
        accesses: u64,
        pattern: Pattern,
    },
    /// The program has ended.
    Exit,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Frame {
    /// Index of the next step in this level's step list.
    idx: u32,
    /// Iterations of this level's body still to run, counting the current one
    /// (unused at level 0).
    left: u64,
}

/// A position in a program: constant size whatever the iteration counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cursor {
    frames: [Frame; MAX_DEPTH],
    depth: u8,
    /// The number of siblings this thread was forked with (for `Dist::Share`).
    width: u32,
}

impl Cursor {
    /// A cursor at the start of a program, for a thread forked among `width` siblings.
    pub fn new(width: u32) -> Cursor {
        Cursor {
            frames: [Frame::default(); MAX_DEPTH],
            depth: 0,
            width,
        }
    }

    pub fn width(&self) -> u32 {
        self.width
    }

    fn steps_at<'p>(prog: &'p Program, frames: &[Frame]) -> &'p [Step] {
        let mut steps: &'p [Step] = &prog.steps;
        for f in frames {
            match &steps[f.idx as usize] {
                Step::Repeat { body, .. } => steps = body,
                _ => unreachable!("cursor frames point at Repeat steps"),
            }
        }
        steps
    }

    /// Skips `n` whole passes of the innermost `Repeat` body, as if [`Cursor::next`]
    /// had been called through them (the caller makes their draws itself, in the
    /// same order): the cursor keeps its place in the body and `n` fewer passes
    /// remain. For simulators that run many iterations of a simple loop in one
    /// step. Panics unless the cursor is inside a `Repeat` with more than `n`
    /// passes left (counting the current one).
    pub fn skip_passes(&mut self, n: u64) {
        let d = self.depth as usize;
        assert!(d > 0, "skip_passes outside a Repeat");
        let f = &mut self.frames[d];
        assert!(f.left > n, "skip_passes past the end of the Repeat");
        f.left -= n;
    }

    /// Advances to and returns the next operation, drawing compute demands
    /// from `rng`. A [`Step::Touch`] comes back as [`Op::Touch`]; machines
    /// without a cache model return their own error for it.
    pub fn next<'p, R: Rng + ?Sized>(&mut self, prog: &'p Program, rng: &mut R) -> Op<'p> {
        loop {
            let d = self.depth as usize;
            let steps = Self::steps_at(prog, &self.frames[..d]);
            let f = self.frames[d];
            if f.idx as usize >= steps.len() {
                if d == 0 {
                    return Op::Exit;
                }
                if f.left > 1 {
                    self.frames[d] = Frame {
                        idx: 0,
                        left: f.left - 1,
                    };
                } else {
                    self.depth -= 1;
                    self.frames[d - 1].idx += 1;
                }
                continue;
            }
            match &steps[f.idx as usize] {
                Step::Repeat { count, body } => {
                    if *count == 0 || body.is_empty() {
                        self.frames[d].idx += 1;
                    } else {
                        assert!(d + 1 < MAX_DEPTH, "program nests deeper than MAX_DEPTH");
                        self.depth += 1;
                        self.frames[d + 1] = Frame {
                            idx: 0,
                            left: *count,
                        };
                    }
                }
                Step::Compute { demand } => {
                    self.frames[d].idx += 1;
                    return Op::Compute {
                        units: demand.sample(self.width, rng),
                    };
                }
                Step::ForkJoin { desired, child } => {
                    self.frames[d].idx += 1;
                    return Op::ForkJoin {
                        desired: *desired,
                        child,
                    };
                }
                Step::Barrier => {
                    self.frames[d].idx += 1;
                    return Op::Barrier;
                }
                Step::Send { to, bytes } => {
                    self.frames[d].idx += 1;
                    return Op::Send {
                        to: *to,
                        bytes: *bytes,
                    };
                }
                Step::Receive { from } => {
                    self.frames[d].idx += 1;
                    return Op::Receive { from: *from };
                }
                Step::Touch {
                    region,
                    accesses,
                    pattern,
                } => {
                    self.frames[d].idx += 1;
                    return Op::Touch {
                        region: *region,
                        accesses: *accesses,
                        pattern: *pattern,
                    };
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    fn c(v: f64) -> Step {
        Step::Compute {
            demand: Dist::Const { value: v },
        }
    }

    #[test]
    fn xor_and_grid_peers_resolve_within_the_job_and_are_absent_outside() {
        // NPB MG's 2 x 2 x 2 grid: rank 5 = (1,0,1) pairs with 4, 7 and 1.
        let xor = |m| Peer::Xor { mask: m }.resolve(5, 8);
        assert_eq!((xor(1), xor(2), xor(4)), (Some(4), Some(7), Some(1)));
        assert!(Peer::Xor { mask: 8 }.absent(5, 8));
        // NPB LU's 4 x 2 grid: rank 5 = (x 1, y 1); north is x-1, west y-1.
        let g = |dx, dy, own| Peer::Grid { dx, dy, xdim: 4 }.resolve(own, 8);
        assert_eq!(g(-1, 0, 5), Some(4));
        assert_eq!(g(0, -1, 5), Some(1));
        assert_eq!(g(1, 0, 7), None, "the last column does not wrap");
        assert_eq!(g(-1, 0, 4), None, "the first column does not wrap");
        assert_eq!(g(0, 1, 6), None, "past the last row");
        assert!(Peer::Grid {
            dx: 0,
            dy: -1,
            xdim: 4
        }
        .absent(2, 8));
        assert!(!Peer::Offset { by: 9 }.absent(2, 8));
        assert!(!Peer::Any.absent(2, 8));
        // Every present neighbour is symmetric: b is a's east iff a is b's west.
        for a in 0..8 {
            if let Some(b) = g(1, 0, a) {
                assert_eq!(g(-1, 0, b), Some(a));
            }
            if let Some(b) = g(0, 1, a) {
                assert_eq!(g(0, -1, b), Some(a));
            }
        }
    }

    #[test]
    fn empirical_draws_only_its_values_evenly() {
        let d = Dist::Empirical {
            values: vec![1.0, 2.0, 4.0].into(),
        };
        assert_eq!(d.mean(1), 7.0 / 3.0);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(9);
        let mut counts = [0u32; 3];
        for _ in 0..30_000 {
            let x = d.sample(1, &mut rng);
            counts[[1.0, 2.0, 4.0].iter().position(|v| *v == x).unwrap()] += 1;
        }
        assert!(
            counts.iter().all(|c| (9_400..10_600).contains(c)),
            "{counts:?}"
        );
        let p = |values: Vec<f64>| {
            Program::new(vec![Step::Compute {
                demand: Dist::Empirical {
                    values: values.into(),
                },
            }])
            .validate()
        };
        assert!(p(vec![]).is_err() && p(vec![f64::NAN]).is_err() && p(vec![0.5]).is_ok());
    }

    #[test]
    fn skip_passes_is_next_through_the_passes() {
        let p = Program::new(vec![Step::Repeat {
            count: 5,
            body: vec![
                Step::Compute {
                    demand: Dist::Uniform { lo: 0.0, hi: 1.0 },
                },
                Step::Barrier,
            ],
        }]);
        let (mut r1, mut r2) = (
            Xoshiro256PlusPlus::seed_from_u64(3),
            Xoshiro256PlusPlus::seed_from_u64(3),
        );
        let (mut a, mut b) = (Cursor::new(2), Cursor::new(2));
        assert!(matches!(a.next(&p, &mut r1), Op::Compute { .. }));
        assert!(matches!(b.next(&p, &mut r2), Op::Compute { .. }));
        // a walks two passes; b skips them, drawing the same numbers itself.
        for _ in 0..2 {
            assert_eq!(a.next(&p, &mut r1), Op::Barrier);
            assert!(matches!(a.next(&p, &mut r1), Op::Compute { .. }));
            let _ = Dist::Uniform { lo: 0.0, hi: 1.0 }.sample(2, &mut r2);
        }
        b.skip_passes(2);
        let rest = |c: &mut Cursor, r: &mut Xoshiro256PlusPlus| {
            let mut out = vec![];
            loop {
                match c.next(&p, r) {
                    Op::Exit => break out,
                    Op::Compute { units } => out.push(format!("c{units}")),
                    op => out.push(format!("{op:?}")),
                }
            }
        };
        let ra = rest(&mut a, &mut r1);
        assert_eq!(ra, rest(&mut b, &mut r2));
        assert_eq!(ra.len(), 5, "{ra:?}"); // 2 passes left after the current: B C B C B
    }

    fn run_all(p: &Program) -> Vec<String> {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let mut cur = Cursor::new(1);
        let mut out = vec![];
        loop {
            match cur.next(p, &mut rng) {
                Op::Exit => break,
                Op::Compute { units } => out.push(format!("c{units}")),
                Op::Barrier => out.push("b".into()),
                Op::ForkJoin { desired, .. } => out.push(format!("f{desired}")),
                Op::Send { to, bytes } => out.push(format!("s{to:?}:{bytes}")),
                Op::Receive { from } => out.push(format!("r{from:?}")),
                Op::Touch {
                    region, accesses, ..
                } => out.push(format!("t{}:{accesses}", region.0)),
            }
        }
        out
    }

    #[test]
    fn nested_repeats_unroll_in_order() {
        let p = Program::new(vec![
            c(1.0),
            Step::Repeat {
                count: 2,
                body: vec![
                    c(2.0),
                    Step::Repeat {
                        count: 3,
                        body: vec![Step::Barrier],
                    },
                ],
            },
            Step::Repeat {
                count: 0,
                body: vec![c(9.0)],
            },
            c(3.0),
        ]);
        assert_eq!(run_all(&p).join(" "), "c1 c2 b b b c2 b b b c3");
    }

    #[test]
    fn long_repeats_cost_no_memory() {
        let p = Program::new(vec![Step::Repeat {
            count: 50_000,
            body: vec![c(1.0), Step::Barrier],
        }]);
        assert_eq!(run_all(&p).len(), 100_000);
        assert!(std::mem::size_of::<Cursor>() <= 160);
    }

    #[test]
    fn fork_join_program_shape() {
        let p = Program::fork_join(10.0, 20, 2000.0, 10.0, 10.0);
        p.validate().unwrap();
        assert_eq!(run_all(&p).join(" "), "c10 f20 c10");
    }

    #[test]
    fn share_is_centred_on_total_over_width() {
        let d = Dist::Share {
            total: 2000.0,
            spread: 10.0,
        };
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(2);
        for _ in 0..1000 {
            let v = d.sample(8, &mut rng);
            assert!((240.0..=260.0).contains(&v), "{v}");
        }
        // s = min(spread, m) keeps tiny shares non-negative
        let small = Dist::Share {
            total: 5.0,
            spread: 10.0,
        };
        for _ in 0..1000 {
            assert!(small.sample(2, &mut rng) >= 0.0);
        }
        assert_eq!(d.mean(8), 250.0);
    }

    #[test]
    fn validation_rejects_bad_programs() {
        let bad = Program::new(vec![Step::Compute {
            demand: Dist::Uniform { lo: 5.0, hi: 1.0 },
        }]);
        assert!(bad.validate().is_err());
        let mut deep = vec![c(1.0)];
        for _ in 0..MAX_DEPTH {
            deep = vec![Step::Repeat {
                count: 1,
                body: deep,
            }];
        }
        assert!(Program::new(deep).validate().is_err());
    }

    #[test]
    fn message_steps_run_lazily_and_resolve_peers() {
        let body = vec![
            c(1.0),
            Step::Send {
                to: Peer::Offset { by: 1 },
                bytes: 64,
            },
            Step::Receive { from: Peer::Any },
        ];
        let p = Program::new(vec![Step::Repeat {
            count: 20_000,
            body,
        }]);
        p.validate().unwrap();
        let mut cur = Cursor::new(1);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let (mut sends, mut recvs) = (0, 0);
        loop {
            match cur.next(&p, &mut rng) {
                Op::Send { to, bytes } => {
                    assert_eq!((to, bytes), (Peer::Offset { by: 1 }, 64));
                    sends += 1;
                }
                Op::Receive { from } => {
                    assert_eq!(from, Peer::Any);
                    recvs += 1;
                }
                Op::Exit => break,
                _ => {}
            }
        }
        assert_eq!((sends, recvs), (20_000, 20_000));
        assert_eq!(Peer::Offset { by: -1 }.resolve(0, 8), Some(7));
        assert_eq!(Peer::Offset { by: 9 }.resolve(3, 8), Some(4));
        assert_eq!(Peer::Rank { rank: 8 }.resolve(0, 8), None);
        assert_eq!(Peer::Any.resolve(0, 8), None);
        let bad = Program::new(vec![Step::Send {
            to: Peer::Any,
            bytes: 1,
        }]);
        assert!(bad.validate().is_err());
    }

    #[test]
    fn memlat_touches_two_regions_alternately_and_lazily() {
        let p = Program::memlat(3 << 20, 65_536, 1_000_000);
        p.validate().unwrap();
        assert!(p.touches_regions());
        assert_eq!(p.regions.len(), 2);
        assert_eq!(p.region_bytes(1), 6 << 20);
        assert_eq!(p.region_bytes(4), 24 << 20); // private: one pair per thread
        let mut cur = Cursor::new(1);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        for i in 0..10_000u32 {
            match cur.next(&p, &mut rng) {
                Op::Touch {
                    region,
                    accesses,
                    pattern,
                } => {
                    assert_eq!(region, RegionRef(i % 2));
                    assert_eq!((accesses, pattern), (65_536, Pattern::UniformRandom));
                }
                other => panic!("{other:?}"),
            }
        }
        assert!(std::mem::size_of::<Cursor>() <= 160);
        // three rounds end after six touches
        let p3 = Program::memlat(1024, 4, 3);
        let mut cur = Cursor::new(1);
        let n = std::iter::from_fn(|| match cur.next(&p3, &mut rng) {
            Op::Exit => None,
            t => Some(t),
        })
        .count();
        assert_eq!(n, 6);
    }

    #[test]
    fn region_declarations_are_checked() {
        let touch = |r| Step::Touch {
            region: RegionRef(r),
            accesses: 10,
            pattern: Pattern::UniformRandom,
        };
        let g = RegionDecl {
            bytes: 4096,
            scope: RegionScope::Global,
        };
        let ok = Program::with_regions(vec![touch(0)], vec![g]);
        ok.validate().unwrap();
        let e = Program::with_regions(vec![touch(1)], vec![g])
            .validate()
            .unwrap_err();
        assert!(e.contains("declares 1 region"), "{e}");
        let zero = RegionDecl { bytes: 0, ..g };
        assert!(Program::with_regions(vec![], vec![zero])
            .validate()
            .is_err());
        // fork children touch the root's regions and declare none
        let child = Arc::new(Program::new(vec![touch(0)]));
        let root = Program::with_regions(
            vec![Step::ForkJoin {
                desired: 4,
                child: child.clone(),
            }],
            vec![g],
        );
        root.validate().unwrap();
        assert!(root.touches_regions());
        assert!(!Program::fork_join(1.0, 2, 10.0, 1.0, 1.0).touches_regions());
        let bad_child = Arc::new(Program::with_regions(vec![touch(0)], vec![g]));
        let bad = Program::with_regions(
            vec![Step::ForkJoin {
                desired: 2,
                child: bad_child,
            }],
            vec![g],
        );
        assert!(bad.validate().unwrap_err().contains("root program"));
        // instances: private per rank, global shared
        let p = RegionDecl {
            bytes: 1,
            scope: RegionScope::Private,
        };
        assert_eq!(RegionInstance::of(RegionRef(0), &p, 3).rank, Some(3));
        assert_eq!(RegionInstance::of(RegionRef(0), &g, 3).rank, None);
    }

    #[test]
    fn regions_read_from_toml() {
        let text = r#"
            [[regions]]
            bytes = 4194304
            [[regions]]
            bytes = 65536
            scope = "global"
            [[steps]]
            op = "repeat"
            count = 10
            [[steps.body]]
            op = "touch"
            region = 0
            accesses = 4096
            [[steps.body]]
            op = "touch"
            region = 1
            accesses = 16
            pattern = "uniform_random"
        "#;
        let p: Program = toml::from_str(text).unwrap();
        p.validate().unwrap();
        assert_eq!(p.regions[0].scope, RegionScope::Private);
        assert_eq!(p.regions[1].scope, RegionScope::Global);
        let m = Program::memlat(1 << 20, 4096, 10);
        let back: Program = toml::from_str(&toml::to_string(&m).unwrap()).unwrap();
        assert_eq!(back, m);
        // programs without regions serialize as before (no `regions` key)
        assert!(!toml::to_string(&Program::new(vec![c(1.0)]))
            .unwrap()
            .contains("regions"));
    }

    #[test]
    fn a_touch_is_an_operation() {
        // Touches come out of `next` like any other step, in program order.
        let p = Program::with_regions(
            vec![
                c(1.0),
                Step::Repeat {
                    count: 2,
                    body: vec![Step::Touch {
                        region: RegionRef(0),
                        accesses: 7,
                        pattern: Pattern::Sequential,
                    }],
                },
            ],
            vec![RegionDecl {
                bytes: 64,
                scope: RegionScope::Private,
            }],
        );
        p.validate().unwrap();
        assert_eq!(run_all(&p).join(" "), "c1 t0:7 t0:7");
    }

    proptest::proptest! {
        /// The message barrier (and all-reduce) pairs every send with a
        /// receive: in each round the rank a thread sends to expects exactly
        /// that thread, and there are ⌈log2 n⌉ rounds.
        #[test]
        fn message_barrier_pairs_every_send(n in 1u32..300) {
            let steps = Program::message_barrier(n, 8);
            let rounds = if n <= 1 { 0 } else { 32 - (n - 1).leading_zeros() } as usize;
            proptest::prop_assert_eq!(steps.len(), 2 * rounds);
            for pair in steps.chunks(2) {
                let (Step::Send { to, .. }, Step::Receive { from }) = (&pair[0], &pair[1]) else {
                    return Err(proptest::test_runner::TestCaseError::fail("send then receive"));
                };
                let mut received = vec![0u32; n as usize];
                for r in 0..n {
                    let dest = to.resolve(r, n).unwrap();
                    proptest::prop_assert_eq!(from.resolve(dest, n), Some(r));
                    received[dest as usize] += 1;
                }
                proptest::prop_assert!(received.iter().all(|&k| k == 1));
            }
            proptest::prop_assert_eq!(Program::all_reduce(n, 8).len(), steps.len());
        }
    }
}
