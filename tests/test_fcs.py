"""Seed 002 (flexible coscheduling on the parallel desktop): the simulated
Table 1 from Python and the command line, its bad input, and the
reproduction."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

import parsched
from conftest import one_error_line, run_cli, sigint_default, wait_for_run
from parsched.errors import ConfigError
from parsched.sim.fcs import PAPER_TABLE1, SCHEMES

#: a twentieth of the paper's 60,000 iterations: 3,000 (12 s of job 1/2 alone)
SCALE = 0.05


@pytest.fixture(scope="module")
def table():
    return {r.scheme: r for r in parsched.fcs_table(scale=SCALE)}


def test_fcfs_is_pure_sequential(table):
    t = [x / SCALE for x in table["fcfs"].job_times]
    for got, want in zip(t, (120, 240, 300), strict=True):
        assert got == pytest.approx(want, rel=0.01)


def test_gang_is_equal_three_way_sharing(table):
    t = [x / SCALE for x in table["gang"].job_times]
    for got, want in zip(t, (303, 303, 181), strict=True):
        assert got == pytest.approx(want, rel=0.02)


def test_fcs_is_near_the_optimum_and_best_for_job_3(table):
    fcs = table["fcs"]
    assert fcs.optimum == pytest.approx(240 * SCALE)
    assert fcs.over_optimum < 0.05
    assert fcs.job_times[2] == min(table[s].job_times[2] for s in SCHEMES)
    assert fcs.makespan < min(table[s].makespan for s in ("sb", "fcfs", "gang"))
    final = {}
    for c in fcs.classes:
        final[c["job"]] = c["class"]
    assert final == {0: "F", 1: "F", 2: "CS"}


def test_jobs_as_lists_or_text_and_determinism():
    a = parsched.simulate_fcs(jobs=[[1, 2], [1, 1]], nodes=1, scale=0.01, seed=3)
    b = parsched.simulate_fcs({"jobs": "1,2;1,1", "nodes": 1}, scale=0.01, seed=3)
    assert a.job_times == b.job_times and len(a.job_times) == 2
    assert a.config["jobs"] == [[1.0, 2.0], [1.0, 1.0]]


@pytest.mark.parametrize(("keys", "field"), [
    ({"scheme": "nope"}, "scheme"),
    ({"jobs": "1,x"}, "jobs"),
    ({"jobs": [[1, 1, 1, 1, 1]]}, "jobs"),
    ({"grain_us": -1}, "grain_us"),
    ({"bogus": 1}, "bogus"),
])
def test_bad_input_names_the_field(keys, field):
    with pytest.raises(ConfigError) as e:
        parsched.simulate_fcs(**keys)
    assert e.value.field == field


def test_cli_json_and_bad_input():
    r = run_cli("simulate", "fcs", "--set", "scheme=gang", "scale=0.01", "--json")
    assert r.returncode == 0, r.stderr
    obj = json.loads(r.stdout)
    assert obj["scheme"] == "gang" and len(obj["job_times"]) == 3
    assert obj["makespan"] == max(obj["job_times"])
    r = run_cli("simulate", "fcs", "--set", "scheme=fair")
    assert r.returncode == 2
    assert one_error_line(r.stderr).startswith("scheme:")
    r = run_cli("simulate", "fcs", "--set", "jobs")
    assert r.returncode == 2
    assert one_error_line(r.stderr).startswith("--set:")


def test_reproduce_quick(tmp_path):
    out = tmp_path / "fcs"
    r = run_cli("reproduce", "fcs", "--quick", "--out", str(out), "--json", timeout=300)
    assert r.returncode == 0, r.stderr
    obj = json.loads(r.stdout)
    ids = {f["id"]: f["holds"] for f in obj["findings"]}
    assert ids["T1-fcfs"] and ids["T1-gang"] and ids["T1-fcs-optimum"]
    assert ids["F1-gang-flat"] and ids["F2-default-beats-gang"]
    for name in ("table1.csv", "findings.csv", "classes.csv", "variants.csv", "summary.md",
                 "table1.png", "figures.csv", "fig1.png", "fig2.png"):
        assert (out / name).stat().st_size > 0
    summary = (out / "summary.md").read_text()
    assert "paper_makespan" in summary and str(int(PAPER_TABLE1["fcs"][3])) in summary


def test_figure_grid_shapes():
    df = parsched.fcs_figure(machine="es40", programs=2, stressors=2, scale=0.1)
    assert len(df) == 2 * 2 * 3
    gang = df[(df.scheduler == "gang") & (df.k == 2)].set_index("s")["runtime_s"]
    default = df[(df.scheduler == "default") & (df.k == 2)].set_index("s")["runtime_s"]
    assert gang[2] == pytest.approx(gang[1], rel=0.02)  # flat once the stressors' row exists
    assert default[2] > default[0] * 1.1  # the default scheduler slows down
    with pytest.raises(ConfigError) as e:
        parsched.fcs_figure(machine="vax")
    assert e.value.field == "machine"


def test_ctrl_c_stops_a_long_run():
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    p = subprocess.Popen([sys.executable, "-m", "parsched", "simulate", "fcs", "--set",
                          "scale=1000"], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, preexec_fn=sigint_default)
    wait_for_run(p.pid)
    t0 = time.perf_counter()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=20)
    assert p.returncode == 130, err
    assert time.perf_counter() - t0 < 3.0
    assert one_error_line(err) == "interrupted" and out == ""


def test_real_finding_compares_fcs_with_the_better_of_default_and_gang():
    from parsched.reproduce.fcs import real_findings

    def rows(default, gang, fcs, util=0.99):
        return [{"scheme": "default", "median_makespan_s": default, "utilization": util,
                 "reps": 3},
                {"scheme": "gang", "median_makespan_s": gang, "utilization": 0.7, "reps": 3},
                {"scheme": "fcs", "median_makespan_s": fcs, "utilization": 0.98, "reps": 3}]

    [held] = real_findings(rows(4.1, 5.0, 4.05))
    assert held["holds"] and held["explanation"] == ""
    assert "99.0%" in held["measured"] and "4.05" in held["measured"]
    [failed] = real_findings(rows(4.1, 4.0, 4.05))  # gang the better one, fcs later
    assert not failed["holds"] and failed["explanation"]
    assert real_findings(rows(4.1, 5.0, 4.05)[:2]) == []


def test_real_finding_on_classes_wants_the_papers_classes():
    from parsched.reproduce.fcs import real_findings

    def rows(classes):
        fcs = {"scheme": "fcs", "median_makespan_s": 4.0, "utilization": 0.98, "reps": 3,
               "classes": classes}
        return [{"scheme": "default", "median_makespan_s": 4.1, "utilization": 0.99,
                 "reps": 3},
                {"scheme": "gang", "median_makespan_s": 5.0, "utilization": 0.9, "reps": 3},
                fcs]

    paper = [[[0.8, "CS"], [1.6, "F"]], [[0.9, "F"]], [[0.8, "CS"]]]
    _, held = real_findings(rows(paper))
    assert held["id"] == "R2-real" and held["holds"], held
    assert "job 3: CS" in held["measured"]
    flapping = [[[0.8, "F"]], [[0.9, "F"]], [[0.8, "CS"], [2.3, "DC"], [7.6, "CS"]]]
    _, failed = real_findings(rows(flapping))
    assert not failed["holds"] and "CS -> DC -> CS" in failed["measured"]
    assert len(real_findings(rows([]))) == 1  # no classes recorded: no class finding


def test_reproduction_with_real_writes_the_measured_table_beside_the_simulated(
        tmp_path, monkeypatch):
    """``run(real=True)``'s real-machine step, with the measurement replaced by
    fixed rows: its CSVs, findings and summary section come from those rows."""
    import pandas as pd

    from parsched.reproduce import desktop
    from parsched.reproduce import fcs as rep
    from parsched.runtime import fcs_real

    measured = [{"scheme": s, "median_makespan_s": m, "makespan_s": m, "utilization": u,
                 "reps": 1, "classes": [[[0.8, "CS"]], [[0.9, "F"]], [[0.8, "CS"]]]}
                for s, m, u in (("default", 4.1, 0.99), ("gang", 5.0, 0.7),
                                ("fcs", 4.05, 0.98))]
    seen = {}

    def fake_table1(bsp, schemes, quick, progress):
        seen.update(bsp=bsp, schemes=tuple(schemes), quick=quick)
        return measured

    monkeypatch.setattr(desktop, "ensure_bsp", lambda: "/fake/bsp")
    monkeypatch.setattr(fcs_real, "table1_real", fake_table1)
    res = rep.run(str(tmp_path), quick=True, real=True)
    assert seen == {"bsp": "/fake/bsp", "schemes": fcs_real.SCHEMES, "quick": True}
    real = pd.read_csv(tmp_path / "table1_real.csv")
    assert list(real["scheme"]) == ["default", "gang", "fcs"]
    assert "classes" not in real.columns and real["makespan_s"].tolist() == [4.1, 5.0, 4.05]
    classes = pd.read_csv(tmp_path / "classes_real.csv")
    assert len(classes) == 9 and set(classes["class"]) == {"CS", "F"}
    ids = [f["id"] for f in res["findings"]]
    real_ids = [f["id"] for f in rep.real_findings(measured)]
    assert real_ids and ids[-len(real_ids):] == real_ids
    assert list(pd.read_csv(tmp_path / "findings.csv")["id"]) == ids
    assert res["headlines"]["findings"] == len(ids)
    assert "## Table 1 on this machine" in (tmp_path / "summary.md").read_text()
