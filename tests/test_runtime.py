"""`parsched run`, `parsched.run_jobs` and `parsched reproduce desktop` (issue 5).

Tests that start real jobs need the compiled runtime, root and a cgroup freezer;
elsewhere they are skipped with a message saying which.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

import parsched
from conftest import one_error_line, run_cli
from parsched.runtime import make_spec, split_commands

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
BSP = os.path.join(ROOT, "bench", "bsp")


def _runtime_missing() -> str | None:
    try:
        from parsched import _core
    except ImportError:
        return "parsched._core is not built"
    if not hasattr(_core, "run_jobs"):
        return "this build of parsched._core has no run_jobs"
    if not os.path.isdir("/sys/fs/cgroup"):
        return "no cgroup filesystem at /sys/fs/cgroup (the runtime needs cgroups)"
    if os.geteuid() != 0:
        return "the runtime tests need root (cgroup freezer, real-time controller)"
    return None


needs_runtime = pytest.mark.skipif(_runtime_missing() is not None,
                                   reason=f"SKIP: {_runtime_missing()}")


def last_json(out: str) -> dict:
    return json.loads(out.strip().splitlines()[-1])


# ------------------------------------------------------------ no jobs started


def test_split_commands():
    assert split_commands(["--", "a", "1", ":", "b", "x", "y"]) == [["a", "1"], ["b", "x", "y"]]
    assert split_commands(["a"]) == [["a"]]
    assert split_commands([]) == []
    with pytest.raises(parsched.ConfigError):
        split_commands(["a", ":", ":", "b"])
    with pytest.raises(parsched.ConfigError):
        split_commands(["a", ":"])


def test_job_file_maps_onto_runspec(tmp_path):
    f = tmp_path / "jobs.toml"
    f.write_text('policy = "gang"\nslot = "20ms"\nmax_slots = 2\n\n'
                 '[[jobs]]\nname = "a"\nargv = ["true"]\nwidth = 2\n\n'
                 '[[jobs]]\nargv = ["sh", "-c", "exit 0"]\nenv = { X = "1" }\n')
    spec = make_spec(str(f), policy="default")
    assert spec["policy"] == "default"  # keyword on top of the file
    assert spec["slot"] == "20ms" and spec["max_slots"] == 2
    assert spec["jobs"] == [{"name": "a", "argv": ["true"], "width": 2},
                            {"argv": ["sh", "-c", "exit 0"], "env": {"X": "1"}}]
    assert make_spec(jobs=[["true"], {"argv": ["true"]}])["jobs"] == [{"argv": ["true"]}] * 2


@pytest.mark.parametrize("spec, field", [
    ({"jobs": []}, "jobs"),
    ({"jobs": [{"argv": []}]}, "argv"),
    ({"jobs": [["/no/such/program"]]}, "argv"),
    ({"jobs": [["no-such-program-parsched"]]}, "argv"),
    ({"policy": "fifo", "jobs": [["true"]]}, "policy"),
    ({"backend": "cgroup3", "jobs": [["true"]]}, "backend"),
])
def test_make_spec_rejects(spec, field):
    with pytest.raises(parsched.ConfigError) as e:
        make_spec(spec)
    assert e.value.field == field


BAD_RUN = [
    (["--policy", "fifo", "--", "true"], "--policy"),
    (["--backend", "cgroup3", "--", "true"], "--backend"),
    (["--slot", "abc", "--", "true"], "slot"),
    (["--slot", "0ms", "--", "true"], "slot"),
    ([], "no command"),
    (["--"], "no command"),
    (["--", "true", ":", ":", "true"], "empty"),
    (["--", "/no/such/program"], "not found"),
    (["--jobs", "{d}/missing.toml"], "does not exist"),
    (["--jobs", "{d}/bad.toml"], "jobs file"),
    (["--jobs", "{d}/unknown.toml"], "bogus"),
    (["--width", "0", "--", "true"], "--width"),
]


@pytest.mark.parametrize("args, needle", BAD_RUN)
def test_run_bad_input_one_line_exit_2(tmp_path, args, needle):
    (tmp_path / "bad.toml").write_text("policy = = 1\n")
    (tmp_path / "unknown.toml").write_text('bogus = 1\n[[jobs]]\nargv = ["true"]\n')
    args = [a.replace("{d}", str(tmp_path)) for a in args]
    r = run_cli("run", *args, timeout=60)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert needle in one_error_line(r.stderr)


def test_reproduce_desktop_bad_bsp(tmp_path):
    r = run_cli("reproduce", "desktop", "--bsp", str(tmp_path / "nope"), "--out",
                str(tmp_path / "o"))
    assert r.returncode == 2
    assert "--bsp" in one_error_line(r.stderr)
    assert not (tmp_path / "o").exists()


@pytest.mark.skipif(_runtime_missing() is None, reason="runs only where the runtime is unavailable")
def test_run_without_runtime_is_one_line_exit_2():
    r = run_cli("run", "--backend", "cgroup2", "--", "true", timeout=60)
    assert r.returncode == 2
    line = one_error_line(r.stderr)
    # the one line says why (no cgroup filesystem, no permission, or no runtime built)
    assert line.startswith("runtime unavailable:"), line


@needs_runtime
@pytest.mark.skipif(shutil.which("setpriv") is None, reason="SKIP: setpriv is not installed")
def test_run_as_unprivileged_user_names_what_is_missing():
    import sys

    base = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups",
            sys.executable, "-m", "parsched"]
    r = subprocess.run([*base, "run", "--backend", "cgroup2", "--", "true"], cwd="/",
                       capture_output=True, text=True, timeout=60, check=False)
    if "No module named" in r.stderr or "Permission denied: '" in r.stderr:
        pytest.skip("SKIP: the venv is not readable by uid 65534")
    assert r.returncode == 2, r.stderr
    line = one_error_line(r.stderr)
    assert line.startswith("runtime unavailable:") and "permission denied" in line
    assert "root" in line
    r = subprocess.run([*base, "reproduce", "desktop", "--out", "/tmp/parsched-nobody"],
                       cwd="/", capture_output=True, text=True, timeout=60, check=False)
    assert r.returncode == 2 and "needs root" in one_error_line(r.stderr)


# ---------------------------------------------------------------- real jobs


@needs_runtime
def test_run_two_short_jobs_gang_json():
    r = run_cli("run", "--policy", "gang", "--slot", "20ms", "--json", "--",
                "sh", "-c", "i=0; while [ $i -lt 3000 ]; do i=$((i+1)); done", ":",
                "sh", "-c", "sleep 0.1", timeout=60)
    assert r.returncode == 0, r.stderr
    d = last_json(r.stdout)
    assert d["success"] is True and d["policy"] == "gang"
    assert [j["name"] for j in d["jobs"]] == ["job0", "job1"]
    for j in d["jobs"]:
        assert j["success"] and j["status"] == {"code": 0, "signal": None}
        for key in ("wall_s", "user_s", "sys_s", "suspended_s"):
            assert j[key] >= 0
        assert j["slots_run"] >= 1 and j["pid"] > 0
    c = d["controller"]
    assert set(c) >= {"switches", "wakeups", "switch_s", "max_switch_s", "spread_s", "cpu_s",
                      "wall_s", "realtime", "backend"}
    assert c["backend"] in ("cgroup2", "cgroup1", "signal")


@needs_runtime
def test_run_table_and_failing_job_exit_1(tmp_path):
    f = tmp_path / "jobs.toml"
    f.write_text('policy = "gang"\nslot = "20ms"\n[[jobs]]\nname = "ok"\nargv = ["true"]\n'
                 '[[jobs]]\nname = "bad"\nargv = ["sh", "-c", "exit 3"]\nwidth = 1\n')
    r = run_cli("run", "--jobs", str(f), timeout=60)
    assert r.returncode == 1, r.stderr
    assert "exit 3" in r.stdout and "exit 0" in r.stdout
    assert "slot switches" in r.stdout and "failed: bad" in r.stdout
    r = run_cli("run", "--policy", "default", "--", "sh", "-c", "kill -TERM $$", timeout=60)
    assert r.returncode == 1 and "SIGTERM" in r.stdout


@needs_runtime
def test_run_jobs_api():
    out = parsched.run_jobs({"policy": "default", "jobs": [["true"], ["sh", "-c", "exit 2"]]})
    assert [j["success"] for j in out["jobs"]] == [True, False]
    assert out["jobs"][1]["status"]["code"] == 2
    with pytest.raises(parsched.ConfigError):
        parsched.run_jobs({"jobs": [["true"]], "slot_length": "1ms"})


def _bsp_or_skip() -> str:
    if os.path.isfile(BSP) and os.access(BSP, os.X_OK):
        return BSP
    if shutil.which("make") and (shutil.which("cc") or shutil.which("gcc")):
        subprocess.run(["make", "-s", "-C", os.path.join(ROOT, "bench")], check=True)
        return BSP
    pytest.skip("bench/bsp is not built and there is no C compiler")


@needs_runtime
def test_reproduce_desktop_tiny_writes_files(tmp_path):
    _bsp_or_skip()
    out = tmp_path / "desk"
    r = run_cli("reproduce", "desktop", "--quick", "--solo-seconds", "0.02", "--reps", "1",
                "--out", str(out), "--json", timeout=120)
    assert r.returncode == 0, r.stderr
    d = last_json(r.stdout)
    assert {"headline", "desktop", "granularity"} <= set(d)
    assert {"speedup_1ms", "gang_vs_ideal_1ms", "load_start"} <= set(d["headline"])
    assert all("load" in row for row in d["desktop"])
    for name in ("desktop.csv", "granularity.csv", "desktop.png", "granularity.png",
                 "summary.md"):
        assert (out / name).stat().st_size > 0, name
    import pandas as pd

    desk = pd.read_csv(out / "desktop.csv")
    assert set(desk.scheduler) == {"default", "gang"} and set(desk.k) == {1, 2}
    assert list(pd.read_csv(out / "granularity.csv").grain_ms) == [0.1, 1.0, 10.0]


@needs_runtime
@pytest.mark.parametrize("stop", [True, False], ids=["raises", "reports"])
def test_ctrl_c_stops_the_jobs_and_a_loop_of_runs(stop):
    """Ctrl-C during run_jobs stops its jobs (the controller catches the
    signal) and then raises KeyboardInterrupt, so a sweep of runs stops at
    once; with stop_on_signal=False the reports come back with the signal."""
    import signal
    import threading
    import time

    t = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    t0 = time.monotonic()
    t.start()
    try:
        spec = {"policy": "default", "jobs": [["sleep", "30"]]}
        if stop:
            with pytest.raises(KeyboardInterrupt):
                parsched.run_jobs(spec)
        else:
            out = parsched.run_jobs(spec, stop_on_signal=False)
            assert out["controller"]["signal"] == signal.SIGINT, out["controller"]
            assert not out["jobs"][0]["success"]
    finally:
        t.cancel()
    assert time.monotonic() - t0 < 10  # not the job's 30 s


@needs_runtime
@pytest.mark.parametrize("as_json", [False, True], ids=["table", "json"])
def test_run_ctrl_c_exits_130_and_json_is_one_object(tmp_path, as_json):
    """Ctrl-C stops the jobs, the report says so and the exit status is 130
    (it was 1, as for a failed job); under --json stdout holds exactly one
    JSON object, the jobs' own output going to stderr."""
    import signal
    import sys
    import time

    env = dict(os.environ, PYTHONWARNINGS="ignore", COLUMNS="120")
    argv = [sys.executable, "-m", "parsched", "run", "--policy", "default",
            *(["--json"] if as_json else []), "--",
            "sh", "-c", "echo from-job-$((40+2)); exec sleep 30"]
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=env)
    deadline = time.monotonic() + 60
    # wait until the job runs (its sleep is a child of the controller's process)
    while time.monotonic() < deadline:
        kids = subprocess.run(["pgrep", "-f", "^sleep 30$"], capture_output=True, text=True)
        if kids.stdout.strip():
            break
        time.sleep(0.1)
    time.sleep(0.3)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 130, (out, err)
    if as_json:
        lines = [ln for ln in out.splitlines() if ln.strip()]
        assert len(lines) == 1, out
        d = json.loads(lines[0])
        assert d["interrupted"] == "SIGINT" and not d["success"]
        assert "from-job-42" not in out and "from-job-42" in err
    else:
        assert "interrupted by SIGINT: the jobs were stopped" in out


@needs_runtime
def test_run_names_a_slot_only_where_slots_are_switched():
    r = run_cli("run", "--policy", "default", "--", "true", timeout=60)
    assert r.returncode == 0, r.stderr
    assert "policy default, backend" in r.stdout and "slot" not in r.stdout.splitlines()[0]
    r = run_cli("run", "--policy", "gang", "--slot", "20ms", "--backend", "signal", "--",
                "true", timeout=60)
    assert r.returncode == 0, r.stderr
    assert "policy gang, slot 20ms, backend signal" in r.stdout
