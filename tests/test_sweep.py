"""``parsched sweep SPEC.toml`` (parsched.sim.sweep_spec) and ``parsched.sweep`` on
threads, processes and a Dask cluster: spec parsing, grid expansion, resume,
interruption, executor equality, CI-target replications, one-line errors."""

from __future__ import annotations

import concurrent.futures as cf
import json
import math
import os
import signal
import subprocess
import sys
import textwrap
import time

import pandas as pd
import pyarrow.parquet as pq
import pytest

import parsched
from conftest import needs_core, one_error_line, run_cli, sigint_default
from parsched import ConfigError, PoolsConfig
from parsched.sim import sweep_spec as ss
from parsched.sim.api import process_executor

pytestmark = needs_core

SMALL_BASE = 'jobs = 300\nwarmup = 30\nreps = 1\n'


def write(path, text: str) -> str:
    path.write_text(textwrap.dedent(text))
    return str(path)


@pytest.fixture
def grid_spec(tmp_path) -> str:
    return write(tmp_path / "grid.toml", f"""
        model = "pools"
        [base]
        {SMALL_BASE}
        [grid]
        D = [5, 20]
        pool_size = [10, 30, 60]
        [[points]]
        D = 10
        pool_size = 15
        [[points]]          # the same config as a grid point: run once
        D = 5
        pool_size = 10
        """)


class CountingExecutor(cf.ThreadPoolExecutor):
    """Threads that count the runs submitted to them."""

    def __init__(self, n: int = 2) -> None:
        super().__init__(max_workers=n)
        self.submitted = 0

    def submit(self, *a, **kw):
        self.submitted += 1
        return super().submit(*a, **kw)


def strip(df: pd.DataFrame) -> pd.DataFrame:
    return df.drop(columns=["wall_seconds"]).reset_index(drop=True)


def no_temporaries(root) -> None:
    for dirpath, _, names in os.walk(root):
        assert not [n for n in names if n.startswith(".parsched-")], (dirpath, names)


# --------------------------------------------------------------------- spec


def test_spec_parsing_and_grid_expansion(grid_spec):
    spec = ss.load_spec(grid_spec)
    assert spec.model == "pools" and spec.replications == ss.Replications(seeds=1)
    got = [(p.config.D, p.config.pool_size) for p in spec.points]
    # the cartesian product in key order (last key fastest), then the explicit
    # points; the duplicate of a grid point is dropped
    assert got == [(5, 10), (5, 30), (5, 60), (20, 10), (20, 30), (20, 60), (10, 15)]
    for p in spec.points:
        assert isinstance(p.config, PoolsConfig)
        assert (p.config.jobs, p.config.warmup, p.config.reps) == (300, 30, 1)
    assert spec.points[1].label == "D=5, pool_size=30"
    assert len({p.key for p in spec.points}) == len(spec.points)
    # keys are stable: the same spec gives the same keys, another config another key
    assert [p.key for p in ss.load_spec(grid_spec).points] == [p.key for p in spec.points]
    cfg = spec.points[0].config
    reps = spec.replications
    assert ss.point_key(cfg, reps) == spec.points[0].key
    assert ss.point_key(cfg.with_(seed=2), reps) != spec.points[0].key
    assert ss.point_key(cfg, ss.Replications(seeds=2)) != spec.points[0].key


def test_spec_from_dict_other_models_and_replication_rules(tmp_path):
    b = ss.spec_from_dict({"model": "barrier", "base": {"k": 500},
                           "grid": {"sched": ["gang", "local"]},
                           "replications": {"ci_relative": 0.05, "min": 2, "max": 4}})
    assert [p.config.sched for p in b.points] == ["gang", "local"]
    assert b.replications == ss.Replications(metric="time_per_iteration", target=0.05,
                                             relative=True, min=2, max=4)
    c = ss.spec_from_dict({"model": "cosched", "points": [{"scheme": "DCS", "scale": 0.02}],
                           "replications": {"seeds": 2}})
    assert c.points[0].config.scheme == "DCS" and c.replications.seeds == 2
    # an integer is shorthand for seeds = N
    assert ss.spec_from_dict({"model": "pools", "points": [{}],
                              "replications": 3}).replications.seeds == 3


def test_ci90_half_width_and_stopping_rule():
    vals = [10.0, 12.0, 11.0, 13.0]
    mean = sum(vals) / 4
    sd = math.sqrt(sum((v - mean) ** 2 for v in vals) / 3)
    assert ss.ci90_half_width(vals) == pytest.approx(2.353363 * sd / 2, rel=1e-4)
    from scipy.special import stdtrit

    for n in (2, 3, 6, 31, 32, 61, 501):  # the core's t table and its expansion beyond 30
        vals = [float(i % 7) for i in range(n)]
        mean = sum(vals) / n
        sd = math.sqrt(sum((v - mean) ** 2 for v in vals) / (n - 1))
        assert ss.ci90_half_width(vals) == pytest.approx(
            stdtrit(n - 1, 0.95) * sd / math.sqrt(n), rel=1e-3)
    assert math.isnan(ss.ci90_half_width([1.0]))
    rule = ss.Replications(metric="m", target=1.0, min=3, max=5)
    assert not rule.done([1.0, 1.0])                 # below min
    assert rule.done([1.0, 1.0, 1.0])                # no spread
    assert not rule.done([1.0, 5.0, 9.0])            # too wide
    assert rule.done([1.0, 5.0, 9.0, 2.0, 3.0])      # max reached
    assert ss.Replications(seeds=2).done([1.0, 2.0])


# ---------------------------------------------------------- resume, results


def test_resume_skips_finished_points_and_matches_a_fresh_run(tmp_path, grid_spec):
    small = write(tmp_path / "small.toml", f"""
        model = "pools"
        [base]
        {SMALL_BASE}
        [grid]
        D = [5]
        pool_size = [10, 30, 60]
        """)
    out = tmp_path / "out"
    with CountingExecutor() as ex:
        first = ss.run_spec(small, out, ex, progress=False)
        assert ex.submitted == 3
    assert (first.total, first.skipped, first.ran) == (3, 0, 3)
    with CountingExecutor() as ex:  # the larger spec: only the 4 new points run
        second = ss.run_spec(grid_spec, out, ex, progress=False)
        assert ex.submitted == 4
    assert (second.total, second.skipped, second.ran) == (7, 3, 4)
    with CountingExecutor() as ex:  # everything done: nothing runs
        third = ss.run_spec(grid_spec, out, ex, progress=False)
        assert ex.submitted == 0
    assert (third.skipped, third.ran) == (7, 0)
    res = pd.read_parquet(out / "results.parquet")
    spec = ss.load_spec(grid_spec)
    assert list(res["point"]) == [p.key for p in spec.points]  # spec order
    assert sorted(os.listdir(out / "points")) == sorted(p.key + ".parquet" for p in spec.points)
    # resumed rows are the rows of a fresh run, and those of parsched.sweep
    fresh = ss.run_spec(grid_spec, tmp_path / "fresh", cf.ThreadPoolExecutor(2),
                        progress=False).results
    pd.testing.assert_frame_equal(strip(res), strip(fresh))
    api = parsched.sweep([p.config for p in spec.points], cf.ThreadPoolExecutor(2),
                         progress=False)
    pd.testing.assert_frame_equal(
        strip(res.drop(columns=["point", "replications", "rep_metric", "rep_values",
                                "rep_ci90_half_width"])),
        strip(api.drop(columns=["rep_means"])))  # per-replication lists are left out
    assert (res["replications"] == 1).all()
    assert (res["rep_values"].map(list) == res["mean_response_time"].map(lambda v: [v])).all()
    no_temporaries(out)


@pytest.mark.parametrize(("sig", "executor"), [(signal.SIGINT, "processes"),
                                               (signal.SIGTERM, "threads")],
                         ids=["SIGINT-processes", "SIGTERM-threads"])
def test_interrupted_run_leaves_a_valid_file_and_resumes(tmp_path, sig, executor):
    spec = write(tmp_path / "long.toml", """
        model = "pools"
        [base]
        jobs = 6000
        warmup = 500
        reps = 1
        [grid]
        seed = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]
        """)
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    cmd = [sys.executable, "-m", "parsched", "sweep", spec, "--out", str(out),
           "--executor", executor, "--workers", "1"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, preexec_fn=sigint_default)
    parts = out / "points"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if parts.is_dir() and [n for n in os.listdir(parts) if not n.startswith(".")]:
            break
        time.sleep(0.01)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == (143 if sig == signal.SIGTERM else 130), err
    msg = one_error_line(err)
    assert msg.startswith("terminated (SIGTERM):" if sig == signal.SIGTERM
                          else "interrupted:"), msg
    assert "run the same command to resume" in msg
    table = pq.read_table(out / "results.parquet")  # a valid file
    saved = table.num_rows
    assert 1 <= saved < 16, (saved, err)
    assert f"{saved} of 16 points saved" in msg
    assert len(set(table.column("point").to_pylist())) == saved
    no_temporaries(out)
    # the same sweep again runs the rest only
    with CountingExecutor() as ex:
        again = ss.run_spec(spec, out, ex, progress=False)
        assert ex.submitted == 16 - saved
    assert (again.skipped, again.ran) == (saved, 16 - saved)
    assert pq.read_table(out / "results.parquet").num_rows == 16


# ---------------------------------------------------------------- executors


@pytest.fixture(scope="module")
def dask_client():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=":0", silence_logs=40)
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


def test_results_identical_on_threads_processes_and_dask(tmp_path, dask_client):
    spec = write(tmp_path / "mixed.toml", f"""
        model = "pools"
        [base]
        {SMALL_BASE}
        [grid]
        D = [5, 20]
        pool_size = [10, 60]
        [replications]
        ci_relative = 0.01
        min = 2
        max = 3
        """)
    configs = [PoolsConfig(jobs=300, warmup=30, reps=2, D=d) for d in (5, 10, 20)]
    frames, rows = {}, {}
    with cf.ThreadPoolExecutor(2) as threads, process_executor(workers=2) as procs:
        for name, ex in (("threads", threads), ("processes", procs), ("dask", dask_client)):
            frames[name] = ss.run_spec(spec, tmp_path / name, ex, progress=False).results
            # parsched.sweep takes the Client itself too
            rows[name] = parsched.sweep(configs, executor=ex, progress=False)
    assert len(frames["threads"]) == 4 and (frames["threads"]["replications"] >= 2).all()
    assert frames["threads"]["replications"].max() == 3  # the CI rule added some
    for name in ("processes", "dask"):
        pd.testing.assert_frame_equal(strip(frames["threads"]), strip(frames[name]),
                                      check_exact=True)
        pd.testing.assert_frame_equal(strip(rows["threads"]), strip(rows[name]),
                                      check_exact=True)
    # the command line on the same cluster (--scheduler ADDRESS)
    r = run_cli("sweep", spec, "--out", str(tmp_path / "cli"), "--scheduler",
                dask_client.scheduler.address)
    assert r.returncode == 0, r.stderr
    assert "4 points, 0 already done, 4 run (dask)" in r.stdout
    pd.testing.assert_frame_equal(strip(frames["threads"]),
                                  strip(pd.read_parquet(tmp_path / "cli" / "results.parquet")),
                                  check_exact=True)


def test_sweep_from_a_plain_script_without_main_guard(tmp_path):
    script = tmp_path / "plain.py"
    script.write_text(textwrap.dedent("""
        import parsched

        cfg = parsched.PoolsConfig(jobs=300, warmup=30, reps=1)
        configs = [cfg.with_(pool_size=p, D=D) for D in (10, 20) for p in (10, 30)]
        df = parsched.sweep(configs)
        print(len(df), df["mean_response_time"].notna().all())
        """))
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                       timeout=120, cwd=tmp_path, check=False)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["4", "True"]
    assert "Traceback" not in r.stderr


# ------------------------------------------------------------- replications


def test_ci_target_replications_stop(tmp_path):
    spec = write(tmp_path / "ci.toml", """
        model = "pools"
        [base]
        jobs = 400
        warmup = 40
        reps = 1
        [grid]
        D = [5, 20]
        [[points]]           # an unreachable target: stops at max
        D = 10
        pool_size = 10
        [replications]
        metric = "mean_response_time"
        ci_relative = 0.04
        min = 3
        max = 8
        """)
    loaded = ss.load_spec(spec)
    rule = loaded.replications
    res = ss.run_spec(spec, tmp_path / "out", cf.ThreadPoolExecutor(2), progress=False).results
    assert len(res) == 3
    for row, point in zip(res.itertuples(), loaded.points, strict=True):
        vals = list(row.rep_values)
        n = row.replications
        assert len(vals) == n and rule.min <= n <= rule.max
        mean = sum(vals) / n
        assert row.mean_response_time == pytest.approx(mean, rel=1e-12)
        assert row.rep_ci90_half_width == pytest.approx(ss.ci90_half_width(vals))
        # it stopped at the first n >= min where the half-width fell below 4% of the mean
        for k in range(rule.min, n):
            assert ss.ci90_half_width(vals[:k]) >= 0.04 * abs(sum(vals[:k]) / k)
        if n < rule.max:
            assert row.rep_ci90_half_width < 0.04 * abs(mean)
        # the target's outcome is a column (a point stopped at max may miss it)
        assert row.rep_target_met == (row.rep_ci90_half_width < 0.04 * abs(mean))
        # replication r is the config run with seed + r
        for r in (0, n - 1):
            one = parsched.simulate(point.config.with_(seed=point.config.seed + r),
                                    records=False)
            assert vals[r] == one.summary["mean_response_time"]
    assert sorted(res["replications"]) != [3, 3, 3]  # the rule did add replications
    tight = ss.spec_from_dict({"model": "pools", "base": {"jobs": 300, "warmup": 30,
                                                          "reps": 1},
                               "points": [{}],
                               "replications": {"ci_half_width": 1e-9, "min": 2, "max": 4}})
    with CountingExecutor() as ex:
        out = ss.run_spec(tight, tmp_path / "tight", ex, progress=False).results
        assert ex.submitted == 4
    assert list(out["replications"]) == [4]
    # a missed target is said, not silent: a column and a warning line
    assert list(out["rep_target_met"]) == [False]
    assert ss.missed_targets(out).startswith("1 of 1 points missed the CI target")
    tight_file = write(tmp_path / "tight.toml", """
        model = "pools"
        [base]
        jobs = 300
        warmup = 30
        reps = 1
        [[points]]
        D = 10
        [replications]
        ci_half_width = 1e-9
        min = 2
        max = 3
        """)
    r = run_cli("sweep", tight_file, "--out", str(tmp_path / "tight_cli"), "--json")
    assert r.returncode == 0, r.stderr
    assert "parsched: warning: 1 of 1 points missed the CI target" in r.stderr
    assert json.loads(r.stdout)["missed_ci_target"].startswith("1 of 1 points")


# ------------------------------------------------------------------- errors


BAD = [
    ('model = "pool"\n[grid]\nD = [5]\n', "model", "did you mean pools?"),
    ('model = "pools"\n[grid]\npool_sise = [5]\n', "grid.pool_sise",
     "did you mean pool_size?"),
    ('model = "pools"\n[base]\nLL = 0.5\n[grid]\nD = [5]\n', "base.LL", "unknown key"),
    ('model = "pools"\n[grid]\nL = [0.5, 1.5]\n', "grid.L", "(at L=1.5)"),
    ('model = "pools"\n[grid]\nP = [60, 70]\n', "pool_size", "does not divide P = 70 (at P=70)"),
    ('model = "pools"\n[base]\nL = 1.5\n[grid]\nD = [5]\n', "base.L", "1.5 is outside"),
    ('model = "pools"\n[grid]\nD = []\n', "grid.D", "empty list"),
    ('model = "pools"\n[grid]\n', "grid", "no points"),
    ('model = "pools"\n[grid]\nD = 5\n', "grid.D", "is not a list"),
    ('model = "pools"\ngrids = 1\n', "grids", "did you mean grid?"),
    ('model = "pools"\n[grid]\nD = [5]\n[replications]\nseeds = 2\nci_relative = 0.1\n',
     "replications.seeds", "not both"),
    ('model = "pools"\n[grid]\nD = [5]\n[replications]\nci_relative = 0.1\nmetric = "mrt"\n',
     "replications.metric", "is not a metric of pools"),
    ('model = "pools"\n[grid\n', "", "invalid TOML"),
]


@pytest.mark.parametrize(("text", "key", "words"), BAD, ids=[b[1] or "toml" for b in BAD])
def test_bad_specs_name_file_key_and_what_is_allowed(tmp_path, text, key, words):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        ss.load_spec(path)
    msg = str(info.value)
    assert "\n" not in msg
    assert msg.startswith(f"{path}: {key}"), msg
    assert words in msg, msg
    if key:
        assert "; allowed: " in msg, msg


def test_cli_errors_exit_2_with_one_line(tmp_path, grid_spec):
    bad = tmp_path / "bad.toml"
    bad.write_text('model = "pools"\n[grid]\npool_sise = [5, 10]\n')
    r = run_cli("sweep", str(bad), "--out", str(tmp_path / "o"))
    assert r.returncode == 2
    msg = one_error_line(r.stderr)
    assert msg.startswith(f"{bad}: grid.pool_sise: unknown key (did you mean pool_size?)")
    assert not (tmp_path / "o").exists()
    r = run_cli("sweep", grid_spec, "--out", str(tmp_path / "o"), "--executor", "threads",
                "--scheduler", "tcp://127.0.0.1:1")
    assert r.returncode == 2 and "--scheduler" in one_error_line(r.stderr)
    r = run_cli("sweep", str(tmp_path / "missing.toml"), "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and "does not exist" in one_error_line(r.stderr)


def test_the_documented_example_spec_parses(tmp_path):
    import pathlib
    import re

    page = pathlib.Path(__file__).parents[1] / "docs" / "formats" / "sweep-spec.md"
    example = re.search(r"```toml\n(.*?)```", page.read_text(), re.S).group(1)
    spec = ss.load_spec(write(tmp_path / "pools.toml", example))
    assert spec.model == "pools" and len(spec.points) == 14
    assert spec.replications.adaptive and spec.replications.metric == "mean_response_time"
    assert spec.points[-1].config.spanning == "unlimited"


def test_batch_and_cosched_specs(tmp_path):
    header = "; Version: 2.2\n; MaxProcs: 16\n; MaxNodes: 16\n"
    jobs = "".join(f"{i} {i * 5} -1 {50 + 10 * (i % 4)} {4 * (1 + i % 4)} -1 -1 "
                   f"{4 * (1 + i % 4)} 200 -1 1 -1 -1 -1 -1 -1 -1 -1\n" for i in range(1, 40))
    (tmp_path / "traces").mkdir()
    (tmp_path / "traces" / "t.swf").write_text(header + jobs)
    spec = write(tmp_path / "batch.toml", """
        model = "batch"
        [base]
        trace = "traces/t.swf"       # relative to the spec
        [grid]
        policy = ["fcfs", "easy"]
        """)
    res = ss.run_spec(spec, tmp_path / "b", cf.ThreadPoolExecutor(2), progress=False).results
    api = parsched.sweep([parsched.BatchConfig(trace=str(tmp_path / "traces" / "t.swf"),
                                               policy=p) for p in ("fcfs", "easy")],
                         cf.ThreadPoolExecutor(2), progress=False)
    assert list(res["avg_wait"]) == list(api["avg_wait"])
    assert list(res["rep_metric"]) == ["avg_bounded_slowdown"] * 2
    # a trace has no seed: one replication only; a generated workload varies workload_seed
    with pytest.raises(ConfigError, match=r"batch\.toml: replications: policy=\"fcfs\": a "
                       r"trace runs as it is .*allowed: seeds = 1, or workload"):
        ss.spec_from_dict({"model": "batch", "base": {"trace": "traces/t.swf"},
                           "grid": {"policy": ["fcfs", "easy"]}, "replications": 2},
                          str(tmp_path / "batch.toml"))
    gen = ss.spec_from_dict({"model": "batch", "base": {"workload": "lublin", "procs": 64,
                                                        "workload_jobs": 300},
                             "points": [{"policy": "easy"}], "replications": 2})
    row = ss.run_spec(gen, tmp_path / "g", cf.ThreadPoolExecutor(2), progress=False
                      ).results.iloc[0]
    for r in (0, 1):
        one = parsched.simulate_batch(gen.points[0].config.with_(
            workload_seed=gen.points[0].config.workload_seed + r))
        assert row["rep_values"][r] == one.summary["avg_bounded_slowdown"]
    spec = write(tmp_path / "cosched.toml", """
        model = "cosched"
        [base]
        scale = 0.02
        nodes = 4
        reps = 1
        [[points]]
        scheme = "DCS"
        [replications]
        seeds = 2
        """)
    res = ss.run_spec(spec, tmp_path / "c", cf.ThreadPoolExecutor(2), progress=False).results
    row = res.iloc[0]
    assert row["replications"] == 2 and not row["livelock"]
    for r in (0, 1):
        one = parsched.simulate_cosched(scheme="DCS", scale=0.02, nodes=4, reps=1,
                                        seed=parsched.CoschedConfig().seed + r)
        assert row["rep_values"][r] == one.completion_time
    assert row["completion_time"] == pytest.approx(sum(row["rep_values"]) / 2, rel=1e-12)
