"""Every model of the core's table reaches everything that lists
models (the command line's help, Python, the generated docs, sweeps and
benchmarks), and a model with no Python of its own runs through the generic
front end (``_core.simulate``) exactly as through its own."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import pathlib
import pickle

import pytest

import parsched
import parsched.config
from parsched import _core
from parsched.cli import build_parser, main
from parsched.cli.bench import BENCHES
from parsched.config.table import generic_class, row, rows
from parsched.sim import models as registry
from parsched.sim.generic import GenericResult, simulate_generic
from parsched.sim.sweep_spec import spec_from_dict

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _help(*argv: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        main([*argv, "--help"])
    return out.getvalue()


def test_the_table_is_the_cores_and_names_each_model_once():
    names = [r["name"] for r in rows()]
    assert len(names) == len(set(names)) and names[0] == "pools"
    assert {r["kind"] for r in rows()} == {"simulated", "generator"}
    with pytest.raises(ValueError, match="no model 'nope'; models: pools, "):
        row("nope")
    with pytest.raises(_core.ConfigError, match=r"^model: \"nope\" is not a model; allowed: "):
        _core.keys("nope")


@pytest.mark.parametrize("r", rows(), ids=lambda r: r["name"])
def test_every_model_appears_everywhere_models_are_listed(r):
    name = r["name"]
    # Python: its class, its keys the core's, its name its MODEL
    cls = getattr(parsched.config, r["class"])
    assert name == cls.MODEL and list(cls.field_names())[:len(_core.keys(name))] != []
    assert set(_core.keys(name)) <= set(cls.field_names())
    # the command line: listed in its command's help, its keys in its own help
    group = "simulate" if r["kind"] == "simulated" else "generate"
    assert f"    {name} " in _help(group) or f"    {name}\n" in _help(group)
    own = _help(group, name)
    assert all(k in own for k in _core.keys(name)), name
    # the generated docs: its key table, its page in the site's nav
    toml_doc = (ROOT / "docs/formats/config-toml.md").read_text()
    assert f"<!-- BEGIN schema table: {name} -->" in toml_doc
    nav = (ROOT / "mkdocs.yml").read_text()
    assert f"- {r['page']['nav']}: {r['page']['path']}" in nav
    if r["kind"] == "simulated":
        # sweeps and benchmarks
        assert name in registry.MODELS and name in BENCHES
        assert r["headline"] is None or r["headline"] in registry.MODELS[name].metrics
        with pytest.raises(parsched.ConfigError) as e:
            spec_from_dict({"model": "nope", "grid": {"seed": [1]}})
        assert name in e.value.allowed.split(", ")


def test_a_model_without_a_front_end_runs_through_the_generic_one(monkeypatch):
    """Regions as if it had no Python of its own: its class built from its
    schema alone, run, swept (the runner pickles) and simulated from the
    command line by the generic front end, with its own front end's summary."""
    cfg = parsched.RegionsConfig()
    own = parsched.simulate(cfg)
    generic = simulate_generic(cfg)
    assert isinstance(generic, GenericResult)
    assert generic.summary == {k: own.summary[k] for k in generic.summary}
    assert list(generic.summary) == row("regions")["summary_keys"]
    caches = generic.frames()["standard.caches"]
    assert list(caches["cache"]) == [c["cache"] for c in own.standard["caches"]]

    cls = generic_class("regions")
    assert cls is not parsched.RegionsConfig and cls().to_dict() == cfg.to_dict()
    assert cls(wss_mb=6).wss_mb == 6
    with pytest.raises(parsched.ConfigError, match=r"^wss_mb: "):
        cls(wss_mb=-1)

    monkeypatch.delitem(registry._FRONT_ENDS, "regions")
    m = registry._model(row("regions"))
    assert m.run(cfg).summary == generic.summary
    runner = pickle.loads(pickle.dumps(m.runner()))
    assert runner(cfg.to_dict()) == generic.summary

    from parsched.cli.simulate import cmd_simulate_generic

    out = io.StringIO()
    args = argparse.Namespace(model="regions", config=None, set=["wss_mb=6"], json=True,
                              workers=1)
    with contextlib.redirect_stdout(out):
        assert cmd_simulate_generic(args) == 0
    d = json.loads(out.getvalue())
    assert d["config"]["wss_mb"] == 6
    assert d["normalized_performance"] == simulate_generic(
        cfg.with_(wss_mb=6)).summary["normalized_performance"]


def test_the_generic_run_refuses_a_model_without_one():
    assert not row("batch")["run"] and not row("lublin")["run"]
    with pytest.raises(_core.ConfigError, match=r"^model: batch has no generic run; allowed: "):
        _core.simulate("batch", {})
    # its error names a bad key as every model's does
    with pytest.raises(_core.ConfigError, match=r"^wss_mb: "):
        _core.simulate("regions", {"wss_mb": -1.0})


def test_the_parser_lists_the_tables_models_in_order():
    sub = next(a for a in build_parser()._subparsers._group_actions)
    simulate = sub.choices["simulate"]
    models = next(a for a in simulate._subparsers._group_actions).choices
    assert list(models) == [r["name"] for r in rows("simulated")]
