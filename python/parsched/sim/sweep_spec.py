"""Sweeps from a spec file: ``parsched sweep SPEC.toml --out DIR``.

A spec (TOML, docs/formats/sweep-spec.md) names a ``model`` (any swept model of
:data:`parsched.sim.models.MODELS`), a ``[base]`` configuration, a
``[grid]`` (the cartesian product of key lists) and/or explicit ``[[points]]``,
and ``[replications]``: a fixed number of seeds, or "until the 90% confidence
interval half-width of a metric across replications is below a target", with a
minimum and a maximum.

Each point is keyed by a stable hash of its full configuration and the
replication rule (:func:`point_key`). As a point finishes, its row is written
to ``DIR/points/KEY.parquet`` (atomically: a temporary file renamed), and
``DIR/results.parquet`` (every finished point of the spec, in spec order) is
rewritten atomically from time to time and at the end, also after Ctrl-C or
SIGTERM. Running the same spec again skips the points whose part file exists.

Replication ``r`` of a point runs its configuration with ``seed + r`` (mod
2**64); a one-replication point is exactly ``parsched.sweep`` of its config.
Whatever the executor (threads, processes, a Dask cluster) the rows are
bit-identical except ``wall_seconds``: each run depends only on its config and
seed, and a CI-target point adds replications one at a time, deciding on the
complete prefix of its replications.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import dataclasses
import hashlib
import itertools
import json
import math
import os
import signal
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from parsched.config import BatchConfig
from parsched.config.base import ConfigBase, _closest, _cut
from parsched.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover

    import pandas as pd

__all__ = ["Point", "Replications", "SweepOutcome", "SweepSpec",
           "load_spec", "point_key", "run_spec", "spec_from_dict"]

#: Top-level keys of a spec.
SPEC_KEYS = ("model", "base", "grid", "points", "replications")
#: Keys of the ``[replications]`` table.
REPLICATION_KEYS = ("seeds", "metric", "ci_half_width", "ci_relative", "min", "max")
#: Version of the point key and row layout (changing it invalidates old parts).
FORMAT = 1
RESULTS = "results.parquet"
PARTS = "points"
#: Seconds between two rewrites of results.parquet while a sweep runs.
CONSOLIDATE_EVERY = 2.0


def _model(name: str):
    from parsched.sim.models import MODELS

    return MODELS[name]


def _metrics(model: str) -> tuple[str, ...]:
    """Summary keys a CI target may name (numbers that depend on the seed only)."""
    return _model(model).metrics


def _swept() -> list[str]:
    """The models a spec may name."""
    from parsched.sim.models import MODELS

    return [m.name for m in MODELS.values() if m.summary is not None]


# ----------------------------------------------------------------- the spec


def model_classes() -> dict[str, type[ConfigBase]]:
    """Every model's config class that :mod:`parsched.config` exports, by its
    TOML table name (its model's name)."""
    from parsched import config

    out = {}
    for name in config.__all__:
        c = getattr(config, name)
        if isinstance(c, type) and issubclass(c, ConfigBase) and c.TOML_TABLE:
            out[c.TOML_TABLE] = c
    return dict(sorted(out.items()))


@dataclasses.dataclass(frozen=True)
class Replications:
    """How many runs a point gets: ``seeds`` runs, or (``target`` set) runs
    until the 90% CI half-width of ``metric`` across them is below ``target``
    (``relative``: below ``target`` times the mean's magnitude), at least
    ``min`` and at most ``max`` runs."""

    seeds: int = 1
    metric: str | None = None
    target: float | None = None
    relative: bool = False
    min: int = 3
    max: int = 30

    @property
    def adaptive(self) -> bool:
        return self.target is not None

    def initial(self) -> int:
        return self.min if self.adaptive else self.seeds

    def key(self) -> dict[str, Any]:
        if not self.adaptive:
            return {"seeds": self.seeds}
        return {"metric": self.metric, "target": self.target, "relative": self.relative,
                "min": self.min, "max": self.max}

    def met(self, values: Sequence[float]) -> bool | None:
        """Whether the CI target is met by these values (None without a
        target): a point stopped at ``max`` may have missed it."""
        if not self.adaptive or len(values) < 2:
            return None if not self.adaptive else False
        hw = ci90_half_width(values)
        if not math.isfinite(hw):
            return False
        mean = math.fsum(values) / len(values)
        return hw < (self.target * abs(mean) if self.relative else self.target)

    def done(self, values: Sequence[float]) -> bool:
        """Whether a point with these metric values (replications 0..n-1) is finished."""
        n = len(values)
        if not self.adaptive:
            return n >= self.seeds
        if n >= self.max:
            return True
        if n < self.min:
            return False
        hw = ci90_half_width(values)
        if not math.isfinite(hw):
            return False
        mean = math.fsum(values) / n
        limit = self.target * abs(mean) if self.relative else self.target
        return hw < limit


def ci90_half_width(values: Sequence[float]) -> float:
    """Half-width of the two-sided 90% Student-t confidence interval of the mean
    (NaN for fewer than two values): the core's ``stats::mean_ci90``, the
    intervals of every other result."""
    if len(values) < 2:
        return math.nan
    from parsched import _core

    return float(_core.mean_ci90([float(v) for v in values])[1])


@dataclasses.dataclass(frozen=True)
class Point:
    """One configuration of a sweep: ``label`` is its grid/points values."""

    config: ConfigBase
    key: str
    label: str


@dataclasses.dataclass(frozen=True)
class SweepSpec:
    """A parsed spec: the model's name, its points in order, the replication rule."""

    path: str
    model: str
    points: tuple[Point, ...]
    replications: Replications


def point_key(config: ConfigBase, replications: Replications) -> str:
    """Stable hash (hex, 20 digits) of a point: the model, every field of its
    config (file paths as given) and the replication rule."""
    from parsched.display import jsonable

    doc = {"format": FORMAT, "model": config.MODEL, "config": jsonable(config.to_dict()),
           "replications": replications.key()}
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def load_spec(path: str | os.PathLike[str]) -> SweepSpec:
    """Reads and checks a spec file; bad input raises :class:`ConfigError` whose
    field names the file and the key (``spec.toml: grid.D``)."""
    from parsched.config.base import read_toml

    path = os.fspath(path)
    return spec_from_dict(read_toml(path, path, "a sweep spec TOML file"), path)


def spec_from_dict(doc: Mapping[str, Any], path: str = "<spec>") -> SweepSpec:
    """A :class:`SweepSpec` from the spec's tables (as :func:`load_spec` reads
    them); relative file paths in the configs are relative to ``path``'s folder."""

    def err(where: str, message: str, allowed: str | None = None) -> ConfigError:
        return ConfigError(f"{path}: {where}", message, allowed)

    for k in doc:
        if k not in SPEC_KEYS:
            near = _closest(str(k), list(SPEC_KEYS))
            hint = f" (did you mean {near}?)" if near else ""
            raise err(_cut(str(k)), f"unknown key{hint}", ", ".join(SPEC_KEYS))
    models = model_classes()
    model = doc.get("model")
    if model is None:
        raise err("model", "missing", ", ".join(models))
    if not isinstance(model, str) or model not in models:
        near = _closest(str(model), list(models)) if isinstance(model, str) else None
        hint = f" (did you mean {near}?)" if near else ""
        raise err("model", f"{_cut(repr(model))} is not a model{hint}", ", ".join(models))
    cls = models[model]
    from parsched.sim.api import runner

    try:
        runner(model)
    except ValueError:
        raise err("model", f"{model} cannot be swept yet", ", ".join(_swept())) from None
    base = _table(doc, "base", err)
    grid = _table(doc, "grid", err)
    points = doc.get("points", [])
    if not isinstance(points, list) or not all(isinstance(p, dict) for p in points):
        raise err("points", "not an array of tables", "[[points]] tables of KEY = VALUE")
    if "points" in doc and not points and not grid:
        raise err("points", "empty", "at least one [[points]] table")
    if not grid and not points:
        if "grid" in doc:
            raise err("grid", "empty: the sweep has no points",
                      "KEY = [VALUE, ...] lines (a list per key), or [[points]] tables")
        raise err("grid", "missing: the sweep has no points",
                  "a [grid] table of KEY = [VALUE, ...] and/or [[points]] tables")
    kinds = cls._kinds()
    for where, table in (("base", base), *((f"points[{i}]", p) for i, p in enumerate(points)),
                         ("grid", grid)):
        for k in table:
            if k not in kinds:
                e = cls._unknown_key(str(k))
                raise err(f"{where}.{e.field}", e.message, e.allowed)
    for k, values in grid.items():
        if not isinstance(values, list):
            raise err(f"grid.{k}", f"{_cut(repr(values))} is not a list",
                      f"a list of values, e.g. {k} = [{_toml(values)}]")
        if not values:
            raise err(f"grid.{k}", "empty list: the grid has no points",
                      "a non-empty list of values")
    reps = _replications(doc.get("replications"), model, cls, err)
    base_dir = os.path.dirname(os.path.abspath(path)) if path != "<spec>" else os.getcwd()

    def build(values: dict[str, Any], where: str, own: Mapping[str, Any]) -> ConfigBase:
        try:
            return _config(cls, values, path, base_dir)
        except ConfigError as e:
            field = e.field.split(" ")[0].split(":")[0]
            if where != "base" and field in own:
                at = f"{where}.{field}" if where.startswith("points") else f"grid.{field}"
                label = ", ".join(f"{k}={_toml(v)}" for k, v in own.items())
                raise err(at, f"{e.message} (at {label})", e.allowed) from None
            at = "" if e.field in base else " (at " + (", ".join(
                f"{k}={_toml(v)}" for k, v in own.items()) or "the base") + ")"
            raise err(f"base.{e.field}" if e.field in base else e.field, e.message + at,
                      e.allowed) from None

    out: list[Point] = []
    seen: set[str] = set()
    combos = [dict(zip(grid, vals, strict=True))
              for vals in itertools.product(*grid.values())] if grid else []
    for i, own in enumerate(combos):
        out.append(_point(build({**base, **own}, f"grid[{i}]", own), own, reps))
    for i, own in enumerate(points):
        out.append(_point(build({**base, **own}, f"points[{i}]", own), own, reps))
    if model == "batch" and (reps.adaptive or reps.seeds > 1):
        traced = [p for p in out if getattr(p.config, "workload", "trace") != "lublin"]
        if traced:
            raise err("replications", f"{traced[0].label}: a trace runs as it is (no seed to "
                      "vary)", 'seeds = 1, or workload = "lublin" (replications vary '
                      "workload_seed)")
    unique = []
    for p in out:  # the same configuration twice (grid and points): run once
        if p.key not in seen:
            seen.add(p.key)
            unique.append(p)
    return SweepSpec(path=path, model=model, points=tuple(unique), replications=reps)


def _table(doc: Mapping[str, Any], name: str, err) -> dict[str, Any]:
    t = doc.get(name, {})
    if not isinstance(t, dict):
        raise err(name, f"{_cut(repr(t))} is not a table", f"a [{name}] table")
    return t


def _toml(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(_toml(x) for x in v) + "]"
    return _cut(str(v), 40)


def _replications(t: Any, model: str, cls: type[ConfigBase], err) -> Replications:
    if t is None:
        return Replications()
    if isinstance(t, int) and not isinstance(t, bool):
        t = {"seeds": t}
    if not isinstance(t, dict):
        raise err("replications", f"{_cut(repr(t))} is not a table",
                  "a [replications] table with seeds = N, or ci_half_width / ci_relative")
    for k in t:
        if k not in REPLICATION_KEYS:
            near = _closest(str(k), list(REPLICATION_KEYS))
            hint = f" (did you mean {near}?)" if near else ""
            raise err(f"replications.{_cut(str(k))}", f"unknown key{hint}",
                      ", ".join(REPLICATION_KEYS))

    def posint(k: str, default: int, low: int) -> int:
        v = t.get(k, default)
        if isinstance(v, bool) or not isinstance(v, int) or v < low:
            raise err(f"replications.{k}", f"{_cut(repr(v))} is out of range",
                      f"an integer >= {low}")
        return v

    def posfloat(k: str) -> float:
        v = t[k]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not (
                math.isfinite(v) and v > 0):
            raise err(f"replications.{k}", f"{_cut(repr(v))} is out of range", "a number > 0")
        return float(v)

    adaptive = [k for k in ("ci_half_width", "ci_relative") if k in t]
    if len(adaptive) == 2:
        raise err("replications.ci_relative", "given with ci_half_width",
                  "one of ci_half_width (absolute) or ci_relative (a fraction of the mean)")
    has_seed = _model(model).seed_key in cls._kinds()
    if not adaptive:
        for k in ("metric", "min", "max"):
            if k in t:
                raise err(f"replications.{k}", "only used with a CI target",
                          "ci_half_width = X or ci_relative = X beside it, or seeds = N alone")
        seeds = posint("seeds", 1, 1)
        if seeds > 1 and not has_seed:
            raise err("replications.seeds", f"model {model} has no seed to vary",
                      "seeds = 1")
        return Replications(seeds=seeds)
    if "seeds" in t:
        raise err("replications.seeds", f"given with {adaptive[0]}",
                  "seeds = N (a fixed number) or a CI target, not both")
    if not has_seed:
        raise err(f"replications.{adaptive[0]}", f"model {model} has no seed to vary",
                  "seeds = 1")
    metrics = _metrics(model)
    metric = t.get("metric", _model(model).headline)
    if metric not in metrics:
        near = _closest(str(metric), list(metrics))
        hint = f" (did you mean {near}?)" if near else ""
        raise err("replications.metric", f"{_cut(repr(metric))} is not a metric of {model}"
                  f"{hint}", ", ".join(metrics))
    lo = posint("min", 3, 2)
    hi = posint("max", max(30, lo), lo)
    return Replications(metric=metric, target=posfloat(adaptive[0]),
                        relative=adaptive[0] == "ci_relative", min=lo, max=hi)


def _config(cls: type[ConfigBase], values: dict[str, Any], path: str,
            base_dir: str) -> ConfigBase:
    """The config of ``values`` as its TOML table would give it (special keys
    through the class's TOML hook; relative file paths from the spec's folder)."""
    from parsched.config import cosched as cosched_mod

    kinds = cls._kinds()
    vals = {}
    for k, v in values.items():
        if kinds[k] is object:
            v = cls._special_from_toml(k, v, os.path.join(base_dir, "spec.toml"))
        vals[k] = v
    if cls is BatchConfig and isinstance(vals.get("trace"), str) \
            and not os.path.isabs(vals["trace"]):
        vals["trace"] = os.path.join(base_dir, vals["trace"])
    token = cosched_mod._TOML_DIR.set(base_dir)
    try:
        cfg = cls(**vals)
    finally:
        cosched_mod._TOML_DIR.reset(token)
    if isinstance(cfg, BatchConfig):
        from parsched.sim.batch import _source

        try:
            _source(cfg)
        except ConfigError:
            raise
        except Exception as e:  # TraceError: the file cannot be opened
            raise ConfigError("trace", str(e), "an existing SWF trace file, or "
                              'workload = "lublin"') from None
    return cfg


def _point(config: ConfigBase, own: Mapping[str, Any], reps: Replications) -> Point:
    label = ", ".join(f"{k}={_toml(v)}" for k, v in own.items()) or "base"
    return Point(config=config, key=point_key(config, reps), label=label)


# --------------------------------------------------------------- running it


def _run_rep(model: str, cfg: dict[str, Any]) -> dict[str, Any]:
    """Worker entry point (module level, so that it pickles): one replication."""
    from parsched.sim.api import runner

    return runner(model)(cfg)


def _rep_config(config: ConfigBase, r: int) -> dict[str, Any]:
    cfg = config.to_dict()
    if r:
        key = _model(config.MODEL).seed_key
        cfg[key] = (int(cfg[key]) + r) % 2**64
    return cfg


def _aggregate(point: Point, reps: Replications, summaries: list[dict[str, Any]]
               ) -> dict[str, Any]:
    """The point's row: ``point`` (its key), the config's fields, the summary
    (the mean over replications of every number, a flag if any replication
    has it, other values from the first),
    ``replications``, ``rep_metric``, ``rep_values`` (the metric per
    replication), ``rep_ci90_half_width`` (across replications) and, with a CI
    target, ``rep_target_met`` (False: the point stopped at ``max``
    replications with a wider interval)."""
    from parsched.sim.api import _row

    n = len(summaries)
    first = summaries[0]
    summary: dict[str, Any] = {}
    for k, v in first.items():
        if isinstance(v, (list, tuple, dict)):
            continue  # per-replication detail (pools' rep_means)
        vals = [s.get(k) for s in summaries]
        numeric = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in vals)
        if n > 1 and numeric:
            summary[k] = math.fsum(float(x) for x in vals) / n
        elif n > 1 and all(isinstance(x, bool) for x in vals):
            summary[k] = any(vals)  # e.g. livelock: in any replication
        else:
            summary[k] = v
    metric = reps.metric or _model(point.config.MODEL).headline
    values = [float("nan") if s.get(metric) is None else float(s[metric]) for s in summaries]
    row = {"point": point.key, **_row(point.config, summary)}
    row.update(replications=n, rep_metric=metric, rep_values=values,
               rep_ci90_half_width=ci90_half_width(values))
    if reps.adaptive:
        row["rep_target_met"] = bool(reps.met(values))
    return row


def missed_targets(results: Any) -> str | None:
    """One line saying how many points stopped at ``max`` replications above
    their CI target (None if every point met it, or there is no target)."""
    if results is None or "rep_target_met" not in getattr(results, "columns", ()):
        return None
    missed = results[~results["rep_target_met"].astype(bool)]
    if missed.empty:
        return None
    hw = missed["rep_ci90_half_width"].astype(float)
    return (f"{len(missed)} of {len(results)} points missed the CI target (stopped at "
            f"max replications; 90% CI half-widths {hw.min():.4g}-{hw.max():.4g}): see the "
            "rep_target_met column, or raise max")


@dataclasses.dataclass
class SweepOutcome:
    """What :func:`run_spec` did: ``results`` (the finished points' rows in spec
    order), how many points there are, were already done, and ran now."""

    results: pd.DataFrame
    total: int
    skipped: int
    ran: int
    path: str


def run_spec(spec: SweepSpec | str | os.PathLike[str], out: str | os.PathLike[str],
             executor: Any = None, *, progress: bool = True,
             on_point: Callable[[dict[str, Any]], None] | None = None) -> SweepOutcome:
    """Runs a spec's unfinished points on ``executor`` (None: threads, one per
    CPU; any ``concurrent.futures.Executor`` or a ``dask.distributed.Client``)
    and writes ``out/points/KEY.parquet`` per point and ``out/results.parquet``.
    Points whose part file is in ``out/points`` already are skipped. On Ctrl-C
    (KeyboardInterrupt) the results file is brought up to date with the points
    that finished, then the exception propagates."""
    import pandas as pd
    import pyarrow.parquet as pq

    from parsched.sim.api import _progress, executor_for

    if not isinstance(spec, SweepSpec):
        spec = load_spec(spec)
    out = os.fspath(out)
    from parsched._io import check_output_dir

    check_output_dir(out, "--out")
    parts = os.path.join(out, PARTS)
    os.makedirs(parts, exist_ok=True)
    _remove_temporaries(out, parts)
    results_path = os.path.join(out, RESULTS)
    done = _finished(spec, parts, results_path)  # point key -> its one-row pyarrow Table
    skipped = len(done)
    todo = [p for p in spec.points if p.key not in done]
    state = {"last": 0.0, "every": CONSOLIDATE_EVERY}

    def consolidate(force: bool) -> None:
        now = time.monotonic()
        if not force and now - state["last"] < state["every"]:
            return
        if force:  # a part written just before an interruption counts too
            for p in todo:
                f = os.path.join(parts, p.key + ".parquet")
                if p.key not in done and os.path.exists(f):
                    with contextlib.suppress(Exception):
                        done[p.key] = pq.read_table(f)
        _write_table(results_path, [done[p.key] for p in spec.points if p.key in done])
        state["last"] = time.monotonic()
        # a large sweep spends at most ~10% of its time rewriting the file
        state["every"] = max(CONSOLIDATE_EVERY, 10 * (state["last"] - now))

    def finished(point: Point, row: dict[str, Any]) -> None:
        table = _row_table(row)
        _write_table(os.path.join(parts, point.key + ".parquet"), [table])
        done[point.key] = table
        if on_point is not None:
            on_point(row)
        consolidate(False)

    try:
        if todo:
            with executor_for(executor, len(todo)) as ex, \
                    _progress(progress, len(spec.points), completed=skipped,
                              label="sweep") as advance:
                _execute(spec, todo, ex, lambda p, row: (finished(p, row), advance()))
    finally:
        consolidate(True)
    frame = pd.read_parquet(results_path) if os.path.exists(results_path) else pd.DataFrame()
    return SweepOutcome(results=frame, total=len(spec.points), skipped=skipped,
                        ran=len(done) - skipped, path=results_path)


def _finished(spec: SweepSpec, parts: str, results_path: str) -> dict[str, Any]:
    """The rows of the points of ``spec`` that have a part file, by key: taken
    from ``results.parquet`` where it has them (one read), else from the part."""
    import pyarrow.parquet as pq

    on_disk = {name[:-8] for name in os.listdir(parts)
               if name.endswith(".parquet") and not name.startswith(".")}
    wanted = {p.key for p in spec.points} & on_disk
    done: dict[str, Any] = {}
    if wanted and os.path.exists(results_path):
        with contextlib.suppress(Exception):  # unreadable: the parts are the truth
            table = pq.read_table(results_path)
            for i, key in enumerate(table.column("point").to_pylist()):
                if key in wanted:
                    done[key] = table.slice(i, 1)
    for key in sorted(wanted - done.keys()):
        f = os.path.join(parts, key + ".parquet")
        try:
            done[key] = pq.read_table(f)
        except Exception:  # unreadable (cannot happen with atomic writes): run again
            with contextlib.suppress(OSError):
                os.unlink(f)
    return done


def pending(spec: SweepSpec, out: str | os.PathLike[str]) -> list[Point]:
    """The points of ``spec`` that have no result in ``out`` yet."""
    parts = os.path.join(os.fspath(out), PARTS)
    return [p for p in spec.points
            if not os.path.exists(os.path.join(parts, p.key + ".parquet"))]


def _execute(spec: SweepSpec, todo: Sequence[Point], ex: cf.Executor,
             finished: Callable[[Point, dict[str, Any]], None]) -> None:
    """Runs every replication of ``todo`` on ``ex``; calls ``finished(point, row)``
    as each point completes. A CI-target point gets one more replication at a
    time once its first ``min`` are in, so its replication count does not depend
    on the order in which runs finish."""
    reps = spec.replications
    metric = reps.metric or _model(spec.model).headline
    summaries: dict[int, dict[int, dict[str, Any]]] = {i: {} for i in range(len(todo))}
    submitted = dict.fromkeys(range(len(todo)), 0)
    futures: dict[cf.Future, tuple[int, int]] = {}

    def submit(i: int) -> None:
        r = submitted[i]
        submitted[i] = r + 1
        fut = ex.submit(_run_rep, spec.model, _rep_config(todo[i].config, r))
        futures[fut] = (i, r)

    try:
        for i in range(len(todo)):
            for _ in range(reps.initial()):
                submit(i)
        while futures:
            ready, _ = cf.wait(list(futures), return_when=cf.FIRST_COMPLETED)
            for fut in ready:
                i, r = futures.pop(fut)
                summaries[i][r] = fut.result()
                if len(summaries[i]) < submitted[i]:
                    continue  # replications of this point still running
                got = [summaries[i][k] for k in range(submitted[i])]
                values = [math.nan if s.get(metric) is None else float(s[metric])
                          for s in got]
                if reps.done(values):
                    finished(todo[i], _aggregate(todo[i], reps, got))
                    del summaries[i]
                else:
                    submit(i)
    except BaseException:
        for f in futures:
            f.cancel()
        raise


def _row_table(row: dict[str, Any]) -> Any:
    """A row as a one-row pyarrow Table."""
    import pyarrow as pa

    return pa.Table.from_pylist([row])


def _write_table(path: str, tables: list[Any]) -> None:
    """Writes the rows of ``tables`` (columns unified: int and float to float,
    null to any type) to ``path`` atomically (a temporary file renamed)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from parsched._io import atomic_file

    table = pa.concat_tables(tables, promote_options="permissive") if tables else pa.table({})
    with _signals_deferred(), atomic_file(path) as tmp:
        pq.write_table(table, tmp)


@contextlib.contextmanager
def _signals_deferred():
    """Holds SIGINT and SIGTERM back while a file is written and renamed (in
    the main thread), then acts on them as their handlers would: no temporary
    file is left behind, whenever Ctrl-C comes."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    got: list[int] = []

    def note(signum: int, frame: Any) -> None:
        got.append(signum)

    old = {s: signal.signal(s, note) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        if got:
            handler = old[got[0]]
            if callable(handler):
                handler(got[0], None)  # raises KeyboardInterrupt / Terminated
            else:
                signal.raise_signal(got[0])  # SIG_DFL or SIG_IGN: as it would have been


def _remove_temporaries(*dirs: str) -> None:
    """Temporary files a killed run left (``.parsched-*``; never read)."""
    for d in dirs:
        with contextlib.suppress(OSError):
            for name in os.listdir(d):
                if name.startswith(".parsched-"):
                    with contextlib.suppress(OSError):
                        os.unlink(os.path.join(d, name))


# ---------------------------------------------------------------- executors


def make_executor(kind: str, workers: int | None, scheduler: str | None,
                  n_tasks: int) -> contextlib.AbstractContextManager[Any]:
    """The executor ``--executor`` names, as a context manager that shuts down
    what it started (a Dask ``LocalCluster``, a pool)."""
    from parsched.sim import api as api

    if kind == "threads":
        return api.owning(api.thread_executor(n_tasks, workers))
    if kind == "processes":
        return api.owning(api.process_executor(n_tasks, workers))
    return _dask_client(scheduler, workers)


@contextlib.contextmanager
def _dask_client(scheduler: str | None, workers: int | None):
    import logging

    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise ConfigError("--executor", "dask is not installed",
                          "pip install 'dask[distributed]', or --executor processes|threads"
                          ) from None
    if scheduler:
        try:
            client = Client(scheduler, timeout="10s")
        except (OSError, TimeoutError) as e:
            raise ConfigError("--scheduler", f"cannot connect to {scheduler!r}: {e}",
                              "the address of a running Dask scheduler, e.g. "
                              "tcp://host:8786") from None
        try:
            yield client
        finally:
            client.close()
        return
    # the workers ignore SIGINT (inherited): Ctrl-C reaches this process alone
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        cluster = LocalCluster(n_workers=workers or os.cpu_count() or 1, threads_per_worker=1,
                               processes=True, dashboard_address=":0",
                               silence_logs=logging.ERROR)
    finally:
        signal.signal(signal.SIGINT, old)
    client = Client(cluster)
    try:
        yield client
    finally:
        with contextlib.suppress(Exception):
            client.close()
        with contextlib.suppress(Exception):
            cluster.close()


if __name__ == "__main__":  # pragma: no cover
    sys.exit("run `parsched sweep SPEC.toml --out DIR`")
