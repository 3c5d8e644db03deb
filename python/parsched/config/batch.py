"""Batch space-sharing and gang scheduling of rigid jobs on an SWF workload
trace: :class:`BatchConfig`, the keys of ``parsched._core.batch_keys()``
with the core's defaults, plus the ``trace`` path."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from .base import ConfigBase, _class_doc, _doc, core_defaults

__all__ = ["BatchConfig"]

_D = core_defaults("batch")

_BATCH_ALIASES = {"too_wide": {"reject": "error"}, "procs": {"auto": None, "header": None},
                  "workload_load": {"none": None, "model": None}}


@dataclass(frozen=True, slots=True)
class BatchConfig(ConfigBase):
    """One batch-scheduling run of a workload trace (times in seconds).

    Mirrors the keys of ``parsched._core.simulate_batch`` (Rust
    ``parsched_sim::batch::BatchConfig``, ``batch_keys()``) with the Rust
    defaults, plus ``trace``, the SWF file to run (``.swf`` or ``.swf.gz``),
    so that a config alone describes a run (and :func:`parsched.sweep` can take
    it). With ``workload="lublin"`` there is no file: the Lublin–Feitelson
    model generates the jobs from the ``workload_*`` keys (sweepable like any
    other key); the jobs are those ``parsched generate lublin`` writes. The
    loading rules (``procs_rule`` … ``unsorted``) are applied in the order
    cancelled → submit unknown → run time unknown → run time 0 →
    processor count → requested time; a dropped record is counted once, under
    its first reason (see docs/formats/swf.md). ``too_wide`` also accepts
    ``reject`` (= ``error``) and ``procs`` accepts ``auto`` (= None).
    """

    trace: str | None = _doc(
        "SWF trace to run, .swf or .swf.gz (gzip detected by content); relative paths in a "
        "TOML file are relative to that file", None)
    policy: Literal["fcfs", "easy", "conservative", "gang"] = _doc(
        "scheduler: fcfs, easy (EASY backfilling: a reservation for the first queued job), "
        "conservative (a reservation for every queued job) or gang (time slicing on an "
        "Ousterhout matrix with mpl slots, with backfilling)", _D["policy"])
    procs: int | None = _doc(
        "processors of the machine; None (or auto): the trace header's MaxProcs, else MaxNodes",
        _D["procs"])
    kill_on_overrun: bool = _doc(
        "end a job at its requested time if it runs longer (final_state "
        "COMPLETED_WALLTIME_REACHED)", _D["kill_on_overrun"])
    bsld_tau: float = _doc(
        "[τ] bounded slowdown threshold, seconds: max(1, response / max(run, τ))",
        _D["bsld_tau"])
    procs_rule: Literal["allocated", "requested"] = _doc(
        "job width: allocated (SWF field 5, else field 8) or requested (field 8, else 5); a "
        "fallback is counted as repaired", _D["procs_rule"])
    missing_requested_time: Literal["runtime", "factor", "drop"] = _doc(
        "requested time (field 9) unknown: runtime (use the run time: exact estimates), factor "
        "(ceil(run time × requested_time_factor)) or drop the job", _D["missing_requested_time"])
    requested_time_factor: float = _doc(
        "factor of missing_requested_time=factor, > 0", _D["requested_time_factor"])
    missing_runtime: Literal["drop", "requested"] = _doc(
        "run time (field 4) unknown: drop the job, or use the requested time (dropped if that "
        "is unknown too)", _D["missing_runtime"])
    zero_runtime: Literal["keep", "drop"] = _doc(
        "jobs with run time 0: keep (they start and end at once) or drop", _D["zero_runtime"])
    cancelled: Literal["keep", "drop"] = _doc(
        "jobs with status 5 (cancelled): drop, or keep if their run time is known "
        "", _D["cancelled"])
    unsorted: Literal["sort", "reject"] = _doc(
        "submit times out of order: sort (stable, trace order among equal times; counted) or "
        "reject (error naming the first line out of order)", _D["unsorted"])
    extra_fields: Literal["ignore", "error"] = _doc(
        "job lines with more than SWF's 18 fields (some conversions of real logs, e.g. "
        "ALCF Theta/Mira, append columns): ignore (read the first 18, count the lines in "
        "the report) or error (refuse the line)", _D["extra_fields"])
    too_wide: Literal["drop", "clamp", "error"] = _doc(
        "jobs wider than the machine: drop (counted), clamp to the machine width (counted as "
        "repaired) or error (refuse the trace; also spelled reject)", _D["too_wide"])
    mpl: int = _doc("gang: multiprogramming level, slots of the matrix, >= 1", _D["mpl"])
    quantum: int = _doc("gang: slot quantum, whole seconds >= 1", _D["quantum"])
    gang_backfill: bool = _doc(
        "gang: later jobs may take free slot space when an earlier one does not fit "
        "", _D["gang_backfill"])
    slot_allocation: Literal["first_fit", "best_fit"] = _doc(
        "gang: the matrix's slot allocation rule", _D["slot_allocation"])
    load_factor: float = _doc(
        "multiplies the offered load by dividing interarrival times by it, > 0 (1: the trace as "
        "is)", _D["load_factor"])
    track_resources: bool = _doc(
        "record which processors each job gets (lowest free first) for "
        "allocated_resources and the Gantt chart", _D["track_resources"])
    workload: Literal["trace", "lublin"] = _doc(
        "where the jobs come from: trace (the SWF file of trace) or lublin (the "
        "Lublin-Feitelson model generated in memory from the workload_* keys, for procs "
        "processors, 128 when procs is unset; no file needed)", _D["workload"])
    workload_jobs: int = _doc(
        "workload=lublin: number of jobs, 1 to 50,000,000", _D["workload_jobs"])
    workload_load: float | None = _doc(
        "workload=lublin: offered load the arrivals are scaled to, in (0, 100]; None (or "
        "none): the model's own arrival process", _D["workload_load"])
    workload_seed: int = _doc(
        "workload=lublin: the model's seed (its own random streams: every policy sees the "
        "same jobs)", _D["workload_seed"])
    workload_types: bool = _doc(
        "workload=lublin: batch and interactive job types (the published model) or the "
        "typeless variant", _D["workload_types"])
    max_events: int = _doc(
        "gang: a run whose estimated event count (a few per job plus two per quantum "
        "over the jobs' total run time) is above this is refused before it starts; "
        "0: no limit", _D["max_events"])

    TOML_TABLE: ClassVar[str] = "batch"
    MODEL: ClassVar[str] = "batch"

    def __post_init__(self) -> None:
        for name, aliases in _BATCH_ALIASES.items():
            v = getattr(self, name)
            if isinstance(v, str) and v in aliases:
                object.__setattr__(self, name, aliases[v])
        self._coerce_fields()
        self._validate()

    @classmethod
    def parse_value(cls, key: str, raw: str) -> Any:
        text = raw.strip().strip("'\"")
        if key in _BATCH_ALIASES and text in _BATCH_ALIASES[key]:
            return _BATCH_ALIASES[key][text]
        return ConfigBase.parse_value.__func__(cls, key, raw)  # slots: no super()

    @classmethod
    def from_toml(cls, path: str | os.PathLike[str]) -> BatchConfig:
        cfg = ConfigBase.from_toml.__func__(cls, path)  # slots: no zero-argument super()
        if cfg.trace is not None and not os.path.isabs(cfg.trace):
            base = os.path.dirname(os.path.abspath(os.fspath(path)))
            cfg = cfg.with_(trace=os.path.join(base, cfg.trace))
        return cfg

    def core_dict(self) -> dict[str, Any]:
        """The keys ``parsched._core.simulate_batch`` takes (everything but ``trace``;
        ``procs`` left out when None)."""
        out = self.to_dict()
        out.pop("trace")
        if out["procs"] is None:
            out.pop("procs")
        return out

    def _core_dict(self) -> dict[str, Any]:
        return self.core_dict()


BatchConfig.__doc__ = _class_doc(BatchConfig)
