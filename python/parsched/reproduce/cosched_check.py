"""Seed 003: an independent check of spin-block with short spins.

A deliberately small discrete-event model, sharing no code with parsched's
cluster machine, of four bulk-synchronous jobs on the paper's eight nodes
under spin-block with a negligible spin: a receiver whose message has not
arrived blocks at once, and its message's arrival makes it runnable again.
Each node runs its runnable processes first come, first served, with no
priorities, no boost and no preemption (the least favourable dispatch for
spin-block: a woken process waits for whatever runs to block or end its
quantum), and charges a context switch to every switch and an interrupt to
every wake-up.

Every process blocks within one compute step, so a woken process waits at
most the compute steps of the other three processes of its node. Four jobs
then finish within a small factor of the ideal 100 s whatever the local
scheduler does; the paper's spin-block rows (773-2849 s on W3-W5) cannot
come from short spins, only from spins long enough to hold the processor
while the partner is descheduled. ``check`` returns the completion time
beside parsched's, and ``tests/test_cosched_check.py`` keeps the two in
agreement.
"""

from __future__ import annotations

import heapq
import random
from dataclasses import dataclass, field

__all__ = ["Params", "check", "simulate"]


@dataclass(frozen=True)
class Params:
    """One LIFE-like job: ``iterations`` of compute (µs, uniform within
    ±``jitter``), boundaries of ``col_bytes`` to ranks ±1 and ``row_bytes`` to
    ranks ±nodes/2, and a three-round barrier of 4-byte messages."""

    iterations: int
    compute_us: float
    jitter: float
    col_bytes: int
    row_bytes: int
    jobs: int = 4
    nodes: int = 8
    latency_us: float = 32.0
    per_byte_us: float = 0.03
    overhead_us: float = 5.0
    switch_us: float = 15.0
    interrupt_us: float = 15.0
    quantum_us: float = 100_000.0
    seed: int = 1


@dataclass
class _Proc:
    job: int
    rank: int
    steps: list = field(default_factory=list)
    pc: int = 0
    inbox: dict = field(default_factory=dict)
    waiting: int | None = None  # the rank it waits for
    done_at: float = 0.0


def _program(p: Params, rng: random.Random) -> list:
    half = p.nodes // 2
    body = []
    for _ in range(p.iterations):
        body.append(("c", p.compute_us * (1 + p.jitter * rng.uniform(-1, 1))))
        for by, size in ((1, p.col_bytes), (-1, p.col_bytes), (half, p.row_bytes),
                         (-half, p.row_bytes)):
            body.append(("s", by, size))
        for by in (-1, 1, -half, half):
            body.append(("r", by))
        k = 1
        while k < p.nodes:
            body.append(("s", k, 4))
            body.append(("r", -k))
            k *= 2
    return body


def simulate(p: Params) -> float:
    """Seconds until the last job ends."""
    rng = random.Random(p.seed)
    procs = [_Proc(j, r, _program(p, rng)) for j in range(p.jobs) for r in range(p.nodes)]
    ready = [[] for _ in range(p.nodes)]  # FIFO per node (list used as a queue)
    running: list[_Proc | None] = [None] * p.nodes
    events: list = []  # (time, seq, kind, data)
    seq = 0

    def push(t, kind, data):
        nonlocal seq
        heapq.heappush(events, (t, seq, kind, data))
        seq += 1

    def pid(job, rank):
        return job * p.nodes + rank

    def dispatch(node, t):
        if running[node] is None and ready[node]:
            q = ready[node].pop(0)
            running[node] = q
            push(t + p.switch_us, "run", (pid(q.job, q.rank), t + p.switch_us))

    def advance(q: _Proc, t: float):
        """Runs q from time t until it computes, blocks or ends."""
        node = q.rank
        while q.pc < len(q.steps):
            op = q.steps[q.pc]
            if op[0] == "c":
                q.pc += 1
                push(t + op[1], "step", (pid(q.job, q.rank), t + op[1]))
                return
            if op[0] == "s":
                q.pc += 1
                t += p.overhead_us
                dest = (q.rank + op[1]) % p.nodes
                arrive = t + p.latency_us - 2 * p.overhead_us + op[2] * p.per_byte_us
                push(arrive, "msg", (pid(q.job, dest), q.rank))
                continue
            src = (q.rank + op[1]) % p.nodes
            if q.inbox.get(src, 0) > 0:
                q.inbox[src] -= 1
                q.pc += 1
                t += p.overhead_us
                continue
            q.waiting = src  # spin ~0, then block: the CPU goes to the next in line
            running[node] = None
            dispatch(node, t)
            return
        q.done_at = t
        running[node] = None
        dispatch(node, t)

    for q in procs:
        ready[q.rank].append(q)
    for n in range(p.nodes):
        dispatch(n, 0.0)
    slice_end = {}
    while events:
        t, _, kind, data = heapq.heappop(events)
        if kind == "msg":
            q = procs[data[0]]
            q.inbox[data[1]] = q.inbox.get(data[1], 0) + 1
            if q.waiting == data[1]:
                q.waiting = None
                ready[q.rank].append(q)  # woken: the back of the queue, no boost
                dispatch(q.rank, t + p.interrupt_us)
        elif kind in ("run", "step"):
            q = procs[data[0]]
            if kind == "run":
                slice_end[data[0]] = t + p.quantum_us
            elif t >= slice_end.get(data[0], 0.0) and ready[q.rank]:
                # quantum over with others waiting: to the back of the queue
                running[q.rank] = None
                ready[q.rank].append(q)
                dispatch(q.rank, t)
                continue
            advance(q, t)
    return max(q.done_at for q in procs) * 1e-6


def check(iterations: int = 400, scale_to: int | None = None) -> dict[str, float]:
    """The independent model and parsched on W5 (4 x LIFE(12)) under spin-block
    with a 0.1 ms spin, both over ``iterations`` iterations and scaled to the
    calibrated iteration count; returns both times (s) and their ratio."""
    from parsched import _core

    life = {a["app"]: a for a in _core.cosched_applications()["apps"]}["LIFE12"]
    cal = _core.cosched_applications()
    full = scale_to or life["iterations"]
    n = life["size"]
    p = Params(iterations=iterations, compute_us=life["compute_us"], jitter=cal["jitter"],
               col_bytes=4 * ((n + 1) // 2), row_bytes=4 * ((n + 3) // 4))
    ours = simulate(p) * full / iterations
    res = _core.simulate_cosched({"workload": 5, "scheme": "SB", "spin_time_us": 100.0,
                                  "scale": iterations / full, "reps": 1, "seed": 1})
    sim = res["completion_time"] * full / iterations
    return {"independent_s": ours, "parsched_s": sim, "ratio": sim / ours}
