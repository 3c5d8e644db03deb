"""Helpers shared by the command-line modules: argument types, usage errors, tables."""

from __future__ import annotations

import argparse
import inspect
import math
import sys
from typing import Any, NoReturn

from parsched.errors import (
    clip,
    shown,
)

PROG = "parsched"

class UsageError(Exception):
    """An argparse usage error (reported in one line, exit status 2)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        import re

        # argparse quotes the bad argument in full: cut long ones
        message = re.sub(r"'([^']{61,})'", lambda m: shown(m.group(1)), message)
        raise UsageError(_usage_hint(message))


def _usage_hint(message: str) -> str:
    """argparse's message with a hint: the closest command, or --set for KEY=VALUE."""
    import difflib
    import re

    m = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
    if m:
        choices = re.findall(r"'([^']*)'", m.group(2))
        near = difflib.get_close_matches(m.group(1), choices, n=1, cutoff=0.6)
        if near:
            return f"{message} (did you mean {near[0]}?)"
    m = re.search(r"unrecognized arguments: (.*)", message)
    if m:
        pairs = [a for a in m.group(1).split() if "=" in a and not a.startswith("-")]
        if pairs:
            return f"{message} (to set a key, use --set {' '.join(pairs)})"
    return message


def _positive_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{shown(text)} is not a number") from None
    if not (v > 0 and math.isfinite(v)):
        raise argparse.ArgumentTypeError(f"{v} is out of range; allowed: a number > 0")
    return v


def _window(text: str) -> tuple[float, float]:
    """``--gantt-window START:END`` (seconds, START < END)."""
    parts = text.split(":")
    try:
        lo, hi = (float(x) for x in parts) if len(parts) == 2 else (math.nan, math.nan)
    except ValueError:
        lo = hi = math.nan
    if not (math.isfinite(lo) and math.isfinite(hi) and hi > lo):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a window; allowed: START:END in seconds with START < END")
    return lo, hi


def _doc(fn: Any) -> str:
    return inspect.cleandoc(fn.__doc__ or "")


def _workers(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{shown(text)} is not an integer") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"{n} is out of range; allowed: integer >= 1")
    return n


def _slot(text: str) -> str:
    """``--slot``: a length with its unit (a bare number is refused: 50 could
    be ms or s)."""
    import re

    if not re.fullmatch(r"\s*\d+(\.\d*)?\s*(ns|us|µs|ms|s|m|min)\s*", text):
        if re.fullmatch(r"\s*\d+(\.\d*)?\s*", text):
            raise argparse.ArgumentTypeError(
                f"{shown(text)} has no unit; allowed: a length with its unit, e.g. 50ms, "
                "0.05s, 500us")
        raise argparse.ArgumentTypeError(
            f"cannot parse {text[:60]!r}; allowed: a length with its unit, e.g. 50ms, "
            "0.05s, 500us")
    return text.strip()


# ------------------------------------------------------------------ output


def _console():
    from rich.console import Console

    c = Console()
    return c if c.is_terminal else Console(width=120, color_system=None)


def _print_table(console, title: str, obj: Any) -> None:
    """A DataFrame as a table that fits the console: no header or number is cut
    (headers wrap at spaces, text cells fold); columns that still do not fit
    are left out, rightmost first, with a line naming them."""
    from rich.table import Table

    try:
        import pandas as pd
    except ImportError:  # pragma: no cover
        pd = None
    if pd is not None and isinstance(obj, pd.DataFrame):
        cells = {c: [_cell(v) for v in obj[c]] for c in obj.columns}
        numeric = {c: pd.api.types.is_numeric_dtype(obj[c]) for c in obj.columns}

        def need(c: Any) -> int:
            words = max((len(w) for w in str(c).split()), default=1)
            if numeric[c]:  # numbers never wrap
                return max([words, *(len(x) for x in cells[c])])
            return max(words, min(12, max((len(x) for x in cells[c]), default=1)))

        cols = list(obj.columns)
        width = console.width
        while len(cols) > 1 and sum(need(c) + 3 for c in cols) + 1 > width:
            cols.pop()
        left = [str(c) for c in obj.columns if c not in cols]
        t = Table(title=title or None, title_justify="left")
        for c in cols:
            t.add_column(str(c), justify="right" if numeric[c] else "left",
                         min_width=need(c), overflow="fold")
        for k in range(len(obj)):
            t.add_row(*(cells[c][k] for c in cols))
        console.print(t)
        if left:
            console.print(f"({len(left)} more column{'s' if len(left) > 1 else ''} not shown "
                          f"at this width: {', '.join(left)}; widen the terminal or use --json)",
                          highlight=False)
    else:
        console.print(f"[bold]{title}[/bold]: {obj}" if title else str(obj), highlight=False)


def _cell(v: Any) -> str:
    if isinstance(v, bool):
        return "yes" if v else ""
    if isinstance(v, float):
        if math.isnan(v):
            return ""
        if v.is_integer() and abs(v) < 1e9:
            return str(int(v))
        if abs(v) >= 100:
            return f"{v:.1f}"
        return f"{v:.3f}" if abs(v) < 1 else f"{v:.2f}"
    return str(v)




# ------------------------------------------------------ simulate MODEL


def add_simulate_parser(sub: Any, model: str, func: Any, fmt: Any,
                        workers: tuple[int | None, str] | None = None,
                        options: Any = None) -> argparse.ArgumentParser:
    """``parsched simulate MODEL``: the options every model shares
    (``--config``, ``--set``, ``--json``; ``--workers`` when ``workers`` gives
    its default and help), then the model's own (``options(parser)``); the
    help ends with the model's keys (the core's schema)."""
    from parsched.config.schema import keys_help

    p = sub.add_parser(model, help=_doc(func).splitlines()[0], description=_doc(func),
                       formatter_class=fmt, epilog=keys_help(model))
    p.add_argument("--config", metavar="FILE.toml",
                   help=f"TOML file with a [{model}] table (or flat keys)")
    p.add_argument("--set", metavar="KEY=VALUE", action="extend", nargs="+", default=[],
                   help="override a config key (repeatable)")
    if options is not None:
        options(p)
    if workers is not None:
        default, text = workers
        p.add_argument("--workers", type=_workers, default=default, metavar="N", help=text)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=func)
    return p


def load_config(args: argparse.Namespace) -> Any:
    """The config of ``simulate MODEL``: the model's defaults or ``--config``'s
    file, then the ``--set`` overrides."""
    from parsched.sim.models import MODELS

    cls = MODELS[args.model].config
    cfg = cls.from_toml(args.config) if args.config else cls()
    return cfg.apply_overrides(args.set or [])


def print_json(res: Any, outputs: dict[str, str] | None = None) -> int:
    """``--json``: the result's ``to_dict()`` (plus ``outputs``, the files
    written, when given) as one line; returns the exit status 0."""
    import json

    obj = res.to_dict()
    if outputs is not None:
        obj["outputs"] = outputs
    print(json.dumps(obj, sort_keys=False))
    return 0


def print_measures(title: str, rows: list[tuple[str, Any]]) -> Any:
    """A title line and a two-column table (measure, value); returns the console."""
    import pandas as pd

    con = _console()
    con.print(title, highlight=False)
    _print_table(con, "", pd.DataFrame(rows, columns=["measure", "value"]))
    return con


def fail(message: str, code: int = 2) -> int:
    """Prints ``parsched: error: MESSAGE`` (one line) on standard error and
    returns the exit status ``code``."""
    # every word cut to 200 characters: a safety net for echoed values that
    # were not cut where they were quoted (60 characters)
    line = " ".join(clip(w, 200) for w in str(message).split())
    print(f"{PROG}: error: {line}", file=sys.stderr)
    return code
