"""Display helpers shared by the results, the reports, the ``reproduce``
commands and the CLI: Markdown tables, number formatting for them, JSON-safe
values, the headless pyplot and figure saving, results' reprs. A leaf: it
imports no other module of parsched.

Each report keeps its own number style (a short one for the pool tables, a more
precise one for the gang tables, three significant digits for the desktop
tables); the styles live here, side by side, so that a table is always written
by :func:`markdown_table`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

__all__ = [
    "FIGURE_FORMATS",
    "fmt_3g",
    "fmt_precise",
    "fmt_short",
    "jsonable",
    "log_ticks",
    "markdown_table",
    "pyplot",
    "save_figure",
]


def _number(v: Any) -> float | None:
    """``v`` as a float when it is a (numpy) floating-point number, else None."""
    if isinstance(v, float):
        return v
    try:
        import numpy as np
    except ImportError:  # pragma: no cover
        return None
    return float(v) if isinstance(v, np.floating) else None


def fmt_short(v: Any) -> str:
    """Cells of the pool-model tables: integers as such, 3 significant digits
    below 1, one decimal from 100 on, two otherwise; None and NaN empty."""
    if v is None:
        return ""
    if isinstance(v, float):
        if math.isnan(v):
            return ""
        if v.is_integer() and abs(v) < 1e6:
            return str(int(v))
        return f"{v:.3g}" if abs(v) < 1 else f"{v:.1f}" if abs(v) >= 100 else f"{v:.2f}"
    return str(v)


def fmt_precise(v: Any) -> str:
    """Cells of the gang tables: yes/no for booleans, integers as such, 4 decimals
    below 1, 3 below 10, 2 below 1000, one above; None and NaN empty."""
    if v is None:
        return ""
    try:
        import numpy as np

        is_bool = isinstance(v, (bool, np.bool_))
    except ImportError:  # pragma: no cover
        is_bool = isinstance(v, bool)
    if is_bool:
        return "yes" if v else "no"
    x = _number(v)
    if x is not None:
        if math.isnan(x):
            return ""
        if x.is_integer() and abs(x) < 1e6:
            return str(int(x))
        a = abs(x)
        return f"{x:.4f}" if a < 1 else f"{x:.3f}" if a < 10 else f"{x:.2f}" if a < 1000 \
            else f"{x:.1f}"
    return str(v)


def fmt_3g(v: Any) -> str:
    """Cells of the desktop tables: floats to 3 significant digits."""
    return f"{v:.3g}" if isinstance(v, float) else str(v)


def markdown_table(df: Any, columns: Sequence[str] | None = None,
                   fmt: Callable[[Any], str] = fmt_precise) -> str:
    """A Markdown table of ``df``'s ``columns`` (default: all), cells by ``fmt``."""
    columns = list(df.columns) if columns is None else list(columns)
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for _, r in df.iterrows():
        lines.append("| " + " | ".join(fmt(r[c]) for c in columns) + " |")
    return "\n".join(lines)


def jsonable(v: Any) -> Any:
    """``v`` with non-finite floats as None and numpy scalars as Python ones."""
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    if hasattr(v, "item"):  # numpy scalars
        return jsonable(v.item())
    return v


def pyplot():
    """``matplotlib.pyplot`` on the headless Agg backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


#: Figure formats every plot writer accepts, chosen by the file's extension.
FIGURE_FORMATS = (".png", ".svg", ".pdf")


def save_figure(fig: Any, path: str, *, dpi: int = 110, layout: bool = True) -> str:
    """Writes ``fig`` to ``path`` (atomically) in the format its extension names:
    ``.png``, ``.svg`` or ``.pdf`` (:data:`FIGURE_FORMATS`); any other extension is
    a ConfigError. SVG and PDF carry no creation date and SVG ids a fixed salt, so
    the same figure gives the same bytes. ``layout``: apply ``tight_layout`` first.
    Returns the path."""
    import os

    from parsched._io import atomic_file
    from parsched.errors import ConfigError

    path = os.fspath(path)
    ext = os.path.splitext(path)[1].lower()
    if ext not in FIGURE_FORMATS:
        raise ConfigError("figure", f"{path!r} has unsupported extension {ext or '(none)'!r}",
                          ", ".join(FIGURE_FORMATS))
    fmt = ext[1:]
    meta = {"svg": {"Date": None}, "pdf": {"CreationDate": None, "ModDate": None}}.get(fmt)
    if layout:
        fig.tight_layout()
    import matplotlib

    with atomic_file(path) as tmp, matplotlib.rc_context({"svg.hashsalt": "parsched"}):
        fig.savefig(tmp, format=fmt, dpi=dpi, metadata=meta)
    return path


def log_ticks(ax: Any, which: str = "y", *, most: int = 8) -> None:
    """Readable ticks on a log axis of ``ax`` (``which``: "x" or "y"): labelled
    plain numbers (0.5, 1, 2, 5, 10, ...) at 1-2-5 steps, or finer steps when
    the axis spans less than a factor of about 5, so that every log axis shows
    at least three labelled ticks and never a lone "1" or mathtext powers only.
    Call it after the data are drawn (the limits are read from ``ax``)."""
    import matplotlib.ticker as mticker

    axis = ax.yaxis if which == "y" else ax.xaxis
    lo, hi = sorted(ax.get_ylim() if which == "y" else ax.get_xlim())
    if not (lo > 0 and hi > lo):
        return
    e0, e1 = math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 1
    ticks: list[float] = []
    for subs in ((1.0,), (1.0, 2.0, 5.0), (1.0, 1.5, 2.0, 3.0, 5.0, 7.0)):
        ticks = sorted({float(f"{s * 10.0 ** e:.6g}") for e in range(e0, e1 + 1)
                        for s in subs if lo <= s * 10.0 ** e <= hi})
        if len(ticks) >= 3:
            break
    if len(ticks) < 3:  # a narrow span: evenly spaced round numbers (log ≈ linear there)
        ticks = [float(f"{v:.6g}") for v in
                 mticker.MaxNLocator(nbins=5, steps=[1, 2, 2.5, 5, 10]).tick_values(lo, hi)
                 if lo <= v <= hi and v > 0]
    if len(ticks) > most:  # thin evenly, keeping the first
        step = math.ceil(len(ticks) / most)
        ticks = ticks[::step]
    axis.set_major_locator(mticker.FixedLocator(ticks))
    axis.set_major_formatter(mticker.FuncFormatter(lambda v, _pos: f"{v:g}"))
    axis.set_minor_formatter(mticker.NullFormatter())


class ResultRepr:
    """A short ``repr`` (the model, the config keys that differ from the
    defaults, the headline numbers) and an HTML table for notebooks, for the
    result classes (whose configs would print hundreds of characters)."""

    #: (label, attribute or summary key) of the numbers worth a glance
    _HEADLINE: tuple[str, ...] = ()

    def _headline(self) -> list[tuple[str, Any]]:
        out = []
        summary = getattr(self, "summary", None) or {}
        for key in self._HEADLINE:
            v = summary[key] if key in summary else getattr(self, key, None)
            if v is not None:
                out.append((key, v))
        return out

    def _label(self) -> str:
        cfg = getattr(self, "config", None)
        return cfg.summary_label() if cfg is not None else ""

    def __repr__(self) -> str:
        nums = ", ".join(f"{k}={_short(v)}" for k, v in self._headline())
        return f"{type(self).__name__}({self._label()}; {nums})"

    def _repr_html_(self) -> str:
        import html

        rows = "".join(f"<tr><th style='text-align:left'>{html.escape(k)}</th>"
                       f"<td>{html.escape(_short(v))}</td></tr>" for k, v in self._headline())
        return (f"<div><b>{type(self).__name__}</b> <code>{html.escape(self._label())}"
                f"</code><table>{rows}</table></div>")


def _short(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    if isinstance(v, (list, tuple)):
        inner = ", ".join(_short(x) for x in v[:6])
        return f"[{inner}{', …' if len(v) > 6 else ''}]"
    text = str(v)
    return text if len(text) <= 60 else text[:59] + "…"
