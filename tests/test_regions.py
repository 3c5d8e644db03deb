"""Seed 004 (region scheduling): the simulated machine from Python and the
command line, and its bad input."""

from __future__ import annotations

import json

import pytest

import parsched
from conftest import one_error_line, run_cli
from parsched.errors import ConfigError
from parsched.sim.regions import PAPER, regions_keys

MB = 1 << 20


def test_memlat_unification_gains_in_the_band_and_loses_when_it_fits():
    r = parsched.simulate_regions(machine="clovertown", workload="memlat", wss_mb=6,
                                  access_time=65536, accesses=1 << 22)
    assert r.normalized_performance > 1.2
    assert r.cache_loads == [3 * MB, 3 * MB]
    assert r.cache_loads_standard == [6 * MB, 0]
    visits = (1 << 22) // 65536
    assert r.microschedules == visits - 1
    assert r.microschedules_per_s == pytest.approx(
        r.microschedules / (r.region["makespan_ns"] * 1e-9))
    assert r.miss_ratio_region < r.miss_ratio_standard
    assert r.speedup is None
    fits = parsched.simulate_regions(wss_mb=2, access_time=4096, accesses=1 << 22)
    assert fits.normalized_performance < 1.0
    # The micro-schedule cost is the paper's.
    assert r.timing["microschedule_us"] == PAPER["microschedule_us"]["clovertown"]
    w = parsched.simulate_regions(machine="westmere", accesses=1 << 20)
    assert w.timing["microschedule_us"] == PAPER["microschedule_us"]["westmere"]


def test_balance_pairs_large_with_small_over_50_percent_faster():
    r = parsched.simulate_regions(workload="balance", accesses=1 << 21)
    assert r.speedup is not None and r.speedup > PAPER["balance_speedup_more_than"]
    assert r.cache_loads == [4 * MB + 16 * 1024] * 2
    assert r.cache_loads_standard == [8 * MB, 32 * 1024]
    assert len(r.speedup_per_program) == 4


def test_fallback_runs_as_the_standard_scheduler():
    r = parsched.simulate_regions(wss_mb=6, access_time=4096, fallback=True, accesses=1 << 22)
    assert r.normalized_performance == 1.0
    assert r.region["decisions"] == ["fallback:access_time"]


def test_online_regioning_reaches_the_declared_placement():
    keys = {"machine": "clovertown", "wss_mb": 6, "access_time": 1 << 14,
            "accesses": 1 << 23}
    d = parsched.simulate_regions(keys)
    o = parsched.simulate_regions(keys, regioning="online", scan_ms=2)
    assert o.region["placement"] == d.region["placement"]
    assert d.region["placement"][0][0] != d.region["placement"][0][1]  # unified
    assert o.region["rebalances"] >= 1 and o.region["decisions"] == ["regioning:online"]
    assert o.cache_loads == d.cache_loads == [3 * MB, 3 * MB]
    assert 1.0 < o.normalized_performance <= d.normalized_performance


def test_deterministic_and_keys():
    a = parsched.simulate_regions(cache_model="lru", wss_mb=5, access_time=1 << 12,
                                  accesses=1 << 18, seed=4)
    b = parsched.simulate_regions({"cache_model": "lru", "wss_mb": 5}, access_time=1 << 12,
                                  accesses=1 << 18, seed=4)
    assert a.to_dict() == b.to_dict()
    c = parsched.simulate_regions(cache_model="lru", wss_mb=5, access_time=1 << 12,
                                  accesses=1 << 18, seed=5)
    assert c.miss_ratio_standard != a.miss_ratio_standard
    assert regions_keys()[:3] == ["machine", "workload", "wss_mb"]
    assert a.config["cache_model"] == "lru" and a.config["wss_mb"] == 5.0
    assert "normalized_performance" in repr(a)


def test_bad_values_raise_config_error_naming_the_field():
    with pytest.raises(ConfigError) as e:
        parsched.simulate_regions(machine="cray")
    assert e.value.field == "machine"
    with pytest.raises(ConfigError) as e:
        parsched.simulate_regions(access_time=0)
    assert e.value.field == "access_time"
    with pytest.raises(ConfigError) as e:
        parsched.simulate_regions(nope=1)
    assert e.value.field == "nope"


def test_cli_json():
    r = run_cli("simulate", "regions", "--set", "machine=clovertown", "workload=memlat",
                "wss_mb=6", "access_time=65536", "accesses=4194304", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["normalized_performance"] > 1.2
    assert out["microschedules_per_s"] > 0
    assert out["cache_loads"] == [3 * MB, 3 * MB]
    r = run_cli("simulate", "regions", "--set", "workload=balance", "accesses=2097152", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["speedup"] > 1.5


def test_cli_table():
    r = run_cli("simulate", "regions", "--set", "accesses=1048576")
    assert r.returncode == 0, r.stderr
    assert "normalized performance" in r.stdout and "micro-schedules per s" in r.stdout


@pytest.mark.parametrize(("setting", "field"), [
    ("machine=cray", "machine:"),
    ("workload=spec", "workload:"),
    ("wss_mb=-3", "wss_mb:"),
    ("access_time=abc", "access_time:"),
    ("cache_model=plru", "cache_model:"),
    ("fallback=maybe", "fallback:"),
    ("bogus=1", "bogus:"),
    ("wss_mb", "--set:"),
    ("accesses=1073741824 access_time=1", "accesses:"),
    ("regioning=guessed", "regioning:"),
    ("regioning=online fallback=true", "regioning:"),
    ("scan_ms=0", "scan_ms:"),
    ("effective_cache_mb=-1", "effective_cache_mb:"),
])
def test_cli_bad_input_is_one_line_exit_2(setting, field):
    r = run_cli("simulate", "regions", "--set", *setting.split(), "--json")
    assert r.returncode == 2, r.stderr
    assert one_error_line(r.stderr).startswith(field)
    assert "Traceback" not in r.stderr and r.stdout == ""


def test_reproduce_quick(tmp_path):
    out = tmp_path / "regions"
    r = run_cli("reproduce", "regions", "--quick", "--out", str(out), "--json", timeout=300)
    assert r.returncode == 0, r.stderr
    obj = json.loads(r.stdout)
    found = {f["id"]: f["holds"] for f in obj["findings"]}
    # What the simulation gives (docs/policies/regions.md): balancing pays on
    # both machines; no variant gains when the working set fits one cache;
    # sequential sweeps under LRU give Condition 3, random access does not.
    assert found["balance/clovertown"] and found["balance/westmere"]
    assert all(found[f"{v}/{m}/cond2"] for v in ("default", "bandwidth", "sequential")
               for m in ("clovertown", "westmere"))
    assert found["sequential/clovertown/cond3"] and not found["default/clovertown/cond3"]
    assert found["bandwidth/clovertown/cond1"] and not found["default/clovertown/cond1"]
    for name in ("fig9_default.png", "fig9_sequential.png", "balance.csv", "boundaries.csv",
                 "findings.csv", "summary.md", "fig9_default_westmere.csv"):
        assert (out / name).is_file(), name
    assert obj["default/clovertown/peak"] > 1.0
    _check_paper_axes(out, {f["id"]: f for f in obj["findings"]})


def _check_paper_axes(out, found):
    """Figure 9 on the paper's axes: both machines on the same absolute grid,
    the reported bands and findings as the cells say, the counterfactuals
    moving every cell the way their cost or capacity says."""
    import pandas as pd

    bands = pd.read_csv(out / "fig9abs_bands.csv")
    assert (out / "fig9abs_default.png").is_file()
    for v in ("default", "bandwidth"):
        c = pd.read_csv(out / f"fig9abs_{v}_clovertown.csv")
        w = pd.read_csv(out / f"fig9abs_{v}_westmere.csv")
        axes = ["setting", "region_mb", "access_time"]
        assert c[axes].values.tolist() == w[axes].values.tolist()  # the same axes
        assert set(c.setting) == {"nominal", "mu_swapped", "effective", "timing_swapped"}
        assert (c.wss_mb == 2 * c.region_mb).all()
        cells = {}
        for m, df in (("clovertown", c), ("westmere", w)):
            for s, sub in df.groupby("setting"):
                row = bands[(bands.variant == v) & (bands.machine == m) & (bands.setting == s)]
                assert len(row) == 1
                win = sub[sub.normalized_performance > 1.0]
                cells[(m, s)] = len(win)
                assert int(row.cells_with_gain.iloc[0]) == len(win)
                if len(win):
                    assert row.wss_mb_min.iloc[0] == win.wss_mb.min()
                    assert row.wss_mb_max.iloc[0] == win.wss_mb.max()
            nom = df[df.setting == "nominal"].reset_index(drop=True)
            sw = df[df.setting == "mu_swapped"].reset_index(drop=True)
            eff = df[df.setting == "effective"].reset_index(drop=True)
            ts = df[df.setting == "timing_swapped"]
            oth = (w if m == "clovertown" else c)
            oth = oth[oth.setting == "nominal"]
            # the other machine's hit and miss times, this machine's cost
            assert (ts.hit_ns.iloc[0], ts.miss_ns.iloc[0]) == (oth.hit_ns.iloc[0],
                                                              oth.miss_ns.iloc[0])
            assert ts.microschedule_us.iloc[0] == nom.microschedule_us.iloc[0]
            # the other machine's micro-schedule cost, and every cell moves
            # with it: cheaper (Clovertown) gains at least as much, dearer
            # (Westmere) at most as much
            assert sw.microschedule_us.iloc[0] == PAPER["microschedule_us"][
                "westmere" if m == "clovertown" else "clovertown"]
            sign = 1 if m == "clovertown" else -1
            assert ((sw.normalized_performance - nom.normalized_performance) * sign
                    >= -1e-9).all()
            # the effective capacity is the paper's threshold (whole sets), and
            # a working set that fits it gains nothing
            assert eff.cache_mb.iloc[0] == pytest.approx(
                PAPER["condition2_harmful_at_or_below_mb"][m], rel=1e-3)
            assert (eff[eff.wss_mb <= eff.cache_mb].normalized_performance <= 1.0).all()
            assert (nom[nom.wss_mb <= nom.cache_mb].normalized_performance <= 1.0).all()
        f = found[f"{v}/abs/wider"]
        assert f["holds"] == (cells[("westmere", "nominal")] > cells[("clovertown", "nominal")])
        for m in ("clovertown", "westmere"):
            b = bands[(bands.variant == v) & (bands.machine == m)].set_index("setting")
            moved = b.access_octaves["mu_swapped"] - b.access_octaves["nominal"]
            assert found[f"{v}/abs/mu/{m}"]["holds"] == (
                moved > 0 if m == "clovertown" else moved < 0)


def test_cancel_stops_a_long_regions_run_in_another_thread():
    import threading
    import time

    from parsched import _core

    out: dict[str, object] = {}

    def target():
        t0 = time.perf_counter()
        try:
            parsched.simulate_regions(workload="balance", cache_model="lru", accesses=1 << 26)
            out["result"] = "finished"
        except KeyboardInterrupt:
            out["result"] = "interrupted"
        out["seconds"] = time.perf_counter() - t0

    th = threading.Thread(target=target)
    th.start()
    time.sleep(0.3)
    _core.cancel_runs()
    th.join(20)
    assert out.get("result") == "interrupted", out
    assert out["seconds"] < 2.0
    # later runs are not affected
    assert parsched.simulate_regions(accesses=1 << 20).normalized_performance > 0


def test_heatmap_colour_scale_reaches_the_data():
    """The scale stopped at 2.0 while values reached 5.04: diverging at 1,
    to the data's own extremes."""
    from parsched.reproduce.regions import _norm

    n = _norm([0.4, 1.0, 5.04])
    assert (n.vmin, n.vcenter, n.vmax) == (0.4, 1.0, 5.04)
    n = _norm([1.0, 1.0])
    assert n.vmin < 1.0 < n.vmax
