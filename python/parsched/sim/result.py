"""The one shape of every model's result (:class:`SimResult`).

Whatever the model, the object :func:`parsched.simulate` returns has

* ``config`` — the configuration it ran (a config object of :mod:`parsched.config`);
* ``summary`` — a dict of scalars (numbers, flags, names), every key defined
  once for all models in ``docs/glossary.md``;
* :meth:`~SimResult.frames` — its per-job / per-run / over-time records as
  pandas DataFrames, by name (``FRAMES``); most are also attributes of the
  same name (``res.jobs``, ``res.runs``, ``res.queue``, ...);
* :meth:`~SimResult.to_dict` — plain JSON-safe values: the summary keys at
  top level, the model's other parts, and ``config``;
* :meth:`~SimResult.to_json` — that dict as one line of JSON (what
  ``parsched simulate MODEL --json`` prints).

The model classes (``Result``, ``BarrierResult``, ``BatchResult``,
``CoschedResult``, ``FcsResult``, ``FcsFigureResult``, ``RegionsResult``) add
their own attributes and plots on top.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, ClassVar

from parsched.display import ResultRepr, jsonable

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["SimResult", "config_json"]


def config_json(config: Any) -> dict[str, Any]:
    """A config as JSON-safe values: its scalar fields, and for each special
    field (per-job lists, samples, arrivals) its length."""
    if isinstance(config, dict):
        return jsonable(dict(config))
    out: dict[str, Any] = dict(config.scalars())
    for key, value in config.to_dict().items():
        if key not in out:
            out[key] = _special_json(value)
    return jsonable(out)


def _special_json(value: Any) -> Any:
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, dict):  # columns (arrivals): the row count
        lengths = {len(v) for v in value.values() if hasattr(v, "__len__")}
        return max(lengths, default=0)
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return list(value)  # names (cosched jobs)
    return len(value)  # samples, per-job lists: how many


class SimResult(ResultRepr):
    """Base of every model's result: ``summary``, :meth:`frames`,
    :meth:`to_dict`, :meth:`to_json` (see the module's docs).

    A subclass names its DataFrame attributes in ``FRAMES`` and, when its
    JSON has more than the summary and the config, returns those parts from
    :meth:`_extra_dict`.
    """

    #: Names of the DataFrame attributes :meth:`frames` returns, in order.
    FRAMES: ClassVar[tuple[str, ...]] = ()

    config: Any
    summary: dict[str, Any]

    def frames(self) -> dict[str, pd.DataFrame]:
        """Every per-job / per-run / over-time table of this result, by name
        (``FRAMES``; by default the attributes of those names)."""
        return {name: getattr(self, name) for name in self.FRAMES}

    def _extra_dict(self) -> dict[str, Any]:
        """The parts of :meth:`to_dict` beyond the summary and the config."""
        return {}

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-safe values (NaN and infinities as None): the summary
        keys, the model's other parts, then ``config``."""
        out: dict[str, Any] = dict(self.summary)
        out.update(self._extra_dict())
        out["config"] = config_json(self.config)
        return jsonable(out)

    def to_json(self, **kwargs: Any) -> str:
        """:meth:`to_dict` as JSON text (``kwargs`` go to ``json.dumps``)."""
        return json.dumps(self.to_dict(), **kwargs)
