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
    rng = random.Random(seed)

    def draw() -> float:
        extra = rng.random() * var if dist == "uniform" else (
            rng.expovariate(1.0 / var) if var > 0 else 0.0)
        return barrier_cost + grain + extra

    gangs = l if competitors == "same" else 1  # iterating gangs
    # threads 0 .. gangs*n-1 iterate (thread g*n + i on processor i); the
    # compute-bound competitors, if any, come after them
    n_iter = gangs * n
    extra = (l - 1) * n if competitors == "compute" else 0
    proc_of = [t % n for t in range(n_iter + extra)]
    left = [draw() for _ in range(n_iter)]
    arrived = [0] * gangs
    waiters: list[list[int]] = [[] for _ in range(gangs)]
    spinning = [False] * n_iter
    queues: list[deque[int]] = [deque() for _ in range(n)]
    for p in range(n):
        mine = [t for t in range(len(proc_of)) if proc_of[t] == p]
        rng.shuffle(mine)
        queues[p].extend(mine)
    mode = [SKEW] * n
    running = [-1] * n  # the thread in RUN mode
    prev = [-1] * n  # the last thread that ran: dispatching it again is free
    free_next = [False] * n  # a blocking paid for the next dispatch
    seg_start = [0.0] * n  # start of the running thread's current compute
    busy_until = [0.0] * n  # end of a blocking's overhead
    q_end = [0.0] * n  # end of its quantum
    version = [0] * n  # stale events are skipped
    idle_since = [0.0] * n
    idle_total = 0.0
    heap: list[tuple[float, int, int, int]] = []  # (time, seq, processor, version)
    seq = 0

    def push(time: float, p: int) -> None:
        nonlocal seq
        version[p] += 1
        seq += 1
        heapq.heappush(heap, (time, seq, p, version[p]))

    def arm(p: int) -> None:
        """The running thread's next event: its compute's end or its quantum's."""
        t = running[p]
        end = q_end[p]
        if t < n_iter and not spinning[t]:
            end = min(end, seg_start[p] + left[t])
        push(end, p)

    def dispatch(p: int, now: float) -> None:
        """The head of p's queue runs after the processor's pending overhead
        and the switch (free after a blocking, which paid for it); an empty
        queue leaves p idle once the overhead ends."""
        nonlocal t0
        start = max(now, busy_until[p])
        if not queues[p]:
            mode[p] = IDLE
            idle_since[p] = start
            return
        t = queues[p].popleft()
        cost = 0.0 if (t == prev[p] or free_next[p]) else tcs
        free_next[p] = False
        mode[p] = RUN
        running[p] = prev[p] = t
        seg_start[p] = start + cost
        if warmup == 0 and t < n and math.isnan(t0):
            t0 = start + cost
        q_end[p] = start + cost + tq
        arm(p)

    def release(g: int, now: float) -> None:
        nonlocal idle_total
        for t in waiters[g]:
            p = proc_of[t]
            if spinning[t]:  # computes as soon as it holds its processor
                spinning[t] = False
                if mode[p] == RUN and running[p] == t:
                    seg_start[p] = max(now, seg_start[p])
                    arm(p)
                continue
            if wakeup == "tail":
                queues[p].append(t)
            else:
                queues[p].appendleft(t)
            if mode[p] == IDLE:
                idle_total += max(0.0, now - idle_since[p])
                dispatch(p, now)
        waiters[g].clear()

    def idle_now(now: float) -> float:
        return idle_total + sum(max(0.0, now - idle_since[p]) for p in range(n)
                                if mode[p] == IDLE)

    for p in range(n):  # the skewing activity
        push(rng.random() * tq if skew else 0.0, p)

    done = 0
    t0 = math.nan  # start of the measured window
    idle0 = 0.0
    now = 0.0
    while heap:
        now, _, p, ver = heapq.heappop(heap)
        if ver != version[p]:
            continue
        if mode[p] == SKEW:  # the skewing activity ended
            dispatch(p, now)
            continue
        t = running[p]
        if t < n_iter and not spinning[t]:
            left[t] -= now - seg_start[p]
            seg_start[p] = now
            if left[t] <= 1e-9:  # at the barrier
                g = t // n
                arrived[g] += 1
                if arrived[g] < n:
                    waiters[g].append(t)
                    if wait == "busy":  # spin until the quantum ends
                        spinning[t] = True
                        arm(p)
                    else:  # block: alpha*tcs, covering the switch
                        busy_until[p] = now + alpha * tcs
                        free_next[p] = True
                        dispatch(p, now)
                    continue
                arrived[g] = 0  # the last: release the others and go on
                if g == 0:
                    done += 1
                    if done == warmup and warmup > 0:
                        t0, idle0 = now, idle_now(now)
                    if done == warmup + k:
                        break
                for u in range(g * n, g * n + n):
                    left[u] = draw()
                release(g, now)
                if now < q_end[p]:
                    arm(p)
                    continue
        else:
            seg_start[p] = now
        # the quantum ended
        if queues[p]:
            queues[p].append(t)
            dispatch(p, now)
        else:
            q_end[p] = now + tq
            arm(p)

    span = now - t0
    return ReferenceResult(
        time_per_iteration=span / k,
        idle=(idle_now(now) - idle0) / (n * span) if span > 0 else 0.0,
        iterations=k,
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
