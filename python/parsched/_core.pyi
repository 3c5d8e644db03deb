"""Type stubs for the compiled extension ``parsched._core`` (crates/parsched-py)."""

from collections.abc import Callable, Iterator, Mapping, Sequence
from os import PathLike
from typing import Any, Literal, Protocol, TypedDict

class ConfigError(ValueError):
    """One-line message ``FIELD: problem; allowed: ...``; errors of the core's
    configuration checks also carry the three parts as attributes."""

    field: str
    message: str
    allowed: str

class PolicyError(RuntimeError):
    """A placement policy returned an impossible decision (or raised)."""

class SimulationError(RuntimeError):
    """The simulation failed (a program or invariant error)."""

class TimeLimitError(SimulationError):
    """A cosched run passed ``max_time_s`` of simulated time with jobs
    unfinished (a livelock or deadlock of the configuration); the message
    names ``max_time_s`` and the number of unfinished jobs."""

class TraceError(ValueError):
    """A workload trace cannot be read: missing file, truncated or corrupt gzip,
    a malformed SWF line, a rule set to reject (``unsorted=reject``). The
    message starts ``line N:`` (line 0 when the file cannot be opened)."""

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
    # BEGIN schema fields: pools (tools/gen_config_docs.py)
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
    spanning: Literal["none", "limited", "unlimited"]
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
    max_events: int
    # END schema fields: pools
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

class _End(TypedDict):
    value: float
    closed: bool

class _KeyInfo(TypedDict, total=False):
    key: str
    type: Literal["bool", "int", "float", "choice", "list", "text"]
    min: int | _End | None
    max: int | _End | None
    choices: list[str]
    optional: bool
    unit: str
    symbol: str
    section: str
    doc: str
    default: Any

class _QueueOrder(TypedDict):
    name: str
    formula: str
    doc: str
    source: str
    stateful: bool
    backfill: bool

def queue_orders() -> list[_QueueOrder]:
    """The batch model's queue orders (the core's one table), in
    documentation order: ``name`` (as ``order`` spells it), ``formula``,
    ``doc`` (which jobs go first), ``source``, ``stateful`` and ``backfill``
    (whether ``backfill_order`` accepts it)."""

def schema(model: str) -> list[_KeyInfo]:
    """The declarative schema of ``model``'s configuration, from the Rust core:
    one dict per key in documentation order (``key``, ``type``, ``min`` /
    ``max`` or ``choices``, ``optional``, ``unit``, ``symbol``, ``section``, ``doc``,
    ``default``). The Python config classes, the command line's key lists and
    the key tables of docs/formats/config-toml.md are built from it."""

class _BarrierConfig(TypedDict, total=False):
    # BEGIN schema fields: barrier (tools/gen_config_docs.py)
    n: int
    l: int
    P: int | None
    k: int
    grain: float
    var: float
    dist: Literal["uniform", "exponential", "empirical"]
    samples: Sequence[float] | str
    barrier_cost: float
    tq: float
    tcs: float
    alpha: float
    wait: Literal["busy", "block", "twophase", "yield"]
    spin_limit: float
    wakeup: Literal["tail", "priority"]
    sched: Literal["local", "gang"]
    competitors: Literal["same", "compute"]
    skew: bool
    shuffle: bool
    batches: int
    seed: int
    max_events: int
    # END schema fields: barrier

class _BarrierOutput(TypedDict):
    time_per_iter: float
    ci90_half_width: float
    batch_means: list[float]
    iteration_min: float
    iteration_p10: float
    iteration_p50: float
    iteration_p90: float
    iteration_p99: float
    iteration_max: float
    iteration_histogram: list[Sequence[float]]  # (low ms, high ms, count)
    start: float
    end: float
    iterations: int
    useful_utilization: float
    useful_time: float
    busy_wait_time: float
    measured_busy_wait_time: float
    overhead_time: float
    context_switches: int
    blocking_events: int
    yields: int
    alpha_measured: float | None
    preemptions: int
    slot_switches: int
    fragmentation: float
    gang_iterations: int
    events: int
    max_pending: int
    t_p: float
    t_w: float
    eq6: float
    eq8: float
    eq12: float
    eq13: float
    wall_seconds: float
    config: dict[str, Any]

def simulate_barrier(
    config: _BarrierConfig | dict[str, Any],
    audit: bool = False,
    gang_place: Callable[[dict[str, Any]], int | None] | Any | None = None,
) -> _BarrierOutput:
    """Seed 001's machine (Rust ``SyncConfig``): unknown keys and bad values raise
    :class:`ConfigError`; times in ms. ``gang_place`` (a function, or an object
    with ``place``) chooses each gang's slot as the machine is built (once per
    gang: skew, measured, competitors); a bad answer or ``None`` raises
    :class:`PolicyError` naming the gang."""

def barrier_defaults() -> dict[str, Any]:
    """The Rust defaults, as :meth:`parsched.BarrierConfig.to_dict` gives them."""

class _BatchConfig(TypedDict, total=False):
    # BEGIN schema fields: batch (tools/gen_config_docs.py)
    policy: Literal["fcfs", "easy", "conservative", "gang"]
    order: Literal[
        "fcfs", "sjf", "ljf", "smallest", "saf", "wfp3", "unicef", "f1", "f2", "f3", "f4",
        "multifactor",
    ]
    backfill_order: Literal[
        "priority", "fcfs", "sjf", "ljf", "smallest", "saf", "wfp3", "unicef", "f1", "f2", "f3",
        "f4",
    ]
    reservation_depth: int | Literal["auto"] | None
    mf_weight_age: float
    mf_weight_fairshare: float
    mf_weight_size: float
    mf_weight_partition: float
    mf_weight_qos: float
    mf_max_age_s: int
    mf_half_life_s: int
    mf_favor_small: bool
    mf_partition_tiers: str | None
    mf_qos_tiers: str | None
    procs: int | Literal["auto", "header"] | None
    kill_on_overrun: bool
    bsld_tau: float
    procs_rule: Literal["allocated", "requested"]
    missing_requested_time: Literal["runtime", "factor", "drop"]
    requested_time_factor: float
    missing_runtime: Literal["drop", "requested"]
    zero_runtime: Literal["keep", "drop"]
    cancelled: Literal["keep", "drop"]
    unsorted: Literal["sort", "reject"]
    extra_fields: Literal["ignore", "error"]
    too_wide: Literal["drop", "clamp", "error", "reject"]
    mpl: int
    quantum: int
    gang_backfill: bool
    slot_allocation: Literal["first_fit", "best_fit"]
    load_factor: float
    track_resources: bool
    workload: Literal["trace", "lublin"]
    workload_jobs: int
    workload_load: float | Literal["model"] | None
    workload_seed: int
    workload_types: bool
    workload_requested: Literal["none", "exact", "tsafrir05"]
    workload_estimate_max: int
    workload_estimate_max_percent: float | Literal["model"] | None
    workload_estimate_bins: Literal["linear", "power"]
    max_events: int
    # END schema fields: batch

class _BatchSummary(TypedDict):
    jobs: int
    procs: int
    avg_wait: float
    max_wait: int
    avg_response: float
    avg_slowdown: float
    avg_bounded_slowdown: float
    utilization: float
    makespan: int
    first_submit: int
    last_end: int
    killed: int
    max_queue: int
    avg_queue: float
    slot_switches: int
    wall_seconds: float

class _BatchJobs(TypedDict):
    job_id: list[int]
    submission_time: list[int]
    requested_number_of_resources: list[int]
    requested_time: list[int]
    success: list[bool]
    final_state: list[str]
    starting_time: list[int]
    execution_time: list[int]
    finish_time: list[int]
    waiting_time: list[int]
    turnaround_time: list[int]
    stretch: list[float]
    bounded_slowdown: list[float]
    allocated_resources: list[str]

class _BatchQueue(TypedDict):
    time: list[int]
    length: list[int]

class _BatchOutput(TypedDict):
    policy: str
    summary: _BatchSummary
    header: dict[str, Any]
    report: dict[str, int]
    jobs: _BatchJobs
    queue: _BatchQueue
    violations: list[dict[str, Any]]

class Columns(Mapping[str, Any]):
    """A policy's view: ints (``now``, ``free``, ...) and numpy columns, each
    made into an array when first read."""

    def __getitem__(self, key: str) -> Any: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[str]: ...

def simulate_batch(
    trace: str | PathLike[str] | None,
    config: _BatchConfig | dict[str, Any],
    jobs_csv: str | PathLike[str] | None = None,
    swf_out: str | PathLike[str] | None = None,
    priority: Callable[[Columns], Any] | None = None,
    select: Callable[[Columns], Any] | None = None,
    on_submit: Callable[[Any], Any] | None = None,
    on_complete: Callable[[Any], Any] | None = None,
    on_violation: str = "strict",
    fallback: str | None = None,
    gang_place: Callable[[dict[str, Any]], int | None] | Any | None = None,
) -> _BatchOutput:
    """Runs an SWF trace (.swf or .swf.gz) under a batch policy; unknown or bad
    keys raise ConfigError, trace problems TraceError (``line N: ...``), a job
    the machine cannot run under ``too_wide=error`` ConfigError (``job N needs
    ...``). ``header``: the parsed SWF header (max_procs, max_nodes,
    unix_start_time, ..., fields, notes); ``report``: non-zero counts of what
    loading dropped or repaired, by reason; ``queue``: queue length steps.
    ``jobs_csv`` / ``swf_out`` are written directly (Batsim jobs CSV / SWF).
    ``trace`` is None exactly when ``config["workload"]`` is ``"lublin"`` (the
    jobs are generated in memory). ``priority`` orders the queue of fcfs, easy
    and conservative; ``gang_place`` (a function, or an object with ``place``)
    chooses gang admission's slot (policy gang only); a bad answer of either
    raises PolicyError naming the job.
    """

class _LublinConfig(TypedDict, total=False):
    procs: int
    jobs: int
    seed: int
    include_types: bool
    load: float | None

def generate_lublin(
    config: _LublinConfig | dict[str, Any],
    path: str | PathLike[str] | None = None,
) -> dict[str, Any]:
    """Generates a Lublin-Feitelson workload: with ``path`` writes SWF (gzip
    when it ends in .gz) and returns ``{"factor", "jobs"}``; without, returns
    ``{"factor", "jobs", "columns"}`` (SWF fields as int64 bytearrays)."""

class _CoschedConfig(TypedDict, total=False):
    # BEGIN schema fields: cosched (tools/gen_config_docs.py)
    workload: int
    jobs: Sequence[str] | str
    bsp_jobs: str | None
    scheme: str
    nodes: int
    cpus_per_node: int
    job_width: int | None
    local: Literal["ts", "rr", "o1", "fair", "linux26"]
    rr_quantum_ms: float
    dispatch_table: str | Literal["solaris"] | None
    initial_level: int
    age_running: bool
    ts_semantics: Literal["parsched", "solaris"]
    boost_refreshes_quantum: bool
    boost_to: str
    boost_cap: int
    boost_queue: Literal["head", "tail"]
    boost_transient: bool
    tick_ms: float
    launch_gap_ms: float
    start_skew_ms: float
    latency_us: float
    send_overhead_us: float
    recv_overhead_us: float
    per_byte_ns: float
    context_switch_us: float
    interrupt_us: float
    syscall_us: float
    timer_us: float
    spin_time_us: float | None
    app_spin_us: Sequence[float] | str
    boost_period_ms: float
    spin_cap_at_boost_period: bool
    pb_sb_wake_interrupts: bool
    pb_sb_driver_flag: bool
    resize_apps: bool
    pb_skip_running: bool
    pending: Literal["unpolled", "unconsumed"]
    nic_sample_us: float
    wake_delay_us: float
    wake_loss: float
    block_timeout_ms: float
    daemon_period_ms: float
    daemon_run_us: float
    gang_slot_ms: float
    probe_ms: float
    probe_node: int
    scale: float
    alone_s: float
    max_time_s: float
    max_events: int
    seed: int
    reps: int
    # END schema fields: cosched

class _Timeline(TypedDict):
    time_s: list[float]
    share: list[list[float]]  # share[i][j]: job j's share in interval i

class _ClusterRun(TypedDict):
    seed: int
    completion_time: float
    job_completion_times: list[float]
    mean_job_time: float
    cv: float
    slowdown: float
    comm_share: list[float]
    spin_time: float
    latency_us: float  # mean one-way latency of all messages (µs)
    small_latency_us: float  # over messages <= 64 bytes (the paper's 32 µs figure)
    context_switches: int
    interrupts: int
    boosts: int
    wakeups: int
    lost_wakeups: int
    blocks: int
    yields: int
    messages: int
    slot_switches: int
    events: int
    wall_seconds: float
    timeline: _Timeline

class _CoschedOutput(TypedDict):
    scheme: str
    jobs: list[str]
    completion_time: float
    completion_time_ci90: float  # NaN with one replication
    job_completion_times: list[float]
    mean_job_time: float
    cv: float
    slowdown: float
    ideal: float
    runs: list[_ClusterRun]
    config: dict[str, Any]

def simulate_cosched(
    config: _CoschedConfig | dict[str, Any],
    workers: int = 1,
    audit: bool = False,
    boost: Callable[[dict[str, Any]], int | None] | Any | None = None,
) -> _CoschedOutput:
    """Seed 003's network of workstations (Rust ``cluster::run``): ``workers``
    threads for the replications (the result does not depend on it). Bad keys
    or values raise :class:`ConfigError`; passing ``max_time_s``
    :class:`TimeLimitError`; other failures :class:`SimulationError`. Releases
    the GIL; Ctrl-C (or :func:`cancel_cosched`) ends it within ~50 ms with
    ``KeyboardInterrupt``. ``jobs`` is a list of names or one comma-separated
    string; ``dispatch_table`` the table's text. ``boost`` (a function, or an
    object with ``boost``): the periodic boost's target per node and tick
    (PB schemes only; ConfigError naming ``boost`` otherwise), run on this
    thread with the GIL; a bad answer raises PolicyError naming the node."""

def simulate_fcs(config: dict[str, Any], workers: int = 1) -> dict[str, Any]:
    """Seed 002's Table 1 model (Rust ``desktop::run``): the ``DesktopResult``
    fields (``scheme``, ``job_times``, ``makespan``, ``makespan_ci90``,
    ``optimum``, ``over_optimum``, ``classes``, counters) and ``config`` (every
    key's value). ``jobs`` is a list of per-process multiplier lists or the text
    ``"1,1,2,2;2,2,1,1;1,1,1,1"``. Bad keys or values raise :class:`ConfigError`;
    passing ``max_time_s`` :class:`TimeLimitError`. Releases the GIL; Ctrl-C
    ends it within ~50 ms with ``KeyboardInterrupt``."""

def simulate_regions(config: dict[str, Any]) -> dict[str, Any]:
    """Seed 004's region machine (Rust ``machines::regions::run``): the
    ``RegionsResult`` fields (``machine``, ``workload``,
    ``normalized_performance``, ``speedup`` (None unless balance),
    ``speedup_per_program``, ``microschedules_per_s``, ``microschedules``,
    ``cache_loads``, ``cache_loads_standard``, ``miss_ratio_standard``,
    ``miss_ratio_region``, ``standard`` and ``region`` (each run's finish
    times, per-cache stats and decisions), ``timing``) and ``config`` (every
    key's value). Bad keys or values raise :class:`ConfigError`; a policy
    decision that cannot be applied :class:`PolicyError`; a bad program
    :class:`SimulationError`. Releases the GIL; Ctrl-C or :func:`cancel_runs`
    ends it within ~50 ms with ``KeyboardInterrupt``."""

def simulate_fcs_figure(config: dict[str, Any], workers: int = 1) -> dict[str, Any]:
    """Seed 002's Figures 1-2 grid (Rust ``desktop::figs::run_figure``): ``rows``
    ({machine, scheduler, k, s, runtime_s}), ``work_s``, ``events``,
    ``wall_seconds`` and ``config``. Bad keys raise :class:`ConfigError`."""

def cosched_applications(config: dict[str, Any] | None = None) -> dict[str, Any]:
    """How seed 003's applications were sized from Table 2 and the text (for the
    message costs of ``config``, cosched keys, when given: as ``resize_apps``
    sizes them): the
    assumed constants (``life_cell_us``, ``process_memory_mib``, ``mg_edge``,
    ``lu_min_edge``, ``lu_sweep_share``, ``alone_s``), the solved ``jitter``
    and ``mflops``, and ``apps``: per application ``app``, ``size``,
    ``iterations``, ``compute_us``, ``share`` (alone) and ``paper_share``."""

def cancel_cosched() -> None:
    """The same as :func:`cancel_runs` (its first name)."""

def cancel_runs() -> None:
    """Stops every simulation in progress (any model), in any thread
    (KeyboardInterrupt within ~50 ms): Ctrl-C reaches only the main thread."""

def show_progress(on: bool) -> None:
    """Turns on (or off) the progress line of runs longer than 2 s on stderr:
    events simulated so far and seconds, refreshed every second, erased when
    the run ends (every model). ``parsched simulate`` turns it on when stderr
    is a terminal or ``PARSCHED_PROGRESS=1``."""

def estimate_run(model: Literal["barrier", "pools"], config: dict[str, Any]) -> dict[str, float]:
    """Upper estimates of a run's cost from its configuration alone:
    barrier ``{"sim_time": ms, "events": n}``; pools ``{"events": n,
    "placement": n, "cost": n}`` (the placement's scans of the pools in
    event-equivalents, ``cost`` the sum); ``validate_config`` refuses a run
    estimated above its ``max_events`` (0: no limit)."""

def validate_config(
    model: str,
    config: dict[str, Any],
) -> None:
    """Builds ``model``'s configuration from ``config`` (``None`` values keep the
    default) and checks it with the core's ``validate``: raises
    :class:`ConfigError` (with ``field``, ``message``, ``allowed``) on the first
    problem."""

def config_values(
    model: str,
    config: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Every key of ``model`` with its value in ``config`` as the core reads it:
    the core's defaults when ``config`` is empty (the Python config classes take
    their defaults from here). cosched: ``scheme`` and ``jobs`` in the core's
    spelling, ``dispatch_table`` None for the stock table, else the table as
    ``dispadmin -c TS -g`` text (RES=1000)."""

def bounded_geometric_q(mean: float, max: int) -> float:
    """Seed 000's bounded-geometric desired parallelism on 1..max with mean
    ``mean``: the parameter q of P(d = k) ∝ (1 − q)^(k−1)·q (the workload
    generator's solve). Raises :class:`ConfigError` (field ``D``) when no
    bounded geometric has that mean."""

def barrier_moments(config: dict[str, Any]) -> tuple[float, float]:
    """Seed 001's (t_p, t_w) (eqs. 1-4) of a barrier configuration."""

def tw_per_unit_var(n: int, dist: str) -> float:
    """t_w per unit of var for a gang of n ("uniform", "exponential"; 0 for "empirical")."""

def harmonic_number(n: int) -> float:
    """H_n = 1 + 1/2 + ... + 1/n, correctly rounded."""

def mean_ci90(values: list[float]) -> tuple[float, float]:
    """Mean and two-sided 90% Student-t half-width (NaN for one value): stats::mean_ci90."""

def check_arrivals(columns: dict[str, Any], procs: int | None = None) -> None:
    """The core's checks of an arrivals list; raises ConfigError naming the row."""

class RuntimeUnavailable(RuntimeError):
    """No cgroup freezer/cpuset, or no permission to use them."""

class RuntimeFailure(RuntimeError):
    """The runtime failed while running jobs (spawn, cgroup I/O, timeout)."""

class _ExitStatus(TypedDict):
    code: int | None
    signal: int | None

class _JobReport(TypedDict):
    name: str
    argv: list[str]
    pid: int
    status: _ExitStatus
    success: bool
    wall_s: float
    user_s: float
    sys_s: float
    suspended_s: float
    width: int | None
    slots_run: int
    cpus: list[int]
    pool: Any
    coscheduled: bool | None
    observed: Any

class _ControllerStats(TypedDict):
    switches: int
    wakeups: int
    switch_s: float
    max_switch_s: float
    spread_s: float
    cpu_s: float
    wall_s: float
    realtime: bool
    backend: str

class _RunOutput(TypedDict):
    jobs: list[_JobReport]
    controller: _ControllerStats

def run_jobs(spec: dict[str, Any]) -> _RunOutput:
    """Runs real jobs under a policy on this Linux machine; ``spec`` maps onto the
    runtime's RunSpec (policy, slot, backend, max_slots, cpus, pools, realtime,
    spread, jobs: [{name, argv, width, env, cwd, stdout, stderr}], ...). Unknown
    keys raise ConfigError; no cgroups/permission RuntimeUnavailable; other run
    failures RuntimeFailure. Blocks with the GIL released."""

def runtime_policies() -> list[dict[str, Any]]:
    """The runtime's policies: name, aliases, doc, table, keys (as schema()), flat."""

def runtime_schema() -> list[_KeyInfo]:
    """The common keys of a run spec (policy, slot, backend, ...), as schema()."""


class BatchEnvCore:
    """One batch machine stepped one decision at a time (``parsched.gym.BatchEnv``)."""

    n_jobs: int
    procs: int
    steps: int
    now: int
    def __init__(
        self,
        config: _BatchConfig | dict[str, Any],
        trace: str | PathLike[str] | None = None,
        options: dict[str, Any] | None = None,
    ) -> None: ...
    def reset(self, start: int, length: int, seed: int) -> tuple[tuple[Any, Any], bool]: ...
    def step(self, action: int) -> tuple[Any, Any, float, bool, bool]: ...
    def action_masks(self) -> Any: ...
    def window_job_id(self, slot: int) -> int | None: ...
    def result(self) -> _BatchOutput: ...

class BatchVecEnvCore:
    """``num_envs`` batch machines stepped in one call, the GIL released
    (``parsched.gym.BatchVectorEnv``)."""

    n_jobs: int
    procs: int
    def __init__(
        self,
        num_envs: int,
        config: _BatchConfig | dict[str, Any],
        trace: str | PathLike[str] | None = None,
        options: dict[str, Any] | None = None,
    ) -> None: ...
    def reset(self, starts: list[int], length: int, seeds: list[int]) -> tuple[Any, Any, Any]: ...
    def step(
        self, actions: list[int], starts: list[int], length: int, seeds: list[int]
    ) -> tuple[Any, Any, Any, Any]: ...
    def action_masks(self) -> Any: ...
    def invalid_actions(self) -> Any: ...

def keys(model: str) -> list[str]:
    """The keys ``model``'s configuration accepts, in documentation order."""

def models_table() -> list[dict[str, Any]]:
    """The table of models (``parsched_sim::models::MODELS``), in documentation
    order: one dict per model with ``name``, ``kind`` (``simulated``,
    ``generator``), ``class``, ``time_unit``, ``summary_keys``, ``sweep_keys``,
    ``headline``, ``seed_key``, ``run`` (whether it has a generic run:
    :func:`simulate`) and ``page`` (``path``, ``nav``, ``title``,
    ``paper``, ``what``, ``cli``, ``python``, ``policies``, ``reproductions``)."""

def simulate(model: str, config: dict[str, Any], workers: int = 1) -> dict[str, Any]:
    """Runs ``model``'s generic run (its row's runner in the core's table):
    the result's fields by name plus ``config``. ``ConfigError`` for a model
    without one (a generator; batch, which needs a trace)."""
