"""Batch space-sharing and gang scheduling of rigid jobs on an SWF workload
trace: :class:`BatchConfig`, the keys of ``parsched._core.schema("batch")``
with the core's defaults, plus the ``trace`` path."""

from __future__ import annotations

import os
from dataclasses import field
from typing import Any, ClassVar

from .base import ConfigBase, _class_doc
from .schema import model_class

__all__ = ["BatchConfig"]

_DOC = """One batch-scheduling run of a workload trace (times in seconds).

Mirrors the keys of ``parsched._core.simulate_batch`` (Rust
``parsched_sim::batch::BatchConfig``): keys, types, choices, ranges, docs and
defaults come from the core's schema (``parsched._core.schema("batch")``),
plus ``trace``, the SWF file to run (``.swf`` or ``.swf.gz``), so that a
config alone describes a run (and :func:`parsched.sweep` can take it). With
``workload="lublin"`` there is no file: the Lublin–Feitelson model generates
the jobs from the ``workload_*`` keys (sweepable like any other key); the jobs
are those ``parsched generate lublin`` writes. The loading rules
(``procs_rule`` … ``unsorted``) are applied in the order cancelled → submit
unknown → run time unknown → run time 0 → processor count → requested time; a
dropped record is counted once, under its first reason (see
docs/formats/swf.md). ``too_wide`` also accepts ``reject`` (= ``error``) and
``procs`` accepts ``auto`` (= None).
"""


class _BatchMethods(ConfigBase):
    """What :class:`BatchConfig` adds to its schema's keys: ``trace``, a
    path relative to the TOML file that names it, and the core's dict."""

    __slots__ = ()
    TOML_TABLE: ClassVar[str] = "batch"
    MODEL: ClassVar[str] = "batch"

    def __post_init__(self) -> None:
        self._coerce_fields()
        self._validate()

    @classmethod
    def from_toml(cls, path: str | os.PathLike[str]) -> Any:
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


BatchConfig = model_class(
    "BatchConfig", "batch", _BatchMethods, module=__name__,
    first=[("trace", str | None, field(default=None, metadata={"doc": (
        "SWF trace to run, .swf or .swf.gz (gzip detected by content); relative paths in a "
        "TOML file are relative to that file")}))],
    doc=_DOC)
BatchConfig.__doc__ = _class_doc(BatchConfig)
