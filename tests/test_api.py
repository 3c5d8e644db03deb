"""simulate / sweep / Python policies against the compiled core."""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing

import pandas as pd
import pytest

import parsched
from conftest import SMALL, needs_core
from parsched import ConfigError, PolicyError, PoolsConfig
from parsched.sim.api import JOB_COLUMNS, SUMMARY_KEYS

pytestmark = needs_core

TIMING = ["wall_seconds"]


def test_simulate_returns_summary_and_jobs(small):
    res = parsched.simulate(small)
    for k in SUMMARY_KEYS:
        assert k in res.summary, k
    s = res.summary
    assert s["jobs"] == (SMALL["jobs"] - SMALL["warmup"]) * SMALL["reps"]
    assert s["reps"] == SMALL["reps"] and len(s["rep_means"]) == SMALL["reps"]
    assert 127 < s["mean_response_time"] < 2000
    assert 1 <= s["actual_parallelism"] <= small.D * 3
    assert 0 < s["utilization"] < 1
    assert isinstance(res.jobs, pd.DataFrame)
    assert list(res.jobs.columns) == list(JOB_COLUMNS)
    assert len(res.jobs) == SMALL["jobs"] * SMALL["reps"]
    assert res.jobs["measured"].sum() == s["jobs"]
    assert not res.jobs[res.jobs["job"] < SMALL["warmup"]]["measured"].any()
    j = res.jobs[res.jobs["measured"]]
    assert (j["response"] > 0).all() and (j["a"] <= j["d"]).all() and (j["a"] >= 1).all()
    assert abs(j["response"].mean() - s["mean_response_time"]) < 1e-6 * s["mean_response_time"]
    frame = res.to_frame()
    assert len(frame) == 1 and frame["mean_response_time"][0] == s["mean_response_time"]
    assert frame["jobs"][0] == small.jobs and frame["measured_jobs"][0] == s["jobs"]


def test_records_false_gives_empty_jobs(small):
    res = parsched.simulate(small, records=False)
    assert len(res.jobs) == 0 and list(res.jobs.columns) == list(JOB_COLUMNS)


def test_workers_do_not_change_results(small):
    a = parsched.simulate(small.with_(reps=3), workers=1)
    b = parsched.simulate(small.with_(reps=3), workers=3)
    assert {k: v for k, v in a.summary.items() if k not in TIMING} == {
        k: v for k, v in b.summary.items() if k not in TIMING
    }
    assert a.jobs.equals(b.jobs)


def test_seed_changes_results(small):
    a = parsched.simulate(small, records=False).summary["mean_response_time"]
    b = parsched.simulate(small.with_(seed=2), records=False).summary["mean_response_time"]
    assert a != b


def test_rust_config_errors_are_one_line_value_errors():
    from parsched import _core

    with pytest.raises(_core.ConfigError) as ei:
        _core.simulate_pools({"bogus": 1})
    assert isinstance(ei.value, ValueError)
    msg = str(ei.value)
    assert msg.startswith("bogus: unknown key; allowed: ") and "\n" not in msg
    with pytest.raises(_core.ConfigError, match=r"^pool_size: "):
        _core.simulate_pools({"pool_size": 7})
    # every Python field is a key the core accepts
    assert set(PoolsConfig.field_names()) - {"arrivals"} <= set(_core.keys("pools")) | {"arrivals"}


def test_python_and_rust_validation_agree_on_field():
    from parsched import _core

    for bad in ({"L": 1.0}, {"G": 2.0}, {"W": -1.0}, {"D": 40.0}, {"pool_size": 7}, {"T": 0.0}):
        (field,) = bad
        with pytest.raises(_core.ConfigError, match=rf"^{field}: "):
            _core.simulate_pools(bad, records=False)
        with pytest.raises(ConfigError, match=rf"^{field}: "):
            PoolsConfig(**bad)


def test_arrivals_run(small):
    arr = parsched.Arrivals((0.0, 0.0, 5.0, 400.0), (4, 60, 1, 20))
    res = parsched.simulate(small.with_(warmup=0, reps=1, arrivals=arr))
    assert res.summary["jobs"] == 4
    assert list(res.jobs["d"]) == [4, 60, 1, 20]


# ------------------------------------------------------------------- sweep


def _small_configs() -> list[PoolsConfig]:
    base = PoolsConfig(**SMALL)
    return [base.with_(pool_size=p, D=D) for D in (5.0, 20.0) for p in (10, 30, 60)]


def _strip(df: pd.DataFrame) -> pd.DataFrame:
    return df.drop(columns=TIMING)


def test_sweep_identical_for_one_and_two_processes():
    configs = _small_configs()
    ctx = multiprocessing.get_context("spawn")
    with cf.ProcessPoolExecutor(1, mp_context=ctx) as ex1:
        one = parsched.sweep(configs, executor=ex1, progress=False)
    with cf.ProcessPoolExecutor(2, mp_context=ctx) as ex2:
        two = parsched.sweep(configs, executor=ex2, progress=False)
    pd.testing.assert_frame_equal(_strip(one), _strip(two))
    assert list(one["pool_size"]) == [c.pool_size for c in configs]
    with cf.ThreadPoolExecutor(2) as ex3:
        three = parsched.sweep(configs, executor=ex3, progress=False)
    pd.testing.assert_frame_equal(_strip(one), _strip(three))


def test_sweep_default_executor_and_simulate_agree():
    configs = _small_configs()[:2]
    df = parsched.sweep(configs, progress=False)
    for row, c in zip(df.itertuples(), configs, strict=True):
        assert row.mean_response_time == parsched.simulate(c, records=False).summary[
            "mean_response_time"]


class CountingExecutor(cf.ThreadPoolExecutor):
    def __init__(self):
        super().__init__(max_workers=2)
        self.submitted = 0

    def submit(self, *a, **kw):
        self.submitted += 1
        return super().submit(*a, **kw)


def test_sweep_dedupes_and_keeps_input_order():
    c = _small_configs()
    configs = [c[2], c[0], c[2], c[1], c[0]]
    with CountingExecutor() as ex:
        df = parsched.sweep(configs, executor=ex, progress=False)
        assert ex.submitted == 3
    assert len(df) == 5
    assert list(df["pool_size"]) == [60, 10, 60, 30, 10]
    pd.testing.assert_frame_equal(df.iloc[[0]].reset_index(drop=True),
                                  df.iloc[[2]].reset_index(drop=True))
    for col in ("P", "L", "D", "W", "mean_response_time", "ci90_half_width",
                "actual_parallelism", "utilization", "measured_jobs", "events"):
        assert col in df.columns


def test_sweep_empty():
    assert len(parsched.sweep([], progress=False)) == 0


def test_sweep_rejects_non_configs():
    with pytest.raises(TypeError):
        parsched.sweep([{"L": 0.5}], progress=False)  # type: ignore[list-item]


# ---------------------------------------------------------------- policies


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"spanning": "unlimited", "parallelism": "unrestricted", "pool_size": 5},
        {"spanning": "none", "pool_size": 10},
        {"tie_break": "most_idle", "pool_size": 10, "F": 1.5, "g_rounding": "ceil"},
    ],
)
def test_python_port_of_zhou_brecht_matches_builtin(small, changes):
    cfg = small.with_(**changes)
    builtin = parsched.simulate(cfg)
    policy = parsched.ZhouBrechtPolicy.from_config(cfg)
    python = parsched.simulate(cfg, policy=policy)
    assert policy.calls["home_pool"] == cfg.jobs * cfg.reps
    assert builtin.summary["mean_response_time"] == python.summary["mean_response_time"]
    assert builtin.jobs.equals(python.jobs)


def test_other_python_policy_runs(small):
    res = parsched.simulate(small, policy=parsched.LeastLoadedSpread())
    assert (res.jobs["a"] == res.jobs["d"]).all()  # a = d always

    class HomeOnly:
        def home_pool(self, pools):
            return min(range(len(pools)), key=lambda i: (pools[i]["load"], i))

        def place(self, request, pools):
            home = request["home"]
            return [(home, max(1, min(request["desired"], pools[home]["idle"])))]

    res = parsched.simulate(small, policy=HomeOnly())
    assert (res.jobs["pools_used"] == 1).all()


class BadPool:
    def home_pool(self, pools):
        return len(pools)

    def place(self, request, pools):
        return [(0, 1)]


class TooMany:
    def home_pool(self, pools):
        return 0

    def place(self, request, pools):
        return [(0, request["desired"] + 1)]


class Raises:
    def home_pool(self, pools):
        return 0

    def place(self, request, pools):
        raise ZeroDivisionError("boom")


class WrongType:
    def home_pool(self, pools):
        return "zero"

    def place(self, request, pools):
        return []


@pytest.mark.parametrize("policy", [BadPool(), TooMany(), Raises(), WrongType()])
def test_bad_policies_raise_policy_error(small, policy):
    with pytest.raises(PolicyError):
        parsched.simulate(small, policy=policy)


def test_workers_must_be_positive(small):
    with pytest.raises(ConfigError, match=r"^workers: "):
        parsched.simulate(small, workers=0)


def test_core_stub_declares_every_public_name():
    """python/parsched/_core.pyi covers the compiled module (no drift)."""
    import ast
    import pathlib

    from parsched import _core

    stub = pathlib.Path(parsched.__file__).with_name("_core.pyi")
    tree = ast.parse(stub.read_text())
    declared = {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)}
    declared |= {t.id for n in tree.body if isinstance(n, ast.AnnAssign)
                 for t in [n.target] if isinstance(t, ast.Name)}
    public = {name for name in dir(_core) if not name.startswith("_")}
    assert public - declared == set()


def test_gather_returns_results_by_key_and_cancels_on_error():
    from parsched.sim.api import gather

    with cf.ThreadPoolExecutor(max_workers=1) as ex:
        futures = {ex.submit(pow, 2, n): n for n in range(5)}
        assert gather(futures) == {n: 2 ** n for n in range(5)}

    pending: cf.Future = cf.Future()  # never started: must be cancelled
    failed: cf.Future = cf.Future()
    failed.set_exception(ValueError("boom"))
    with pytest.raises(ValueError, match="boom"):
        gather({failed: "a", pending: "b"})
    assert pending.cancelled()


def test_read_toml_names_the_field_and_the_file(tmp_path):
    from parsched.config.base import read_toml

    good = tmp_path / "good.toml"
    good.write_text("a = 1\n")
    assert read_toml(good, "config") == {"a": 1}
    with pytest.raises(ConfigError, match=r"^jobs file: cannot read .*it does not exist"):
        read_toml(tmp_path / "missing.toml", "jobs file")
    bad = tmp_path / "bad.toml"
    bad.write_text("a = = 1\n")
    with pytest.raises(ConfigError) as info:
        read_toml(bad, "config")
    assert str(info.value).startswith(f"config: {bad}: invalid TOML")
    with pytest.raises(ConfigError) as info:
        read_toml(bad, str(bad))
    assert str(info.value).startswith(f"{bad}: invalid TOML")
