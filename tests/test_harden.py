"""Issue 11 §6, hardened inputs and interruptions: Ctrl-C and SIGTERM stop every
long run (exit 130 / 143, one line, no temporary file left), unbounded
configurations are refused before they start, trace errors name the file and
the line, extra SWF fields, and values echoed in errors are cut."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

import parsched
from conftest import needs_core, one_error_line, sigint_default, wait_for_run
from parsched import BarrierConfig, ConfigError, TraceError
from parsched.cli import main

pytestmark = needs_core

HEADER = "; Version: 2.2\n; MaxProcs: 16\n"
JOB = "{i} {s} -1 100 4 -1 -1 4 200 -1 1 -1 -1 -1 -1 -1 -1 -1\n"


def _long_trace(path) -> str:
    """Four jobs of 10^9 s, each wider than half the machine: under gang
    scheduling with 1 s quanta, about 4·10^9 slot switches (hours)."""
    with open(path, "w") as fh:
        fh.write("; MaxProcs: 16\n")
        for i in range(4):
            fh.write(f"{i + 1} 0 -1 1000000000 12 -1 -1 12 1000000000 -1 1 -1 -1 -1 -1 -1 -1 -1\n")
    return str(path)


def _interrupt(args: list[str], sig: int, cwd) -> tuple[int, str, str, float]:
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    p = subprocess.Popen([sys.executable, "-m", "parsched", *args], env=env, cwd=cwd,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=sigint_default)
    try:
        wait_for_run(p.pid)
        t0 = time.perf_counter()
        p.send_signal(sig)
        out, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:  # pragma: no cover - only when the test fails
            p.kill()
            p.communicate()
    return p.returncode, out, err, time.perf_counter() - t0


LONG_RUNS = {
    # each runs for hours if not stopped (the estimate allows it: max_events=0)
    "barrier-local": ["simulate", "barrier", "--set", "var=1e5", "k=1000000", "sched=local",
                      "max_events=0"],
    "barrier-gang-periodic": ["simulate", "barrier", "--set", "tq=0.001", "tcs=0", "k=1e9",
                              "max_events=0"],
    "barrier-block": ["simulate", "barrier", "--set", "wait=block", "k=1000000000",
                      "max_events=0"],
    "pools": ["simulate", "pools", "--set", "jobs=100000000", "reps=2", "max_events=0",
              "--workers", "2"],
    "batch-gang": ["simulate", "batch", "--trace", "{trace}", "--set", "policy=gang",
                   "quantum=1", "--jobs-out", "{out}/jobs.csv", "--swf-out", "{out}/s.swf"],
    "cosched": ["simulate", "cosched", "--set", "scale=200", "scheme=Local", "--timeline",
                "{out}/tl.csv"],
}


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("name", sorted(LONG_RUNS))
def test_signals_stop_every_long_run(tmp_path, name, sig):
    out = tmp_path / "out"
    out.mkdir()
    trace = _long_trace(tmp_path / "long.swf")
    args = [a.format(trace=trace, out=out) for a in LONG_RUNS[name]]
    rc, stdout, err, took = _interrupt(args, sig, tmp_path)
    expected = {signal.SIGINT: (130, "interrupted"),
                signal.SIGTERM: (143, "terminated (SIGTERM)")}[sig]
    assert (rc, one_error_line(err)) == expected, err
    assert stdout == ""
    assert took < 10.0  # generous: a run stops within ~50 ms
    assert os.listdir(out) == [], "temporary or partial outputs left behind"


def test_reproduce_stops_on_sigterm_and_leaves_nothing(tmp_path):
    out = tmp_path / "gang"
    rc, _, err, took = _interrupt(["reproduce", "gang", "--out", str(out), "--workers", "1"],
                                  signal.SIGTERM, tmp_path)
    assert rc == 143 and one_error_line(err) == "terminated (SIGTERM)", err
    assert took < 10.0
    assert not out.exists()
    assert [f for f in os.listdir(tmp_path) if f.startswith(".parsched-")] == []


# ------------------------------------------------------------ unbounded configs


@pytest.mark.parametrize("kv, field", [
    (["tq=1e308", "k=1"], "tq"),
    (["barrier_cost=1e308"], "barrier_cost"),
    (["var=1e9"], "k"),            # 50000 iterations of up to 11 days: beyond the clock
    (["var=1e6"], "max_events"),   # within the clock, but about 10^11 events
    (["samples=1e10", "dist=empirical"], "samples"),
])
def test_unbounded_barrier_configs_are_refused_at_once(capsys, kv, field):
    t0 = time.perf_counter()
    assert main(["simulate", "barrier", "--set", *kv]) == 2
    err = one_error_line(capsys.readouterr().err)
    assert err.startswith(field + ":"), err
    assert time.perf_counter() - t0 < 5.0


def test_the_estimate_is_reported_and_lifted_by_max_events():
    est = parsched._core.estimate_run("barrier", {"var": 1e6})
    assert est["events"] > 1e10 and est["sim_time"] > 1e10
    with pytest.raises(ConfigError) as e:
        BarrierConfig(var=1e6)
    assert e.value.field == "max_events" and "max_events=0" in str(e.value)
    BarrierConfig(var=1e6, max_events=0)  # accepted
    # the estimate is an upper bound of what a run does
    cfg = BarrierConfig(k=2000, l=2, sched="local", wait="block")
    res = parsched.simulate_barrier(cfg)
    est = parsched._core.estimate_run("barrier", cfg.to_dict())
    assert res.summary["events"] <= est["events"]


@pytest.mark.parametrize("pool_size", ["1000000", "1"])
def test_a_million_pool_processors_are_refused_unless_max_events_is_0(capsys, pool_size):
    """Issue #27: P = 10^6 in one pool was estimated at ~2 s and ran for tens
    of minutes (the overheads inflate its work x5000); in 10^6 pools of one
    each job's placement sorts 10^6 pools. Both are refused at once."""
    t0 = time.perf_counter()
    assert main(["simulate", "pools", "--set", "P=1000000", f"pool_size={pool_size}"]) == 2
    err = one_error_line(capsys.readouterr().err)
    assert err.startswith("max_events: the run would take about"), err
    assert "P = 1000000" in err and "max_events=0" in err, err
    assert time.perf_counter() - t0 < 10.0
    cfg = {"P": 1000000, "pool_size": int(pool_size)}
    assert parsched._core.estimate_run("pools", cfg)["cost"] > 1e10
    parsched.PoolsConfig(P=1000000, pool_size=int(pool_size), max_events=0)  # accepted
    # the estimate bounds a real run's events
    cfg = parsched.PoolsConfig(P=1000, pool_size=1000, jobs=100, warmup=10, reps=1)
    res = parsched.simulate(cfg)
    assert res.summary["events"] <= parsched._core.estimate_run("pools", cfg.to_dict())["events"]


@pytest.mark.parametrize("model", ["cosched", "fcs"])
def test_cosched_and_fcs_runs_stop_past_max_events(capsys, model):
    """Issue #27: their cost cannot be estimated before the run, so a run
    stops once it passes max_events (one line naming the key, exit 2)."""
    assert main(["simulate", model, "--set", "scale=0.02", "max_events=1000"]) == 2
    err = one_error_line(capsys.readouterr().err)
    assert err.startswith("max_events: the run passed 1000 events"), err
    assert "max_events=0" in err


def test_a_long_run_shows_its_progress_on_stderr(tmp_path):
    """Issue #27: a long run showed nothing until it ended. Past 2 s, the
    events simulated so far are shown on stderr every second (on a terminal;
    PARSCHED_PROGRESS=1 here), and the line is erased at the end."""
    env = dict(os.environ, PYTHONWARNINGS="ignore", PARSCHED_PROGRESS="1")
    p = subprocess.run([sys.executable, "-m", "parsched", "simulate", "pools", "--set",
                        "P=1000", "pool_size=1000", "jobs=80000", "reps=1", "--json"],
                       env=env, cwd=tmp_path, capture_output=True, timeout=300)
    err = p.stderr.decode()  # (bytes: text mode would turn the \r into \n)
    assert p.returncode == 0, err
    lines = [x for x in err.split("\r") if "events simulated in" in x]
    assert lines, err
    counts = [float(x.split()[1]) for x in lines]
    assert counts == sorted(counts) and counts[-1] > 0, lines
    assert err.endswith("\r\x1b[K"), repr(err[-80:])
    assert json.loads(p.stdout)["events"] >= counts[-1]
    # without a terminal (and the variable), nothing
    env.pop("PARSCHED_PROGRESS")
    p = subprocess.run([sys.executable, "-m", "parsched", "simulate", "pools", "--set",
                        "jobs=200", "reps=1"], env=env, cwd=tmp_path, capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0 and p.stderr == "", p.stderr


# ------------------------------------------------------------------ trace errors


def _trace(tmp_path, body: str, header: str = HEADER, name: str = "t.swf") -> str:
    p = tmp_path / name
    p.write_text(header + body)
    return str(p)


def _batch_error(capsys, *args) -> str:
    assert main(["simulate", "batch", *args]) == 2
    cap = capsys.readouterr()
    assert cap.out == ""
    return one_error_line(cap.err)


def test_job_errors_name_file_and_line(tmp_path, capsys):
    # job number 1 twice: the line says which
    body = JOB.format(i=1, s=0) + JOB.format(i=1, s=5).replace(" 4 -1 -1 4 ", " 99 -1 -1 99 ")
    t = _trace(tmp_path, body)
    err = _batch_error(capsys, "--trace", t, "--set", "too_wide=error")
    assert err.startswith(f"trace {t}: line 4: job 1 needs 99 processors"), err
    big = JOB.format(i=7, s=0).replace(" 100 4 ", f" {2**40} 4 ")
    t = _trace(tmp_path, JOB.format(i=1, s=0) + big)
    err = _batch_error(capsys, "--trace", t)
    assert err.startswith(f"trace {t}: line 4: job 7: field 4 (run_time) is {2**40} s"), err


def test_missing_maxprocs_names_the_file(tmp_path, capsys):
    t = _trace(tmp_path, JOB.format(i=1, s=0), header="; Version: 2.2\n")
    err = _batch_error(capsys, "--trace", t)
    assert err.startswith("procs: the trace header has no MaxProcs or MaxNodes"), err
    assert t in err


@pytest.mark.parametrize("body, why", [
    ("", "the trace has no job line"),
    ("; only a comment\n;\n\n", "the trace has no job line"),
    (JOB.format(i=1, s=0).replace(" 1 -1 -1 -1 -1 -1 -1 -1\n", " 5 -1 -1 -1 -1 -1 -1 -1\n"),
     "all 1 records were dropped (1 dropped: cancelled"),
])
def test_nothing_to_simulate_is_an_error(tmp_path, capsys, body, why):
    t = _trace(tmp_path, body)
    out = tmp_path / "jobs.csv"
    err = _batch_error(capsys, "--trace", t, "--jobs-out", str(out))
    assert err.startswith(f"trace {t}: nothing to simulate: {why}"), err
    assert sorted(os.listdir(tmp_path)) == ["t.swf"]


def test_outputs_errors_name_the_users_path(tmp_path, capsys):
    t = _trace(tmp_path, JOB.format(i=1, s=0))
    if not os.path.isdir("/proc/self"):  # pragma: no cover - not Linux
        pytest.skip("needs /proc")
    err = _batch_error(capsys, "--trace", t, "--jobs-out", "/proc/jobs.csv")
    assert "/proc/jobs.csv" in err and ".parsched-" not in err, err


def test_long_values_are_cut_in_errors(tmp_path, capsys):
    long = "x" * 5000
    for argv in (["simulate", "barrier", "--set", f"wait={long}"],
                 ["simulate", "batch", "--trace", _trace(tmp_path, JOB.format(i=1, s=0)),
                  "--set", f"policy={long}"],
                 ["simulate", "pools", "--set", f"L={long}"],
                 ["simulate", "cosched", "--set", f"scheme={long}"]):
        assert main(argv) == 2
        err = one_error_line(capsys.readouterr().err)
        assert len(err) < 400 and "x" * 61 not in err, err
    t = _trace(tmp_path, JOB.format(i=1, s=0).replace(" 100 ", f" {long} "))
    err = _batch_error(capsys, "--trace", t)
    assert err.startswith(f"trace {t}: line 3: field 4 (run_time) is \"{'x' * 60}…\""), err


# ---------------------------------------------------------------- extra fields


def test_extra_fields_are_ignored_and_counted_or_refused(tmp_path, capsys):
    # ALCF Theta/Mira-style conversions: a 19th column
    body = JOB.format(i=1, s=0).replace("\n", " 3600\n") + JOB.format(i=2, s=5)
    t = _trace(tmp_path, body)
    res = parsched.simulate_batch(t)
    assert res.summary["jobs"] == 2
    assert res.report == {"ignored: fields beyond the 18th (rule extra_fields=ignore)": 1}
    with pytest.raises(TraceError) as e:
        parsched.simulate_batch(t, parsched.BatchConfig(extra_fields="error"))
    assert e.value.line == 3 and "19 fields" in str(e.value)
    err = _batch_error(capsys, "--trace", t, "--set", "extra_fields=error")
    assert err.startswith(f"trace {t}: line 3: 19 fields"), err


def test_an_empty_file_is_nothing_to_simulate_not_a_header_problem(tmp_path, capsys):
    p = tmp_path / "empty.swf"
    p.write_text("")
    err = _batch_error(capsys, "--trace", str(p))
    assert err == f"trace {p}: nothing to simulate: the trace has no job line", err
