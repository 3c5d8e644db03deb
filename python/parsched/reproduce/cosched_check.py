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

``simulate_busy`` is the same jobs under busy waiting (Local): each node
runs its processes round robin with a fixed quantum, starting in its own
order and phase. A LIFE(12) iteration then costs about twelve quanta (its
neighbour exchange and three barrier rounds each wait for a partner's next
turn): 0.29 s at 25 ms, 0.58 s at 50 ms, 1.1 s at 100 ms. parsched's Local
under Solaris's table (0.60 s an iteration) sits at 50-60 ms; the paper's
Local on W5 at the iteration count Table 2 implies (0.29 s) would need
25 ms slices, shorter than Solaris's table gives a spinning process below
level 59.
"""

from __future__ import annotations

import heapq
import random
from dataclasses import dataclass, field

__all__ = ["Params", "check", "simulate", "simulate_busy"]


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


class _Events:
    """Events ordered by time, ties in the order they were pushed."""

    def __init__(self) -> None:
        self.heap: list = []  # (time, seq, kind, data)
        self.seq = 0

    def push(self, t: float, kind: str, data) -> None:
        heapq.heappush(self.heap, (t, self.seq, kind, data))
        self.seq += 1

    def pop(self):
        return heapq.heappop(self.heap)

    def __bool__(self) -> bool:
        return bool(self.heap)


def _procs(p: Params, rng: random.Random) -> list[_Proc]:
    """Every job's processes, rank r of job j at index j · nodes + r (one per node)."""
    return [_Proc(j, r, _program(p, rng)) for j in range(p.jobs) for r in range(p.nodes)]


def _send(p: Params, q: _Proc, op: tuple, t: float, events: _Events) -> float:
    """q sends (its send overhead, then the wire and the bytes); the time after."""
    t += p.overhead_us
    dest = (q.rank + op[1]) % p.nodes
    arrive = t + p.latency_us - 2 * p.overhead_us + op[2] * p.per_byte_us
    events.push(arrive, "msg", (q.job * p.nodes + dest, q.rank))
    return t


def _take(p: Params, q: _Proc, op: tuple) -> int | None:
    """q's receive from the rank op names: None once taken (the message was
    there), else the rank it must wait for."""
    src = (q.rank + op[1]) % p.nodes
    if q.inbox.get(src, 0) > 0:
        q.inbox[src] -= 1
        q.pc += 1
        return None
    return src


def simulate(p: Params) -> float:
    """Seconds until the last job ends."""
    procs = _procs(p, random.Random(p.seed))
    ready = [[] for _ in range(p.nodes)]  # FIFO per node (list used as a queue)
    running: list[_Proc | None] = [None] * p.nodes
    events = _Events()
    push = events.push

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
                t = _send(p, q, op, t, events)
                continue
            src = _take(p, q, op)
            if src is None:
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
        t, _, kind, data = events.pop()
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


def simulate_busy(p: Params) -> float:
    """Seconds until the last job ends when every receiver busy-waits (Local):
    each node runs its processes round robin, ``quantum_us`` each (a process
    waiting for a message keeps spinning until its quantum ends), and a message
    is taken as soon as its receiver runs."""
    from collections import deque

    rng = random.Random(p.seed)
    procs = _procs(p, rng)
    left = [0.0] * len(procs)  # compute still to do
    since = [0.0] * len(procs)  # when the current activity started
    queue = [deque() for _ in range(p.nodes)]
    cur: list[int | None] = [None] * p.nodes
    slice_end = [0.0] * p.nodes
    version = [0] * p.nodes
    events = _Events()
    push = events.push
    done = 0

    def at_node(n, t):
        version[n] += 1
        push(t, "node", (n, version[n]))

    def dispatch(n, t):
        cur[n] = None
        if queue[n]:
            i = queue[n].popleft()
            cur[n] = i
            t += p.switch_us
            slice_end[n] = t + p.quantum_us
            run(n, i, t)

    def run(n, i, t):
        nonlocal done
        q = procs[i]
        while True:
            if left[i] > 0:
                since[i] = t
                at_node(n, min(t + left[i], slice_end[n]))
                return
            if q.pc >= len(q.steps):
                q.done_at = t
                done += 1
                dispatch(n, t)
                return
            op = q.steps[q.pc]
            if op[0] == "c":
                left[i] = op[1]
                q.pc += 1
            elif op[0] == "s":
                q.pc += 1
                t = _send(p, q, op, t, events)
            else:
                src = _take(p, q, op)
                if src is None:
                    t += p.overhead_us
                else:
                    q.waiting = src  # spins to the end of its quantum
                    at_node(n, slice_end[n])
                    return

    # Each node starts its rotation in its own order and phase: independent
    # local schedulers whose clocks are not aligned.
    for n in range(p.nodes):
        order = [i for i, q in enumerate(procs) if q.rank == n]
        rng.shuffle(order)
        queue[n].extend(order)
        dispatch(n, 0.0)
        slice_end[n] = rng.uniform(0.0, p.quantum_us)
        at_node(n, min(slice_end[n], since[cur[n]] + left[cur[n]]))
    while events and done < len(procs):
        t, _, kind, data = events.pop()
        if kind == "msg":
            i, src = data
            q = procs[i]
            q.inbox[src] = q.inbox.get(src, 0) + 1
            if cur[q.rank] == i and q.waiting == src:
                q.waiting = None
                run(q.rank, i, t)  # the spinner sees it at once
            continue
        n, v = data
        if v != version[n] or cur[n] is None:
            continue
        i = cur[n]
        if left[i] > 0:
            left[i] -= t - since[i]
            if left[i] < 1e-6:  # done (to within float rounding)
                left[i] = 0.0
        if t >= slice_end[n] and queue[n]:
            queue[n].append(i)  # quantum over: to the back of the line
            dispatch(n, t)
        elif left[i] > 0 or procs[i].waiting is None:
            if t >= slice_end[n]:
                slice_end[n] = t + p.quantum_us  # alone on its node: a new quantum
            run(n, i, t)
        else:
            slice_end[n] = t + p.quantum_us  # spinning alone: keeps spinning
            at_node(n, slice_end[n])
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
