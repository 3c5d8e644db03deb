"""Batch scheduling on SWF traces (issue 4): config, API, CLI, plots, bad input."""

from __future__ import annotations

import gzip
import json
import os
import shutil

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import parsched
from conftest import assert_toml_round_trip, needs_core, one_error_line, run_cli
from parsched import BatchConfig, ConfigError, TraceError
from parsched.cli import main
from parsched.reproduce.batch import default_traces_dir
from parsched.sim.batch import JOBS_CSV_COLUMNS, parse_intervals

TRACES = default_traces_dir()
SMALL_TRACE = os.path.join(TRACES, "HPC2N-subset.swf.gz")
needs_traces = pytest.mark.skipif(not os.path.exists(SMALL_TRACE),
                                  reason="../shared/traces is not available")

HEADER = "; Version: 2.2\n; MaxProcs: 16\n; MaxNodes: 16\n"
GOOD = (
    "1 0 -1 100 4 -1 -1 4 200 -1 1 -1 -1 -1 -1 -1 -1 -1\n"
    "2 5 -1 50 8 -1 -1 8 100 -1 1 -1 -1 -1 -1 -1 -1 -1\n"
    "3 5 -1 30 16 -1 -1 16 60 -1 1 -1 -1 -1 -1 -1 -1 -1\n"
    "4 6 -1 20 4 -1 -1 4 40 -1 1 -1 -1 -1 -1 -1 -1 -1\n"
)
JSON_KEYS = ("jobs", "avg_wait", "avg_bounded_slowdown", "utilization", "makespan",
             "wall_seconds", "procs", "max_wait", "avg_response", "avg_slowdown", "killed",
             "max_queue", "avg_queue", "report", "records", "dropped", "policy")


@pytest.fixture
def swf(tmp_path):
    (tmp_path / "good.swf").write_text(HEADER + GOOD)
    (tmp_path / "f12.swf").write_text(HEADER + GOOD + "5 7 -1 50 8 -1 -1 8 100 -1 1 -1\n")
    (tmp_path / "neg.swf").write_text(
        HEADER + GOOD + "5 7 -1 -50 8 -1 -1 8 100 -1 1 -1 -1 -1 -1 -1 -1 -1\n")
    (tmp_path / "wide.swf").write_text(
        HEADER + GOOD + "5 7 -1 50 32 -1 -1 32 100 -1 1 -1 -1 -1 -1 -1 -1 -1\n")
    body = HEADER + GOOD * 400
    raw = gzip.compress(body.encode())
    (tmp_path / "trunc.swf.gz").write_bytes(raw[: len(raw) // 2])
    if os.path.exists(SMALL_TRACE):
        with open(SMALL_TRACE, "rb") as fh:
            data = fh.read()
        (tmp_path / "real-trunc.swf.gz").write_bytes(data[: len(data) // 2])
    return tmp_path


# ------------------------------------------------------------------ config

def test_batch_config_mirrors_core_keys_and_defaults():
    cfg = BatchConfig()
    assert cfg.policy == "easy" and cfg.procs is None and cfg.bsld_tau == 10.0
    assert cfg.mpl == 4 and cfg.quantum == 60 and cfg.gang_backfill
    assert cfg.cancelled == "drop" and cfg.missing_runtime == "drop" and cfg.too_wide == "drop"
    for name in BatchConfig.field_names():
        assert BatchConfig.field_doc(name), name
    if parsched_core_built():
        from parsched import _core

        assert set(_core.keys("batch")) == set(BatchConfig.field_names()) - {"trace"}


def parsched_core_built() -> bool:
    try:
        from parsched import _core  # noqa: F401
    except ImportError:  # pragma: no cover
        return False
    return True


def test_batch_overrides_and_aliases():
    c = BatchConfig().apply_overrides(["policy=gang", "procs=64", "too_wide=reject",
                                       "mpl=2", "kill_on_overrun=true", "bsld_tau=60"])
    assert (c.policy, c.procs, c.too_wide, c.mpl, c.kill_on_overrun, c.bsld_tau) == \
        ("gang", 64, "error", 2, True, 60.0)
    assert c.apply_overrides(["procs=auto"]).procs is None
    for item, field in [("policy=sjf", "policy"), ("procs=0", "procs"), ("mpl=0", "mpl"),
                        ("quantum=0", "quantum"), ("load_factor=-1", "load_factor"),
                        ("bogus=1", "bogus"), ("bsld_tau=0", "bsld_tau")]:
        with pytest.raises(ConfigError) as e:
            BatchConfig().apply_overrides([item])
        assert e.value.field == field


@st.composite
def batch_configs(draw):
    return BatchConfig(
        trace=draw(st.one_of(st.none(), st.sampled_from(
            ["/data/a.swf", "/data/b c.swf.gz", "/x/é.swf"]))),
        policy=draw(st.sampled_from(["fcfs", "easy", "conservative", "gang"])),
        procs=draw(st.one_of(st.none(), st.integers(1, 2**32 - 1))),
        kill_on_overrun=draw(st.booleans()),
        bsld_tau=draw(st.floats(1e-3, 1e6)),
        procs_rule=draw(st.sampled_from(["allocated", "requested"])),
        missing_requested_time=draw(st.sampled_from(["runtime", "factor", "drop"])),
        requested_time_factor=draw(st.floats(1e-3, 100)),
        missing_runtime=draw(st.sampled_from(["drop", "requested"])),
        zero_runtime=draw(st.sampled_from(["keep", "drop"])),
        cancelled=draw(st.sampled_from(["keep", "drop"])),
        unsorted=draw(st.sampled_from(["sort", "reject"])),
        too_wide=draw(st.sampled_from(["drop", "clamp", "error"])),
        mpl=draw(st.integers(1, 64)),
        quantum=draw(st.integers(1, 10**6)),
        gang_backfill=draw(st.booleans()),
        slot_allocation=draw(st.sampled_from(["first_fit", "best_fit"])),
        load_factor=draw(st.floats(1e-3, 100)),
        track_resources=draw(st.booleans()),
    )


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batch_configs(), st.booleans())
def test_batch_config_dict_and_toml_round_trip(c, table):
    assert BatchConfig.from_dict(c.to_dict()) == c
    assert_toml_round_trip(c, table=table)


def test_toml_trace_relative_to_file(tmp_path):
    (tmp_path / "b.toml").write_text('[batch]\ntrace = "t.swf"\npolicy = "fcfs"\n')
    c = BatchConfig.from_toml(tmp_path / "b.toml")
    assert c.trace == str(tmp_path / "t.swf") and c.policy == "fcfs"


def test_parse_intervals():
    assert parse_intervals("0-3 8 10-11") == [(0, 3), (8, 8), (10, 11)]
    assert parse_intervals("") == []


# --------------------------------------------------------------------- API

@needs_core
def test_simulate_small_trace_by_hand(swf):
    # 16 processors, EASY: job 3 (16 wide, submitted at 5) waits for job 1 (ends 100)
    # and job 2 (ends 55); job 4 (4 wide, 20 s requested 40) backfills at 6 (ends by
    # requested time 46 <= shadow time 100).
    r = parsched.simulate_batch(swf / "good.swf", BatchConfig(policy="easy"))
    start = dict(zip(r.jobs["job_id"], r.jobs["starting_time"], strict=True))
    assert start == {1: 0, 2: 5, 3: 100, 4: 6}
    r = parsched.simulate_batch(swf / "good.swf", BatchConfig(policy="fcfs"))
    start = dict(zip(r.jobs["job_id"], r.jobs["starting_time"], strict=True))
    assert start == {1: 0, 2: 5, 3: 100, 4: 130}  # job 3 holds all 16 until 130
    assert r.summary["procs"] == 16 and r.report == {} and r.records == 4


@needs_core
def test_jobs_frame_follows_batsim_columns(swf, tmp_path):
    csv = tmp_path / "jobs.csv"
    r = parsched.simulate_batch(swf / "good.swf", BatchConfig(), jobs_csv=csv)
    assert tuple(r.jobs.columns) == (*JOBS_CSV_COLUMNS, "bounded_slowdown")
    df = pd.read_csv(csv, keep_default_na=False)
    assert tuple(df.columns) == JOBS_CSV_COLUMNS
    for col in ("job_id", "submission_time", "requested_number_of_resources", "requested_time",
                "success", "starting_time", "execution_time", "finish_time", "waiting_time",
                "turnaround_time"):
        assert df[col].tolist() == r.jobs[col].tolist(), col
    assert df["allocated_resources"].tolist() == r.jobs["allocated_resources"].tolist()
    assert (r.jobs["waiting_time"] == r.jobs["starting_time"] - r.jobs["submission_time"]).all()
    assert list(r.queue.columns) == ["time", "length"]


@needs_core
@needs_traces
def test_same_run_twice_identical_and_plots(tmp_path):
    cfg = BatchConfig(trace=SMALL_TRACE, policy="conservative")
    a, b = parsched.simulate_batch(cfg), parsched.simulate_batch(cfg)
    pd.testing.assert_frame_equal(a.jobs, b.jobs)
    pd.testing.assert_frame_equal(a.queue, b.queue)
    assert a.report == {"dropped: run time unknown (rule missing_runtime=drop)": 25}
    assert a.summary["jobs"] == 3145 and a.summary["procs"] == 240
    busy = a.busy()
    assert busy["busy"].max() <= 240 and busy["busy"].min() >= 0 and busy["busy"].iloc[-1] == 0
    g, u = tmp_path / "g.png", tmp_path / "u.png"
    a.plot_gantt(g, max_jobs=500)
    a.plot_utilization(u)
    for p in (g, u):
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    a.plot_gantt(tmp_path / "w.png", window=(0, 86400))
    assert (tmp_path / "w.png").exists()


@needs_core
def test_api_errors(swf, tmp_path):
    out = tmp_path / "never.csv"
    with pytest.raises(TraceError) as e:
        parsched.simulate_batch(swf / "f12.swf", jobs_csv=out)
    assert e.value.line == 8 and "12 fields" in str(e.value)
    assert not out.exists()
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".parsched-")]
    with pytest.raises(TraceError):
        parsched.simulate_batch(swf / "missing.swf")
    with pytest.raises(ConfigError):
        parsched.simulate_batch(BatchConfig())  # no trace


@needs_core
def test_sweep_takes_batch_configs(swf):
    import concurrent.futures as cf

    cfgs = [BatchConfig(trace=str(swf / "good.swf"), policy=p) for p in ("fcfs", "easy")]
    df = parsched.sweep(cfgs, executor=cf.ThreadPoolExecutor(2), progress=False)
    assert df["policy"].tolist() == ["fcfs", "easy"]
    assert df["avg_wait"].iloc[0] > df["avg_wait"].iloc[1]


# --------------------------------------------------------------------- CLI

BAD = [
    (["--trace", "{d}/trunc.swf.gz"], "trace", "read error"),
    (["--trace", "{d}/f12.swf"], "trace", "line 8: 12 fields"),
    (["--trace", "{d}/neg.swf"], "trace", "line 8: field 4"),
    (["--trace", "{d}/wide.swf", "--set", "too_wide=reject"], "trace", "32 processors"),
    (["--trace", "{d}/wide.swf", "--set", "too_wide=error"], "trace", "too_wide=error"),
    (["--trace", "{d}/good.swf", "--set", "bogus=1"], "bogus", "unknown key"),
    (["--trace", "{d}/good.swf", "--set", "policy=sjf"], "policy", "not a choice"),
    (["--trace", "{d}/missing.swf"], "trace", "cannot open"),
    (["--set", "policy=easy"], "trace", "no trace"),
    (["--trace", "{d}/good.swf", "--gantt", "{d}/g.jpg"], "--gantt", "extension"),
]


@needs_core
@pytest.mark.parametrize(("args", "field", "text"), BAD)
def test_bad_batch_input_one_line_nothing_written(swf, capsys, args, field, text):
    before = sorted(os.listdir(swf))
    outs = ["--jobs-out", f"{swf}/j.csv", "--swf-out", f"{swf}/s.swf",
            "--utilization", f"{swf}/u.png"]
    if "--gantt" not in args:
        outs += ["--gantt", f"{swf}/g.png"]
    rc = main(["simulate", "batch", *(a.format(d=swf) for a in args), *outs, "--json"])
    cap = capsys.readouterr()
    assert rc == 2
    line = one_error_line(cap.err)
    assert line.startswith(field) and text in line, line
    assert cap.out == ""
    assert sorted(os.listdir(swf)) == before


@needs_core
@needs_traces
def test_truncated_real_trace_in_subprocess(swf):
    before = sorted(os.listdir(swf))
    r = run_cli("simulate", "batch", "--trace", str(swf / "real-trunc.swf.gz"),
                "--jobs-out", str(swf / "j.csv"), "--json")
    assert r.returncode == 2
    line = one_error_line(r.stderr)
    assert line.startswith("trace ") and "line " in line and "read error" in line
    assert r.stdout == "" and sorted(os.listdir(swf)) == before


@needs_core
def test_batch_json_and_outputs(swf, capsys):
    outs = {k: swf / n for k, n in (("--jobs-out", "j.csv"), ("--swf-out", "s.swf"),
                                     ("--gantt", "g.png"), ("--utilization", "u.png"))}
    args = [x for k, p in outs.items() for x in (k, str(p))]
    rc = main(["simulate", "batch", "--trace", str(swf / "wide.swf"), "--set", "policy=fcfs",
               "procs=16", *args, "--json"])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    obj = json.loads(cap.out)
    for k in JSON_KEYS:
        assert k in obj, k
    assert obj["jobs"] == 4 and obj["dropped"] == 1 and obj["records"] == 5
    assert obj["report"] == {"dropped: wider than the machine (rule too_wide=drop)": 1}
    for p in outs.values():
        assert p.exists() and p.stat().st_size > 0
    jobs = [ln.split() for ln in (swf / "s.swf").read_text().splitlines()
            if ln.strip() and not ln.startswith(";")]
    assert len(jobs) == 4 and all(len(f) == 18 for f in jobs)
    assert main(["simulate", "batch", "--trace", str(swf / "wide.swf")]) == 0
    out = capsys.readouterr().out
    assert "average bounded slowdown" in out and "wider than the machine" in out


@needs_core
def test_reproduce_and_bench_batch(swf, tmp_path, capsys):
    d = tmp_path / "traces"
    d.mkdir()
    shutil.copy(swf / "good.swf", d / "a.swf")
    shutil.copy(swf / "wide.swf", d / "b.swf")
    out = tmp_path / "res"
    assert main(["reproduce", "batch", "--traces", str(d), "--out", str(out), "--json"]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert obj["deterministic"] and len(obj["rows"]) == 8
    df = pd.read_csv(out / "batch.csv")
    assert set(df["policy"]) == {"fcfs", "easy", "conservative", "gang"}
    assert "| a | 16 | 4 | easy |" in (out / "batch.md").read_text()
    assert main(["bench", "batch", "--trace", str(swf / "good.swf"), "--repeat", "2",
                 "--json"]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert [r["policy"] for r in obj["runs"]] == ["fcfs", "easy", "conservative",
                                                 "easy+python priority"]
    assert main(["reproduce", "batch", "--traces", str(tmp_path / "none")]) == 2
    assert one_error_line(capsys.readouterr().err).startswith("--traces")


@needs_core
@needs_traces
def test_queue_orders_reorder_the_queue_and_bad_ones_are_one_line(capsys):
    """order= sorts the queue before EASY sees it (docs/policies/batch-orders.md):
    on a real trace SJF gives other starts than arrival order, with every job run
    once and the same total work; a bad order is one line, exit 2."""
    fcfs = parsched.simulate_batch(BatchConfig(trace=SMALL_TRACE, policy="easy"))
    sjf = parsched.simulate_batch(BatchConfig(trace=SMALL_TRACE, policy="easy", order="sjf"))
    assert BatchConfig(order="wfp3").order == "wfp3"
    assert len(fcfs.jobs) == len(sjf.jobs)
    assert (fcfs.jobs["execution_time"] == sjf.jobs["execution_time"]).all()
    assert (fcfs.jobs["starting_time"] != sjf.jobs["starting_time"]).any()
    assert (sjf.jobs["starting_time"] >= sjf.jobs["submission_time"]).all()
    assert main(["simulate", "batch", "--set", f"trace={SMALL_TRACE}", "--set",
                 "order=random"]) == 2
    err = capsys.readouterr().err
    assert one_error_line(err).startswith("order:") and "wfp3" in err, err
    with pytest.raises(ConfigError, match="order"):
        parsched.simulate_batch(BatchConfig(trace=SMALL_TRACE, policy="gang", order="sjf"))


def _traces() -> list[str]:
    return sorted(os.path.join(TRACES, f) for f in os.listdir(TRACES)
                  if f.endswith((".swf", ".swf.gz"))) if os.path.isdir(TRACES) else []


@needs_core
@needs_traces
@pytest.mark.parametrize("trace", _traces(), ids=os.path.basename)
def test_a_python_fcfs_priority_is_exactly_easy_on_every_trace(trace):
    """priority = submit time (arrival order) gives the built-in EASY schedule, job
    for job; a Python SJF gives the built-in order=sjf schedule."""
    def starts(r):
        return r.jobs["starting_time"].tolist()

    easy = parsched.simulate_batch(trace, BatchConfig(policy="easy"))
    mine = parsched.simulate_batch(trace, BatchConfig(policy="easy"),
                                   priority=lambda q: q["submit"])
    assert starts(mine) == starts(easy)
    sjf = parsched.simulate_batch(trace, BatchConfig(policy="easy", order="sjf"))
    mine = parsched.simulate_batch(trace, BatchConfig(policy="easy"),
                                   priority=lambda q: q["requested"].clip(min=1))
    assert starts(mine) == starts(sjf)


@needs_core
def test_a_python_priority_sees_the_queue_as_columns(swf):
    seen = []

    def rule(q):
        seen.append({k: (v.tolist() if hasattr(v, "tolist") else v) for k, v in q.items()})
        return -q["procs"]  # widest first

    r = parsched.simulate_batch(swf / "good.swf", BatchConfig(policy="conservative"),
                                priority=rule)
    assert r.jobs["starting_time"].tolist() == [0, 5, 100, 6]
    first = next(s for s in seen if len(s["submit"]) == 2)
    assert set(first) == {"now", "free", "submit", "wait", "requested", "procs", "user",
                          "group", "queue", "partition", "fits_now"}
    assert first["now"] == 5 and first["free"] == 12
    assert first["submit"] == [5, 5] and first["wait"] == [0, 0]
    assert first["procs"] == [8, 16] and first["fits_now"] == [True, False]
    assert first["requested"] == [100, 60]


@needs_core
@pytest.mark.parametrize("rule, match", [
    (lambda q: [0.0], "returned 1 scores for a queue of"),
    (lambda q: q["submit"] * float("nan"), "NaN for job"),
    (lambda q: 1 / 0, "priority raised ZeroDivisionError"),
    (lambda q: "soon", "one number per queued job"),
])
def test_a_bad_python_priority_is_a_policy_error_naming_it(swf, rule, match):
    with pytest.raises(parsched.PolicyError, match=match):
        parsched.simulate_batch(swf / "good.swf", BatchConfig(), priority=rule)


@needs_core
def test_a_python_priority_with_an_order_or_gang_or_not_callable_is_refused(swf):
    with pytest.raises(ConfigError, match="order"):
        parsched.simulate_batch(swf / "good.swf", BatchConfig(order="sjf"),
                                priority=lambda q: q["submit"])
    with pytest.raises(ConfigError, match="policy"):
        parsched.simulate_batch(swf / "good.swf", BatchConfig(policy="gang"),
                                priority=lambda q: q["submit"])
    with pytest.raises(ConfigError, match="priority"):
        parsched.simulate_batch(swf / "good.swf", BatchConfig(), priority=3)


@needs_core
def test_gantt_window_counts_from_the_first_submission(tmp_path):
    """KTH-SP2's first job is submitted at 599,850 s: "the first day" is
    0:86400 after it, as the chart's axis counts; an empty window is an error
    (it drew a blank chart)."""
    p = tmp_path / "late.swf"
    p.write_text("; MaxProcs: 4\n" + "".join(
        f"{i} {600000 + 100 * i} -1 50 2 -1 -1 2 60 -1 1 1 1 -1 -1 -1 -1 -1\n"
        for i in range(1, 11)))
    r = parsched.simulate_batch(str(p))
    start = r.jobs["starting_time"].to_numpy(dtype=float)
    end = r.jobs["finish_time"].to_numpy(dtype=float)
    lo, hi, sel = r._gantt_window(start, end, (0, 86400), 2000)
    assert (lo, hi) == (600100.0, 686500.0) and len(sel) == 10
    lo, hi, sel = r._gantt_window(start, end, (0, 150), 2000)
    assert list(r.jobs["job_id"].to_numpy()[sel]) == [1, 2]
    with pytest.raises(ConfigError, match=r"holds no job; allowed: a window within \[0, 950\]"):
        r.plot_gantt(tmp_path / "g.png", window=(86400, 2 * 86400))
    assert not (tmp_path / "g.png").exists()
    r.plot_gantt(tmp_path / "g.png", window=(0, 86400))
    assert (tmp_path / "g.png").read_bytes()[:4] == b"\x89PNG"
    out = run_cli("simulate", "batch", "--trace", str(p), "--gantt", str(tmp_path / "h.png"),
                  "--gantt-window", "86400:90000")
    assert out.returncode == 2 and one_error_line(out.stderr).startswith("--gantt-window:")


def test_binned_mean_of_a_step_function_is_exact():
    """The utilization plot bins long runs (330 days of steps drew a solid
    block): the time-weighted mean per bin, exact."""
    from parsched.sim.batch import binned_mean

    # 2 on [0, 10), 6 on [10, 20), 0 on [20, 40)
    x, m = binned_mean([0, 10, 20], [2, 6, 0], 40, bins=4)
    assert list(x) == [0, 10, 20, 30] and list(m) == [2, 6, 0, 0]
    x, m = binned_mean([0, 10, 20], [2, 6, 0], 40, bins=2)
    assert list(m) == [4, 0]
    _, m = binned_mean([0, 5, 15], [1, 3, 1], 20, bins=1)  # (5 + 30 + 5) / 20
    assert list(m) == [2.0]


@needs_core
@needs_traces
def test_utilization_plot_of_a_long_trace(tmp_path):
    r = parsched.simulate_batch(os.path.join(TRACES, "KTH-SP2-1996-2.1-cln.swf.gz"))
    assert len(r.busy()) > 2000
    r.plot_utilization(tmp_path / "u.png")
    assert (tmp_path / "u.png").read_bytes()[:4] == b"\x89PNG"
