"""Pool-selection rules written in Python.

Pass any object with these two methods as ``simulate(..., policy=obj)``:

``home_pool(pools) -> int``
    Called when a job arrives; returns the index of its home pool (where the
    master thread runs INIT and FINAL).
``place(request, pools) -> list[tuple[int, int]]``
    Called when a job reaches its PARA phase; returns ``(pool index, thread
    count)`` pairs. The total is the actual parallelism ``a`` and must lie in
    ``1..request["desired"]``.

``pools`` is a list (one entry per pool, in index order) of dicts
``{"size": processors, "idle": idle processors, "load": running + ready threads}``
and ``request`` is ``{"job": job number, "home": home pool, "desired": d}``. The
Rust core checks every decision; an impossible one (unknown pool, too many
threads) or an exception inside the policy stops the run with
``parsched.PolicyError``. The policy is called from the simulation loop, so it is
much slower than the built-in placement; use it to prototype rules.

:class:`ZhouBrechtPolicy` is a line-by-line Python port of the built-in rule
(seed 000, section 3.2) and gives the same results; :class:`LeastLoadedSpread`
is a small example of a different rule.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal, Protocol, TypedDict

__all__ = ["ForkRequest", "LeastLoadedSpread", "PoolPolicy", "PoolState", "ZhouBrechtPolicy"]


class PoolState(TypedDict):
    size: int
    idle: int
    load: int


class ForkRequest(TypedDict):
    job: int
    home: int
    desired: int


class PoolPolicy(Protocol):
    def home_pool(self, pools: Sequence[PoolState]) -> int: ...

    def place(self, request: ForkRequest, pools: Sequence[PoolState]) -> list[tuple[int, int]]: ...


Rounding = Literal["nearest", "floor", "ceil"]


def _round(x: float, how: Rounding) -> int:
    if how == "floor":
        r = math.floor(x)
    elif how == "ceil":
        r = math.ceil(x)
    else:  # nearest, halves away from zero (as Rust's f64::round)
        r = math.floor(x + 0.5) if x >= 0 else math.ceil(x - 0.5)
    return max(0, int(r))


class ZhouBrechtPolicy:
    """Zhou & Brecht's placement (sec. 3.1-3.2), in Python.

    * home pool: the least loaded pool (lowest index, or most idle, on ties);
    * candidates: the home pool, then the others by increasing load, limited to
      ``f(d) = clamp(round(F·d/p), 1, P/p)`` (``spanning="limited"``), 1 (``"none"``)
      or all pools (``"unlimited"``);
    * actual parallelism: ``a = min(d, max(p_idle, G·d, 1))`` (``restricted``) or ``d``;
    * threads fill idle processors in candidate order; the rest go to the
      candidate with the lowest resulting load.
    """

    def __init__(
        self,
        F: float = 0.8,
        G: float = 0.5,
        spanning: Literal["limited", "none", "unlimited"] = "limited",
        parallelism: Literal["restricted", "unrestricted"] = "restricted",
        f_rounding: Rounding = "nearest",
        g_rounding: Rounding = "nearest",
        tie_break: Literal["lowest_index", "most_idle"] = "lowest_index",
    ) -> None:
        self.F, self.G = F, G
        self.spanning, self.parallelism = spanning, parallelism
        self.f_rounding, self.g_rounding, self.tie_break = f_rounding, g_rounding, tie_break
        self.calls = {"home_pool": 0, "place": 0}

    @classmethod
    def from_config(cls, config) -> ZhouBrechtPolicy:
        """The policy matching a :class:`parsched.PoolsConfig`."""
        return cls(
            F=config.F, G=config.G, spanning=config.spanning, parallelism=config.parallelism,
            f_rounding=config.f_rounding, g_rounding=config.g_rounding,
            tie_break=config.tie_break,
        )

    def _order(self, pools: Sequence[PoolState], first: int | None = None) -> list[int]:
        ids = [i for i in range(len(pools)) if i != first]
        if self.tie_break == "most_idle":
            ids.sort(key=lambda i: (pools[i]["load"], -pools[i]["idle"], i))
        else:
            ids.sort(key=lambda i: (pools[i]["load"], i))
        return ids if first is None else [first, *ids]

    def candidate_count(self, d: int, p: int, n: int) -> int:
        if self.spanning == "none":
            return 1
        if self.spanning == "unlimited":
            return n
        return min(max(_round(self.F * d / p, self.f_rounding), 1), n)

    def home_pool(self, pools: Sequence[PoolState]) -> int:
        self.calls["home_pool"] += 1
        return self._order(pools)[0]

    def place(self, request: ForkRequest, pools: Sequence[PoolState]) -> list[tuple[int, int]]:
        self.calls["place"] += 1
        d = max(1, int(request["desired"]))
        home = int(request["home"])
        k = self.candidate_count(d, pools[home]["size"], len(pools))
        cand = self._order(pools, home)[:k]
        idle = [pools[i]["idle"] for i in cand]
        if self.parallelism == "unrestricted":
            a = d
        else:
            a = min(d, max(sum(idle), _round(self.G * d, self.g_rounding), 1))
        return distribute(a, cand, idle, [pools[i]["load"] for i in cand])


def distribute(a: int, cand: list[int], idle: list[int], load: list[int]) -> list[tuple[int, int]]:
    """Idle processors first (in candidate order), then one thread at a time to the
    candidate whose resulting load is lowest (earliest on ties)."""
    given = [0] * len(cand)
    left = a
    for i, free in enumerate(idle):
        take = min(free, left)
        given[i] = take
        left -= take
    res = [ld + g for ld, g in zip(load, given, strict=True)]
    while left > 0:
        i = min(range(len(res)), key=lambda j: (res[j], j))
        res[i] += 1
        given[i] += 1
        left -= 1
    return [(p, g) for p, g in zip(cand, given, strict=True) if g > 0]


class LeastLoadedSpread:
    """Example rule: home = least loaded pool; always ``a = d`` threads, dealt one at a
    time to whichever pool (any pool) then has the lowest load. Maximal load
    balancing with no regard for locality."""

    def home_pool(self, pools: Sequence[PoolState]) -> int:
        return min(range(len(pools)), key=lambda i: (pools[i]["load"], i))

    def place(self, request: ForkRequest, pools: Sequence[PoolState]) -> list[tuple[int, int]]:
        load = [p["load"] for p in pools]
        given = [0] * len(pools)
        for _ in range(int(request["desired"])):
            i = min(range(len(load)), key=lambda j: (load[j], j))
            load[i] += 1
            given[i] += 1
        return [(i, g) for i, g in enumerate(given) if g > 0]
