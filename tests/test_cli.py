"""The parsched command: outputs, JSON, and one-line exit-2 errors that write nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pandas as pd
import pytest

from conftest import needs_core, one_error_line, run_cli
from parsched.cli import main

SHORT = ["--set", "jobs=300", "warmup=30", "reps=2"]
JSON_KEYS = ("mean_response_time", "ci90_half_width", "actual_parallelism", "utilization",
             "jobs", "events", "wall_seconds")


@pytest.fixture
def files(tmp_path):
    (tmp_path / "ok.csv").write_text("arrival,d\n0,4\n1,8\n2,2\n")
    (tmp_path / "bad.csv").write_text("arrival,d\n0,4\n1,zero\n")
    (tmp_path / "badhead.csv").write_text("when,d\n0,4\n")
    (tmp_path / "bad.toml").write_text("[pools]\nL = = 3\n")
    (tmp_path / "unknown.toml").write_text("[pools]\nQ = 3\n")
    (tmp_path / "range.toml").write_text("[pools]\nG = 1.5\n")
    (tmp_path / "good.toml").write_text("[pools]\nL = 0.5\njobs = 300\nwarmup = 30\nreps = 2\n")
    return tmp_path


BAD_SIMULATE = [
    (["--set", "L=1"], "L"),
    (["--set", "L=1.2"], "L"),
    (["--set", "pool_size=7"], "pool_size"),
    (["--set", "W=-0.1"], "W"),
    (["--set", "jobs=-1"], "jobs"),
    (["--set", "G=1.5"], "G"),
    (["--set", "G=-1"], "G"),
    (["--set", "bogus=3"], "bogus"),
    (["--set", "D=x"], "D"),
    (["--set", "novalue"], "--set"),
    (["--config", "{d}/bad.toml"], "config"),
    (["--config", "{d}/unknown.toml"], "Q"),
    (["--config", "{d}/range.toml"], "G"),
    (["--config", "{d}/missing.toml"], "config"),
    (["--arrivals", "{d}/bad.csv"], "d"),
    (["--arrivals", "{d}/badhead.csv"], "arrivals"),
    (["--arrivals", "{d}/missing.csv"], "arrivals"),
    (["--jobs-out", "{d}/out.txt"], "--jobs-out"),
    (["--jobs-out", "{d}/nodir/out.csv"], "--jobs-out"),
    (["--workers", "0"], "argument --workers"),
    (["--workers", "two"], "argument --workers"),
    (["--frobnicate"], "unrecognized arguments"),
]


@pytest.mark.parametrize(("args", "field"), BAD_SIMULATE)
def test_bad_simulate_input_in_process(files, capsys, args, field):
    args = [a.format(d=files) for a in args]
    out_csv = files / "jobs_out.csv"
    rc = main(["simulate", "pools", *SHORT, *args, "--jobs-out", str(out_csv)]
              if "--jobs-out" not in args else ["simulate", "pools", *SHORT, *args])
    cap = capsys.readouterr()
    assert rc == 2
    assert one_error_line(cap.err).startswith(field)
    assert cap.out == ""
    assert not out_csv.exists() and not (files / "out.txt").exists()
    assert not [p for p in os.listdir(files) if p.startswith(".parsched-")]


@pytest.mark.parametrize(
    "args",
    [
        ["simulate", "pools", "--set", "L=1", "--jobs-out", "{d}/j.csv"],
        ["simulate", "pools", "--config", "{d}/bad.toml", "--jobs-out", "{d}/j.csv"],
        ["simulate", "pools", "--arrivals", "{d}/bad.csv", "--jobs-out", "{d}/j.parquet"],
        ["simulate"],
        ["nonsense"],
        ["bench", "--jobs", "0"],
        ["bench", "--jobs", "many"],
        ["reproduce", "pools", "--out", "{d}/ok.csv"],
        ["reproduce", "pools", "--workers", "-2", "--out", "{d}/res"],
    ],
)
def test_bad_input_in_subprocess(files, args):
    before = sorted(os.listdir(files))
    r = run_cli(*(a.format(d=files) for a in args))
    assert r.returncode == 2, r.stderr
    one_error_line(r.stderr)
    assert r.stdout == ""
    assert sorted(os.listdir(files)) == before


@needs_core
def test_simulate_json(files):
    r = run_cli("simulate", "pools", *SHORT, "--json", "--set", "D=10", "pool_size=15")
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("\n") == 1
    obj = json.loads(r.stdout)
    for k in JSON_KEYS:
        assert k in obj, k
    assert obj["jobs"] == (300 - 30) * 2
    assert obj["config"]["pool_size"] == 15 and obj["config"]["D"] == 10.0


@needs_core
def test_simulate_table_and_config_file(files, capsys):
    rc = main(["simulate", "pools", "--config", str(files / "good.toml"), "--set", "T=5"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "mean response time" in out and "utilization U" in out
    assert "L=0.5" in out and "T=5.0" in out


@needs_core
@pytest.mark.parametrize("ext", [".csv", ".parquet"])
def test_jobs_out(files, capsys, ext):
    path = files / f"jobs{ext}"
    rc = main(["simulate", "pools", *SHORT, "--jobs-out", str(path), "--json"])
    obj = json.loads(capsys.readouterr().out)
    assert rc == 0
    df = pd.read_csv(path) if ext == ".csv" else pd.read_parquet(path)
    assert len(df) == 300 * 2
    assert int(df["measured"].sum()) == obj["jobs"]
    assert {"response", "d", "a", "pools_used", "home_pool"} <= set(df.columns)


@needs_core
def test_arrivals_file(files, capsys):
    rc = main(["simulate", "pools", "--arrivals", str(files / "ok.csv"), "--set", "warmup=0",
               "reps=1", "--json"])
    obj = json.loads(capsys.readouterr().out)
    assert rc == 0 and obj["jobs"] == 3 and obj["config"]["arrivals"] == 3


@needs_core
def test_workers_flag_gives_same_numbers(capsys):
    outs = []
    for w in ("1", "2"):
        assert main(["simulate", "pools", *SHORT, "--json", "--workers", w]) == 0
        obj = json.loads(capsys.readouterr().out)
        obj.pop("wall_seconds")
        outs.append(obj)
    assert outs[0] == outs[1]


@needs_core
def test_bench_json(capsys):
    assert main(["bench", "--jobs", "2000", "--json"]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert obj["jobs"] == 2000 and obj["events"] > 0 and obj["events_per_second"] > 0
    assert main(["bench", "--jobs", "2000"]) == 0
    assert "events/s" in capsys.readouterr().out


def test_help_comes_from_docstrings():
    r = run_cli("simulate", "pools", "--help")
    assert r.returncode == 0
    assert "Zhou & Brecht" in r.stdout and "--jobs-out" in r.stdout
    r = run_cli("reproduce", "pools", "--help")
    assert r.returncode == 0 and "Figures 1, 3-8" in r.stdout


@needs_core
@pytest.mark.parametrize("args", [
    ["simulate", "pools", "--set", "jobs=100", "warmup=10", "reps=1", "--json"],
    ["simulate", "barrier", "--set", "k=200", "--json"],
    ["simulate", "batch", "--set", "workload=lublin", "workload_jobs=200", "--json"],
    ["simulate", "cosched", "--set", "scale=0.01", "workload=6", "reps=1", "--json"],
])
def test_json_runs_do_not_import_pandas(args):
    # start-up: a --json run of a small simulation should cost little more than
    # the simulation; pandas alone takes about a second to import
    code = ("import sys, contextlib, io\n"
            "from parsched.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    rc = main({args!r})\n"
            "print(rc, 'pandas' in sys.modules, 'matplotlib' in sys.modules)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120, check=False)
    assert r.stdout.split() == ["0", "False", "False"], r.stdout + r.stderr


def test_tables_fit_the_terminal_without_cutting_a_header_or_a_number():
    """Headers wrap at spaces, text folds, numbers stay whole; what cannot fit
    is left out with a line naming it (it was cut to 'DC…', 'va…')."""
    import io

    import pandas as pd
    from rich.console import Console

    from parsched.cli.common import _print_table

    df = pd.DataFrame({"scheme": ["DCS-SB", "PB-SY"], "over_optimal": [1.234, 2.5],
                       "completion time (s)": [123456.7, 5.0],
                       "command": ["./a.out --a-long-argument here", "x"],
                       "DC slots": [3, 4], "variance of the thing": [0.1, 0.2]})
    for width in (40, 80, 200):
        buf = io.StringIO()
        _print_table(Console(file=buf, width=width, color_system=None), "t", df)
        out = buf.getvalue()
        assert "…" not in out and all(len(ln) <= width for ln in out.splitlines()), out
        assert "123456.7" in out
        if width == 40:
            assert "not shown at this width: command, DC slots, variance of the" in \
                " ".join(out.split())
        if width == 200:
            assert "not shown" not in out and "variance of the thing" in out
