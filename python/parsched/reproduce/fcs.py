"""``parsched reproduce fcs``: seed 002 (Frachtenberg, "Process Scheduling for
the Parallel Desktop") — Table 1 in simulation beside the paper, each
scheme's makespan against the optimum, the classes FCS assigned over time,
the open choices as variants, Figures 1-2 in simulation when the core has
them, and (``--real``) Table 1 measured on this machine.

Writes ``table1.csv``/``.md``, ``variants.csv``, ``classes.csv``,
``findings.csv``, ``table1.png`` and ``summary.md`` to the output directory.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from parsched.display import markdown_table, pyplot, save_figure
from parsched.sim.fcs import PAPER_TABLE1, SCHEMES, fcs_figure, simulate_fcs

__all__ = ["VARIANTS", "run"]

#: Open choices of the paper, each run as a variant of one scheme.
VARIANTS: tuple[tuple[str, str, dict[str, Any], str], ...] = (
    ("fcs", "f_rows=own", {"f_rows": "own"},
     "each F job its own row (F jobs of other rows fill idle processors)"),
    ("fcs", "fill=dc", {"fill": "dc"}, "only DC jobs fill idle processors"),
    ("fcs", "slot_ms=100", {"slot_ms": 100.0}, "100 ms slots"),
    ("fcs", "spin_us=100", {"spin_us": 100.0}, "F processes spin 100 us before blocking"),
    ("sb", "spin_us=100", {"spin_us": 100.0}, "spin 100 us before blocking"),
    ("default", "o1_sleep_bonus=false", {"o1_sleep_bonus": False},
     "O(1) without the sleep-average bonus"),
    ("default", "default_wait=spin_block", {"default_wait": "spin_block"},
     "Default waits by spin-block instead of blocking"),
    ("default", "local=rr", {"local": "rr"}, "plain round robin, 100 ms, instead of O(1)"),
    ("default", "local=fair", {"local": "fair"},
     "a plain fair scheduler with wake-up preemption (CFS-like) instead of O(1)"),
    ("default", "runqueues=per_cpu", {"runqueues": "per_cpu"},
     "one run queue per processor (Linux 2.6), processes stay where they start"),
    ("default", "runqueues=per_cpu o1_sleep_bonus=false",
     {"runqueues": "per_cpu", "o1_sleep_bonus": False},
     "per-processor queues without the sleep-average bonus"),
    ("sb", "runqueues=per_cpu", {"runqueues": "per_cpu"}, "one run queue per processor"),
    ("fcs", "runqueues=per_cpu", {"runqueues": "per_cpu"}, "one run queue per processor"),
)


#: Columns of the real Table 1 shown in tables (all are in table1_real.csv).
REAL_SHOWN = ("scheme", "waiting", "job1_s", "job2_s", "job3_s", "makespan_s", "optimum_s",
              "vs_optimum", "utilization", "load_before")


def _finding(fid: str, claim: str, holds: bool, measured: str, why: str = "") -> dict[str, Any]:
    return {"id": fid, "claim": claim, "holds": bool(holds), "measured": measured,
            "explanation": "" if holds else why}


def real_findings(measured: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The real-machine criterion on ``fcs_real.table1_real`` rows: FCS's median
    makespan no later than the better of Default's and gang scheduling's; the
    Default's utilization (its jobs' CPU seconds over P x makespan) bounds what
    any schedule could save."""
    by = {r["scheme"]: r for r in measured}
    if not {"default", "gang", "fcs"} <= set(by):
        return []
    med = {s: float(by[s]["median_makespan_s"]) for s in ("default", "gang", "fcs")}
    best = min(med["default"], med["gang"])
    util = by["default"].get("utilization")
    bound = "" if util is None else (
        f"; Default's jobs used {util:.1%} of the machine, so no schedule could finish "
        f"more than {1 - util:.1%} before it")
    return [_finding(
        "R1-real", "on this machine FCS finishes no later than the better of Default and GS "
        "(median makespan)", med["fcs"] <= best,
        f"fcs {med['fcs']:.2f} s, default {med['default']:.2f} s, gang {med['gang']:.2f} s"
        f" (medians of {by['fcs']['reps']}){bound}",
        "Linux's CFS with blocking barriers already packs the imbalanced jobs almost "
        "without idle time (see the utilization); FCS adds slot switches and a discovery "
        "period, so it can only tie it within the noise"),
        *_real_classes(by["fcs"])]


def _real_classes(fcs: dict[str, Any]) -> list[dict[str, Any]]:
    """``R2-real``: in the median FCS run, jobs 1 and 2 end F and job 3 is CS
    from its first class to its end (the paper's classes), from the jobs' own
    synchronization statistics."""
    classes = fcs.get("classes")
    if not classes or len(classes) != 3:
        return []
    names = [[str(c) for _, c in job] for job in classes]
    holds = (names[0][-1:] == ["F"] and names[1][-1:] == ["F"]
             and bool(names[2]) and set(names[2]) == {"CS"})
    seen = "; ".join(f"job {k + 1}: {' -> '.join(n) or 'unclassified'}"
                     for k, n in enumerate(names))
    return [_finding("R2-real", "on this machine FCS classifies jobs 1 and 2 F and job 3 CS "
                     "(and keeps job 3 CS)", holds, seen,
                     "a job that does not publish its synchronization statistics is "
                     "classified from /proc, which cannot see spinning waits")]


def findings(rows: dict[str, dict[str, Any]], optimum: float,
             classes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The checkable findings of §4.2 against simulated ``rows`` (scheme ->
    job1, job2, job3, makespan)."""
    m = {s: rows[s]["makespan"] for s in rows}
    j3 = {s: rows[s]["job3"] for s in rows}
    fcfs = rows["fcfs"]
    gang = rows["gang"]
    out = [
        _finding("T1-fcfs", "FCFS gives 120 / 240 / 300 s (pure sequential)",
                 all(abs(fcfs[k] - v) / v < 0.01
                     for k, v in (("job1", 120), ("job2", 240), ("job3", 300))),
                 f"{fcfs['job1']:.1f} / {fcfs['job2']:.1f} / {fcfs['job3']:.1f}",
                 "the barrier's messages add to every iteration"),
        _finding("T1-gang", "gang scheduling gives about 181 / 303 / 303 s (equal three-way "
                 "sharing)",
                 all(abs(gang[k] - v) / v < 0.02
                     for k, v in (("job3", 181), ("job1", 303), ("job2", 303))),
                 f"{gang['job3']:.1f} / {gang['job1']:.1f} / {gang['job2']:.1f}",
                 "slot switches and barrier latency differ from the paper's 1% overhead"),
        _finding("T1-fcs-optimum", "FCS within 5% of the optimum (paper: 3.3%)",
                 m["fcs"] <= optimum * 1.05,
                 f"{m['fcs']:.1f} s, {100 * (m['fcs'] / optimum - 1):.1f}% over {optimum:.0f} s",
                 "F jobs sharing their row leave processors idle while they block"),
        _finding("T1-job3-fcs", "job 3 is fastest under FCS of all five schemes",
                 j3["fcs"] <= min(j3.values()),
                 ", ".join(f"{s} {j3[s]:.1f}" for s in SCHEMES),
                 "a scheme other than FCS favours job 3 in the model"),
        _finding("T1-job3-default", "job 3 finishes last under Default",
                 j3["default"] >= max(rows["default"]["job1"], rows["default"]["job2"]),
                 f"{rows['default']['job1']:.1f} / {rows['default']['job2']:.1f} / "
                 f"{j3['default']:.1f}",
                 "the O(1) model does not starve the balanced job"),
        _finding("T1-order", "makespans ordered FCS < SB < Default < FCFS <= GS",
                 m["fcs"] < m["sb"] < m["default"] < m["fcfs"] <= m["gang"] * 1.0001,
                 " < ".join(f"{s} {m[s]:.1f}" for s in sorted(m, key=m.get)),
                 "Default departs: with blocking waits and one run queue per node, the O(1) "
                 "model keeps both processors of a node busy whenever any of its six "
                 "processes is ready, so it packs the three jobs nearly optimally (as an "
                 "independent fair-scheduler model did); spin-block's spinning costs "
                 "more than blocking's wake-ups at 1 ms granularity. See docs/policies/fcs.md."),
    ]
    by_job = {}
    for c in classes:
        by_job.setdefault(c["job"], []).append(c["class"])
    final = {j: v[-1] for j, v in by_job.items()}
    out.append(_finding(
        "T1-classes", "FCS classifies job 3 CS and jobs 1-2 F after a short discovery",
        final.get(2) == "CS" and final.get(0) == "F" and final.get(1) == "F",
        ", ".join(f"job {j + 1}: {'→'.join(v)}" for j, v in sorted(by_job.items())),
        "the classifier's thresholds see the jobs differently"))
    return out


def figure_findings(es40, potomac) -> list[dict[str, Any]]:
    """Figures 1-2's shapes: gang flat in the stressors on es40 while the
    default scheduler grows; on potomac the default scheduler beats gang."""
    out = []
    flat, grows = [], []
    for k in sorted(set(es40["k"])):
        g = es40[(es40.scheduler == "gang") & (es40.k == k) & (es40.s >= 1)]["runtime_s"]
        d = es40[(es40.scheduler == "default") & (es40.k == k)].sort_values("s")["runtime_s"]
        flat.append(float(g.max() / g.min() - 1) if len(g) else 0.0)
        grows.append(float(d.iloc[-1] / d.iloc[0] - 1))
    out.append(_finding(
        "F1-gang-flat", "ES40: under gang scheduling the run time stays nearly flat as "
        "stressors are added (s >= 1), while the default scheduler's grows",
        max(flat) < 0.05 and max(grows) > 0.10,
        f"gang spread over s>=1: at most {100 * max(flat):.1f}%; default growth s=0..max: "
        + ", ".join(f"k={k} {100 * v:.0f}%" for k, v in zip(sorted(set(es40['k'])), grows,
                                                            strict=True)),
        "gang's stressor row or the default's sharing differ from the paper's machine"))
    p = potomac.pivot_table(index=["k", "s"], columns="scheduler", values="runtime_s")
    multi = p[p.index.get_level_values("k") >= 2]
    wins = int((multi["default"] < multi["gang"]).sum())
    out.append(_finding(
        "F2-default-beats-gang", "Potomac (2 hardware threads per core, 7-thread programs): "
        "the default scheduler beats gang scheduling",
        wins >= 0.75 * len(multi),
        f"default faster at {wins} of {len(multi)} points with k >= 2 "
        f"(mean default/gang {float((multi['default'] / multi['gang']).mean()):.3f})",
        "the idle 8th hardware thread of a gang slot costs less than the default's sharing"))
    return out


def _grid(fig_df):
    g = fig_df.pivot_table(index=["machine", "scheduler", "k"], columns="s",
                           values="runtime_s").round(2)
    g.columns = [f"s={c}" for c in g.columns]
    return g.reset_index()


def _plot_figure(df, title: str, path: str) -> None:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for k in sorted(set(df["k"])):
        for sched, ls in (("default", "-"), ("gang", "--")):
            d = df[(df.k == k) & (df.scheduler == sched)].sort_values("s")
            ax.plot(d["s"], d["runtime_s"], ls, marker="o", label=f"{sched}, k={k}",
                    color=f"C{k - 1}")
    ax.set_xlabel("sequential stressors s")
    ax.set_ylabel("run time of the parallel programs (s)")
    ax.set_title(title)
    ax.legend(fontsize=7, ncol=2)
    save_figure(fig, path)
    plt.close(fig)


def _table1(out_dir: str, scale: float, say: Callable[[str], None]):
    """Table 1 simulated per scheme, beside the paper's (times scaled back to the
    paper's size), written to ``table1.csv`` and ``classes.csv``; returns
    ``(table DataFrame, per-scheme runs, classes DataFrame, optimum (s), findings)``."""
    import os

    import pandas as pd

    rows: dict[str, dict[str, Any]] = {}
    classes: list[dict[str, Any]] = []
    optimum = math.nan
    for s in SCHEMES:
        say(f"table 1: {s}")
        r = simulate_fcs(scheme=s, scale=scale)
        optimum = r.optimum
        rows[s] = {"job1": r.job_times[0], "job2": r.job_times[1], "job3": r.job_times[2],
                   "makespan": r.makespan, "over_optimum": r.over_optimum,
                   "context_switches": r.counters["context_switches"]}
        if s == "fcs":
            classes = r.classes
    # times scaled back to the paper's size for the comparison
    table = []
    for s in SCHEMES:
        p = PAPER_TABLE1[s]
        sim = rows[s]
        table.append({
            "scheme": s,
            **{f"job{j}": sim[f"job{j}"] / scale for j in (1, 2, 3)},
            "makespan": sim["makespan"] / scale,
            "over_optimum_%": 100 * sim["over_optimum"],
            **{f"paper_job{j}": p[j - 1] for j in (1, 2, 3)},
            "paper_makespan": p[3],
            "paper_over_optimum_%": 100 * (p[3] / 240.0 - 1),
        })
    df = pd.DataFrame(table)
    df.to_csv(os.path.join(out_dir, "table1.csv"), index=False)
    full_rows = {r["scheme"]: {"job1": r["job1"], "job2": r["job2"], "job3": r["job3"],
                               "makespan": r["makespan"]} for r in table}
    found = findings(full_rows, optimum / scale, classes)
    pd.DataFrame(found).to_csv(os.path.join(out_dir, "findings.csv"), index=False)
    cls = pd.DataFrame(classes, columns=["time_s", "job", "class"])
    cls.to_csv(os.path.join(out_dir, "classes.csv"), index=False)
    return df, rows, cls, optimum, found


def _variants(out_dir: str, scale: float, say: Callable[[str], None]):
    """The open choices (:data:`VARIANTS`) simulated, written to ``variants.csv``."""
    import os

    import pandas as pd

    var_rows = []
    for scheme, label, keys, what in VARIANTS:
        say(f"variant: {scheme} {label}")
        r = simulate_fcs(scheme=scheme, scale=scale, **keys)
        var_rows.append({"scheme": scheme, "variant": label, "what": what,
                         **{f"job{j + 1}": t / scale for j, t in enumerate(r.job_times)},
                         "makespan": r.makespan / scale,
                         "over_optimum_%": 100 * r.over_optimum})
    variants = pd.DataFrame(var_rows)
    variants.to_csv(os.path.join(out_dir, "variants.csv"), index=False)
    return variants


def _figures(out_dir: str, quick: bool, say: Callable[[str], None]):
    """Figures 1-2 simulated (``figures.csv``, ``fig1.png``, ``fig2.png``); returns
    ``(the figures' DataFrame, their findings)``."""
    import os

    import pandas as pd

    fig_scale, fig_reps = (0.25, 1) if quick else (1.0, 3)
    figs = {}
    for machine in ("es40", "potomac"):
        say(f"figure: {machine}")
        figs[machine] = fcs_figure(machine=machine, scale=fig_scale, reps=fig_reps)
    fig_df = pd.concat(list(figs.values()), ignore_index=True)
    fig_df.to_csv(os.path.join(out_dir, "figures.csv"), index=False)
    found = figure_findings(figs["es40"], figs["potomac"])
    _plot_figure(figs["es40"], "Figure 1 (simulated): ES40, 4 CPUs, 4-thread programs",
                 os.path.join(out_dir, "fig1.png"))
    _plot_figure(figs["potomac"], "Figure 2 (simulated): Potomac, 4 cores x 2 threads, "
                 "7-thread programs", os.path.join(out_dir, "fig2.png"))
    return fig_df, found


def _real_table1(out_dir: str, quick: bool, say: Callable[[str], None]):
    """Table 1 on this machine (``table1_real.csv``, ``classes_real.csv``); returns
    ``(its DataFrame, its findings)``."""
    import os

    import pandas as pd

    say("table 1 on this machine")
    from parsched.reproduce.desktop import ensure_bsp
    from parsched.runtime import fcs_real as fcs_real  # the Linux runtime's Table 1

    measured = fcs_real.table1_real(ensure_bsp(), schemes=fcs_real.SCHEMES, quick=quick,
                                    progress=say)
    real_rows = pd.DataFrame([{k: v for k, v in r.items() if k not in ("classes",
                                                                       "makespans")}
                              for r in measured])
    real_classes = [{"scheme": r["scheme"], "job": j + 1, "t_s": t, "class": c}
                    for r in measured for j, hist in enumerate(r.get("classes") or [])
                    for t, c in hist]
    pd.DataFrame(real_classes, columns=["scheme", "job", "t_s", "class"]).to_csv(
        os.path.join(out_dir, "classes_real.csv"), index=False)
    real_rows.to_csv(os.path.join(out_dir, "table1_real.csv"), index=False)
    return real_rows, real_findings(measured)


def _plot_table1(df, path: str) -> None:
    """The figure: simulated beside the paper, per scheme."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 4))
    x = range(len(SCHEMES))
    for k, (col, label) in enumerate((("makespan", "simulated makespan"),
                                      ("paper_makespan", "paper makespan"),
                                      ("job3", "simulated job 3"),
                                      ("paper_job3", "paper job 3"))):
        ax.bar([i + (k - 1.5) * 0.2 for i in x], df[col], width=0.2, label=label)
    ax.axhline(240, color="k", lw=0.8, ls="--", label="optimum (240 s)")
    ax.set_xticks(list(x), list(SCHEMES))
    ax.set_ylabel("time (s)")
    ax.set_title("Seed 002, Table 1: simulated beside the paper")
    ax.legend(fontsize=8, ncol=3)
    save_figure(fig, path)
    plt.close(fig)


def _summary_md(quick: bool, optimum: float, df, found, cls, variants, fig_df,
                real_rows) -> str:
    """``summary.md``: every table and finding of the run."""
    import pandas as pd

    held = sum(f["holds"] for f in found)
    md = ["# Seed 002 reproduction: flexible coscheduling on the parallel desktop", "",
          f"Run: {'--quick (a tenth of the iterations, times scaled back)' if quick else 'full'}"
          f"; optimum {optimum:.0f} s (total demand over processors).", "",
          "## Table 1 (s): simulated beside the paper", "",
          markdown_table(df.round(1)), "",
          f"## Findings: {held} of {len(found)} hold", "",
          markdown_table(pd.DataFrame(found)), "",
          "## Classes FCS assigned (first replication)", "",
          markdown_table(cls) if len(cls) else "(none)", "",
          "## Open choices as variants", "",
          markdown_table(variants.round(1)), "",
          "## Figures 1-2 (simulated): run time (s) by programs k and stressors s", "",
          markdown_table(_grid(fig_df)), "",
          "![Figure 1](fig1.png)", "", "![Figure 2](fig2.png)", ""]
    if real_rows is not None:
        md += ["## Table 1 on this machine", "",
               "Real processes (`bench/bsp`) under the Linux runtime; foreign load on a "
               "small machine preempts gang members while their partners spin, so read "
               "each row with its load.", "",
               markdown_table(real_rows[[c for c in REAL_SHOWN if c in real_rows]].round(2)),
               ""]
    return "\n".join(md)


def run(out_dir: str, *, quick: bool = False, real: bool = False,
        progress: Callable[[str], None] | None = None,
        echo: Callable[[str, Any], None] | None = None) -> dict[str, Any]:
    """Runs the reproduction into ``out_dir``; returns headlines and findings."""
    import os

    import pandas as pd

    scale = 0.1 if quick else 1.0
    say = progress or (lambda _m: None)
    df, rows, cls, optimum, found = _table1(out_dir, scale, say)
    variants = _variants(out_dir, scale, say)
    fig_df, fig_found = _figures(out_dir, quick, say)
    found += fig_found
    real_rows = None
    if real:
        real_rows, real_found = _real_table1(out_dir, quick, say)
        found += real_found
    pd.DataFrame(found).to_csv(os.path.join(out_dir, "findings.csv"), index=False)
    _plot_table1(df, os.path.join(out_dir, "table1.png"))
    held = sum(f["holds"] for f in found)
    with open(os.path.join(out_dir, "summary.md"), "w", encoding="utf-8") as f:
        f.write(_summary_md(quick, optimum / scale, df, found, cls, variants, fig_df,
                            real_rows))
    with open(os.path.join(out_dir, "table1.md"), "w", encoding="utf-8") as f:
        f.write(markdown_table(df.round(1)) + "\n")
    if echo:
        echo("Table 1 (s): simulated beside the paper", df.round(1))
        echo("findings", pd.DataFrame(found)[["id", "holds", "measured"]])
        echo("variants", variants[["scheme", "variant", "makespan", "over_optimum_%"]].round(1))
        echo("Figures 1-2 (simulated): run time (s)", _grid(fig_df))
        if real_rows is not None:
            echo("Table 1 on this machine (s; load = 1-minute load average before)",
                 real_rows[[c for c in REAL_SHOWN if c in real_rows]].round(2))
    return {
        "headlines": {f"{s}_makespan": rows[s]["makespan"] / scale for s in SCHEMES}
        | {"fcs_over_optimum": rows["fcs"]["over_optimum"], "findings_held": held,
           "findings": len(found)},
        "findings": found,
    }
