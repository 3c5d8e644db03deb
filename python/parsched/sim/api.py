"""Running the simulators from Python.

* :func:`simulate` — any model's config object (:mod:`parsched.sim.models`)
  to that model's result (:class:`~parsched.sim.result.SimResult`); with no
  config, or a :class:`PoolsConfig`, the processor-pool model (seed 000,
  :func:`simulate_pools`);
* :func:`simulate_barrier` — seed 001's iterative-barrier machine
  (:class:`BarrierConfig`);
* :func:`sweep` — many configs of any model on any executor, one row per config.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import functools
import multiprocessing
import os
import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from parsched.config import BarrierConfig, BatchConfig, PoolsConfig
from parsched.config.base import ConfigBase
from parsched.config.table import summary_keys
from parsched.errors import ConfigError, PolicyError, SimulationError, TimeLimitError
from parsched.sim.result import SimResult

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from parsched.sim.policies import PoolPolicy

__all__ = [
    "BARRIER_SUMMARY_KEYS",
    "JOB_COLUMNS",
    "SUMMARY_KEYS",
    "BarrierResult",
    "Result",
    "core",
    "simulate",
    "simulate_barrier",
    "simulate_pools",
    "sweep",
]

#: Keys of ``Result.summary`` (the Rust core may add more).
SUMMARY_KEYS = summary_keys("pools")

#: Keys of ``BarrierResult.summary`` (the Rust ``SyncResult`` fields but
#: ``batch_means``, with the core's ``time_per_iter`` named ``time_per_iteration``).
BARRIER_SUMMARY_KEYS = summary_keys("barrier")

#: Columns of ``Result.jobs``: one row per simulated job (warm-up jobs included;
#: ``measured`` is False for them: the core discards jobs numbered below ``warmup``).
JOB_COLUMNS = (
    "rep", "job", "arrival", "init_start", "para_start", "para_end", "final_start",
    "finish", "response", "d", "a", "pools_used", "home_pool", "measured",
)

#: Any model's config (:data:`parsched.sim.models.MODELS`).
AnyConfig = ConfigBase

#: Summary keys that share a name with a config field get this prefix in sweep rows.
_CLASH_PREFIX = "measured_"


def core():
    """The compiled extension ``parsched._core`` (a clear error if it is not built)."""
    try:
        from parsched import _core
    except ImportError as e:  # pragma: no cover - depends on the build
        raise ImportError(
            "parsched._core is not built; run `make develop` (or "
            "`maturin develop --release`) in the repository first"
        ) from e
    return _core


def call_core(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)``, a function of the extension, with its errors
    raised as parsched's: :class:`ConfigError` (naming the field),
    :class:`PolicyError`, :class:`TimeLimitError`, :class:`SimulationError`."""
    from parsched.config.base import _core_error

    c = core()
    try:
        return fn(*args, **kwargs)
    except c.ConfigError as e:
        raise _core_error(e) from None
    except c.PolicyError as e:
        raise PolicyError(str(e)) from None
    except c.TimeLimitError as e:
        raise TimeLimitError(str(e)) from None
    except c.SimulationError as e:
        raise SimulationError(str(e)) from None


def _call(cfg: dict[str, Any], *, workers: int, records: bool, policy: Any, audit: bool) -> dict:
    c = core()
    try:
        return c.simulate_pools(cfg, workers=workers, audit=audit, records=records, policy=policy)
    except c.ConfigError as e:
        raise ConfigError.from_message(str(e)) from None
    except c.PolicyError as e:
        raise PolicyError(str(e)) from None
    except getattr(c, "SimulationError", ()) as e:
        raise SimulationError(str(e)) from None


@dataclass(frozen=True, repr=False)
class Result(SimResult):
    """The outcome of one :func:`simulate` call.

    ``summary`` holds the scalar measures (``mean_response_time``,
    ``ci90_half_width``, ``actual_parallelism`` (A), ``utilization`` (U), ``jobs``
    measured, ``events``, ``wall_seconds``, ``reps``, ``rep_means``,
    ``context_switches``, ``makespan``); ``jobs`` is a DataFrame with one row
    per simulated job, columns :data:`JOB_COLUMNS` (empty when ``records=False``);
    warm-up jobs are included with ``measured == False``.
    """

    _HEADLINE = ("mean_response_time", "ci90_half_width", "actual_parallelism",
                 "utilization", "jobs", "reps")
    FRAMES = ("jobs",)

    config: PoolsConfig
    summary: dict[str, Any]
    #: The core's per-job columns; :attr:`jobs` builds the DataFrame on first
    #: use, so that a run that never looks at it never imports pandas.
    job_columns: dict[str, Any] = field(repr=False, compare=False, default_factory=dict)

    @functools.cached_property
    def jobs(self) -> pd.DataFrame:
        import pandas as pd

        cols = self.job_columns
        jobs = pd.DataFrame({c: cols.get(c, []) for c in JOB_COLUMNS if c != "measured"}
                            | {k: v for k, v in cols.items() if k not in JOB_COLUMNS})
        jobs.insert(JOB_COLUMNS.index("measured"), "measured",
                    jobs["job"] >= self.config.warmup)
        return jobs

    @property
    def mean_response_time(self) -> float:
        return float(self.summary["mean_response_time"])

    def to_frame(self) -> pd.DataFrame:
        """One-row DataFrame: the config fields followed by the summary (as in :func:`sweep`)."""
        import pandas as pd

        return pd.DataFrame([_row(self.config, self.summary)])


def simulate(config: AnyConfig | None = None, **options: Any) -> Any:
    """Simulates any model's ``config`` and returns that model's result (a
    :class:`~parsched.sim.result.SimResult`: ``summary``, ``frames()``,
    ``to_dict()``, ``to_json()``); the default is the pool model's Table 2.

    ``options`` are the model's own: pools (:func:`simulate_pools`)
    ``records``, ``workers``, ``policy``, ``audit``; barrier ``audit``;
    cosched ``workers``, ``audit``; fcs and fcs_figure ``workers``. Models:
    :data:`parsched.sim.models.MODELS`.
    """
    from parsched.sim.models import model_of

    config = PoolsConfig() if config is None else config
    return model_of(config).run(config, **options)


def simulate_pools(
    config: PoolsConfig | None = None,
    *,
    records: bool = True,
    workers: int = 1,
    policy: PoolPolicy | None = None,
    audit: bool = False,
) -> Result:
    """Simulates ``config`` (default: Table 2) and returns a :class:`Result`.

    ``workers`` is the number of threads the Rust core uses for the replications;
    the results do not depend on it. ``policy`` is an optional Python object with
    ``home_pool(pools) -> int`` and ``place(request, pools) -> [(pool, threads)]``
    replacing the built-in Zhou-Brecht placement (see :mod:`parsched.sim.policies`);
    it is called from Rust for every arrival and every fork, so it is slower.
    ``audit=True`` asks the core to check its invariants as it runs.
    """
    config = PoolsConfig() if config is None else config
    if not isinstance(config, PoolsConfig):
        raise TypeError(f"config must be a PoolsConfig, not {type(config).__name__}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ConfigError("workers", f"{workers!r} is out of range", "integer >= 1")
    out = _call(config.to_dict(), workers=workers, records=records, policy=policy, audit=audit)
    return Result(config=config, summary=dict(out["summary"]),
                  job_columns=dict(out.get("jobs") or {}))


def _row(config: AnyConfig, summary: dict[str, Any], *, model: bool = False) -> dict[str, Any]:
    from parsched.sim.models import model_of

    row: dict[str, Any] = {}
    if model:
        row["model"] = config.MODEL
    row.update(config.scalars())
    for name, cell in model_of(config).cells.items():
        row[name] = cell(getattr(config, name))
    for k, v in summary.items():
        if k in row:
            if row[k] == v:
                continue
            k = _CLASH_PREFIX + k
        row[k] = v
    return row


def _run_summary(cfg: dict[str, Any]) -> dict[str, Any]:
    """Worker entry point of :func:`sweep` (module level so that it pickles)."""
    out = _call(cfg, workers=1, records=False, policy=None, audit=False)
    return dict(out["summary"])


def _run_barrier_summary(cfg: dict[str, Any]) -> dict[str, Any]:
    """Worker entry point of :func:`sweep` for a :class:`BarrierConfig`."""
    return _barrier_summary(_call_barrier(cfg, audit=False), cfg)[0]


def _call_barrier(cfg: dict[str, Any], *, audit: bool, gang_place: Any = None) -> dict:
    c = core()
    try:
        return c.simulate_barrier(cfg, audit=audit, gang_place=gang_place)
    except c.ConfigError as e:
        raise ConfigError.from_message(str(e)) from None
    except c.PolicyError as e:
        raise PolicyError(str(e)) from None
    except getattr(c, "SimulationError", ()) as e:
        raise SimulationError(str(e)) from None


def _barrier_summary(
    out: dict, cfg: dict[str, Any],
) -> tuple[dict[str, Any], tuple[float, ...], tuple[tuple[float, float, int], ...]]:
    """The core's result as a summary, with the seed's equations for the
    run's configuration (from its t_p and t_w) placed after ``t_w``."""
    from parsched.models.feitelson_rudolph import model_values

    out = dict(out)
    means = tuple(float(x) for x in out.pop("batch_means", ()))
    hist = tuple((float(lo), float(hi), int(c)) for lo, hi, c in
                 out.pop("iteration_histogram", ()))
    out.pop("config", None)
    summary: dict[str, Any] = {"time_per_iteration": out.pop("time_per_iter", None)}
    par = {k: cfg[k] for k in ("n", "l", "tq", "tcs", "alpha")}
    for key, value in out.items():
        summary[key] = value
        if key == "t_w":
            eqs = model_values(out["t_p"], out["t_w"], **par)
            summary.update((k, eqs[k]) for k in ("eq6", "eq8", "eq12", "eq13"))
    return summary, means, hist


@dataclass(frozen=True, repr=False)
class BarrierResult(SimResult):
    """The outcome of one :func:`simulate_barrier` call (times in ms).

    ``summary`` holds :data:`BARRIER_SUMMARY_KEYS`: ``time_per_iteration``
    (mean time per iteration of the measured gang), ``ci90_half_width`` (batch
    means), ``useful_utilization``, ``busy_wait_time``, ``overhead_time``,
    ``context_switches``, ``blocking_events``, ``yields`` and ``alpha_measured``
    (``wait = "yield"``: mean yields per wait, the seed's measured α; None
    otherwise), ``preemptions``, ``slot_switches``,
    ``fragmentation`` (time-weighted idle cells of the scheduled slots),
    ``iteration_min``, ``iteration_p10``, ``iteration_p50``, ``iteration_p90``,
    ``iteration_p99``, ``iteration_max`` (the distribution of the measured
    gang's iteration times: exact extremes, quantiles to about 1%),
    ``gang_iterations`` (barriers passed by all gangs), ``events``, the model's
    ``t_p``, ``t_w``, ``eq6``, ``eq8``, ``eq12``, ``eq13`` for this config, and
    ``wall_seconds``. ``batch_means`` are the means of the ``batches``
    consecutive batches of iteration times behind the confidence interval.
    """

    _HEADLINE = ("time_per_iteration", "ci90_half_width", "useful_utilization", "t_p", "t_w",
                 "iterations")
    FRAMES = ("iteration_histogram",)

    config: BarrierConfig
    summary: dict[str, Any]
    batch_means: tuple[float, ...] = field(repr=False)
    #: (low ms, high ms, iterations) per non-empty log bin (10 per decade)
    histogram: tuple[tuple[float, float, int], ...] = field(default=(), repr=False)

    @property
    def time_per_iteration(self) -> float:
        return float(self.summary["time_per_iteration"])

    @property
    def model(self) -> dict[str, float]:
        """The seed-001 model values of :attr:`config` (``t_p``, ``t_w``, ``eq6``,
        ``eq8``, ``eq12``, ``eq13``) as ``parsched reproduce gang`` and ``parsched
        simulate barrier`` compute them
        (:func:`parsched.models.feitelson_rudolph.barrier_model`)."""
        from parsched.models.feitelson_rudolph import barrier_model

        return barrier_model(self.config)

    @property
    def iteration_histogram(self) -> pd.DataFrame:
        """The measured gang's iteration times: columns ``lo_ms``, ``hi_ms``,
        ``iterations`` (non-empty bins, ten log-spaced bins per decade of ms)."""
        import pandas as pd

        return pd.DataFrame(list(self.histogram), columns=["lo_ms", "hi_ms", "iterations"])

    def _extra_dict(self) -> dict[str, Any]:
        # the model values (t_p, t_w, eqs. 6-13) as `parsched reproduce gang`
        # computes them, in the summary's places
        return {**self.model, "batch_means": list(self.batch_means),
                "iteration_histogram": [list(b) for b in self.histogram]}

    def to_frame(self) -> pd.DataFrame:
        """One-row DataFrame: the config fields followed by the summary (as in :func:`sweep`)."""
        import pandas as pd

        return pd.DataFrame([_row(self.config, self.summary)])


def simulate_barrier(config: BarrierConfig | None = None, *, audit: bool = False,
                     gang_place: Any = None) -> BarrierResult:
    """Simulates seed 001's machine for ``config`` (default: the Rust defaults:
    n = 10, ℓ = 3, k = 50000, gang scheduling, busy waiting) and returns a
    :class:`BarrierResult`. ``audit=True`` checks the core's invariants as it runs
    (slower). Deterministic: the result depends only on the config (and its seed).

    ``gang_place``: your own slot rule for the matrix every gang is placed in
    as the machine is built (default: first fit) — a function (or an object
    with a ``place`` method) called once per gang, in the order skew (if
    ``config.skew``), measured, competitors, with the batch machine's view: a
    dict of ``now`` (0), ``id`` (the gang's index in that order), ``procs``
    (its width), ``requested`` and ``submit`` (0), per existing slot
    ``slot_free`` and ``slot_jobs`` (int64 arrays), ``mpl`` (unbounded:
    2**32 − 1) and ``slots``. It returns a slot index: an existing slot with
    room, or ``slots`` for a new one; the gang gets the slot's lowest free
    processors, which fix its threads' processors under both ``sched =
    gang`` and ``local``. ``None``, a bad answer or an exception raises
    :class:`PolicyError` naming the gang (docs/policies/gang-scheduler.md).
    """
    config = BarrierConfig() if config is None else config
    if not isinstance(config, BarrierConfig):
        raise TypeError(f"config must be a BarrierConfig, not {type(config).__name__}")
    cfg = config.to_dict()
    out = _call_barrier(cfg, audit=audit, gang_place=gang_place)
    summary, means, hist = _barrier_summary(out, cfg)
    return BarrierResult(config=config, summary=summary, batch_means=means,
                         histogram=hist)


def _worker_init() -> None:
    # Ctrl-C reaches the whole process group: workers leave it to the parent,
    # which stops them (stop), instead of each printing a traceback.

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def thread_executor(n_tasks: int | None = None, workers: int | None = None) -> cf.Executor:
    """The executor :func:`sweep` uses by default: a ``ThreadPoolExecutor`` with
    ``workers`` threads (default one per CPU; at most ``n_tasks``).

    The Rust core releases the GIL for the whole of a run, so threads run
    simulations in parallel as processes would, without their start-up cost and
    without re-importing the caller's ``__main__`` module (a plain script with no
    ``if __name__ == "__main__":`` guard works).
    """
    return cf.ThreadPoolExecutor(max_workers=_n_workers(workers, n_tasks),
                                 thread_name_prefix="parsched-sweep")


def process_executor(n_tasks: int | None = None, workers: int | None = None) -> cf.Executor:
    """A pool of ``workers`` spawned processes (default one per CPU, at most
    ``n_tasks``) as an Executor (:class:`ProcessPool`): the workers ignore
    SIGINT, so that Ctrl-C reaches the parent alone, which ends them at once."""
    return ProcessPool(_n_workers(workers, n_tasks))


class ProcessPool(cf.Executor):
    """``multiprocessing.Pool`` (spawned workers that ignore SIGINT) as a
    ``concurrent.futures.Executor``. Unlike ``ProcessPoolExecutor`` it can end
    its workers at once: ``shutdown(cancel_futures=True)`` terminates them
    (the runs in progress are lost), with no traceback from a manager thread."""

    def __init__(self, workers: int) -> None:
        ctx = multiprocessing.get_context("spawn")
        self._pool = ctx.Pool(workers, initializer=_worker_init)
        self._open = True

    def submit(self, fn, /, *args, **kwargs) -> cf.Future:
        fut: cf.Future = cf.Future()
        fut.set_running_or_notify_cancel()

        def ok(value: Any) -> None:
            if not fut.done():
                fut.set_result(value)

        def failed(e: BaseException) -> None:
            if not fut.done():
                fut.set_exception(e)

        self._pool.apply_async(fn, args, kwargs, callback=ok, error_callback=failed)
        return fut

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        if not self._open:
            return
        self._open = False
        if cancel_futures:
            self._pool.terminate()
        else:
            self._pool.close()
        if wait or cancel_futures:
            self._pool.join()


def _n_workers(workers: int | None, n_tasks: int | None) -> int:
    n = workers or os.cpu_count() or 1
    if n_tasks is not None:
        n = max(1, min(n, n_tasks))
    return n


def is_dask_client(obj: Any) -> bool:
    """True for a ``dask.distributed.Client`` (checked without importing dask)."""
    mod = type(obj).__module__ or ""
    return (mod == "distributed" or mod.startswith("distributed.")) and hasattr(
        obj, "submit") and hasattr(obj, "gather")


class DaskExecutor(cf.Executor):
    """A ``dask.distributed.Client`` seen as a ``concurrent.futures.Executor``
    (``submit`` returns a ``concurrent.futures.Future``, so ``as_completed`` and
    ``wait`` work). :meth:`shutdown` cancels the tasks still in flight and leaves
    the client (and its cluster) open: they belong to the caller.
    """

    def __init__(self, client: Any) -> None:
        self.client = client
        self._inflight: dict[int, Any] = {}
        self._lock = threading.Lock()

    def submit(self, fn, /, *args, **kwargs) -> cf.Future:
        dfut = self.client.submit(fn, *args, pure=False, **kwargs)
        fut: cf.Future = cf.Future()
        fut.set_running_or_notify_cancel()
        key = id(fut)
        with self._lock:
            self._inflight[key] = dfut

        def done(d: Any) -> None:  # called on a dask thread when d is final
            with self._lock:
                self._inflight.pop(key, None)
            try:
                fut.set_result(d.result())
            except BaseException as e:
                fut.set_exception(e)

        dfut.add_done_callback(done)
        return fut

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        if cancel_futures:
            with self._lock:
                pending = list(self._inflight.values())
                self._inflight.clear()
            if pending:
                self.client.cancel(pending)


class executor_for:
    """Context manager: the executor to run ``n_tasks`` tasks on, from what a
    caller passed (None: ``default(n_tasks)``, :func:`thread_executor` unless
    given, shut down afterwards; a Dask
    ``Client``: wrapped in a :class:`DaskExecutor`; any ``Executor``: as is, left
    running). On an exception (Ctrl-C included) pending tasks are cancelled, and
    an executor of our own does not wait for running ones."""

    def __init__(self, executor: Any, n_tasks: int | None = None, *,
                 default: Callable[[int | None], cf.Executor] | None = None) -> None:
        self.own = executor is None or is_dask_client(executor)
        if executor is None:
            self.executor: cf.Executor = (default or thread_executor)(n_tasks)
        elif is_dask_client(executor):
            self.executor = DaskExecutor(executor)
        elif isinstance(executor, cf.Executor) or hasattr(executor, "submit"):
            self.executor = executor
        else:
            raise TypeError("executor must be a concurrent.futures.Executor or a "
                            f"dask.distributed.Client, not {type(executor).__name__}")

    def __enter__(self) -> cf.Executor:
        return self.executor

    def __exit__(self, exc_type, exc, tb) -> None:
        if self.own:
            stop(self.executor, failed=exc_type is not None,
                 interrupted=exc_type is not None and issubclass(exc_type, KeyboardInterrupt))


def stop(ex: cf.Executor, *, failed: bool = False, interrupted: bool = False) -> None:
    """Shuts down an executor of our own. After success it waits for it. After
    a failure it cancels what is queued and does not wait (a
    :class:`ProcessPool` ends its workers at once). After Ctrl-C or SIGTERM
    (``interrupted``) the runs in progress stop too: a thread pool's
    simulations are cancelled (``_core.cancel_runs``: each ends within ~50 ms;
    a thread busy with pure-Python work is not waited for), a process pool's
    workers are terminated, so that the command exits at once."""
    if interrupted and isinstance(ex, cf.ThreadPoolExecutor):
        core().cancel_runs()
    if isinstance(ex, cf.ProcessPoolExecutor) and (failed or interrupted):
        # a caller's ProcessPoolExecutor handed to us as our own: it cannot
        # end its running workers itself
        for p in list((getattr(ex, "_processes", None) or {}).values()):
            with contextlib.suppress(Exception):
                p.terminate()
    if failed or interrupted:
        ex.shutdown(wait=False, cancel_futures=True)
    else:
        ex.shutdown(wait=True)


@contextlib.contextmanager
def owning(ex: cf.Executor) -> Iterator[cf.Executor]:
    """Context manager for an executor of our own: on leaving, :func:`stop`
    it (waiting after success; at once after an exception, cancelling the runs
    in progress after Ctrl-C)."""
    try:
        yield ex
    except BaseException as e:
        stop(ex, failed=True, interrupted=isinstance(e, KeyboardInterrupt))
        raise
    stop(ex)


def sweep(
    configs: Iterable[AnyConfig],
    executor: cf.Executor | Any | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Simulates many configs; returns one row per input config, in input order.

    Configs may be any swept model's (:data:`parsched.sim.models.MODELS`):
    :class:`PoolsConfig` (seed 000), :class:`BarrierConfig` (seed 001),
    :class:`BatchConfig` (``trace`` set; the row adds ``dropped``, the
    records loading dropped), :class:`CoschedConfig` (seed 003; the row adds
    ``livelock``), :class:`FcsConfig` (seed 002; ``livelock``) or
    :class:`RegionsConfig` (seed 004) objects, mixed or not. Each row holds
    the config's scalar fields, its list fields as one cell each
    (``arrivals``: the number of listed jobs or None; ``samples``: how many;
    cosched ``jobs``: the names joined by commas; fcs ``jobs``: the
    multipliers as ``1,1,2,2;2,2,1,1``) and the result's summary (when kinds
    are mixed, a first column ``model`` names the model); summary keys that
    clash with a config field (``jobs``: the measured job count) get the
    prefix ``measured_``. Identical configs are
    simulated once and share their row values. Each config carries its own
    seed, so the results do not depend on the executor or its number of
    workers (except ``wall_seconds``).

    ``executor`` defaults to a ``ThreadPoolExecutor`` with ``os.cpu_count()``
    threads (shut down afterwards; the core releases the GIL, so the runs are
    parallel, and a script needs no ``if __name__ == "__main__":`` guard). Any
    ``concurrent.futures.Executor`` works (a ``ProcessPoolExecutor`` needs the
    guard in the calling script), and so does a ``dask.distributed.Client``
    (its cluster runs the simulations; it is left open). ``progress`` shows a
    rich progress bar with an ETA on stderr when it is a terminal.
    ``parsched sweep SPEC.toml`` (:mod:`parsched.sim.sweep_spec`) adds grids,
    replications, Parquet output and resuming.
    """
    import pandas as pd

    configs = list(configs)
    for c in configs:
        check_sweep_config(c)
    unique = list(dict.fromkeys(configs))
    results: dict[AnyConfig, dict[str, Any]] = {}
    if unique:
        with executor_for(executor, len(unique)) as ex:
            futures = {ex.submit(runner(c), c.to_dict()): c for c in unique}
            results = gather(futures, progress=progress)
    mixed = len({type(c) for c in configs}) > 1
    rows = [_row(c, results[c], model=mixed) for c in configs]
    return pd.DataFrame(rows)


def check_sweep_config(c: Any) -> None:
    """Raises unless ``c`` is a config :func:`sweep` can run."""
    from parsched.sim.models import MODELS, model_of

    try:
        model = model_of(c)
        model.runner()
    except (TypeError, ValueError):
        names = ", ".join(m.config.__name__ for m in MODELS.values() if m.summary)
        raise TypeError(f"sweep takes {names} objects, not {type(c).__name__}") from None
    if isinstance(c, BatchConfig) and c.trace is None and c.workload != "lublin":
        raise ConfigError("trace", "a BatchConfig in a sweep needs its trace",
                          "BatchConfig(trace=PATH), or workload='lublin'")


def runner(c: AnyConfig | str):
    """The module-level function (it pickles) that runs ``c.to_dict()`` and
    returns its summary dict: the worker entry point of :func:`sweep`. ``c``
    may also be a model's name (``"pools"``, ``"barrier"``, ...,
    :data:`parsched.sim.models.MODELS`); a ``ValueError`` for a model that is
    not swept."""
    from parsched.sim.models import model_of

    return model_of(c).runner()


_runner = runner  # the former private name


_K = TypeVar("_K")


def gather(futures: dict[cf.Future, _K], *, progress: bool = False) -> dict[_K, Any]:
    """Waits for every future of ``futures`` (future -> key) and returns the
    results by key, advancing a :class:`_progress` bar as each ends. On an
    error or Ctrl-C it cancels the futures not started yet and re-raises:
    the one loop every parallel run of the package (sweeps, reproductions)
    collects its results with."""
    results: dict[_K, Any] = {}
    with _progress(progress, len(futures)) as advance:
        try:
            for fut in cf.as_completed(futures):
                results[futures[fut]] = fut.result()
                advance()
        except BaseException:
            for f in futures:
                f.cancel()
            raise
    return results


class _progress:
    """Context manager yielding an ``advance()`` callable: a rich bar with an
    ETA on stderr when ``enabled`` and stderr is a terminal, else a no-op.
    ``completed`` items count as done already (a resumed sweep)."""

    def __init__(self, enabled: bool, total: int, *, completed: int = 0,
                 label: str = "simulating") -> None:
        self.enabled = enabled
        self.total = total
        self.completed = completed
        self.label = label
        self._bar = None

    def __enter__(self):
        if self.enabled:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            console = Console(stderr=True)
            if console.is_terminal:
                self._bar = Progress(
                    TextColumn(self.label), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                    console=console, transient=True,
                )
                self._bar.start()
                task = self._bar.add_task("sweep", total=self.total,
                                          completed=self.completed)
                return lambda: self._bar.advance(task)
        return lambda: None

    def __exit__(self, *exc) -> None:
        if self._bar is not None:
            self._bar.stop()
