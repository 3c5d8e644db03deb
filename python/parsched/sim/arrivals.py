"""Loader for explicit job streams (``--arrivals FILE.csv``).

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

from parsched.config import Arrivals
from parsched.config.pools import check_arrivals
from parsched.errors import ConfigError, shown

__all__ = ["load_arrivals"]

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
