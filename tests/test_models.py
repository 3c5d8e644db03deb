"""One API and one command family for every model: ``parsched.simulate(cfg)``,
``parsched.sweep``, ``simulate MODEL --config --set --json``, ``bench MODEL``,
and the glossary of their summary keys (tiny configurations throughout)."""

from __future__ import annotations

import json
import math
import os
import re

import pandas as pd
import pytest

import parsched
from conftest import one_error_line, run_cli
from parsched.config import (
    BarrierConfig,
    BatchConfig,
    CoschedConfig,
    FcsConfig,
    FcsFigureConfig,
    PoolsConfig,
    RegionsConfig,
)
from parsched.sim.models import MODELS
from parsched.sim.result import SimResult

#: A tiny configuration of every model (each runs in well under a second).
TINY = {
    "pools": PoolsConfig(jobs=200, warmup=20, reps=2),
    "barrier": BarrierConfig(k=200),
    "batch": BatchConfig(workload="lublin", workload_jobs=150, procs=16),
    "cosched": CoschedConfig(scale=0.01),
    "fcs": FcsConfig(scale=0.01),
    "fcs_figure": FcsFigureConfig(scale=0.01, programs=2, stressors=1),
    "regions": RegionsConfig(accesses=200_000),
}

#: The key each model's replications vary, and a second value for it.
SEED = {m: (MODELS[m].seed_key, 7) for m in TINY}

#: The old entry points, which stay as aliases.
ALIASES = {
    "barrier": parsched.simulate_barrier,
    "batch": parsched.simulate_batch,
    "cosched": parsched.simulate_cosched,
    "fcs": parsched.simulate_fcs,
    "regions": parsched.simulate_regions,
}


def _no_wall(d):
    """A result's dict without what depends on the host's speed."""
    if isinstance(d, dict):
        return {k: _no_wall(v) for k, v in d.items() if k != "wall_seconds"}
    if isinstance(d, list):
        return [_no_wall(v) for v in d]
    return d


@pytest.fixture(scope="module")
def results():
    return {m: parsched.simulate(c) for m, c in TINY.items()}


def test_every_model_is_registered_and_has_a_tiny_config():
    assert set(TINY) == set(MODELS)
    for m, cfg in TINY.items():
        assert MODELS[m].config is type(cfg) and m == cfg.MODEL


@pytest.mark.parametrize("model", sorted(TINY))
def test_simulate_returns_the_one_result_shape(model, results):
    res = results[model]
    assert isinstance(res, SimResult)
    summary = res.summary
    assert isinstance(summary, dict) and summary
    assert set(MODELS[model].summary_keys) <= set(summary)
    for k, v in summary.items():
        if k != "rep_means":  # pools' per-replication means (a list)
            assert v is None or isinstance(v, (bool, int, float, str)), (k, v)
    frames = res.frames()
    assert list(frames) == list(type(res).FRAMES) and frames
    for name, df in frames.items():
        assert isinstance(df, pd.DataFrame), name
    d = res.to_dict()
    assert json.loads(res.to_json()) == d
    assert isinstance(d["config"], dict) and d["config"]
    for k, v in summary.items():  # the summary is at the top level, JSON-safe
        if isinstance(v, float) and not math.isfinite(v):
            assert d[k] is None
        elif k in d and not isinstance(v, list):
            assert d[k] == v or model == "barrier"  # barrier: eqs. as reproduce gang has them


@pytest.mark.parametrize("model", sorted(ALIASES))
def test_old_entry_points_give_the_same_result(model, results):
    cfg = TINY[model]
    old = ALIASES[model](cfg) if model != "fcs" else parsched.simulate_fcs(cfg.to_dict())
    assert type(old) is type(results[model])
    assert _no_wall(old.to_dict()) == _no_wall(results[model].to_dict())


def test_simulate_refuses_what_is_not_a_config():
    with pytest.raises(TypeError, match="FcsConfig"):
        parsched.simulate({"scheme": "fcs"})  # type: ignore[arg-type]


def test_frames_hold_the_records(results):
    assert len(results["pools"].frames()["jobs"]) == 2 * 200
    assert len(results["batch"].frames()["jobs"]) == results["batch"].summary["jobs"]
    assert len(results["cosched"].frames()["runs"]) == TINY["cosched"].reps
    assert len(results["fcs"].frames()["jobs"]) == len(TINY["fcs"].jobs)
    fig = results["fcs_figure"].frames()["runs"]
    assert len(fig) == 2 * 2 * 2  # schedulers × k = 1..2 × s = 0..1
    assert len(results["regions"].frames()["caches"]) == 2


def test_sweep_takes_every_model(results):
    swept = [m for m in TINY if MODELS[m].summary is not None]
    assert set(swept) == set(MODELS)
    df = parsched.sweep([TINY[m] for m in swept], progress=False)
    assert list(df["model"]) == swept
    for i, m in enumerate(swept):
        head = MODELS[m].headline
        if head is not None:
            assert df[head].iloc[i] == pytest.approx(results[m].summary[head], nan_ok=True)
    # the figure's row keeps its whole grid, one column per point
    fig = results["fcs_figure"].frames()["runs"]
    row = df.iloc[swept.index("fcs_figure")]
    for _, p in fig.iterrows():
        assert row[f"runtime_s_{p['scheduler']}_k{p['k']}_s{p['s']}"] == p["runtime_s"]
    with pytest.raises(TypeError, match="sweep takes"):
        parsched.sweep([{"scheme": "fcs"}], progress=False)


def test_a_spec_sweeps_fcs(tmp_path):
    spec = tmp_path / "spec.toml"
    spec.write_text('model = "fcs"\n[base]\nscale = 0.01\n[grid]\nscheme = ["gang", "fcs"]\n')
    r = run_cli("sweep", str(spec), "--out", str(tmp_path / "out"), "--json")
    assert r.returncode == 0, r.stderr
    df = pd.read_parquet(tmp_path / "out" / "results.parquet")
    assert list(df["scheme"]) == ["gang", "fcs"]
    one = parsched.simulate(TINY["fcs"].with_(scheme="gang"))
    assert df["makespan"].iloc[0] == one.summary["makespan"]


@pytest.mark.parametrize("model", sorted(TINY))
def test_cli_simulate_config_set_json(model, tmp_path):
    cfg = TINY[model]
    path = tmp_path / f"{model}.toml"
    path.write_text(cfg.to_toml())
    key, value = SEED[model]
    r = run_cli("simulate", model, "--config", str(path), "--set", f"{key}={value}", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    want = parsched.simulate(cfg.with_(**{key: value})).to_dict()
    out.pop("outputs", None)
    assert _no_wall(out) == _no_wall(want)


@pytest.mark.parametrize("model", ["fcs", "fcs_figure", "regions"])
def test_cli_bad_key_and_value_one_line(model, tmp_path):
    r = run_cli("simulate", model, "--set", "no_such_key=1")
    assert r.returncode == 2
    assert one_error_line(r.stderr).startswith("no_such_key: unknown key")
    bad = tmp_path / "bad.toml"
    bad.write_text(f"[{model}]\nseed = -1\n")
    r = run_cli("simulate", model, "--config", str(bad))
    assert r.returncode == 2
    assert one_error_line(r.stderr).startswith("seed:")


BENCH_ARGS = {
    "pools": ["--jobs", "500"],
    "barrier": ["-k", "500", "--repeat", "1"],
    "batch": ["--lublin", "200", "--procs", "16", "--repeat", "1"],
    "cosched": ["--scale", "0.01", "--repeat", "1"],
    "fcs": ["--scale", "0.01", "--repeat", "1"],
    "fcs_figure": ["--scale", "0.01", "--repeat", "1"],
    "regions": ["--repeat", "1"],
    # not a model: the Gymnasium environment on the batch machine
    "gym": ["--seconds", "0.1"],
}


def test_bench_covers_every_model():
    from parsched.cli.bench import BENCHES

    assert set(BENCH_ARGS) == set(BENCHES) == set(MODELS) | {"gym"}


@pytest.mark.parametrize("model", sorted(BENCH_ARGS))
def test_bench_every_model(model):
    r = run_cli("bench", model, *BENCH_ARGS[model], "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    rows = out.get("runs", [out])
    rates = [row.get("events_per_second") or row.get("runs_per_second")
             or row.get("jobs_per_second") or row.get("steps_per_second") for row in rows]
    assert rows and all(x is not None and x > 0 for x in rates), out


def _glossary() -> dict[str, set[str]]:
    """Every key docs/glossary.md defines, with the models its entry names."""
    path = os.path.join(os.path.dirname(__file__), os.pardir, "docs", "glossary.md")
    with open(path, encoding="utf-8") as fh:
        text = fh.read().split("\n## Keys\n", 1)[1]
    out: dict[str, set[str]] = {}
    for entry in text.split("\n### ")[1:]:
        head, _, body = entry.partition("\n")
        m = re.search(r"Models: ([a-z_, ]+)\.", " ".join(body.split()))
        assert m, f"no Models: line in the entry {head}"
        named = m.group(1)
        if named.startswith("every model but "):  # the others of the core's table
            but = set(re.split(r", | and ", named.removeprefix("every model but ")))
            assert but <= set(MODELS), (head, but)
            models = set(MODELS) - but
        else:
            models = {x.strip() for x in named.split(",")}
        for key in re.findall(r"`([a-z0-9_]+)`", head):
            out[key] = models
    return out


def test_every_summary_key_is_in_the_glossary(results):
    glossary = _glossary()
    reported: dict[str, set[str]] = {}
    for m, res in results.items():
        for key in set(res.summary) | set(MODELS[m].keys):
            reported.setdefault(key, set()).add(m)
    missing = sorted(set(reported) - set(glossary))
    assert not missing, f"summary keys without a glossary entry: {missing}"
    unused = sorted(set(glossary) - set(reported))
    assert not unused, f"glossary entries no model reports: {unused}"
    wrong = {k: (sorted(glossary[k]), sorted(v)) for k, v in reported.items()
             if glossary[k] != v}
    assert not wrong, f"entries naming other models than report them: {wrong}"


def test_slowdown_means_the_ratio_everywhere(results):
    # the batch jobs' slowdown is response / run (>= 1); cosched reports no
    # "slowdown" any more (its relative excess over the ideal is over_ideal)
    assert results["batch"].summary["avg_slowdown"] >= 1
    assert "slowdown" not in results["cosched"].summary
    co = results["cosched"]
    assert co.summary["over_ideal"] == pytest.approx(
        (co.summary["completion_time"] - co.summary["ideal"]) / co.summary["ideal"])


@pytest.mark.parametrize("cls", [FcsConfig, FcsFigureConfig, RegionsConfig,
                                 parsched.LublinConfig])
def test_new_config_classes_have_the_config_interface(cls, tmp_path):
    from conftest import assert_toml_round_trip

    base = cls()
    assert base == cls() and hash(base) == hash(cls())  # frozen, hashable
    changed = base.apply_overrides(["seed=5"])
    assert changed.seed == 5 and changed == base.with_(seed=5) != base
    assert_toml_round_trip(changed, table=True)
    assert_toml_round_trip(changed, table=False)
    with pytest.raises(parsched.ConfigError) as e:
        base.with_(seed=-1)
    assert e.value.field == "seed"
    with pytest.raises(parsched.ConfigError, match="unknown key"):
        base.with_(no_such_key=1)


def test_fcs_jobs_are_one_value_whatever_their_spelling():
    as_text = FcsConfig(jobs="1,2;1,1")
    assert as_text == FcsConfig(jobs=[[1, 2], [1, 1]]) == FcsConfig().apply_overrides(
        ["jobs=1,2;1,1"])
    assert as_text.jobs == ((1.0, 2.0), (1.0, 1.0))
    with pytest.raises(parsched.ConfigError) as e:
        FcsConfig(scheme="nope")
    assert e.value.field == "scheme"
