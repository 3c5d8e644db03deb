"""Seed 003's network of workstations from Python: CoschedConfig, simulate_cosched,
cosched_sweep and ``parsched simulate cosched``. Small runs (scale 0.02-0.05, 4 nodes)."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import threading
import time

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import parsched
from conftest import (
    assert_toml_round_trip,
    needs_core,
    one_error_line,
    run_cli,
    sigint_default,
    wait_for_run,
)
from parsched import ConfigError, CoschedConfig, SimulationError, TimeLimitError
from parsched.cli import main

pytestmark = needs_core

#: A quick configuration: four nodes, a few simulated seconds per job.
QUICK = {"nodes": 4, "scale": 0.03}

#: A valid value different from the default for every key (keep in step with
#: the core's KEYS: the test below fails when a key is missing here).
NONDEFAULT = {
    "workload": 7,
    "jobs": ("LIFE12", "MG", "LU", "EP"),
    "scheme": "DCS-SB",
    "nodes": 6,
    "cpus_per_node": 2,
    "job_width": 5,
    "local": "rr",
    "rr_quantum_ms": 50.0,
    "dispatch_table": None,  # set per test (a file)
    "initial_level": 1,
    "age_running": False,
    "ts_semantics": "parsched",
    "boost_refreshes_quantum": True,
    "boost_to": "sleep_return",
    "boost_cap": 20,
    "boost_queue": "tail",
    "boost_transient": True,
    "tick_ms": 5.0,
    "launch_gap_ms": 20.0,
    "start_skew_ms": 10.0,
    "latency_us": 40.0,
    "send_overhead_us": 6.0,
    "recv_overhead_us": 7.0,
    "per_byte_ns": 20.0,
    "context_switch_us": 25.0,
    "interrupt_us": 12.0,
    "syscall_us": 8.0,
    "timer_us": 3.0,
    "spin_time_us": 250.0,
    "boost_period_ms": 20.0,
    "spin_cap_at_boost_period": True,
    "pending": "unconsumed",
    "pb_sb_wake_interrupts": False,
    "pb_skip_running": False,
    "pb_sb_driver_flag": False,
    "resize_apps": True,
    "bsp_jobs": "a:100:5:1/2;b:250.5:3:1/1",
    "app_spin_us": (1000.0, 2000.0, 3000.0, 4000.0, 5000.0),
    "nic_sample_us": 100.0,
    "wake_delay_us": 30.0,
    "wake_loss": 0.1,
    "block_timeout_ms": 50.0,
    "daemon_period_ms": 100.0,
    "daemon_run_us": 500.0,
    "gang_slot_ms": 200.0,
    "probe_ms": 500.0,
    "probe_node": 3,
    "scale": 0.5,
    "alone_s": 30.0,
    "max_time_s": 900.0,
    "max_events": 123456789,
    "seed": 2**64 - 1,
    "reps": 3,
}

#: A three-level time-sharing table (dispadmin text; quanta in 1/100 s).
TABLE = """# Time Sharing Dispatcher Configuration
RES=100
# ts_quantum  ts_tqexp  ts_slpret  ts_maxwait ts_lwait  PRIORITY LEVEL
20 0 1 0 1 # 0
10 0 2 1 2 # 1
5 1 2 0 2  # 2
"""


@pytest.fixture
def table_file(tmp_path):
    p = tmp_path / "ts.txt"
    p.write_text(TABLE)
    return str(p)


def quick(**kw) -> CoschedConfig:
    return CoschedConfig(**{**QUICK, **kw})


# ------------------------------------------------------------------ config


def test_defaults_come_from_the_core():
    from parsched import _core

    c = CoschedConfig()
    assert c.boost_period_ms == 10.0 and c.scheme == "PB" and c.workload == 5
    assert c.jobs == () and c.dispatch_table is None and c.job_width is None
    assert c.spin_time_us is None
    assert list(CoschedConfig.field_names()) == list(_core.keys("cosched"))
    core = _core.config_values("cosched")
    assert c.to_dict() == core
    for name in CoschedConfig.field_names():
        assert CoschedConfig.field_doc(name), name
    assert "seed: 32" in CoschedConfig.field_doc("latency_us")
    assert "µs" in CoschedConfig.field_doc("latency_us")
    assert CoschedConfig.choices("pending") == ("unpolled", "unconsumed")
    assert isinstance(parsched.config.CoschedConfig(), parsched.config.ConfigBase)


def test_every_key_round_trips_through_the_core(table_file):
    assert set(NONDEFAULT) == set(CoschedConfig.field_names())
    values = dict(NONDEFAULT, dispatch_table=table_file)
    defaults = CoschedConfig().to_dict()
    for key, v in values.items():
        assert v != defaults[key], key
    c = CoschedConfig(**values)
    got = c.core_values()
    for key in CoschedConfig.field_names():
        if key == "dispatch_table":
            continue
        want = list(v) if isinstance(v := getattr(c, key), tuple) else v
        assert got[key] == want, key
    # the table comes back as dispadmin text (RES=1000) that reads to itself
    text = got["dispatch_table"]
    rows = [ln.split("#")[0].split() for ln in text.splitlines()
            if ln.strip() and not ln.startswith(("#", "RES="))]
    assert rows == [["200", "0", "1", "0", "1"], ["100", "0", "2", "1", "2"],
                    ["50", "1", "2", "0", "2"]]
    again = os.path.join(os.path.dirname(table_file), "again.txt")
    with open(again, "w") as fh:
        fh.write(text)
    assert c.with_(dispatch_table=again).core_values()["dispatch_table"] == text
    # one key at a time, too (the others at their defaults)
    for key, v in values.items():
        if key in ("dispatch_table", "initial_level", "probe_node", "job_width",
                   "daemon_run_us", "wake_loss", "cpus_per_node"):
            continue  # need a partner key (checked above)
        one = CoschedConfig(**{key: v})
        want = list(v) if isinstance(v, tuple) else v
        assert one.core_values()[key] == want, key


def test_scheme_and_jobs_take_the_cores_spelling():
    c = CoschedConfig(scheme="pb_sb", jobs=["life12", "LIFE(3.5)", " mg "])
    assert c.scheme == "PB-SB" and c.jobs == ("LIFE12", "LIFE3.5", "MG")
    assert CoschedConfig(jobs="LIFE12,EP").jobs == ("LIFE12", "EP")
    for s in parsched.config.cosched.SCHEMES:
        assert CoschedConfig(scheme=s.lower()).scheme == s


@pytest.mark.parametrize(
    ("kw", "field", "needle"),
    [
        ({"scheme": "XYZ"}, "scheme", "unknown scheme"),
        ({"scheme": 3}, "scheme", "not a string"),
        ({"jobs": ["LIFE12", "FOO"]}, "jobs", "unknown application"),
        ({"jobs": 5}, "jobs", "int given"),
        ({"nodes": 0}, "nodes", "0"),
        ({"wake_loss": 2}, "wake_loss", "2"),
        ({"wake_loss": 0.5}, "block_timeout_ms", "lost wake-ups"),
        ({"workload": 10}, "workload", "not a workload"),
        ({"probe_node": 8}, "probe_node", "8"),
        ({"latency_us": 5.0}, "latency_us", "send_overhead_us"),
        ({"local": "fifo"}, "local", "not a choice"),
        ({"reps": 0}, "reps", "0"),
        ({"spin_time_us": -1.0}, "spin_time_us", "-1"),
        ({"dispatch_table": "/no/such/table.txt"}, "dispatch_table", "cannot read"),
        ({"bogus": 1}, "bogus", "unknown key"),
        ({"boost_to": "middle"}, "boost_to", "not allowed"),
        ({"boost_to": 60}, "boost_to", "60 is not a level"),
        ({"boost_to": "300"}, "boost_to", "300 is not a level"),
        ({"boost_to": "sleep_return+x"}, "boost_to", "K must be"),
        ({"boost_to": 57.5}, "boost_to", "not a string"),
        ({"boost_cap": -1}, "boost_cap", "-1"),
        ({"boost_queue": "middle"}, "boost_queue", "not a choice"),
        ({"ts_semantics": "sun"}, "ts_semantics", "allowed: parsched, solaris"),
    ],
)
def test_bad_values_name_their_field(kw, field, needle):
    with pytest.raises(ConfigError) as ei:
        CoschedConfig.from_dict(kw)
    assert ei.value.field == field
    assert needle in str(ei.value)
    assert "\n" not in str(ei.value)


def test_boost_to_takes_a_name_a_level_or_an_offset(tmp_path, table_file):
    # an integer (Python, TOML) or its text (--set) is a fixed level
    assert CoschedConfig(boost_to=57).boost_to == "57"
    for v in (57, "57", " sleep_return+2 ", "top", "sleep_return"):
        c = CoschedConfig(boost_to=v)
        assert c.core_values()["boost_to"] == str(v).strip()
        assert_toml_round_trip(c, table=True)
    c = CoschedConfig().apply_overrides(["boost_to=55", "boost_cap=10"])
    assert (c.boost_to, c.boost_cap) == ("55", 10)
    f = tmp_path / "b.toml"
    f.write_text("[cosched]\nboost_to = 56\n")
    assert CoschedConfig.from_toml(f).core_values()["boost_to"] == "56"
    # a level is checked against the table in use (3 levels: 0..=2)
    with pytest.raises(ConfigError) as ei:
        CoschedConfig(dispatch_table=table_file, initial_level=1, boost_to=5)
    assert ei.value.field == "boost_to" and "0..=2" in str(ei.value)
    assert "\n" not in str(ei.value)
    assert CoschedConfig(dispatch_table=table_file, initial_level=1, boost_to=2).boost_to == "2"


def test_bad_dispatch_tables(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("RES=1000\n100 0 1 0\n")
    with pytest.raises(ConfigError, match=r"^dispatch_table: .*line 2") as ei:
        CoschedConfig(dispatch_table=str(bad))
    assert ei.value.field == "dispatch_table"
    bad.write_text("100 0 7 0 0\n")  # slpret names no level
    with pytest.raises(ConfigError, match=r"^dispatch_table: .*slpret"):
        CoschedConfig(dispatch_table=str(bad), initial_level=0)
    ok = tmp_path / "ok.txt"
    ok.write_text(TABLE)
    with pytest.raises(ConfigError) as ei:  # 3 levels: the default level 29 is none
        CoschedConfig(dispatch_table=str(ok))
    assert ei.value.field == "initial_level" and "0..=2" in str(ei.value)
    with pytest.raises(ConfigError) as ei:  # the stock table has 60 levels
        CoschedConfig(initial_level=60)
    assert ei.value.field == "initial_level"
    assert CoschedConfig(dispatch_table="solaris").core_values()["dispatch_table"] is None


def test_overrides_and_toml(tmp_path, table_file):
    c = CoschedConfig().apply_overrides(
        ["jobs=LIFE12,MG,LU,EP", "scheme=dcs", "spin_time_us=none", "job_width=4",
         "pending=unconsumed", "age_running=false", "seed=7", "nodes=4",
         f"dispatch_table={table_file}", "initial_level=2"])
    assert c.jobs == ("LIFE12", "MG", "LU", "EP") and c.scheme == "DCS"
    assert (c.spin_time_us, c.job_width, c.pending, c.age_running, c.seed) == (
        None, 4, "unconsumed", False, 7)
    assert c.apply_overrides(["jobs="]).jobs == ()
    assert c.apply_overrides(["spin_time_us=300"]).spin_time_us == 300.0
    assert_toml_round_trip(c, table=True)
    assert_toml_round_trip(c.with_(dispatch_table=None), table=False)
    # a relative dispatch_table path in a TOML file is relative to the file
    sub = tmp_path / "conf"
    sub.mkdir()
    (sub / "ts.txt").write_text(TABLE)
    (sub / "c.toml").write_text('[cosched]\nscheme = "SB"\njobs = ["MG", "EP"]\n'
                                'dispatch_table = "ts.txt"\ninitial_level = 1\n')
    f = CoschedConfig.from_toml(sub / "c.toml")
    assert f.dispatch_table == str(sub / "ts.txt") and f.jobs == ("MG", "EP")
    (sub / "bad.toml").write_text("[cosched]\nnodes = 2\nwhat = 1\n")
    with pytest.raises(ConfigError, match=r"^what: unknown key"):
        CoschedConfig.from_toml(sub / "bad.toml")
    with pytest.raises(ConfigError, match=r"^--set: "):
        CoschedConfig().apply_overrides(["scheme"])


_values = {
    "workload": st.integers(1, 9),
    "jobs": st.lists(st.sampled_from(parsched.config.cosched.APPLICATIONS), max_size=5)
            .map(tuple),
    "scheme": st.sampled_from(parsched.config.cosched.SCHEMES),
    "nodes": st.integers(1, 64),
    "local": st.sampled_from(["ts", "rr"]),
    "boost_period_ms": st.floats(0.01, 1000, allow_nan=False),
    "spin_time_us": st.none() | st.floats(0, 1e6, allow_nan=False),
    "pending": st.sampled_from(["unpolled", "unconsumed"]),
    "age_running": st.booleans(),
    "ts_semantics": st.sampled_from(["parsched", "solaris"]),
    "scale": st.floats(1e-3, 10, allow_nan=False),
    "seed": st.integers(0, 2**64 - 1),
    "reps": st.integers(1, 20),
}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.fixed_dictionaries({}, optional=_values))
def test_key_value_text_round_trips(values):
    c = CoschedConfig(**values)
    items = []
    for k, v in c.to_dict().items():
        if k == "jobs":
            items.append("jobs=" + ",".join(v))
        elif v is None:
            items.append(f"{k}=none")
        else:
            items.append(f"{k}={json.dumps(v) if isinstance(v, bool) else v}")
    assert CoschedConfig().apply_overrides(items) == c
    assert CoschedConfig.from_dict(c.to_dict()) == c


# --------------------------------------------------------------------- runs


def test_a_run_has_consistent_numbers():
    r = parsched.simulate_cosched(quick(scheme="DCS", jobs=("LIFE12", "MG", "LU", "EP")))
    assert r.scheme == "DCS" and r.jobs == ["LIFE12", "MG", "LU", "EP"]
    assert len(r.job_completion_times) == 4 and len(r.comm_share) == 4
    assert all(r.completion_time >= t > 0 for t in r.job_completion_times)
    assert max(r.job_completion_times) == pytest.approx(r.completion_time)
    assert r.ideal == pytest.approx(4 * r.config.alone_s * r.config.scale)
    assert r.over_ideal == pytest.approx((r.completion_time - r.ideal) / r.ideal)
    with pytest.warns(DeprecationWarning, match="over_ideal"):
        assert r.slowdown == r.over_ideal  # the former name
    assert r.mean_job_time == pytest.approx(sum(r.job_completion_times) / 4)
    assert math.isnan(r.completion_time_ci90)
    assert all(0 <= s <= 1 for s in r.comm_share)
    assert list(r.runs.columns[:3]) == ["seed", "completion_time", "mean_job_time"]
    assert set(parsched.sim.cosched.RUN_COLUMNS) <= set(r.runs.columns)
    assert len(r.runs) == 1 and r.runs["events"].iloc[0] > 0
    tl = r.timeline
    assert list(tl.columns) == ["time_s", "0:LIFE12", "1:MG", "2:LU", "3:EP"]
    assert tl["time_s"].is_monotonic_increasing
    assert tl["time_s"].iloc[-1] == pytest.approx(r.completion_time, rel=1e-9)
    shares = tl.drop(columns="time_s")
    assert (shares >= 0).all().all() and (shares.sum(axis=1) <= 1 + 1e-9).all()
    d = r.to_dict()
    json.dumps(d, allow_nan=False)
    assert d["completion_time_ci90"] is None and d["config"]["scheme"] == "DCS"
    assert d["timeline"]["shares"]["3:EP"] == tl["3:EP"].tolist()


def test_mapping_and_overrides():
    a = parsched.simulate_cosched({"nodes": 4, "scale": 0.03}, scheme="SB")
    b = parsched.simulate_cosched(scheme="SB", **QUICK)
    assert a.config == b.config == quick(scheme="SB")
    assert a.completion_time == b.completion_time
    with pytest.raises(ConfigError, match=r"^nodez: unknown key"):
        parsched.simulate_cosched(nodez=3)
    with pytest.raises(ConfigError) as ei:
        parsched.simulate_cosched(quick(), workers=0)
    assert ei.value.field == "workers"
    with pytest.raises(TypeError):
        parsched.simulate_cosched(42)  # type: ignore[arg-type]


def _without_wall(d):
    d.pop("wall_seconds")
    for run in d["runs"]:
        run.pop("wall_seconds")
    return d


def test_deterministic_and_independent_of_workers():
    cfg = quick(scheme="SB", reps=3, seed=11)
    one = parsched.simulate_cosched(cfg, workers=1)
    three = parsched.simulate_cosched(cfg, workers=3)
    again = parsched.simulate_cosched(cfg, workers=1)
    assert _without_wall(one.to_dict()) == _without_wall(three.to_dict()) \
        == _without_wall(again.to_dict())
    assert len(one.runs) == 3 and one.runs["seed"].nunique() == 3
    assert one.completion_time_ci90 >= 0 and math.isfinite(one.completion_time_ci90)
    assert one.completion_time == pytest.approx(one.runs["completion_time"].mean())
    other = parsched.simulate_cosched(cfg.with_(seed=12, reps=1))
    assert other.runs["seed"].iloc[0] not in set(one.runs["seed"])


@pytest.mark.parametrize("scheme", ["gang", "fcfs"])
def test_references_run(scheme):
    r = parsched.simulate_cosched(quick(scheme=scheme, workload=7))
    assert r.scheme == scheme and len(r.job_completion_times) == 4
    # the references coschedule by construction: close to the ideal
    assert 0.8 * r.ideal < r.completion_time < 1.5 * r.ideal
    switches = r.runs["slot_switches"].iloc[0]
    if scheme == "fcfs":  # one job at a time, in the workload's order
        assert r.job_completion_times == sorted(r.job_completion_times)
        assert switches == 3  # one switch between consecutive jobs
    else:  # the four jobs' rows rotate many times over
        assert switches > 3 * 4


def test_local_is_slowest_on_four_life12_jobs():
    # W5 (four LIFE12 jobs): without coscheduling, communicating processes
    # wait for partners descheduled on other nodes
    t = {s: parsched.simulate_cosched(quick(scheme=s, workload=5)).completion_time
         for s in ("Local", "PB", "SB")}
    assert t["Local"] > t["PB"] and t["Local"] > t["SB"], t


def test_custom_table_and_round_robin_run(table_file):
    base = quick(scheme="SB", workload=1)
    ts = parsched.simulate_cosched(base.with_(dispatch_table=table_file, initial_level=1))
    rr = parsched.simulate_cosched(base.with_(local="rr", rr_quantum_ms=20.0))
    stock = parsched.simulate_cosched(base)
    for r in (ts, rr, stock):
        assert r.completion_time >= max(r.job_completion_times) > 0
    assert ts.completion_time != stock.completion_time


def test_time_limit_is_its_own_error():
    with pytest.raises(TimeLimitError, match=r"max_time_s = 0\.2") as ei:
        parsched.simulate_cosched(quick(max_time_s=0.2))
    assert isinstance(ei.value, SimulationError)
    assert "\n" not in str(ei.value)


def test_cancel_stops_a_long_run_in_another_thread():
    from parsched import _core

    out: dict[str, object] = {}

    def target():
        t0 = time.perf_counter()
        try:
            parsched.simulate_cosched(nodes=4, scale=200.0, scheme="Local", workers=1)
            out["result"] = "finished"
        except KeyboardInterrupt:
            out["result"] = "interrupted"
        out["seconds"] = time.perf_counter() - t0

    th = threading.Thread(target=target)
    th.start()
    time.sleep(0.3)
    _core.cancel_cosched()
    th.join(10)
    assert out.get("result") == "interrupted", out
    assert out["seconds"] < 2.0
    # later runs are not affected
    assert parsched.simulate_cosched(quick()).completion_time > 0


def test_plot_timeline(tmp_path):
    r = parsched.simulate_cosched(quick(scheme="PB", probe_ms=200.0))
    fig = r.plot_timeline()
    fig.savefig(tmp_path / "a.png")
    assert (tmp_path / "a.png").stat().st_size > 1000
    from matplotlib.figure import Figure

    ax = Figure().subplots()
    assert r.plot_timeline(ax, kind="line") is ax.figure
    assert len(ax.get_lines()) == 4
    with pytest.raises(ConfigError):
        r.plot_timeline(kind="pie")


# -------------------------------------------------------------------- sweep


def test_sweep_rows_do_not_depend_on_workers():
    base = quick(scale=0.02, seed=3)
    schemes, workloads = ["Local", "dcs", "PB-SB"], [1, 5]
    a = parsched.cosched_sweep(base, schemes, workloads, workers=1)
    b = parsched.cosched_sweep(base, schemes, workloads, workers=3)
    assert len(a) == len(schemes) * len(workloads)
    pd.testing.assert_frame_equal(a, b)
    assert list(a.columns) == list(parsched.sim.cosched.SWEEP_COLUMNS)
    assert list(a["scheme"]) == ["Local", "Local", "DCS", "DCS", "PB-SB", "PB-SB"]
    assert list(a["workload"]) == [1, 5] * 3
    one = parsched.simulate_cosched(base.with_(scheme="DCS", workload=5))
    row = a[(a["scheme"] == "DCS") & (a["workload"] == 5)].iloc[0]
    assert row["completion_time"] == one.completion_time and not row["livelock"]
    with pytest.raises(ConfigError, match=r"^scheme: "):
        parsched.cosched_sweep(base, ["nope"], [1])
    lim = parsched.cosched_sweep(base.with_(max_time_s=0.2), ["SB"], [5])
    assert bool(lim["livelock"].iloc[0]) and math.isnan(lim["completion_time"].iloc[0])


# ---------------------------------------------------------------------- CLI

CLI_QUICK = ["--set", "nodes=4", "scale=0.02"]


def test_cli_json(capsys):
    rc = main(["simulate", "cosched", "--set", "scheme=DCS", "--set", "scale=0.02", "--json",
               "--set", "jobs=LIFE12,MG,LU,EP", "nodes=4"])
    out = capsys.readouterr().out
    assert rc == 0 and out.count("\n") == 1
    obj = json.loads(out)
    assert obj["scheme"] == "DCS" and obj["jobs"] == ["LIFE12", "MG", "LU", "EP"]
    assert obj["completion_time"] >= max(obj["job_completion_times"])
    assert obj["config"]["jobs"] == ["LIFE12", "MG", "LU", "EP"]


def test_cli_table_timeline_and_plot(tmp_path, capsys, table_file):
    csv, png = tmp_path / "tl.csv", tmp_path / "tl.png"
    conf = tmp_path / "c.toml"
    conf.write_text('[cosched]\nscheme = "PB-SB"\nworkload = 7\n')
    rc = main(["simulate", "cosched", "--config", str(conf), *CLI_QUICK,
               "--set", f"dispatch_table={table_file}", "initial_level=1",
               "--timeline", str(csv), "--plot", str(png)])
    out = capsys.readouterr().out
    assert rc == 0
    assert "PB-SB" in out and "completion time" in out and "over ideal" in out
    assert "comm share" in out and "MG" in out
    df = pd.read_csv(csv)
    assert df.columns[0] == "time_s" and len(df.columns) == 5 and len(df) > 0
    assert png.stat().st_size > 1000
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".parsched-")]


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["--set", "bogus=1"], "bogus"),
        (["--set", "scheme=XYZ"], "scheme"),
        (["--set", "jobs=LIFE12,NOPE"], "jobs"),
        (["--set", "nodes=0"], "nodes"),
        (["--set", "wake_loss=2"], "wake_loss"),
        (["--set", "ts_semantics=svr4"], "ts_semantics"),
        (["--set", "dispatch_table=/no/such/file"], "dispatch_table"),
        (["--set", "max_time_s=0.1"], "max_time_s"),
        (["--timeline", "{d}/tl.txt"], "--timeline"),
        (["--plot", "{d}/nodir/p.png"], "--plot"),
        (["--workers", "0"], "argument --workers"),
    ],
)
def test_cli_bad_input_is_one_line(tmp_path, capsys, args, field):
    csv = tmp_path / "ok.csv"
    args = [a.format(d=tmp_path) for a in args]
    rc = main(["simulate", "cosched", *CLI_QUICK, *args, "--timeline", str(csv)]
              if "--timeline" not in args else ["simulate", "cosched", *CLI_QUICK, *args])
    cap = capsys.readouterr()
    assert rc == 2
    assert one_error_line(cap.err).startswith(field)
    assert cap.out == ""
    assert os.listdir(tmp_path) == []


def test_cli_subprocess_errors_and_interrupt():
    r = run_cli("simulate", "cosched", "--set", "bogus=1")
    assert r.returncode == 2
    assert one_error_line(r.stderr).startswith("bogus: unknown key; allowed: workload")
    assert r.stdout == ""
    # Ctrl-C stops a long run at once: exit 130, one line
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    p = subprocess.Popen([sys.executable, "-m", "parsched", "simulate", "cosched", "--set",
                          "scale=200", "scheme=Local"], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, preexec_fn=sigint_default)
    wait_for_run(p.pid)
    t0 = time.perf_counter()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=20)
    assert p.returncode == 130, err
    assert time.perf_counter() - t0 < 3.0
    assert one_error_line(err) == "interrupted" and out == ""


def test_cli_help():
    r = run_cli("simulate", "cosched", "--help")
    assert r.returncode == 0
    assert "Nagar" in r.stdout and "--timeline" in r.stdout and "dispatch_table" in r.stdout


@pytest.mark.parametrize("ext", ["png", "svg", "pdf"])
def test_cli_timeline_as_a_figure(tmp_path, capsys, ext):
    fig = tmp_path / f"tl.{ext}"
    assert main(["simulate", "cosched", *CLI_QUICK, "--timeline", str(fig), "--json"]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert obj["outputs"]["timeline"] == str(fig)
    head = fig.read_bytes()[:8]
    assert head.startswith({"png": b"\x89PNG", "svg": b"<?xml", "pdf": b"%PDF"}[ext])


def test_bsp_jobs_run_bulk_synchronous_jobs_and_refuse_bad_text():
    r = parsched.simulate_cosched(bsp_jobs="a:1000:50:1/1;b:500:100:1/2", nodes=2, reps=1,
                                  scheme="SB")
    assert r.jobs == ["a", "b"] and r.completion_time > 0.1
    for bad, needle in [("a:1000:50", "four fields"), ("a:x:5:1", "grain"),
                        ("a:10:0:1", "iterations"), ("a:10:5:1/-2", "multipliers")]:
        with pytest.raises(parsched.ConfigError, match=needle) as e:
            parsched.simulate_cosched(bsp_jobs=bad, nodes=2, reps=1)
        assert "bsp_jobs" in str(e.value) and "\n" not in str(e.value)
