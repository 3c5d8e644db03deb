"""Explicit job streams of the pool model: :class:`Arrivals`, its checks
(the core's, :func:`check_arrivals`) and the loader of ``--arrivals FILE.csv``.

The file is CSV with the header ``arrival,d`` or ``arrival,d,para_work``:
``arrival`` is the job's arrival time (nondecreasing), ``d`` its desired
parallelism (integer 1..P) and ``para_work`` the optional total CPU demand of
its PARA phase. Blank lines and lines starting with ``#`` are skipped. Every
error is one line naming the file, the line number and the field.
"""

from __future__ import annotations

import csv
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from parsched import _core
from parsched.errors import ConfigError, shown

from .base import _as_float, _as_int, _core_error

__all__ = ["Arrivals", "check_arrivals", "load_arrivals"]


@dataclass(frozen=True, slots=True)
class Arrivals:
    """An explicit job stream replacing the Poisson / bounded-geometric workload.

    ``arrival`` times are nondecreasing, ``d`` is each job's desired parallelism
    (1..P) and ``para_work`` optionally gives each job's total PARA-phase demand,
    > 0 (otherwise, or where an entry is None or NaN, ``para_unit * d``).
    """

    arrival: tuple[float, ...]
    d: tuple[int, ...]
    para_work: tuple[float | None, ...] | None = None

    def __post_init__(self) -> None:
        arrival = tuple(_as_float("arrivals.arrival", v) for v in self.arrival)
        d = tuple(_as_int("arrivals.d", v) for v in self.d)
        object.__setattr__(self, "arrival", arrival)
        object.__setattr__(self, "d", d)
        if self.para_work is not None:
            pw = tuple(None if v is None or (isinstance(v, float) and math.isnan(v))
                       else _as_float("arrivals.para_work", v) for v in self.para_work)
            object.__setattr__(self, "para_work", pw)
        check_arrivals(self.to_dict())

    def __len__(self) -> int:
        return len(self.arrival)

    def to_dict(self) -> dict[str, list]:
        out: dict[str, list] = {"arrival": list(self.arrival), "d": list(self.d)}
        if self.para_work is not None:
            # None (the default demand) crosses to the core as NaN
            out["para_work"] = [math.nan if v is None else v for v in self.para_work]
        return out

    @classmethod
    def from_mapping(cls, m: Mapping[str, Any]) -> Arrivals:
        unknown = sorted(set(m) - {"arrival", "d", "para_work"})
        if unknown:
            raise ConfigError(
                f"arrivals.{unknown[0]}", "unknown column", "arrival, d, para_work"
            )
        for k in ("arrival", "d"):
            if k not in m:
                raise ConfigError(f"arrivals.{k}", "missing column", "arrival, d[, para_work]")
        pw = m.get("para_work")
        return cls(tuple(m["arrival"]), tuple(m["d"]), None if pw is None else tuple(pw))


def check_arrivals(columns: Mapping[str, Any], procs: int | None = None) -> None:
    """The core's checks of an arrivals list (``procs``, if given, bounds d): the
    one definition of a valid job stream. Raises :class:`ConfigError` with the
    field ``arrivals row N: COLUMN`` (N counts jobs from 1)."""
    try:
        _core.check_arrivals(dict(columns), procs)
    except _core.ConfigError as e:
        raise _core_error(e) from None

_COLUMNS = ("arrival", "d", "para_work")


def load_arrivals(path: str | os.PathLike[str], P: int | None = None) -> Arrivals:
    """Reads an arrivals CSV; ``P`` (if given) bounds ``d``."""
    path = os.fspath(path)
    name = os.path.basename(path)
    try:
        fh = open(path, newline="", encoding="utf-8")  # noqa: SIM115 - closed below
    except OSError as e:
        raise ConfigError("arrivals", f"cannot read {path!r}: {e.strerror or e}") from None
    arrival: list[float] = []
    d: list[int] = []
    para: list[float | None] = []
    with fh:
        try:
            rows = [
                (lineno, row)
                for lineno, row in _numbered(csv.reader(fh))
                if row and any(c.strip() for c in row) and not row[0].lstrip().startswith("#")
            ]
        except (csv.Error, UnicodeDecodeError) as e:
            raise ConfigError("arrivals", f"{name}: malformed CSV: {e}") from None
    if not rows:
        raise ConfigError("arrivals", f"{name}: empty file", "a header arrival,d[,para_work]")
    head_line, header = rows[0]
    header = [h.strip().lower() for h in header]
    if header not in (["arrival", "d"], ["arrival", "d", "para_work"]):
        raise ConfigError(
            "arrivals", f"{name} line {head_line}: header is {shown(','.join(header))}",
            "arrival,d or arrival,d,para_work",
        )
    has_pw = len(header) == 3
    if len(rows) == 1:
        raise ConfigError("arrivals", f"{name}: no jobs after the header", "at least one row")
    lines: list[int] = []
    for lineno, row in rows[1:]:
        if len(row) != len(header):
            raise ConfigError(
                "arrivals", f"{name} line {lineno}: {len(row)} fields",
                f"{len(header)} fields ({','.join(header)})",
            )
        lines.append(lineno)
        arrival.append(_num(row[0], name, lineno, "arrival"))
        d.append(_int(row[1], name, lineno))
        if has_pw:
            # an empty cell means the default demand, para_unit·d
            para.append(None if not row[2].strip()
                        else _num(row[2], name, lineno, "para_work"))
    pw_col = [math.nan if x is None else x for x in para]  # the core reads NaN as default
    columns = {"arrival": arrival, "d": d, **({"para_work": pw_col} if has_pw else {})}
    try:
        check_arrivals(columns, P)  # the core's rules, reported at the file's line
    except ConfigError as e:
        m = re.fullmatch(r"arrivals row (\d+): (\w+)", e.field)
        if m is None:
            raise
        line = lines[int(m.group(1)) - 1]
        raise ConfigError(m.group(2), f"{name} line {line}: {e.message}", e.allowed) from None
    return Arrivals(tuple(arrival), tuple(d), tuple(para) if has_pw else None)


def _numbered(reader):
    for row in reader:
        yield reader.line_num, row


def _num(text: str, name: str, lineno: int, field: str) -> float:
    try:
        x = float(text)
    except ValueError:
        raise ConfigError(field, f"{name} line {lineno}: {shown(text.strip())} is not a number",
                          "a finite number") from None
    if not math.isfinite(x):
        raise ConfigError(field, f"{name} line {lineno}: {shown(text.strip())} is not finite",
                          "a finite number")
    return x


def _int(text: str, name: str, lineno: int) -> int:
    try:
        return int(text)
    except ValueError:
        raise ConfigError("d", f"{name} line {lineno}: {shown(text.strip())} is not an integer",
                          "integers >= 1") from None
