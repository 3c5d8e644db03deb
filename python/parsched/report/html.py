"""``parsched report``: one self-contained HTML page from the ``reproduce`` outputs.

Each argument is the output directory of ``parsched reproduce pools | gang |
batch | desktop | fcs | cosched | regions`` (the seed is told from the files in it; a directory
holding such directories stands for them); with none, ``results/*`` is searched.
Per seed the page has a heading with the paper's title, the checks (holds or
not, with the evidence and the reproduction's own explanation of a departure),
the paper's numbers beside parsched's, every figure, and the reproduction's
``summary.md`` (rendered, folded). Figures are embedded as ``data:`` URIs and
the style sheet is inline: the page needs no network and no other file.

Everything shown is read from the directories: the report runs no simulation.
"""

from __future__ import annotations

import base64
import html
import math
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from string import Template
from typing import TYPE_CHECKING, Any

from parsched.errors import ConfigError
from parsched.report.common import fmt_3g, fmt_precise, fmt_short

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["SEEDS", "Section", "build_html", "detect", "find_results", "write_report"]

FIELD = "RESULTS_DIR"


@dataclass(frozen=True)
class Seed:
    kind: str
    #: files that identify the directory (all must be present)
    marks: tuple[str, ...]
    title: str
    cite: str
    command: str


SEEDS: dict[str, Seed] = {s.kind: s for s in (
    Seed("pools", ("paper_comparison.csv", "fig3.csv", "summary.md"),
         "Processor Pool-Based Scheduling for Large-Scale NUMA Multiprocessors",
         "seed 000 — Zhou & Brecht, SIGMETRICS 1991", "parsched reproduce pools"),
    Seed("gang", ("headlines.csv", "equations_summary.csv", "fig9_agreement.csv", "summary.md"),
         "Gang Scheduling Performance Benefits for Fine-Grain Synchronization",
         "seed 001 — Feitelson & Rudolph, JPDC 1992", "parsched reproduce gang"),
    Seed("desktop", ("desktop.csv", "granularity.csv", "summary.md"),
         "Process Scheduling for the Parallel Desktop",
         "seed 002 — Frachtenberg (§4.1, Figures 1-2), on this machine",
         "parsched reproduce desktop"),
    Seed("cosched", ("tables34.csv", "findings.csv", "summary.md"),
         "A Closer Look At Coscheduling Approaches for a Network of Workstations",
         "seed 003 — Nagar, Banerjee, Sivasubramaniam & Das, SPAA 1999",
         "parsched reproduce cosched"),
    Seed("fcs", ("table1.csv", "findings.csv", "variants.csv", "summary.md"),
         "Process Scheduling for the Parallel Desktop: flexible coscheduling",
         "seed 002 — Frachtenberg (§4.2, Table 1), in simulation",
         "parsched reproduce fcs"),
    Seed("regions", ("fig9abs_bands.csv", "balance.csv", "boundaries.csv", "findings.csv",
                     "summary.md"),
         "Region Scheduling: Efficiently Using the Cache Architectures via Page-Level Affinity",
         "seed 004 — Lee & Schwan, ASPLOS 2012", "parsched reproduce regions"),
    Seed("batch", ("batch.csv", "batch.md"),
         "Batch space-sharing and gang scheduling on real workload traces",
         "no seed paper — FCFS, EASY, conservative backfilling and gang on the shared traces",
         "parsched reproduce batch"),
)}

#: Order of the sections (the seeds' order).
ORDER = ("pools", "gang", "desktop", "fcs", "cosched", "regions", "batch")

FIGURE_EXTS = (".png", ".svg")


# ------------------------------------------------------------------ finding


def detect(path: str) -> str | None:
    """The reproduction that wrote ``path`` (a key of :data:`SEEDS`), or None."""
    if not os.path.isdir(path):
        return None
    names = set(os.listdir(path))
    for kind in ORDER:
        if all(m in names for m in SEEDS[kind].marks):
            return kind
    return None


def find_results(dirs: Sequence[str] | None = None,
                 default_root: str = "results") -> list[tuple[str, str]]:
    """``(kind, directory)`` of every reproduction named by ``dirs`` (a
    reproduction's directory, or a directory holding some), in seed order; with
    no ``dirs``, the reproductions under ``default_root``. Raises
    :class:`ConfigError` (field RESULTS_DIR) for a path that is not one and when
    nothing is found."""
    found: list[tuple[str, str]] = []
    if not dirs:
        if not os.path.isdir(default_root):
            raise ConfigError(FIELD, f"no results: {default_root!r} is not a directory",
                              "the output directories of parsched reproduce ...")
        dirs_found = _children(default_root)
        if not dirs_found:
            raise ConfigError(FIELD, f"no reproduction output under {default_root!r}",
                              "run parsched reproduce "
                              "pools|gang|batch|desktop|fcs|cosched|regions first")
        found = dirs_found
    else:
        for d in dirs:
            if not os.path.exists(d):
                raise ConfigError(FIELD, f"{d!r} does not exist")
            if not os.path.isdir(d):
                raise ConfigError(FIELD, f"{d!r} is not a directory")
            kind = detect(d)
            if kind:
                found.append((kind, d))
                continue
            inner = _children(d)
            if not inner:
                raise ConfigError(FIELD, f"{d!r} is not the output of a reproduction",
                                  "a directory written by parsched reproduce "
                                  "pools|gang|batch|desktop|fcs|cosched|regions "
                                  "(or one holding some)")
            found += inner
    seen: set[str] = set()
    out = []
    for kind, d in sorted(found, key=lambda kd: (ORDER.index(kd[0]), kd[1])):
        key = os.path.realpath(d)
        if key not in seen:
            seen.add(key)
            out.append((kind, d))
    return out


def _children(root: str) -> list[tuple[str, str]]:
    out = []
    for name in sorted(os.listdir(root)):
        p = os.path.join(root, name)
        kind = detect(p) if not name.startswith(".") else None
        if kind:
            out.append((kind, p))
    return out


# ------------------------------------------------------------------ pieces


@dataclass
class Check:
    name: str
    holds: bool
    claim: str
    evidence: str = ""
    why: str = ""


@dataclass
class Section:
    kind: str
    path: str
    mode: str = ""
    intro: str = ""
    checks: list[Check] = field(default_factory=list)
    #: (title, html) of the tables beside the paper
    tables: list[tuple[str, str]] = field(default_factory=list)
    #: (file name, caption)
    figures: list[tuple[str, str]] = field(default_factory=list)
    summary_md: str = ""
    note: str = ""

    @property
    def seed(self) -> Seed:
        return SEEDS[self.kind]

    @property
    def anchor(self) -> str:
        base = os.path.basename(os.path.normpath(self.path)) or self.kind
        return "sec-" + re.sub(r"[^A-Za-z0-9_-]+", "-", f"{self.kind}-{base}")


def esc(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _is_number(v: Any) -> bool:
    if isinstance(v, bool):
        return False
    if isinstance(v, (int, float)):
        return True
    try:
        import numpy as np
    except ImportError:  # pragma: no cover
        return False
    return isinstance(v, (np.integer, np.floating))


def html_table(df: pd.DataFrame, columns: Sequence[str] | None = None,
               fmt: Callable[[Any], str] = fmt_precise,
               headers: dict[str, str] | None = None,
               cell: Callable[[str, Any, Any], str | None] | None = None) -> str:
    """An HTML table of ``df``'s ``columns`` with cells by ``fmt`` (the same
    formatters as the Markdown tables); numbers right-aligned. ``cell(column,
    value, row)`` may return raw HTML for a cell."""
    columns = [c for c in (list(df.columns) if columns is None else columns) if c in df.columns]
    headers = headers or {}
    head = "".join(f"<th>{esc(headers.get(c, c))}</th>" for c in columns)
    # a column of numbers is right-aligned; one that mixes numbers and text
    # (a paper's "≈ 4 / ≈ 1.2" beside 0.8) is left-aligned throughout
    numeric = {c: all(_is_number(_maybe_number(v)) or v is None or v == ""
                      for v in df[c]) for c in columns}
    rows = []
    for _, r in df.iterrows():
        tds = []
        for c in columns:
            v = _maybe_number(r[c])
            raw = cell(c, v, r) if cell else None
            if raw is not None:
                tds.append(f"<td>{raw}</td>")
                continue
            num = numeric[c] and _is_number(v)
            tds.append(f"<td class='num'>{esc(fmt(v))}</td>" if num else f"<td>{esc(fmt(v))}</td>")
        rows.append("<tr>" + "".join(tds) + "</tr>")
    return (f"<div class='tw'><table><thead><tr>{head}</tr></thead><tbody>"
            + "".join(rows) + "</tbody></table></div>")


def _maybe_number(v: Any) -> Any:
    """A cell read back from a mixed CSV column as text ("0.2790040000000001")
    as the number it is, so that the table's formatter rounds it."""
    if isinstance(v, str) and re.fullmatch(r"\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*", v):
        x = float(v)
        return int(x) if x.is_integer() and "." not in v and "e" not in v.lower() else x
    return v


def _slug(text: str, most: int = 32) -> str:
    s = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return s[:most].rstrip("-")


def _drop_lead_in(text: str) -> str:
    """``text`` without a last sentence that introduces a table (ends with ':')."""
    text = text.strip()
    if text.endswith(":"):
        cut = max(text.rfind(". ", 0, len(text) - 1), text.rfind("; ", 0, len(text) - 1))
        text = text[:cut + 1] if cut > 0 else text
    return text


def badge(holds: bool | None, text: str | None = None) -> str:
    if holds is None:
        return f"<span class='badge info'>{esc(text or 'n/a')}</span>"
    cls, label = ("pass", "holds") if holds else ("fail", "does not hold")
    return f"<span class='badge {cls}'>{esc(text or label)}</span>"


def score_badge(held: int, n: int) -> str:
    """"k of n checks hold": green when all hold, amber when some, red when none."""
    if not n:
        return badge(None, "no checks")
    cls = "pass" if held == n else "partial" if held else "fail"
    return f"<span class='badge {cls}'>{held} of {n} checks hold</span>"


def _inline(text: str) -> str:
    """Markdown inline markup (code, bold, italics) on escaped text."""
    parts = re.split(r"(`[^`]*`)", text)
    out = []
    for p in parts:
        if len(p) >= 2 and p.startswith("`") and p.endswith("`"):
            out.append(f"<code>{esc(p[1:-1])}</code>")
            continue
        s = esc(p)
        s = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", s)
        s = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"<em>\1</em>", s)
        out.append(s)
    return "".join(out)


_IMG = re.compile(r"!\[([^\]]*)\]\(([^)]+)\)")


def markdown_html(md: str, figure_link: Callable[[str, str], str] | None = None) -> str:
    """The Markdown the reproductions write (headings, paragraphs, bullet lists
    with continuation lines, pipe tables, images, inline code and bold) as
    HTML. Images become ``figure_link(alt, target)`` (default: dropped)."""
    lines = md.splitlines()
    out: list[str] = []
    para: list[str] = []
    items: list[str] = []

    def flush() -> None:
        if para:
            out.append("<p>" + _inline(" ".join(para)) + "</p>")
            para.clear()
        if items:
            out.append("<ul>" + "".join(f"<li>{_inline(i)}</li>" for i in items) + "</ul>")
            items.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        s = line.strip()
        if not s:
            flush()
            i += 1
            continue
        m = re.match(r"^(#{1,6})\s+(.*)$", s)
        if m:
            flush()
            level = min(6, len(m.group(1)) + 2)  # the page's own h1/h2 come first
            out.append(f"<h{level}>{_inline(m.group(2))}</h{level}>")
            i += 1
            continue
        if s.startswith("|") and i + 1 < len(lines) and re.match(r"^\|?\s*:?-{3,}",
                                                                   lines[i + 1].strip()):
            flush()
            rows = []
            while i < len(lines) and lines[i].strip().startswith("|"):
                rows.append(lines[i].strip())
                i += 1
            cells = [[c.strip() for c in r.strip("|").split("|")] for r in rows]
            head = "".join(f"<th>{_inline(c)}</th>" for c in cells[0])
            body = []
            for r in cells[2:]:
                tds = "".join(
                    f"<td class='num'>{_inline(c)}</td>" if _looks_numeric(c)
                    else f"<td>{_inline(c)}</td>" for c in r)
                body.append(f"<tr>{tds}</tr>")
            out.append(f"<div class='tw'><table><thead><tr>{head}</tr></thead><tbody>"
                       + "".join(body) + "</tbody></table></div>")
            continue
        m = _IMG.fullmatch(s)
        if m:
            flush()
            if figure_link:
                out.append(f"<p class='figref'>{figure_link(m.group(1), m.group(2))}</p>")
            i += 1
            continue
        m = re.match(r"^[*-]\s+(.*)$", s)
        if m and not line.startswith("  "):
            if para:
                flush()
            items.append(m.group(1))
            i += 1
            continue
        if items and line.startswith("  "):
            items[-1] += " " + s
            i += 1
            continue
        para.append(s)
        i += 1
    flush()
    return "\n".join(out)


def _looks_numeric(text: str) -> bool:
    return bool(re.fullmatch(r"[-+−]?[\d.,]+(e[-+]?\d+)?%?", text.strip()))


def read_text(path: str) -> str:
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def _csv(directory: str, name: str) -> pd.DataFrame:
    import pandas as pd

    try:
        return pd.read_csv(os.path.join(directory, name))
    except (OSError, ValueError) as e:
        raise ConfigError(FIELD, f"{os.path.join(directory, name)!r} cannot be read: {e}") \
            from None


def _first_paragraph(md: str, start: str) -> str:
    """The first non-heading paragraph of ``md`` that starts with ``start``."""
    for block in re.split(r"\n\s*\n", md):
        b = " ".join(block.split())
        if b.startswith(start):
            return b
    return ""


def _figures(directory: str, md: str = "") -> list[tuple[str, str]]:
    """Every figure in ``directory`` (``.png``, ``.svg``); the caption is the
    nearest Markdown heading above its reference in ``md``, else its name."""
    captions: dict[str, str] = {}
    heading = ""
    for line in md.splitlines():
        m = re.match(r"^#{1,6}\s+(.*)$", line.strip())
        if m:
            heading = m.group(1).strip()
        for alt, target in _IMG.findall(line):
            captions.setdefault(os.path.basename(target), heading or alt)
    order = {name: i for i, name in enumerate(captions)}
    names = sorted((n for n in os.listdir(directory)
                    if n.lower().endswith(FIGURE_EXTS) and not n.startswith(".")),
                   key=lambda n: (order.get(n, len(order)), n))
    return [(n, captions.get(n, "")) for n in names]


# ------------------------------------------------------------------ sections


def _pools(d: str) -> Section:
    import numpy as np

    md = read_text(os.path.join(d, "summary.md"))
    comp = _csv(d, "paper_comparison.csv")
    sec = Section("pools", d, mode=_first_paragraph(md, "mode"), summary_md=md)
    sec.intro = _first_paragraph(md, "Figure designs")
    comp["ours − paper"] = (comp["ours"] - comp["paper"]) / comp["paper"]
    tol = 0.10
    for _, r in comp.iterrows():
        rel = float(r["ours − paper"])
        ci = float(r["ci90"]) if not math.isnan(float(r["ci90"])) else 0.0
        holds = bool(abs(r["ours"] - r["paper"]) <= max(tol * abs(r["paper"]), ci))
        ev = f"paper {fmt_short(float(r['paper']))}, parsched {fmt_short(float(r['ours']))}"
        if ci:
            ev += f" ± {fmt_short(ci)} (90% CI)"
        ev += f" ({rel:+.1%})"
        note = r.get("note", "")
        why = note if isinstance(note, str) else ""
        sec.checks.append(Check(_slug(str(r["quantity"])), holds, str(r["quantity"]), ev, why))
    sec.note = (f"The pools reproduction states no tolerance of its own; a check holds here when "
                f"parsched's value is within {tol:.0%} of the paper's or within its 90% "
                "confidence interval. The paper plots its figures but states only these "
                "numbers; the figure designs are parsched's choice (see each figure's design "
                "in the summary).")
    sec.tables.append((
        "The paper's stated numbers beside parsched's",
        html_table(comp, ["quantity", "paper", "ours", "ci90", "ours − paper"],
                   fmt=fmt_short, headers={"ours": "parsched", "ci90": "90% CI ±"},
                   cell=lambda c, v, r: f"{v:+.1%}" if c == "ours − paper" and np.isfinite(v)
                   else None)))
    sec.figures = _figures(d, md)
    return sec


def _equation_why(md: str) -> dict[str, str]:
    """The per-equation bullets of the gang summary: ``* **eq6** — ...``."""
    out = {}
    for m in re.finditer(r"^\* \*\*(eq\w+)\*\* — (.*)$", md, flags=re.M):
        out[m.group(1)] = m.group(2)
    return out


def _gang(d: str) -> Section:
    md = read_text(os.path.join(d, "summary.md"))
    head = _csv(d, "headlines.csv")
    gsum = _csv(d, "equations_summary.csv")
    pag = _csv(d, "fig9_agreement.csv")
    sec = Section("gang", d, mode=_first_paragraph(md, "mode"), summary_md=md)
    why = _equation_why(md)
    for _, g in gsum.iterrows():
        n, k = int(g["points_in_regime"]), int(g["within_5pct"])
        ev = f"{k}/{n} in-regime points within 5%"
        if n:
            ev += f"; median abs. error {float(g['median_abs_err_in']):.1%}, largest " \
                  f"{float(g['max_abs_err_in']):.1%}"
        sec.checks.append(Check(
            str(g["equation"]), n > 0 and k == n,
            f"{g['label']}: within 5% of the simulation wherever the seed says it holds "
            f"({g['regime']} grain)", ev, why.get(str(g["equation"]), "")))
    tot = pag[pag["model_region"] == "all"]
    if len(tot):
        t = tot.iloc[0]
        sim, agree = int(t["simulated"]), int(t["agree"])
        parts = "; ".join(f"{r['model_region']} {int(r['agree'])}/{int(r['simulated'])}"
                          for _, r in pag.iterrows() if r["model_region"] != "all")
        sec.checks.append(Check(
            "fig9", sim > 0 and agree == sim,
            "Figure 9 (σ = 1/2): the simulation classifies every simulated grid point as "
            "eqs. (15)/(16) do", f"{agree}/{sim} agree ({parts})",
            _drop_lead_in(_first_paragraph(md, "Where they part:")
                          .removeprefix("Where they part:"))))
    sec.tables.append(("Headlines: paper, formula, simulation",
                       html_table(head, fmt=fmt_precise,
                                  headers={"simulation": "parsched (simulation)"})))
    sec.tables.append(("Equations against simulation (in-regime agreement)",
                       html_table(gsum, ["equation", "regime", "points_in_regime",
                                         "within_5pct", "median_abs_err_in", "max_abs_err_in",
                                         "median_abs_err_out"])))
    sec.tables.append(("Figure 9: agreement per formula region", html_table(pag)))
    sec.figures = _figures(d, md)
    return sec


def _finding_checks(found: pd.DataFrame, evidence: str) -> list[Check]:
    """A reproduction's ``findings.csv`` rows (``id``, ``claim``, ``holds``,
    the ``evidence`` column, optional ``explanation``) as checks."""
    return [Check(str(f["id"]), str(f["holds"]).strip().lower() in ("true", "1", "yes"),
                  str(f["claim"]), str(f[evidence]), str(f.get("explanation", "")))
            for _, f in found.iterrows()]


def _cosched(d: str) -> Section:
    from parsched.reproduce.cosched import _fmt, _side_by_side

    md = read_text(os.path.join(d, "summary.md"))
    tab = _csv(d, "tables34.csv")
    found = _csv(d, "findings.csv").fillna("")
    sec = Section("cosched", d, mode=_first_paragraph(md, "Mode:"), summary_md=md)
    sec.checks += _finding_checks(found, "evidence")
    side = _side_by_side(tab)
    sec.tables.append(("Tables 3-4: completion time (s), parsched / paper",
                       html_table(side, fmt=_fmt)))
    rank = _first_paragraph(md, "Rank agreement")
    if rank:
        sec.tables.append(("", f"<p>{_inline(rank)}</p>"))
    t5 = os.path.join(d, "table5.csv")
    if os.path.isfile(t5):
        t5df = _csv(d, "table5.csv")
        if len(t5df):
            sec.tables.append(("Table 5: individual completion times (s)",
                               html_table(t5df, fmt=_fmt)))
    sec.figures = _figures(d, md)
    return sec


def _fcs(d: str) -> Section:
    md = read_text(os.path.join(d, "summary.md"))
    tab = _csv(d, "table1.csv")
    found = _csv(d, "findings.csv").fillna("")
    sec = Section("fcs", d, mode=_first_paragraph(md, "Run:"), summary_md=md)
    sec.checks += _finding_checks(found, "measured")
    sec.tables.append(("Table 1 (s): parsched beside the paper", html_table(
        tab, ["scheme", "job1", "paper_job1", "job2", "paper_job2", "job3", "paper_job3",
              "makespan", "paper_makespan", "over_optimum_%", "paper_over_optimum_%"],
        fmt=fmt_3g)))
    var = _csv(d, "variants.csv")
    sec.tables.append(("Open choices as variants", html_table(
        var, ["scheme", "variant", "what", "makespan", "over_optimum_%"], fmt=fmt_3g)))
    real = os.path.join(d, "table1_real.csv")
    if os.path.isfile(real):
        sec.tables.append(("Table 1 on this machine", html_table(_csv(d, "table1_real.csv"),
                                                                   fmt=fmt_3g)))
    sec.figures = _figures(d, md)
    return sec


def _regions(d: str) -> Section:
    md = read_text(os.path.join(d, "summary.md"))
    found = _csv(d, "findings.csv").fillna("")
    sec = Section("regions", d, mode=_first_paragraph(md, "Mode:"), summary_md=md)
    sec.checks += _finding_checks(found, "measured")
    sec.tables.append(("Figure 9 boundaries (cache-relative grids) beside the paper's conditions",
                       html_table(_csv(d, "boundaries.csv"),
                                  ["variant", "machine", "peak", "min_access_with_gain",
                                   "min_wss_mb_with_gain", "max_wss_mb_with_gain",
                                   "max_gain_at_or_below_2_12", "max_gain_fits_one_cache",
                                   "max_gain_past_two_caches", "rate_min_where_gain",
                                   "rate_max_where_gain", "paper_condition2_mb",
                                   "paper_condition3_mb"], fmt=fmt_3g)))
    sec.tables.append(("Balancing (§5.2): two large and two small programs", html_table(
        _csv(d, "balance.csv"), ["machine", "speedup", "speedup_large", "speedup_small",
                                 "loads_region_mb", "loads_standard_mb", "paper"], fmt=fmt_3g)))
    sec.tables.append(("Figure 9 on the paper's axes: the winning band per setting", html_table(
        _csv(d, "fig9abs_bands.csv"),
        ["variant", "machine", "setting", "microschedule_us", "cells_with_gain", "cells",
         "wss_mb_min", "wss_mb_max", "lower_edge_log2", "upper_edge_log2", "peak"],
        fmt=fmt_3g)))
    for name, title in (("real_unification.csv", "This machine: memlat unification"),
                        ("real_balancing.csv", "This machine: balancing"),
                        ("real_fallback.csv", "This machine: the fallback against Linux")):
        if os.path.isfile(os.path.join(d, name)):
            sec.tables.append((title, html_table(_csv(d, name), fmt=fmt_3g)))
    sec.figures = _figures(d, md)
    return sec


def _batch(d: str) -> Section:
    md = read_text(os.path.join(d, "batch.md"))
    df = _csv(d, "batch.csv")
    sec = Section("batch", d, summary_md=md)
    det = re.search(r"^Determinism: (.*)$", md, flags=re.M)
    if det:
        sec.checks.append(Check("determinism", "DIFFERENT" not in det.group(1),
                                "The same trace and policy run twice give the same schedule",
                                det.group(1)))
    traces = sorted(set(df["trace"]))
    sec.mode = (f"{len(traces)} trace(s) ({', '.join(traces)}) under "
                f"{', '.join(dict.fromkeys(df['policy']))}; {int(df['jobs'].sum())} job runs.")
    sec.note = "No seed paper: these runs have no published numbers to stand beside."
    sec.tables.append(("Every trace under every policy", html_table(
        df, ["trace", "procs", "jobs", "policy", "avg_wait", "avg_bsld", "utilization",
             "makespan", "max_queue", "wall_seconds"], fmt=fmt_precise,
        headers={"avg_wait": "avg wait (s)", "avg_bsld": "avg bounded slowdown",
                 "makespan": "makespan (s)", "wall_seconds": "simulation (s)"})))
    loads = df.drop_duplicates("trace")[["trace", "records", "jobs", "load_report"]]
    sec.tables.append(("Loading (default rules): what was dropped or repaired",
                       html_table(loads, headers={"load_report": "dropped or repaired"})))
    sec.figures = _figures(d, md)
    return sec


def _desktop(d: str) -> Section:
    from parsched.reproduce.desktop import (
        DESK_SHOWN,
        GRAN_SHOWN,
        IDEAL_TARGET,
        LOAD_NOTE,
        SPEEDUP_TARGET,
    )

    md = read_text(os.path.join(d, "summary.md"))
    desk = _csv(d, "desktop.csv")
    gran = _csv(d, "granularity.csv")
    sec = Section("desktop", d, summary_md=md)
    m = re.search(r"^(\d+ CPUs;.*?)(?=\n\n)", md, flags=re.M | re.S)
    sec.mode = " ".join(m.group(1).split()) if m else ""
    g1 = gran[gran["grain_ms"] == 1.0]
    if len(g1):
        r = g1.iloc[0]
        sec.checks.append(Check(
            "speedup", bool(r["speedup"] >= SPEEDUP_TARGET),
            f"Gang at least {SPEEDUP_TARGET:g}x faster than default Linux (two 2-thread "
            "spin-barrier jobs, barrier every 1 ms)",
            f"{r['speedup']:.2f}x (default {r['default_s']:.3g} s, gang {r['gang_s']:.3g} s; "
            f"foreign load {r['foreign_gang']:.2f} CPUs during the gang run)",
            LOAD_NOTE))
        sec.checks.append(Check(
            "near-ideal", bool(r["gang_vs_ideal"] <= IDEAL_TARGET),
            f"Gang within {IDEAL_TARGET - 1:.0%} of ideal time-sharing (2 × solo)",
            f"{r['gang_vs_ideal']:.3f} × ideal", LOAD_NOTE))
    sec.note = ("The paper plots Figures 1-2 on its own machines (4-way SMPs) and states no "
                "numbers for them; the tables show this machine's runs with the ideal "
                "time-sharing reference beside them.")
    sec.tables.append(("Fig. 1 on this machine: k parallel programs + s stressors (s)",
                       html_table(desk, DESK_SHOWN, fmt=fmt_3g)))
    sec.tables.append(("Granularity sweep: two 2-thread spin-barrier jobs (s)",
                       html_table(gran, GRAN_SHOWN, fmt=fmt_3g)))
    sec.figures = _figures(d, md)
    return sec


BUILDERS: dict[str, Callable[[str], Section]] = {
    "pools": _pools, "gang": _gang, "cosched": _cosched, "batch": _batch, "desktop": _desktop,
    "fcs": _fcs, "regions": _regions,
}


# ------------------------------------------------------------------ page


def _data_uri(path: str) -> str:
    ext = os.path.splitext(path)[1].lower()
    mime = {".png": "image/png", ".svg": "image/svg+xml"}[ext]
    with open(path, "rb") as fh:
        data = base64.b64encode(fh.read()).decode("ascii")
    return f"data:{mime};base64,{data}"


def _figure_id(sec: Section, name: str) -> str:
    return f"{sec.anchor}-fig-{re.sub(r'[^A-Za-z0-9_-]+', '-', name)}"


def _render_section(sec: Section) -> tuple[str, str]:
    """(body html, toc entry html) of one reproduction."""
    s = sec.seed
    a = sec.anchor
    held = sum(c.holds for c in sec.checks)
    n = len(sec.checks)
    score = score_badge(held, n)
    parts = [f"<section id='{a}'>",
             f"<h2>{esc(s.title)}</h2>",
             f"<p class='cite'>{esc(s.cite)} · <code>{esc(s.command)}</code> → "
             f"<code>{esc(sec.path)}</code> · {score}</p>"]
    if sec.mode:
        parts.append(f"<p class='mode'>{_inline(sec.mode)}</p>")
    if sec.intro:
        parts.append(f"<p>{_inline(sec.intro)}</p>")
    toc_sub = []
    if sec.checks:
        parts.append(f"<h3 id='{a}-checks'>Checks: {held} of {n} hold</h3>")
        toc_sub.append(f"<li><a href='#{a}-checks'>Checks</a></li>")
        if sec.note:
            parts.append(f"<p class='note'>{_inline(sec.note)}</p>")
        rows = []
        told: dict[str, str] = {}  # an explanation shared by several checks: once
        for c in sorted(sec.checks, key=lambda c: c.holds):
            why = ""
            if c.why and not c.holds:
                if c.why in told:
                    why = (f"<div class='why'><b>Why:</b> as for <code>{esc(told[c.why])}"
                           "</code> above.</div>")
                else:
                    told[c.why] = c.name
                    why = f"<div class='why'><b>Why:</b> {_inline(c.why)}</div>"
            rows.append(f"<tr class='{'ok' if c.holds else 'bad'}'><td>{badge(c.holds)}</td>"
                        f"<td><code>{esc(c.name)}</code></td><td>{_inline(c.claim)}{why}</td>"
                        f"<td>{_inline(c.evidence)}</td></tr>")
        parts.append("<div class='tw'><table class='checks'><thead><tr><th></th><th>check</th>"
                     "<th>claim (and why, where it does not hold)</th><th>parsched</th></tr>"
                     "</thead><tbody>" + "".join(rows) + "</tbody></table></div>")
    elif sec.note:
        parts.append(f"<p class='note'>{_inline(sec.note)}</p>")
    if sec.tables:
        parts.append(f"<h3 id='{a}-tables'>Tables</h3>")
        toc_sub.append(f"<li><a href='#{a}-tables'>Tables</a></li>")
        for title, body in sec.tables:
            if title:
                parts.append(f"<h4>{esc(title)}</h4>")
            parts.append(body)
    if sec.figures:
        parts.append(f"<h3 id='{a}-figures'>Figures</h3>")
        toc_sub.append(f"<li><a href='#{a}-figures'>Figures</a></li>")
        for name, caption in sec.figures:
            uri = _data_uri(os.path.join(sec.path, name))
            cap = f"{esc(caption)} — " if caption else ""
            parts.append(f"<figure id='{_figure_id(sec, name)}'><img src='{uri}' "
                         f"alt='{esc(name)}' loading='eager'><figcaption>{cap}"
                         f"<code>{esc(name)}</code></figcaption></figure>")
    if sec.summary_md:
        names = {n for n, _ in sec.figures}

        def link(alt: str, target: str) -> str:
            base = os.path.basename(target)
            if base in names:
                return f"<a href='#{_figure_id(sec, base)}'>↑ figure {esc(base)}</a>"
            return f"(figure {esc(base)} not found)"

        src = "summary.md" if sec.kind != "batch" else "batch.md"
        parts.append(f"<h3 id='{a}-summary'>The reproduction's write-up</h3>")
        toc_sub.append(f"<li><a href='#{a}-summary'>Write-up</a></li>")
        parts.append(f"<details><summary>{esc(src)} — every table and explanation the "
                     f"reproduction wrote</summary><div class='md'>"
                     f"{markdown_html(sec.summary_md, link)}</div></details>")
    parts.append("</section>")
    toc = (f"<li><a href='#{a}'>{esc(s.title)}</a> {score}"
           f"<div class='tocsub'>{esc(s.cite)}</div><ul>{''.join(toc_sub)}</ul></li>")
    return "\n".join(parts), toc


CSS = """
:root { --fg:#1d232b; --muted:#5b6675; --line:#d9dee5; --bg:#fff; --zebra:#f6f8fa;
  --accent:#2457a6; --pass:#1a7f37; --passbg:#dafbe1; --fail:#b42318; --failbg:#ffe4e0; }
* { box-sizing: border-box; }
body { margin:0; color:var(--fg); background:var(--bg);
  font:16px/1.55 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif; }
main { max-width: 1180px; margin: 0 auto; padding: 2rem 1.5rem 4rem; }
h1 { font-size: 2rem; margin: 0 0 .3rem; letter-spacing: -.01em; }
h2 { font-size: 1.55rem; margin: 3rem 0 .2rem; padding-top: 1rem;
  border-top: 3px solid var(--accent); }
h3 { font-size: 1.2rem; margin: 2rem 0 .6rem; }
h4 { font-size: 1rem; margin: 1.4rem 0 .4rem; color: var(--muted); }
a { color: var(--accent); text-decoration: none; } a:hover { text-decoration: underline; }
code { font: .86em/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;
  background:#eef1f5; padding:.05em .3em; border-radius:4px; }
.lead { color: var(--muted); max-width: 60rem; }
.cite { color: var(--muted); margin: .2rem 0 1rem; }
.mode, .note { background:#f3f6fb; border-left:4px solid var(--accent); padding:.6rem .9rem;
  border-radius: 0 6px 6px 0; font-size:.93rem; }
nav.toc { background:#f8fafc; border:1px solid var(--line); border-radius:10px;
  padding: 1rem 1.4rem; margin: 1.5rem 0 2rem; }
nav.toc > ol { margin: .3rem 0 0; padding-left: 1.3rem; }
nav.toc li { margin: .35rem 0; }
nav.toc ul { margin: .15rem 0 .2rem; padding-left: 1.1rem; font-size: .9rem;
  display:flex; gap: 1rem; list-style: none; }
.tocsub { color: var(--muted); font-size: .85rem; }
.badge { display:inline-block; font-size:.78rem; font-weight:600; padding:.12em .6em;
  border-radius: 999px; white-space: nowrap; vertical-align: middle; }
.badge.pass { color:var(--pass); background:var(--passbg); border:1px solid #aceebb; }
.badge.fail { color:var(--fail); background:var(--failbg); border:1px solid #ffc1b8; }
.badge.partial { color:#8a4b00; background:#fff1d6; border:1px solid #f5cf8a; }
.badge.info { color:var(--muted); background:#eef1f5; border:1px solid var(--line); }
.tw { overflow-x: auto; margin: .4rem 0 1.2rem; }
table { border-collapse: collapse; font-size: .86rem; min-width: 40%; }
th, td { padding: .35rem .6rem; border-bottom: 1px solid var(--line); text-align: left;
  vertical-align: top; }
thead th { background:#eef2f7; position: sticky; top: 0; font-weight: 600;
  border-bottom: 2px solid #c5ccd6; }
tbody tr:nth-child(even) { background: var(--zebra); }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.checks td:first-child { white-space: nowrap; }
table.checks tr.bad td { background: #fff8f7; }
.why { margin-top: .35rem; color: #4a3b36; font-size: .84rem; }
figure { margin: 1.2rem 0 2rem; text-align: center; }
figure img { max-width: 100%; height: auto; border: 1px solid var(--line); border-radius: 6px;
  box-shadow: 0 1px 3px rgba(0,0,0,.06); }
figcaption { color: var(--muted); font-size: .88rem; margin-top: .4rem; }
details { border:1px solid var(--line); border-radius:8px; padding:.5rem .9rem; }
details > summary { cursor: pointer; font-weight: 600; }
.md h3, .md h4, .md h5 { margin-top: 1.4rem; }
.figref { font-size: .9rem; }
footer { margin-top: 3rem; color: var(--muted); font-size: .85rem;
  border-top: 1px solid var(--line); padding-top: 1rem; }
"""

PAGE = Template("""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>$title</title>
<style>$css</style>
</head>
<body>
<main>
<h1>$title</h1>
<p class="lead">$lead</p>
<nav class="toc"><b>Contents</b> $overall<ol>$toc</ol></nav>
$sections
<footer>$footer</footer>
</main>
</body>
</html>
""")


def _build(kind: str, directory: str) -> Section:
    """One section; a directory whose files do not read as the reproduction's
    (a truncated or foreign CSV) is a ConfigError naming it."""
    try:
        return BUILDERS[kind](directory)
    except ConfigError:
        raise
    except (KeyError, ValueError, IndexError, TypeError, AttributeError, OSError) as e:
        what = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
        raise ConfigError(FIELD, f"{directory!r} looks like a {kind} reproduction but cannot "
                          f"be read ({what})") from None


def build_html(results: Iterable[tuple[str, str]], *, title: str = "parsched: the seed papers "
               "reproduced") -> str:
    """The page for ``(kind, directory)`` pairs (see :func:`find_results`)."""
    from parsched import __version__

    sections = [_build(kind, d) for kind, d in results]
    bodies, toc = [], []
    for sec in sections:
        b, t = _render_section(sec)
        bodies.append(b)
        toc.append(t)
    held = sum(c.holds for s in sections for c in s.checks)
    n = sum(len(s.checks) for s in sections)
    overall = score_badge(held, n) if n else ""
    lead = ("Each section is one reproduction's output directory: the paper's title, the "
            "checks (where one does not hold, the reproduction's own explanation), the "
            "paper's numbers beside parsched's, the figures, and the full write-up. "
            "Regenerate with <code>parsched reproduce …</code> then "
            "<code>parsched report</code>.")
    return PAGE.substitute(
        title=esc(title), css=CSS, lead=lead, overall=overall, toc="\n".join(toc),
        sections="\n".join(bodies),
        footer=f"parsched {esc(__version__)} · built from "
               + ", ".join(f"<code>{esc(d)}</code>" for _, d in results))


def write_report(dirs: Sequence[str] | None, out: str, *,
                 default_root: str = "results") -> dict[str, Any]:
    """Finds the reproductions, builds the page and writes it to ``out``
    atomically; returns ``{"out", "sections": [(kind, dir)], "bytes"}``."""
    from parsched._io import atomic_file, check_output_file

    check_output_file(out, "--output", (".html", ".htm"))
    results = find_results(dirs, default_root)
    page = build_html(results)
    with atomic_file(out) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        fh.write(page)
    return {"out": out, "sections": results, "bytes": len(page.encode("utf-8"))}


# ------------------------------------------------------------------ command


def cmd_report(args: Any) -> int:
    """Build one self-contained HTML page from the reproductions' outputs.

    RESULTS_DIR: output directories of parsched reproduce pools, gang, batch,
    desktop or cosched (which one is told from the files in it), or directories
    holding such directories; default: every reproduction under results/. Per
    seed: the paper's title, the checks (holds or not, with the reproduction's
    explanation where one does not), the paper's numbers beside parsched's, the
    figures and the full write-up (summary.md). Figures are embedded and the
    style is inline: the page needs no network and no other file. Written
    atomically; no reproduction found, or a directory that is not one: one line
    on stderr, exit 2.
    """
    res = write_report(args.dirs, args.output)
    kinds = ", ".join(f"{k} ({d})" for k, d in res["sections"])
    print(f"wrote {res['out']} ({res['bytes'] / 1e6:.1f} MB): {kinds}")
    return 0


def add_subcommand(sub: Any, formatter_class: Any) -> None:
    """Registers ``parsched report`` on the CLI's subparsers."""
    import inspect

    doc = inspect.cleandoc(cmd_report.__doc__ or "")
    p = sub.add_parser("report", help=doc.splitlines()[0], description=doc,
                       formatter_class=formatter_class)
    p.add_argument("dirs", nargs="*", metavar="RESULTS_DIR",
                   help="reproduction output directories (default: results/*)")
    p.add_argument("-o", "--output", default="report.html", metavar="FILE.html",
                   help="the page to write (default: report.html)")
    p.set_defaults(func=cmd_report)
