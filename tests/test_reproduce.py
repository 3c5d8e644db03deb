"""Figure designs of seed 000 and the reproduce pipeline."""

from __future__ import annotations

import math
import os

import pandas as pd
import pytest

from conftest import needs_core, run_cli
from parsched.reproduce import pools as reproduce
from parsched.reproduce.pools import bounded_geometric_pmf, build_figures, lower_bound

TINY = {"jobs": 150, "warmup": 20, "reps": 2}


def test_designs_follow_the_brief():
    figs = {f.number: f for f in build_figures(quick=False)}
    assert sorted(figs) == [1, 3, 4, 5, 6, 7, 8]
    for f in figs.values():
        for pt in f.points:
            c = pt.config
            assert c.P % c.pool_size == 0
            assert (c.jobs, c.warmup, c.reps) == (10000, 1000, 5)
    f1 = figs[1]
    assert all(pt.config.W == pt.config.S == pt.config.r == pt.config.c == 0 for pt in f1.points)
    assert all(pt.config.pool_size == pt.config.P for pt in f1.points)
    assert {pt.x for pt in f1.points if pt.series == "D=10"} == set(range(20, 121, 10))
    assert {pt.config.pool_size for pt in figs[3].points} == {5, 10, 15, 20, 30, 60}
    assert {pt.series for pt in figs[3].points} == {"D=5", "D=10", "D=20", "D=30"}
    assert {(pt.config.W, pt.config.S) for pt in figs[4].points} == {
        (0.0025, 0.005), (0.005, 0.01), (0.01, 0.02)}
    assert {pt.config.T for pt in figs[5].points} == {1.0, 5.0, 10.0, 20.0}
    assert {pt.series for pt in figs[6].points} == {"no spanning", "F=0.5", "F=0.8", "F=1.5",
                                                   "unlimited"}
    assert {pt.config.L for pt in figs[7].points} == {0.3, 0.45, 0.6, 0.75}
    p120 = [pt for pt in figs[8].points if not pt.dotted]
    assert {pt.config.P for pt in p120} == {120}
    assert {pt.config.pool_size for pt in p120} == {5, 10, 15, 20, 30, 40, 60, 120}
    dotted = {pt.config for pt in figs[8].points if pt.dotted}
    assert dotted <= {pt.config for pt in figs[3].points}  # shared with Figure 3
    paper = {(pt.series, pt.x): pt.paper for pt in figs[3].points if pt.paper}
    assert paper == {("D=20", 60): 342.0, ("D=20", 30): 265.0}


def test_quick_shortens_runs_and_sharing_dedupes():
    figs = build_figures(quick=True)
    configs = [pt.config for f in figs for pt in f.points]
    assert all((c.jobs, c.warmup, c.reps) == (2000, 200, 3) for c in configs)
    assert len(set(configs)) < len(configs)


def test_bounded_geometric_matches_the_papers_statements():
    pmf = bounded_geometric_pmf(20, 60)
    assert math.isclose(sum(pmf), 1.0)
    assert math.isclose(sum(k * p for k, p in enumerate(pmf, start=1)), 20.0, rel_tol=1e-9)
    # sec. 2: "15.7% of the jobs have parallelism < 4" -- it holds for d <= 4
    assert round(sum(pmf[:4]), 3) == 0.157
    # sec. 2: "6% of the jobs have parallelism between 50 and 60"
    assert round(sum(pmf[49:]), 2) == 0.06


def test_lower_bound_is_about_127():
    assert 126 < lower_bound(reproduce.PoolsConfig()) < 129


@needs_core
def test_run_writes_every_table_and_plot(tmp_path):
    res = reproduce.run(str(tmp_path), length=TINY, progress=False)
    names = set(os.listdir(tmp_path))
    for n in (1, 3, 4, 5, 6, 7, 8):
        assert {f"fig{n}.csv", f"fig{n}.png", f"fig{n}_series.csv"} <= names
        t = pd.read_csv(tmp_path / f"fig{n}.csv")
        assert {"series", "mean_rt", "ci90", "A", "U", "paper_rt"} <= set(t.columns)
        assert (t["mean_rt"] > 100).all() and (t["U"] > 0).all()
    assert {"summary.md", "all_runs.csv", "paper_comparison.csv"} <= names
    md = (tmp_path / "summary.md").read_text()
    assert "| series | pool_size | mean_rt |" in md and "![Figure 8](fig8.png)" in md
    assert "342" in md and "265" in md and "12.4" in md and "14.9" in md
    assert res["unique"] < res["points"]
    comp = res["comparison"]
    assert list(comp["paper"].round(1))[:2] == [342.0, 265.0]


@needs_core
@pytest.mark.slow
def test_cli_reproduce_quick(tmp_path):
    out = tmp_path / "results" / "pools"
    r = run_cli("reproduce", "pools", "--quick", "--out", str(out), "--workers", "2",
                timeout=300)
    assert r.returncode == 0, r.stderr
    assert "Figure 3" in r.stdout and "342" in r.stdout and "14.9" in r.stdout
    assert (out / "summary.md").exists() and (out / "fig3.png").exists()
    assert not [p for p in os.listdir(tmp_path / "results") if p.startswith(".parsched-")]


@needs_core
def test_bounded_geometric_is_the_cores_solve():
    from parsched import _core

    q = _core.bounded_geometric_q(20.0, 60)
    pmf = bounded_geometric_pmf(20, 60)
    assert pmf[0] == pytest.approx(1 / sum((1 - q) ** k for k in range(60)), rel=1e-12)
    assert sum(k * p for k, p in enumerate(pmf, start=1)) == pytest.approx(20.0, rel=1e-9)
    with pytest.raises(reproduce.ConfigError, match=r"^D: .*allowed: 1 <= D < \(P\+1\)/2"):
        bounded_geometric_pmf(31, 60)


def test_figure_8_legend_and_axis():
    """Figure 8's legend did not say its solid lines are P = 120, and its
    one-pool P = 120 point flattened every other curve (now a log axis when
    the times span more than 10x)."""
    from parsched.reproduce import pools as rp

    f8 = next(f for f in rp.build_figures(quick=True) if f.number == 8)
    assert rp.legend_label(f8, "D=10", dotted=False) == "D=10, P=120"
    assert rp.legend_label(f8, "D=10, P=60", dotted=True) == "D=10, P=60"
    f3 = next(f for f in rp.build_figures(quick=True) if f.number == 3)
    assert rp.legend_label(f3, "D=10", dotted=False) == "D=10"
    assert rp.wants_log_y([50, 60, 900]) and not rp.wants_log_y([50, 60, 400])
