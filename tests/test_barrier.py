"""Seed 001's barrier machine from Python: BarrierConfig, simulate_barrier, sweep, CLI,
and the reproduce-gang pipeline."""

from __future__ import annotations

import concurrent.futures as cf
import dataclasses
import json
import math
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import parsched
from conftest import assert_toml_round_trip, needs_core, run_cli
from parsched import BarrierConfig, ConfigError, PoolsConfig
from parsched.models import feitelson_rudolph as fr
from parsched.reproduce import gang as rg

# ------------------------------------------------------------------ config


def test_defaults_and_docs():
    c = BarrierConfig()
    assert (c.n, c.l, c.P, c.k) == (10, 3, None, 50000)
    assert (c.grain, c.var, c.barrier_cost, c.tq, c.tcs, c.alpha) == (1.0, 1.0, 0.137, 50.0,
                                                                       0.2, 1.5)
    assert (c.wait, c.wakeup, c.sched, c.competitors) == ("busy", "tail", "gang", "same")
    assert c.procs == 10
    for name in BarrierConfig.field_names():
        assert BarrierConfig.field_doc(name), name
    for sym, text in (("n", "[n]"), ("l", "[ℓ]"), ("tq", "[τq]"), ("tcs", "[τcs]"),
                      ("alpha", "[α]"), ("k", "[k]")):
        assert text in BarrierConfig.field_doc(sym)
    assert BarrierConfig.choices("wait") == ("busy", "block", "twophase", "yield")
    assert "Attributes:" in (BarrierConfig.__doc__ or "")
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.n = 4  # type: ignore[misc]


@needs_core
def test_mirrors_the_rust_keys_and_defaults():
    from parsched import _core

    assert list(BarrierConfig.field_names()) == list(_core.keys("barrier"))
    assert BarrierConfig().to_dict() == _core.barrier_defaults()


def test_shared_base_keeps_the_two_configs_apart():
    assert issubclass(BarrierConfig, parsched.config.ConfigBase)
    assert issubclass(PoolsConfig, parsched.config.ConfigBase)
    with pytest.raises(ConfigError, match=r"^L: unknown key \(L is a key of `parsched simulate "
                       r"pools`\); allowed: n, l, P, k"):
        BarrierConfig().with_(L=0.5)
    with pytest.raises(ConfigError, match=r"^n: unknown key \(n is a key of `parsched simulate "
                       r"barrier`\); allowed: P, L, D"):
        PoolsConfig().apply_overrides(["n=3"])
    with pytest.raises(ConfigError,
                       match=r"^tcs: 0 with wait = yield: each yield costs τcs; allowed: tcs > 0"):
        BarrierConfig(wait="yield", tcs=0.0)
    assert PoolsConfig().summary_label() == "defaults"
    assert BarrierConfig(n=4).summary_label() == "n=4"


def test_model_values_follow_eqs_1_to_4_and_14():
    c = BarrierConfig(grain=fr.MS_PER_GRAIN * 100, var=fr.MS_PER_GRAIN * 100)
    tp, tw = fr.makbilan_mapping(100, 100, 10, tw_coeff=fr.tw_ms_per_var_unit(10))
    assert math.isclose(c.t_p(), tp) and math.isclose(c.t_w(), tw)
    d = BarrierConfig.for_tp_tw(0.5, 0.2, barrier_cost=0.0)
    assert math.isclose(d.t_p(), 0.5) and math.isclose(d.t_w(), 0.2)
    assert d.dist == "uniform"
    with pytest.raises(ConfigError, match=r"^var: t_w = 0.9 is not reachable .*uniform"):
        BarrierConfig.for_tp_tw(0.5, 0.9, barrier_cost=0.0, dist="uniform")
    with pytest.raises(ConfigError, match=r"^var: t_w = 1 is not reachable .*exponential"):
        BarrierConfig.for_tp_tw(0.5, 1.0, barrier_cost=0.0)  # beyond (H_10 − 1)·t_p
    with pytest.raises(ConfigError, match=r"^dist: "):
        BarrierConfig.for_tp_tw(0.5, 0.2, dist="normal")


def test_exponential_compute_values_and_round_trip(tmp_path):
    h10 = sum(1.0 / i for i in range(1, 11))
    c = BarrierConfig(grain=0.2, var=0.5, barrier_cost=0.1, dist="exponential")
    assert math.isclose(c.t_p(), 0.8) and math.isclose(c.t_w(), 0.5 * (h10 - 1))
    assert BarrierConfig.from_dict(c.to_dict()) == c
    assert BarrierConfig().apply_overrides(["dist=exponential", "grain=0.2", "var=0.5",
                                            "barrier_cost=0.1"]) == c
    f = tmp_path / "e.toml"
    f.write_text(c.to_toml())
    assert 'dist = "exponential"' in f.read_text() and BarrierConfig.from_toml(f) == c
    assert BarrierConfig().dist == "uniform" and "Figure 9" in BarrierConfig.field_doc("dist")
    with pytest.raises(ConfigError, match=r"^dist: 'normal' is not a choice"):
        BarrierConfig().apply_overrides(["dist=normal"])
    # seeds: the whole u64 range, for both models (the core's range)
    assert BarrierConfig(seed=2**64 - 1).seed == PoolsConfig(seed=2**64 - 1).seed == 2**64 - 1
    for cls in (BarrierConfig, PoolsConfig):
        with pytest.raises(ConfigError, match=r"^seed: .*2\^64"):
            cls(seed=2**64)
        with pytest.raises(ConfigError, match=r"^seed: "):
            cls(seed=-1)


@needs_core
def test_for_tp_tw_beyond_the_uniform_picks_exponential_and_simulates_tp_plus_tw():
    tp, tw = 1.0, 1.5  # t_w > t_p: no uniform compute reaches it
    c = BarrierConfig.for_tp_tw(tp, tw, n=10, l=1, barrier_cost=0.0, k=20000,
                                seed=2**64 - 1)
    assert c.dist == "exponential"
    assert math.isclose(c.t_p(), tp) and math.isclose(c.t_w(), tw)
    r = parsched.simulate_barrier(c.with_(sched="gang", wait="busy"))
    assert math.isclose(r.summary["t_w"], tw)
    assert abs(r.time_per_iteration / (tp + tw) - 1) < 0.03, r.time_per_iteration


def test_overrides_parse_by_type():
    c = BarrierConfig().apply_overrides(
        ["n=4", "P=8", "l=2", "k=1e4", "grain=0.5", "wait=block", "wakeup='priority'",
         "sched=local", "competitors=compute", "skew=false", "seed=7"])
    assert (c.n, c.P, c.l, c.k, c.grain) == (4, 8, 2, 10000, 0.5)
    assert (c.wait, c.wakeup, c.sched, c.competitors, c.skew, c.seed) == (
        "block", "priority", "local", "compute", False, 7)
    assert c.apply_overrides(["P=none"]).P is None


@pytest.mark.parametrize(
    ("item", "field", "needle"),
    [
        ("n=12", None, None),  # valid: P defaults to n
        ("P=4", "n", "larger than the machine"),
        ("tcs=50", "tcs", "not shorter than the quantum"),
        ("tcs=60", "tcs", "not shorter than the quantum"),
        ("grain=-1", "grain", "negative"),
        ("bogus=1", "bogus", "unknown key"),
        ("wait=spin", "wait", "not a choice"),
        ("n=0", "n", "a gang of 0 threads; allowed: n >= 1"),
        ("k=0", "k", "0 iterations; allowed: k >= 1"),
        ("l=abc", "l", "not an integer"),
        ("tq=0", "tq", "not a positive quantum; allowed: a finite number > 0"),
        ("skew=maybe", "skew", "not a boolean"),
        ("noequals", "--set", "not KEY=VALUE"),
    ],
)
def test_bad_input_is_one_line(item, field, needle):
    if field is None:
        assert BarrierConfig().apply_overrides([item]).procs == 12
        return
    with pytest.raises(ConfigError) as ei:
        BarrierConfig().apply_overrides([item])
    msg = str(ei.value)
    assert msg.startswith(f"{field}: ") and needle in msg and "\n" not in msg
    assert "; allowed: " in msg


def test_toml(tmp_path):
    f = tmp_path / "b.toml"
    f.write_text('[barrier]\nn = 2\nl = 4\ngrain = 0.141\nwait = "block"\n')
    c = BarrierConfig.from_toml(f)
    assert (c.n, c.l, c.grain, c.wait) == (2, 4, 0.141, "block")
    g = tmp_path / "flat.toml"
    g.write_text("n = 2\n")
    assert BarrierConfig.from_toml(g) == BarrierConfig(n=2)
    bad = tmp_path / "bad.toml"
    bad.write_text("[barrier]\nL = 0.5\n")
    with pytest.raises(ConfigError, match=r"^L: unknown key in"):
        BarrierConfig.from_toml(bad)


@st.composite
def barrier_configs(draw) -> BarrierConfig:
    n = draw(st.integers(1, 64))
    tq = draw(st.floats(1e-3, 1e3, allow_nan=False))
    wait = draw(st.sampled_from(["busy", "block", "twophase", "yield"]))
    return BarrierConfig(
        n=n, l=draw(st.integers(1, 16)),
        P=draw(st.one_of(st.none(), st.integers(n, 128))),
        # (k <= 10^6: the whole run must stay within the clock's 10^12 ms)
        k=draw(st.integers(1, 10**6)),
        grain=draw(st.floats(1e-3, 1e3)), var=draw(st.floats(0.0, 1e3)),
        barrier_cost=draw(st.floats(0.0, 1.0)), tq=tq,
        tcs=draw(st.floats(1e-6 if wait == "yield" else 0.0, tq, exclude_max=True)),
        alpha=draw(st.floats(0.0, 10.0)), wait=wait,
        spin_limit=draw(st.floats(0.0, 10.0)),
        wakeup=draw(st.sampled_from(["tail", "priority"])),
        sched=draw(st.sampled_from(["gang", "local"])),
        competitors=draw(st.sampled_from(["same", "compute"])),
        skew=draw(st.booleans()), shuffle=draw(st.booleans()),
        batches=draw(st.integers(1, 1000)), seed=draw(st.integers(0, 2**64 - 1)),
        dist=draw(st.sampled_from(["uniform", "exponential"])),
        # round trips of configurations, not runs: no event limit
        max_events=draw(st.sampled_from([0, 2**63 - 1])),
    )


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(barrier_configs(), st.booleans())
def test_round_trips(c, table):
    assert BarrierConfig.from_dict(c.to_dict()) == c
    items = [f"{k}={v!r}" if isinstance(v, float) else f"{k}={v}" for k, v in c.to_dict().items()]
    assert BarrierConfig().apply_overrides(items) == c
    assert_toml_round_trip(c, table=table)


@needs_core
@settings(max_examples=40, deadline=None)
@given(barrier_configs())
def test_python_checks_agree_with_rust(c):
    """Whatever the Python side accepts, the core accepts too (k kept small)."""
    from parsched import _core

    small = c.with_(k=min(c.k, 3), tq=max(c.tq, 1.0), l=min(c.l, 3), n=min(c.n, 4), P=None,
                    grain=max(c.grain, 0.01), var=min(c.var, 1.0), batches=min(c.batches, 3))
    out = _core.simulate_barrier(small.to_dict())
    assert out["iterations"] == small.k


# --------------------------------------------------------------- simulation


@needs_core
def test_simulate_barrier_result():
    r = parsched.simulate_barrier(BarrierConfig(k=2000))
    assert isinstance(r, parsched.BarrierResult)
    for key in parsched.sim.api.BARRIER_SUMMARY_KEYS:
        assert key in r.summary, key
    assert r.time_per_iteration == r.summary["time_per_iteration"] > 0
    assert "time_per_iter" not in r.summary  # one name, not two
    assert len(r.batch_means) == 20
    assert r.to_frame().shape[0] == 1
    with pytest.raises(TypeError):
        parsched.simulate_barrier(PoolsConfig())  # type: ignore[arg-type]


@needs_core
def test_iteration_time_distribution():
    cfg = BarrierConfig(n=2, l=3, grain=0.05, var=0.05, sched="local", k=20000, seed=3)
    r = parsched.simulate_barrier(cfg)
    s = r.summary
    h = r.iteration_histogram
    assert list(h.columns) == ["lo_ms", "hi_ms", "iterations"]
    assert int(h["iterations"].sum()) == cfg.k
    assert (h["lo_ms"] < h["hi_ms"]).all() and h["lo_ms"].is_monotonic_increasing
    assert s["iteration_min"] <= s["iteration_p50"] <= s["iteration_p90"] <= s["iteration_max"]
    # uncoordinated busy waiting: a fast median, a tail of whole rounds
    assert s["iteration_max"] > 100 * s["iteration_p50"]
    assert h["lo_ms"].iloc[0] <= s["iteration_min"] and s["iteration_max"] <= h["hi_ms"].iloc[-1]


@needs_core
def test_yield_blocking_reports_measured_alpha():
    # §3.3: blocking by yielding; α = yields per wait, about 4 at load 1.
    base = BarrierConfig(l=1, k=1500, grain=1.41, var=1.41, tcs=0.21, sched="local")
    r = parsched.simulate_barrier(base.with_(wait="yield"))
    assert 3.0 < r.summary["alpha_measured"] < 5.0
    assert r.summary["yields"] > 1500 and r.summary["busy_wait_time"] == 0.0
    assert parsched.simulate_barrier(base.with_(k=100)).summary["alpha_measured"] is None


@needs_core
@pytest.mark.parametrize(("n", "l"), [(2, 1), (4, 2), (10, 3)])
def test_gang_busy_waiting_matches_eq6_at_fine_grain(n, l):
    cfg = BarrierConfig(n=n, l=l, grain=0.05, var=0.05, barrier_cost=0.0, k=20000)
    r = parsched.simulate_barrier(cfg).summary
    eq6 = float(fr.t_gang_busy(cfg.t_p(), cfg.t_w(), n, l, cfg.tq, cfg.tcs))
    assert math.isclose(r["eq6"], eq6, rel_tol=1e-9)
    assert abs(r["time_per_iteration"] / eq6 - 1) < 0.02
    assert r["fragmentation"] == 0.0


@needs_core
def test_blocking_matches_eq12_at_fine_grain():
    cfg = BarrierConfig(n=10, l=3, grain=0.05, var=0.05, barrier_cost=0.0, k=20000,
                        sched="local", wait="block")
    r = parsched.simulate_barrier(cfg).summary
    assert abs(r["time_per_iteration"] / r["eq12"] - 1) < 0.02
    assert r["blocking_events"] > 0 and r["busy_wait_time"] == 0


@needs_core
def test_barrier_sweep_is_deterministic_and_dedupes():
    base = BarrierConfig(k=1500, grain=0.2, var=0.2)
    configs = [base.with_(sched=s, wait=w) for s in ("gang", "local")
               for w in ("busy", "block")] + [base]
    a = parsched.sweep(configs, executor=cf.ThreadPoolExecutor(2), progress=False)
    b = parsched.sweep(list(reversed(configs)), executor=cf.ThreadPoolExecutor(1),
                       progress=False).iloc[::-1].reset_index(drop=True)
    cols = [c for c in a.columns if c != "wall_seconds"]
    assert a[cols].equals(b[cols])
    assert a.iloc[0][cols].equals(a.iloc[4][cols])  # the duplicate shares its row
    assert "time_per_iteration" in a.columns and "model" not in a.columns
    mixed = parsched.sweep([base, PoolsConfig(jobs=200, warmup=10, reps=1)],
                           executor=cf.ThreadPoolExecutor(2), progress=False)
    assert list(mixed["model"]) == ["barrier", "pools"]


# -------------------------------------------------------------------- CLI


@needs_core
def test_cli_simulate_barrier_json(tmp_path):
    f = tmp_path / "b.toml"
    f.write_text("[barrier]\nn = 4\nl = 2\n")
    p = run_cli("simulate", "barrier", "--config", str(f), "--set", "k=500", "sched=local",
                "--json")
    assert p.returncode == 0, p.stderr
    obj = json.loads(p.stdout)
    for key in ("time_per_iteration", "ci90_half_width", "useful_utilization", "fragmentation",
                "context_switches", "blocking_events", "eq6", "eq12", "batch_means", "config"):
        assert key in obj, key
    assert obj["config"]["n"] == 4 and obj["config"]["sched"] == "local"
    p = run_cli("simulate", "barrier", "--set", "k=200")
    assert p.returncode == 0 and "time per iteration" in p.stdout


@pytest.mark.parametrize(
    ("args", "start"),
    [
        (["--set", "n=12", "P=4"], "parsched: error: n: a gang of 12 threads is larger"),
        (["--set", "tcs=50"], "parsched: error: tcs: "),
        (["--set", "grain=-0.5"], "parsched: error: grain: "),
        (["--set", "foo=1"], "parsched: error: foo: unknown key"),
        (["--config", "/nonexistent.toml"], "parsched: error: config: cannot read"),
        (["--set", "dist=empirical"], "parsched: error: samples: no samples"),
        (["--set", "dist=empirical", "samples=1,x"],
         "parsched: error: samples: \"x\" is not a number"),
        (["--set", "samples=@/nonexistent"], "parsched: error: samples: cannot read"),
    ],
)
def test_cli_bad_input_one_line_exit_2(args, start):
    p = run_cli("simulate", "barrier", *args)
    assert p.returncode == 2
    assert p.stdout == ""
    assert p.stderr.startswith(start) and p.stderr.count("\n") == 1


@needs_core
def test_empirical_compute_times(tmp_path):
    """Any distribution as a sample: numpy draws from a lognormal, here."""
    import numpy as np

    draws = np.random.default_rng(5).lognormal(mean=-1.0, sigma=0.8, size=500)
    cfg = BarrierConfig(n=4, l=1, k=20000, dist="empirical", samples=draws, barrier_cost=0.0)
    assert cfg.samples == tuple(float(x) for x in draws)
    # t_w from the sample: E[max of 4 draws] − mean, checked by brute force
    idx = np.random.default_rng(1).integers(0, len(draws), size=(200_000, 4))
    mc = draws[idx].max(axis=1).mean() - draws.mean()
    assert abs(cfg.t_w() - mc) < 0.01 * cfg.t_w() + 1e-3
    r = parsched.simulate_barrier(cfg)
    # dedicated processors: an iteration takes the slowest thread, t_p + t_w
    assert r.time_per_iteration == pytest.approx(cfg.t_p() + cfg.t_w(), rel=0.02)
    assert r.summary["iteration_max"] <= 4 * max(draws)
    # round trips: dict, TOML, KEY=VALUE and @FILE
    assert BarrierConfig.from_dict(cfg.to_dict()) == cfg
    f = tmp_path / "b.toml"
    f.write_text(cfg.to_toml())
    assert BarrierConfig.from_toml(f) == cfg
    s = tmp_path / "samples.txt"
    s.write_text("\n".join(repr(float(x)) for x in draws) + "\n")
    assert BarrierConfig(n=4).apply_overrides(["dist=empirical", f"samples=@{s}"]).samples \
        == cfg.samples
    p = run_cli("simulate", "barrier", "--set", "n=4", "l=1", "k=2000", "dist=empirical",
                f"samples=@{s}", "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["t_p"] == pytest.approx(float(draws.mean()) + 0.137)


@needs_core
def test_cli_bench_barrier():
    p = run_cli("bench", "barrier", "-k", "3000", "--json")
    assert p.returncode == 0, p.stderr
    runs = json.loads(p.stdout)["runs"]
    assert [r["sched"] for r in runs] == ["gang", "local"]
    assert all(r["iterations_per_second"] > 0 and r["gang_iterations_per_second"] > 0
               for r in runs)
    assert run_cli("bench", "--model", "barrier", "-k", "500").returncode == 0


# ------------------------------------------------------------- reproduce


def test_analysis_helpers():
    assert math.isclose(rg.crossover([0, 1, 2], [2.0, 1.5, 0.5]), 1.5)
    assert math.isnan(rg.crossover([0, 1], [2.0, 1.5]))
    assert math.isclose(rg.fit_exponent([1, 2, 4], [3, 12, 48]), 2.0)
    assert math.isclose(rg.harmonic([1.0, 3.0]), 1.5)
    lo, hi = rg.pooled_ci90([1.0, 1.1, 0.9, 1.05])
    assert lo < rg.harmonic([1.0, 1.1, 0.9, 1.05]) < hi
    assert rg.regime(0.1, 0.0) == "fine" and rg.regime(90, 20) == "coarse"
    assert rg.regime(20, 5) == "between"
    # eq. 13's residual refinement: (ℓ − 1 − 1/n) quanta instead of ℓ − 1
    assert math.isclose(rg.eq13_residual(0.0, 2, 3, tcs=0.0, alpha=0.0), 1.5 * 50)


def test_plan_follows_the_brief():
    plan = rg.build_plan(quick=False)
    assert {p["n"] for p in plan.grid} == {2, 4, 10}
    assert {p["l"] for p in plan.grid} == {1, 2, 3, 4}
    tps = sorted({p["tp"] for p in plan.grid})
    assert tps[0] <= 0.05 + 1e-9 and tps[-1] >= 200
    e2 = plan.exp[2]
    assert all(p["load"] == 3 and p["var"] == p["grain"] and p["n"] == 10 for p in e2)
    g, b = e2[1]["runs"]["gang_busy"][0], e2[1]["runs"]["block"][0]
    assert g.tcs == 0.2 and g.sched == "gang" and g.wait == "busy" and g.tq == 50
    assert math.isclose(b.tcs, 0.07 + 0.14 / 3) and b.sched == "local" and b.wait == "block"
    assert b.barrier_cost == 0.137 and math.isclose(b.grain, 0.00141 * e2[1]["grain"])
    assert all(p["n"] == 2 and p["grain"] == p["var"] == 100 for p in plan.exp[4])
    assert {p["load"] for p in plan.exp[3]} == {1, 2, 3, 4}
    e3 = plan.exp[3][0]["runs"]
    assert e3["block_compute"][0].competitors == "compute"
    assert e3["block_compute_priority"][0].wakeup == "priority"
    # Fig. 9: uniform compute where it reaches (t_w <= 9/11·t_p), exponential above it up
    # to (H_10 − 1)·t_p; the grid reaches beyond the eq. (16) line
    reach = sum(1.0 / i for i in range(1, 11)) - 1
    blocking_simulated = 0
    for row in plan.phase:
        tp, tw = row["tp"], row["tw"]
        assert bool(row["gang_busy"]) == (tw <= reach * tp + 1e-9)
        if row["gang_busy"]:
            c = row["local_block_same"][0]
            assert row["dist"] == c.dist == ("uniform" if tw <= 9 / 11 * tp + 1e-12
                                             else "exponential")
            assert math.isclose(c.t_p(), tp) and math.isclose(c.t_w(), tw, abs_tol=1e-12)
            assert (c.l, c.n, c.sched, c.wait) == (3, 10, "local", "block")
            blocking_simulated += fr.classify(tp, tw) == "blocking"
    assert blocking_simulated >= 5


@needs_core
def test_reproduce_gang_quick_pipeline(tmp_path):
    out = tmp_path / "gang"
    p = run_cli("reproduce", "gang", "--quick", "--out", str(out), "--workers", "2", "--json",
                timeout=120)
    assert p.returncode == 0, p.stderr
    head = json.loads(p.stdout)
    names = set(os.listdir(out))
    for f in ("summary.md", "equations.csv", "equations_summary.csv", "exp1.csv", "exp2.csv",
              "exp3.csv", "exp4.csv", "fig9.csv", "headlines.csv", "all_runs.csv", "twophase.csv",
              "equations.png", "experiments.png", "fig9.png", "fig9_agreement.csv",
              "fig9_loads.csv"):
        assert f in names, f
    assert not [n for n in names if n.startswith(".parsched-")]
    md = (out / "summary.md").read_text()
    assert "in_regime" in md and "0.8" in md and "Figure 9" in md
    import pandas as pd

    eqs = pd.read_csv(out / "equations.csv")
    assert {"equation", "in_regime", "rel_error", "within_5pct"} <= set(eqs.columns)
    eq6 = eqs[(eqs["equation"] == "eq6") & eqs["in_regime"]]
    assert eq6["within_5pct"].all()
    # experiment 2: the simulated crossover and the 0.16 ms ratio are near the paper's
    x = head["exp2_crossover_ms"]
    assert 0.6 < x["simulation"] < 1.1 and math.isclose(x["formula"], 0.853, abs_tol=1e-3)
    r = head["exp2_ratio_at_0.16ms"]
    assert 1.7 < r["simulation"] < 2.3
    assert head["exp4_exponents"]["uncoord_busy"] > 1.4  # quadratic-ish (few seeds in --quick)
    assert abs(head["exp4_exponents"]["gang_busy"] - 1) < 0.1
    by_region = head["fig9_by_region"]
    assert set(by_region) == {"gang-busy", "neither", "blocking", "all"}
    assert by_region["blocking"]["simulated"] >= 1  # the blocking region is simulated
    fig9 = pd.read_csv(out / "fig9.csv")
    assert set(fig9["dist"].dropna()) == {"uniform", "exponential"}
    assert "parsched_rel_error" in eqs.columns and "refined" not in eqs.columns
    eq12 = eqs[eqs["equation"] == "eq12"]
    assert not eq12[eq12["l"] == 1]["in_regime"].any()  # ℓ = 1: nobody fills the waits
    # the independent reference model runs at every in-regime point of eqs. 6u, 10,
    # 12, 13 (one seed in --quick) and agrees with the simulation there
    ref = eqs[eqs["equation"].isin(["eq6u", "eq10", "eq12", "eq13"]) & eqs["in_regime"]
              & (eqs["l"] >= 2)]
    assert len(ref) and ref["reference"].notna().all()
    assert (ref["reference_vs_sim"].abs() < 0.03).all(), ref["reference_vs_sim"].abs().max()
    out8 = eqs[(eqs["equation"] == "eq8") & eqs["reference"].notna()]
    assert len(out8) and not out8["in_regime"].any() and out8["reference_ks_p"].notna().all()
    assert "Independent check" in md


# ------------------------------------------------- one model, one eq. (8)


@needs_core
def test_cli_prints_the_eq8_reproduce_gang_uses(capsys):
    """``parsched simulate barrier``, ``parsched reproduce gang`` and the run's
    own summary give the same model values for the same config. At coarse grain
    eq. (6) exceeds the cap (τq+τcs)ℓ: eq. (8) is then eq. (6), not the cap,
    everywhere (one implementation, ``feitelson_rudolph.model_values``)."""
    from parsched.cli import main

    plan = rg.build_plan(quick=True)
    row = next(r for r in plan.grid if (r["n"], r["l"]) == (10, 3) and r["tp"] == 200.0)
    cfg = row["local_busy"][0].with_(k=20)
    expected = fr.t_uncoord_busy(row["tp"], row["tw"], 10, 3, rg.TQ, rg.TCS_GANG, grain="auto")
    cap = (rg.TQ + rg.TCS_GANG) * 3
    assert expected > cap  # the point where the two eq. (8)s part
    sets = [f"{k}={v}" for k, v in cfg.scalars().items() if v is not None]
    assert main(["simulate", "barrier", "--json", "--set", *sets]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert obj["eq8"] == expected == fr.barrier_model(cfg)["eq8"]
    assert (obj["t_p"], obj["t_w"]) == (row["tp"], row["tw"])
    assert obj["eq6"] == fr.t_gang_busy(row["tp"], row["tw"], 10, 3, rg.TQ, rg.TCS_GANG)
    summary = parsched.simulate_barrier(cfg).summary
    assert summary["eq8"] == expected != pytest.approx(cap)
    assert {k: summary[k] for k in ("t_p", "t_w", "eq6", "eq12", "eq13")} == {
        k: fr.barrier_model(cfg)[k] for k in ("t_p", "t_w", "eq6", "eq12", "eq13")}


@needs_core
def test_defaults_are_the_cores_and_the_docs_show_them():
    from parsched import _core
    from parsched.config import BatchConfig

    for cls, model in ((PoolsConfig, "pools"), (BarrierConfig, "barrier"),
                       (BatchConfig, "batch")):
        core = _core.config_values(model)
        ours = {k: v for k, v in cls().to_dict().items() if k in core}
        assert ours == {k: list(v) if isinstance(v, tuple) else v for k, v in core.items()}
        # the core reads back what Python passes (no key is lost or renamed)
        changed = {"pools": {"G": 0.25, "W": 0.01}, "barrier": {"n": 4, "tcs": 0.3},
                   "batch": {"mpl": 2, "procs_rule": "requested"}}[model]
        assert {k: _core.config_values(model, changed)[k] for k in changed} == changed
    assert BarrierConfig.field_doc("n").endswith("(default 10)")
    assert BatchConfig.field_doc("policy").endswith("(default easy)")
    assert PoolsConfig.field_doc("W").endswith("(default 0.005)")


@needs_core
def test_python_configs_raise_the_cores_validation_errors():
    from parsched import _core
    from parsched.config import BatchConfig

    cases = ((PoolsConfig, "pools", {"pool_size": 7}), (PoolsConfig, "pools", {"D": 40.0}),
             (BarrierConfig, "barrier", {"n": 12, "P": 10}),
             (BarrierConfig, "barrier", {"tcs": 60.0}),
             (BatchConfig, "batch", {"load_factor": 0.0}), (BatchConfig, "batch", {"mpl": 0}))
    for cls, model, bad in cases:
        with pytest.raises(_core.ConfigError) as core_err:
            _core.validate_config(model, bad)
        with pytest.raises(ConfigError) as py_err:
            cls(**bad)
        assert str(py_err.value) == str(core_err.value)
        assert py_err.value.field == core_err.value.field and py_err.value.field in bad
        assert py_err.value.allowed == core_err.value.allowed != ""
    _core.validate_config("barrier", {"n": 4})  # valid: returns None
    with pytest.raises(_core.ConfigError, match=r"^model: "):
        _core.validate_config("nope", {})
