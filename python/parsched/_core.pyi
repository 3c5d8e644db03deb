"""Type stubs for the compiled extension ``parsched._core`` (crates/parsched-py)."""

from collections.abc import Sequence
from typing import Any, Literal, Protocol, TypedDict

class ConfigError(ValueError):
    """One-line message ``FIELD: problem; allowed: ...``."""

class PolicyError(RuntimeError):
    """A placement policy returned an impossible decision (or raised)."""

class SimulationError(RuntimeError):
    """The simulation failed (a program or invariant error)."""

__version__: str

class _PoolState(TypedDict):
    size: int
    idle: int
    load: int

class _ForkRequest(TypedDict):
    job: int
    home: int
    desired: int

class _Policy(Protocol):
    def home_pool(self, pools: Sequence[_PoolState]) -> int: ...
    def place(
        self, request: _ForkRequest, pools: Sequence[_PoolState]
    ) -> list[tuple[int, int]]: ...

class _Arrivals(TypedDict, total=False):
    arrival: list[float]
    d: list[int]
    para_work: list[float]

class _PoolsConfig(TypedDict, total=False):
    P: int
    L: float
    D: float
    T: float
    F: float
    G: float
    p0: int
    t: float
    W: float
    S: float
    r: float
    c: float
    pool_size: int
    spanning: Literal["limited", "none", "unlimited"]
    parallelism: Literal["restricted", "unrestricted"]
    jobs: int
    warmup: int
    reps: int
    seed: int
    workload: Literal["correlated", "uncorrelated"]
    init: float
    final: float
    para_unit: float
    spread: float
    combine: Literal["add", "multiply"]
    switch_cost: Literal["every_dispatch", "preemption_only"]
    f_rounding: Literal["nearest", "floor", "ceil"]
    g_rounding: Literal["nearest", "floor", "ceil"]
    tie_break: Literal["lowest_index", "most_idle"]
    inflate_master: bool
    ci: Literal["auto", "replications", "batch_means"]
    arrivals: _Arrivals | None

class _Summary(TypedDict):
    mean_response_time: float
    ci90_half_width: float
    ci_method: Literal["replications", "batch_means"]
    actual_parallelism: float
    utilization: float
    jobs: int
    events: int
    wall_seconds: float
    reps: int
    rep_means: list[float]
    context_switches: int
    makespan: float
    busy_work: float
    busy_overhead: float
    demand: float

class _Output(TypedDict):
    summary: _Summary
    jobs: dict[str, list[Any]]

def simulate_pools(
    config: _PoolsConfig | dict[str, Any],
    workers: int = 1,
    audit: bool = False,
    records: bool = True,
    policy: _Policy | None = None,
) -> _Output:
    """Simulates the processor-pool model; unknown config keys raise ConfigError.

    ``jobs`` columns: rep, job, arrival, init_start, para_start, para_end,
    final_start, finish, response, d, a, pools_used, home_pool (empty lists when
    ``records`` is false). ``workers`` threads run the replications; the result
    does not depend on it.
    """

def pools_keys() -> list[str]:
    """The keys ``simulate_pools`` accepts, in documentation order."""
