"""The per-seed section builders of ``parsched report`` (:data:`BUILDERS`): each
reads one reproduction's output directory (its CSVs and ``summary.md``) into a
:class:`~parsched.report.seeds.Section`: checks, tables beside the paper, figures."""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from parsched.display import fmt_3g, fmt_precise, fmt_short
from parsched.errors import ConfigError
from parsched.report.markup import IMG, drop_lead_in, esc, html_table, inline, slug
from parsched.report.seeds import FIELD, FIGURE_EXTS, Check, Section

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd


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
        for alt, target in IMG.findall(line):
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
        sec.checks.append(Check(slug(str(r["quantity"])), holds, str(r["quantity"]), ev, why))
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
            drop_lead_in(_first_paragraph(md, "Where they part:")
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
        sec.tables.append(("", f"<p>{inline(rank)}</p>"))
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
    # one column per measure, each cell "parsched · paper" (eleven columns, one
    # per number, did not fit a page: issue 27)
    measures = {"job1": "job 1", "job2": "job 2", "job3": "job 3", "makespan": "makespan",
                "over_optimum_%": "over optimum %"}

    def beside(c: str, v: object, r: object) -> str | None:
        if c not in measures:
            return None
        return (f"{esc(fmt_3g(v))} <span class='paper'>· paper "
                f"{esc(fmt_3g(r['paper_' + c]))}</span>")  # type: ignore[index]

    sec.tables.append(("Table 1 (s): parsched · paper", html_table(
        tab, ["scheme", *measures], fmt=fmt_3g, headers=measures, cell=beside)))
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
