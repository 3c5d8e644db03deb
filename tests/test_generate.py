"""Generated workloads: `parsched generate lublin`, `parsched.generate_lublin`
and batch runs on a generated workload without a file (`workload=lublin`)."""

from __future__ import annotations

import gzip
import json
import os

import numpy as np
import pytest

import parsched
from conftest import needs_core, one_error_line, run_cli
from parsched import BatchConfig

pytestmark = needs_core

GEN = {"procs": 512, "jobs": 2000, "load": 0.8, "seed": 3}


def _swf_rows(path: str) -> np.ndarray:
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        rows = [line.split() for line in f if line.strip() and not line.startswith(";")]
    return np.array(rows, dtype=float)


def test_dataframe_and_file_hold_the_same_jobs(tmp_path):
    df = parsched.generate_lublin(**GEN)
    assert len(df) == GEN["jobs"]
    path = parsched.generate_lublin(str(tmp_path / "w.swf.gz"), **GEN)
    with open(path, "rb") as f:
        assert f.read(2) == b"\x1f\x8b"  # gzip
    rows = _swf_rows(path)
    assert rows.shape == (GEN["jobs"], 18)
    np.testing.assert_array_equal(rows[:, 0], df["job_number"])
    np.testing.assert_array_equal(rows[:, 1], df["submit_time"])
    np.testing.assert_array_equal(rows[:, 3], df["run_time"])
    np.testing.assert_array_equal(rows[:, 4], df["allocated_procs"])
    assert (df["allocated_procs"] >= 1).all() and (df["allocated_procs"] <= GEN["procs"]).all()
    assert df["submit_time"].is_monotonic_increasing


def test_load_scales_the_arrivals_to_the_offered_load():
    natural = parsched.generate_lublin(**{**GEN, "load": None})
    for load in (0.5, 1.2):
        df = parsched.generate_lublin(**{**GEN, "load": load})
        work = float((df["allocated_procs"] * df["run_time"]).sum())
        span = float(df["submit_time"].iloc[-1] - df["submit_time"].iloc[0])
        assert work / (GEN["procs"] * span) == pytest.approx(load, rel=0.01)
        # only the arrivals change
        np.testing.assert_array_equal(df["run_time"], natural["run_time"])
        assert df.attrs["load_factor"] != 1.0
    assert natural.attrs["load_factor"] == 1.0


def test_seed_and_types_change_the_jobs_and_the_same_arguments_repeat():
    a = parsched.generate_lublin(**GEN)
    assert a.equals(parsched.generate_lublin(**GEN))
    assert not a.equals(parsched.generate_lublin(**{**GEN, "seed": 4}))
    typeless = parsched.generate_lublin(**GEN, include_types=False)
    assert set(typeless["queue"]) == {0}
    assert set(a["queue"]) == {0, 1}  # interactive and batch


@pytest.mark.parametrize(("kw", "field"), [
    ({"procs": 0}, "procs"), ({"jobs": 0}, "jobs"), ({"load": -1}, "load"),
    ({"load": "high"}, "load"), ({"include_types": 1}, "include_types"),
])
def test_bad_arguments_name_their_field(kw, field):
    with pytest.raises(parsched.ConfigError) as e:
        parsched.generate_lublin(**{**GEN, **kw})
    assert e.value.field == field


def test_batch_on_a_generated_workload_equals_the_written_file(tmp_path):
    path = parsched.generate_lublin(str(tmp_path / "w.swf"), **GEN)
    gen = BatchConfig(workload="lublin", procs=GEN["procs"], workload_jobs=GEN["jobs"],
                      workload_load=GEN["load"], workload_seed=GEN["seed"])
    for policy in ("fcfs", "easy", "conservative"):
        a = parsched.simulate_batch(gen.with_(policy=policy))
        b = parsched.simulate_batch(path, BatchConfig(policy=policy, procs=GEN["procs"]))
        assert a.summary["jobs"] == GEN["jobs"]
        for k in ("avg_wait", "avg_bounded_slowdown", "utilization", "makespan"):
            assert a.summary[k] == b.summary[k], (policy, k)
        cols = ["job_id", "starting_time", "finish_time", "allocated_resources"]
        assert a.jobs[cols].equals(b.jobs[cols])


def test_generated_workload_keys_sweep_and_need_no_trace():
    base = BatchConfig(workload="lublin", procs=128, workload_jobs=500)
    cfgs = [base.with_(workload_load=load, policy=p)
            for load in (0.6, 0.95) for p in ("fcfs", "easy")]
    df = parsched.sweep(cfgs, executor=None, progress=False)
    assert list(df["workload_load"]) == [0.6, 0.6, 0.95, 0.95]
    # more load, longer waits; backfilling waits less than FCFS
    assert df["avg_wait"][2] > df["avg_wait"][0]
    assert df["avg_wait"][3] <= df["avg_wait"][2]
    with pytest.raises(parsched.ConfigError) as e:
        parsched.simulate_batch("x.swf", base)
    assert e.value.field == "trace"


def test_cli_generate_then_simulate(tmp_path):
    out = tmp_path / "w.swf.gz"
    r = run_cli("generate", "lublin", "--set", "procs=256", "jobs=1500", "load=0.9",
                "seed=2", "-o", str(out), "--json")
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)
    assert info["jobs"] == 1500 and info["load"] == 0.9 and info["load_factor"] > 0
    assert out.exists() and _swf_rows(str(out)).shape[0] == 1500
    a = run_cli("simulate", "batch", "--trace", str(out), "--json")
    b = run_cli("simulate", "batch", "--set", "workload=lublin", "procs=256",
                "workload_jobs=1500", "workload_load=0.9", "workload_seed=2", "--json")
    assert a.returncode == 0 and b.returncode == 0, a.stderr + b.stderr
    ja, jb = json.loads(a.stdout), json.loads(b.stdout)
    assert jb["trace"] is None
    for k in ("jobs", "avg_wait", "utilization", "makespan"):
        assert ja[k] == jb[k], k


def test_requested_times_option_keeps_the_jobs_and_reaches_batch_runs(tmp_path):
    plain = parsched.generate_lublin(**GEN)
    assert (plain["requested_time"] == -1).all()  # default: unknown, as before
    # default maximum (the model's longest run time): the very same jobs
    full = parsched.generate_lublin(config=parsched.LublinConfig(**GEN, requested="tsafrir05"))
    for k in ("submit_time", "run_time", "allocated_procs", "queue"):
        np.testing.assert_array_equal(full[k], plain[k])
    assert (full["requested_time"] >= full["run_time"]).all()
    # a 10 h maximum cuts longer run times (and so changes the load factor)
    cfg = parsched.LublinConfig(**GEN, requested="tsafrir05", estimate_max=36000)
    est = parsched.generate_lublin(config=cfg)
    np.testing.assert_array_equal(est["allocated_procs"], plain["allocated_procs"])
    np.testing.assert_array_equal(est["run_time"], np.minimum(plain["run_time"], 36000))
    assert (est["requested_time"] >= est["run_time"]).all()
    counts = est["requested_time"].value_counts()
    assert counts.index[0] == 36000  # the maximum is the most popular estimate
    exact = parsched.generate_lublin(config=cfg.with_(requested="exact"))
    np.testing.assert_array_equal(exact["requested_time"], plain["run_time"])
    # the same keys through a batch run (workload_*), and through the file
    base = BatchConfig(workload="lublin", policy="easy", procs=GEN["procs"],
                       workload_jobs=GEN["jobs"], workload_load=GEN["load"],
                       workload_seed=GEN["seed"], workload_estimate_max=36000)
    a = parsched.simulate_batch(base.with_(workload_requested="tsafrir05"))
    np.testing.assert_array_equal(a.jobs["requested_time"], est["requested_time"])
    b = parsched.simulate_batch(base.with_(workload_requested="exact"))
    assert a.summary["avg_wait"] != b.summary["avg_wait"]
    path = parsched.generate_lublin(str(tmp_path / "e.swf"), config=cfg)
    np.testing.assert_array_equal(_swf_rows(path)[:, 8], est["requested_time"])


@pytest.mark.parametrize(("args", "needle"), [
    (["--set", "procz=8"], "did you mean procs"),
    (["--set", "requested=guess"], "requested"),
    (["--set", "requested=tsafrir05", "estimate_max=600"], "estimate_max"),
    (["--set", "jobs=-3"], "jobs"),
    (["--set", "load=0"], "load"),
])
def test_cli_generate_bad_input_is_one_line(tmp_path, args, needle):
    out = tmp_path / "w.swf"
    r = run_cli("generate", "lublin", *args, "-o", str(out))
    assert r.returncode == 2
    assert needle in one_error_line(r.stderr)
    assert not out.exists()
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".parsched-")]


def test_cli_generate_refuses_other_file_names(tmp_path):
    r = run_cli("generate", "lublin", "-o", str(tmp_path / "w.csv"))
    assert r.returncode == 2
    assert "--output" in one_error_line(r.stderr)
