"""An independent reference model of seed 001's uncoordinated schemes:
per-processor round robin with barrier blocking or busy waiting, in plain Python.

Why a second implementation: some of the seed's equations — (10), (12), (13)
and (6) for uncoordinated busy waiting — part from parsched's simulator by
more than 5% in parts of the regime where the seed says they hold. This module
re-derives those runs from the seed's mechanism alone, written apart from
the Rust simulator (no shared code, no event engine, no fast paths, no gang
matrix), so that the departures can be attributed: if this model and the
simulator agree with each other and both part from an equation, the
equation — an approximation — is what parts.

The mechanism (seed 001, §2.2 "Blocking Mechanism", §3.3):

* ``n`` processors; the measured gang has thread ``i`` on processor ``i``; each
  processor also carries ``l − 1`` competitors: threads of ``l − 1`` further
  gangs like the measured one (``competitors = "same"``, the seed's case (i))
  or independent compute-bound threads (``"compute"``, case (ii));
* round robin per processor with quantum ``tq``: at a quantum's end the
  running thread goes to the tail if another thread is ready, else it goes on;
  dispatching a thread other than the processor's previous one costs ``tcs``
  before its quantum starts;
* a thread computes U(grain, grain + var) per iteration (``dist =
  "exponential"``: grain + Exp(mean var)), plus ``barrier_cost``, then
  arrives at its gang's barrier; the last to arrive releases the others and
  continues at once; the others block, which costs ``alpha·tcs`` of
  processor time (covering the switch to whatever runs next);
  a released thread joins its processor's queue at the tail (``wakeup =
  "tail"``, rigid round robin) or the head (``"priority"``), or runs at once on
  an idle processor; with ``wait = "busy"`` the others spin instead, keeping
  their processor until their quantum ends, and compute again as soon as they
  hold it after the release;
* processors start out of step: each first runs a skewing activity of
  U(0, tq), then its threads in a random order.

It is slow (a few hundred thousand events per second) and meant for a few
thousand iterations. The result is the measured gang's mean time per
iteration after ``warmup`` iterations (with ``warmup = 0``: from the first
start of a measured thread, the simulator's window) and the share of
processor time with nothing to run (``idle``).
"""

from __future__ import annotations

import heapq
import math
import random
from collections import deque
from dataclasses import dataclass

__all__ = ["ReferenceResult", "ps_alike_coarse", "reference_run"]

SKEW, RUN, IDLE = range(3)


@dataclass(frozen=True)
class ReferenceResult:
    time_per_iteration: float
    """Measured gang, ms per iteration (after the warm-up)."""
    idle: float
    """Fraction of processor time with nothing ready (after the warm-up)."""
    iterations: int


def reference_run(
    n: int,
    l: int,
    grain: float,
    var: float,
    *,
    k: int = 2000,
    warmup: int = 100,
    tq: float = 50.0,
    tcs: float = 0.2,
    alpha: float = 1.5,
    barrier_cost: float = 0.0,
    competitors: str = "same",
    wakeup: str = "tail",
    wait: str = "block",
    dist: str = "uniform",
    skew: bool = True,
    seed: int = 1,
) -> ReferenceResult:
    """Run the reference model until the measured gang (gang 0) has completed
    ``warmup + k`` iterations; see the module docstring."""
    if n < 1 or l < 1 or k < 1 or warmup < 0:
        raise ValueError("n, l, k >= 1 and warmup >= 0 required")
    if not (grain >= 0 and var >= 0 and barrier_cost >= 0 and grain + var + barrier_cost > 0):
        raise ValueError("grain, var, barrier_cost >= 0, and some compute per iteration")
    if not (tq > 0 and 0 <= tcs < tq and alpha >= 0):
        raise ValueError("tq > 0, 0 <= tcs < tq and alpha >= 0 required")
    if competitors not in ("same", "compute") or wakeup not in ("tail", "priority") \
            or wait not in ("block", "busy") or dist not in ("uniform", "exponential"):
        raise ValueError("competitors in {same, compute}, wakeup in {tail, priority}, "
                         "wait in {block, busy}, dist in {uniform, exponential}")
    params = _Params(n, l, grain, var, k, warmup, tq, tcs, alpha, barrier_cost, competitors,
                     wakeup, wait, dist, skew)
    return _Run(params, random.Random(seed)).run()


@dataclass(frozen=True)
class _Params:
    """:func:`reference_run`'s arguments (checked)."""

    n: int
    l: int
    grain: float
    var: float
    k: int
    warmup: int
    tq: float
    tcs: float
    alpha: float
    barrier_cost: float
    competitors: str
    wakeup: str
    wait: str
    dist: str
    skew: bool


class _Run:
    """One run's state (threads, per-processor queues and modes, the event heap)
    and its steps: dispatch, barrier arrival and release, quantum end."""

    def __init__(self, prm: _Params, rng: random.Random) -> None:
        self.prm = prm
        self.rng = rng
        n, l = prm.n, prm.l
        self.gangs = l if prm.competitors == "same" else 1  # iterating gangs
        # threads 0 .. gangs*n-1 iterate (thread g*n + i on processor i); the
        # compute-bound competitors, if any, come after them
        self.n_iter = n_iter = self.gangs * n
        extra = (l - 1) * n if prm.competitors == "compute" else 0
        self.proc_of = proc_of = [t % n for t in range(n_iter + extra)]
        self.left = [self.draw() for _ in range(n_iter)]
        self.arrived = [0] * self.gangs
        self.waiters: list[list[int]] = [[] for _ in range(self.gangs)]
        self.spinning = [False] * n_iter
        self.queues: list[deque[int]] = [deque() for _ in range(n)]
        for p in range(n):
            mine = [t for t in range(len(proc_of)) if proc_of[t] == p]
            rng.shuffle(mine)
            self.queues[p].extend(mine)
        self.mode = [SKEW] * n
        self.running = [-1] * n  # the thread in RUN mode
        self.prev = [-1] * n  # the last thread that ran: dispatching it again is free
        self.free_next = [False] * n  # a blocking paid for the next dispatch
        self.seg_start = [0.0] * n  # start of the running thread's current compute
        self.busy_until = [0.0] * n  # end of a blocking's overhead
        self.q_end = [0.0] * n  # end of its quantum
        self.version = [0] * n  # stale events are skipped
        self.idle_since = [0.0] * n
        self.idle_total = 0.0
        self.heap: list[tuple[float, int, int, int]] = []  # (time, seq, processor, version)
        self.seq = 0
        self.done = 0
        self.t0 = math.nan  # start of the measured window
        self.idle0 = 0.0

    def draw(self) -> float:
        """One iteration's compute (barrier cost included)."""
        prm, rng = self.prm, self.rng
        extra = rng.random() * prm.var if prm.dist == "uniform" else (
            rng.expovariate(1.0 / prm.var) if prm.var > 0 else 0.0)
        return prm.barrier_cost + prm.grain + extra

    def push(self, time: float, p: int) -> None:
        self.version[p] += 1
        self.seq += 1
        heapq.heappush(self.heap, (time, self.seq, p, self.version[p]))

    def arm(self, p: int) -> None:
        """The running thread's next event: its compute's end or its quantum's."""
        t = self.running[p]
        end = self.q_end[p]
        if t < self.n_iter and not self.spinning[t]:
            end = min(end, self.seg_start[p] + self.left[t])
        self.push(end, p)

    def dispatch(self, p: int, now: float) -> None:
        """The head of p's queue runs after the processor's pending overhead
        and the switch (free after a blocking, which paid for it); an empty
        queue leaves p idle once the overhead ends."""
        prm = self.prm
        start = max(now, self.busy_until[p])
        if not self.queues[p]:
            self.mode[p] = IDLE
            self.idle_since[p] = start
            return
        t = self.queues[p].popleft()
        cost = 0.0 if (t == self.prev[p] or self.free_next[p]) else prm.tcs
        self.free_next[p] = False
        self.mode[p] = RUN
        self.running[p] = self.prev[p] = t
        self.seg_start[p] = start + cost
        if prm.warmup == 0 and t < prm.n and math.isnan(self.t0):
            self.t0 = start + cost
        self.q_end[p] = start + cost + prm.tq
        self.arm(p)

    def release(self, g: int, now: float) -> None:
        """Gang ``g``'s waiters go on: spinners compute, blocked threads are queued."""
        for t in self.waiters[g]:
            p = self.proc_of[t]
            if self.spinning[t]:  # computes as soon as it holds its processor
                self.spinning[t] = False
                if self.mode[p] == RUN and self.running[p] == t:
                    self.seg_start[p] = max(now, self.seg_start[p])
                    self.arm(p)
                continue
            if self.prm.wakeup == "tail":
                self.queues[p].append(t)
            else:
                self.queues[p].appendleft(t)
            if self.mode[p] == IDLE:
                self.idle_total += max(0.0, now - self.idle_since[p])
                self.dispatch(p, now)
        self.waiters[g].clear()

    def idle_now(self, now: float) -> float:
        return self.idle_total + sum(max(0.0, now - self.idle_since[p])
                                     for p in range(self.prm.n) if self.mode[p] == IDLE)

    def at_barrier(self, p: int, t: int, now: float) -> bool | None:
        """Thread ``t`` (on ``p``) reached its gang's barrier at ``now``: it waits
        (blocks or spins) or, the last, releases the others. True: the measured
        gang has done its iterations; False: handled; None: go on to the
        quantum's end."""
        prm = self.prm
        g = t // prm.n
        self.arrived[g] += 1
        if self.arrived[g] < prm.n:
            self.waiters[g].append(t)
            if prm.wait == "busy":  # spin until the quantum ends
                self.spinning[t] = True
                self.arm(p)
            else:  # block: alpha*tcs, covering the switch
                self.busy_until[p] = now + prm.alpha * prm.tcs
                self.free_next[p] = True
                self.dispatch(p, now)
            return False
        self.arrived[g] = 0  # the last: release the others and go on
        if g == 0:
            self.done += 1
            if self.done == prm.warmup and prm.warmup > 0:
                self.t0, self.idle0 = now, self.idle_now(now)
            if self.done == prm.warmup + prm.k:
                return True
        for u in range(g * prm.n, g * prm.n + prm.n):
            self.left[u] = self.draw()
        self.release(g, now)
        if now < self.q_end[p]:
            self.arm(p)
            return False
        return None

    def on_event(self, p: int, now: float) -> bool:
        """p's running thread's compute or quantum ended at ``now``; True when
        the measured gang has done its iterations."""
        t = self.running[p]
        if t < self.n_iter and not self.spinning[t]:
            self.left[t] -= now - self.seg_start[p]
            self.seg_start[p] = now
            if self.left[t] <= 1e-9:  # at the barrier
                handled = self.at_barrier(p, t, now)
                if handled is not None:
                    return handled
        else:
            self.seg_start[p] = now
        # the quantum ended
        if self.queues[p]:
            self.queues[p].append(t)
            self.dispatch(p, now)
        else:
            self.q_end[p] = now + self.prm.tq
            self.arm(p)
        return False

    def run(self) -> ReferenceResult:
        prm = self.prm
        for p in range(prm.n):  # the skewing activity
            self.push(self.rng.random() * prm.tq if prm.skew else 0.0, p)
        heap, version, mode = self.heap, self.version, self.mode
        now = 0.0
        while heap:
            now, _, p, ver = heapq.heappop(heap)
            if ver != version[p]:
                continue
            if mode[p] == SKEW:  # the skewing activity ended
                self.dispatch(p, now)
                continue
            if self.on_event(p, now):
                break
        span = now - self.t0
        return ReferenceResult(
            time_per_iteration=span / prm.k,
            idle=(self.idle_now(now) - self.idle0) / (prm.n * span) if span > 0 else 0.0,
            iterations=prm.k,
        )


def ps_alike_coarse(n: int, l: int, grain: float, var: float, *, k: int = 400,
                    seed: int = 1) -> ReferenceResult:
    """Coarse-grain limit of the alike-blocking case (eq. 10's setting) without
    quanta or switches: each processor shared equally among its threads that
    still have work (processor sharing); a thread that reaches the barrier
    takes no processor until its gang's last thread arrives. Eq. (10) without
    its switching term is ℓ·t_p; this model shows how much more an iteration
    takes when a processor's threads are all blocked at once (``idle``)."""
    if n < 1 or l < 1 or k < 1 or not (grain >= 0 and var >= 0 and grain + var > 0):
        raise ValueError("n, l, k >= 1, grain, var >= 0 and grain + var > 0 required")
    rng = random.Random(seed)
    left = [[grain + rng.random() * var for _ in range(n)] for _ in range(l)]
    its = [0] * l
    now = 0.0
    idle = 0.0
    while min(its) < k:
        counts = [sum(1 for g in range(l) if left[g][i] > 0) for i in range(n)]
        dt = min(left[g][i] * counts[i] for g in range(l) for i in range(n) if left[g][i] > 0)
        idle += dt * sum(1 for c in counts if c == 0)
        now += dt
        for g in range(l):
            for i in range(n):
                if left[g][i] > 0:
                    left[g][i] -= dt / counts[i]
                    if left[g][i] <= 1e-9:
                        left[g][i] = 0.0
        for g in range(l):
            if all(x == 0.0 for x in left[g]):
                its[g] += 1
                left[g] = [grain + rng.random() * var for _ in range(n)]
    done = sum(its) / l
    return ReferenceResult(time_per_iteration=now / done, idle=idle / (n * now),
                           iterations=int(done))
