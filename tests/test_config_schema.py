"""Every model's keys come from one schema, declared in Rust.

For every model converted to a schema (``parsched._core.schema(model)``),
each key is accepted by the Python config class, by ``parsched simulate
MODEL --set`` and by a TOML file with the same range and choices, and a
value outside gives the same one-line error from all three. The generated
key tables and stubs (``tools/gen_config_docs.py``) are current.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import math
import pathlib

import pytest

import parsched
import parsched.config
from parsched import _core
from parsched.cli import main
from parsched.config.table import rows
from parsched.errors import ConfigError

ROOT = pathlib.Path(__file__).resolve().parent.parent

#: model -> (config class, the command taking its --set): every row of the
#: core's table of models
MODELS = {
    r["name"]: (getattr(parsched.config, r["class"]),
                ["simulate", r["name"]] if r["kind"] == "simulated"
                else ["generate", r["name"], "-o", "unused.swf"])
    for r in rows()
}


def _tool():
    spec = importlib.util.spec_from_file_location("gen_config_docs",
                                                  ROOT / "tools" / "gen_config_docs.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_generated_tables_and_stubs_are_current():
    tool = _tool()
    stale = [str(p.relative_to(ROOT)) for p, text in tool.generated().items()
             if p.read_text() != text]
    assert stale == [], f"run tools/gen_config_docs.py: {stale}"
    assert set(tool._stubs()) == set(MODELS)
    # the site's nav has every model's page
    nav = (ROOT / "mkdocs.yml").read_text()
    for r in rows():
        assert f"- {r['page']['nav']}: {r['page']['path']}" in nav, r["name"]


def test_every_schema_of_the_core_is_documented():
    tool = _tool()
    doc = (ROOT / "docs" / "formats" / "config-toml.md").read_text()
    for model in [*tool._stubs(), *tool.TABLE_ONLY]:
        assert f"<!-- BEGIN schema table: {model} -->" in doc, model
        assert _core.schema(model), model


def test_doc_table_lists_every_key_with_its_default():
    doc = (ROOT / "docs" / "formats" / "config-toml.md").read_text()
    for model in MODELS:
        for k in _core.schema(model):
            assert f"| `{k['key']}` = `" in doc, (model, k["key"])


def _text(v) -> str:
    """``v`` as ``--set KEY=VALUE`` text."""
    if isinstance(v, bool):
        return "true" if v else "false"
    return repr(v) if isinstance(v, float) else str(v)


def _toml(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return json.dumps(v)
    return repr(v) if isinstance(v, float) else str(v)


def _probes(info):
    """(value, inside) pairs: the ends of the key's range and just outside
    them, every choice and a name that is not one."""
    kind = info["type"]
    if kind == "choice":
        return [(c, True) for c in info["choices"]] + [("bogus", False)]
    if kind == "bool":
        return [(True, True), (False, True), ("maybe", False)]
    if kind == "int":
        lo = info["min"]
        return [(lo, True), (lo - 1, False)]
    if kind == "float":
        out = []
        for end, step in ((info["min"], -1.0), (info["max"], 1.0)):
            if end is not None:
                x = float(end["value"])
                out += [(x, end["closed"]), (x + step, False)]
        return out
    return []


def _python(cls, key, v):
    try:
        return ("ok", getattr(cls(**{key: v}), key))
    except ConfigError as e:
        return ("error", str(e))


def _cli_set(cls, sub, key, v):
    """The outcome of ``--set KEY=VALUE``: an accepted value is parsed as
    the command parses it (without running the simulation); an
    error is the command's own one line and exit status 2."""
    try:
        cfg = cls().apply_overrides([f"{key}={_text(v)}"])
    except ConfigError:
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = main([*sub, "--set", f"{key}={_text(v)}"])
        lines = err.getvalue().strip().splitlines()
        assert code == 2 and len(lines) == 1, (code, lines)
        assert lines[0].startswith("parsched: error: "), lines
        return ("error", lines[0].removeprefix("parsched: error: "))
    return ("ok", getattr(cfg, key))


def _toml_file(cls, tmp_path, key, v):
    path = tmp_path / f"{key}.toml"
    path.write_text(f"[{cls.TOML_TABLE}]\n{key} = {_toml(v)}\n")
    try:
        return ("ok", getattr(cls.from_toml(path), key))
    except ConfigError as e:
        return ("error", str(e))


def _frozen(v):
    return tuple(_frozen(x) for x in v) if isinstance(v, list) else v


@pytest.mark.parametrize("model", sorted(MODELS))
def test_every_key_has_one_range_in_python_cli_and_toml(model, tmp_path):
    cls, sub = MODELS[model]
    keys = _core.schema(model)
    assert [k["key"] for k in keys] == [k for k in cls.field_names() if k in
                                        {i["key"] for i in keys}]
    checked = 0
    for info in keys:
        key = info["key"]
        if info["type"] == "choice":
            assert cls.choices(key) == tuple(info["choices"]), key
        assert getattr(cls(), key) == _frozen(info["default"]), key  # lists as tuples
        for v, inside in _probes(info):
            outcomes = [_python(cls, key, v), _cli_set(cls, sub, key, v),
                        _toml_file(cls, tmp_path, key, v)]
            assert outcomes[0] == outcomes[1] == outcomes[2], (key, v, outcomes)
            status, what = outcomes[0]
            if not inside:
                assert status == "error", (key, v, what)
                assert what.startswith(f"{key}: ") and "; allowed: " in what, what
                assert "\n" not in what
            elif status == "ok":
                assert what == v or (isinstance(v, float) and math.isclose(what, v)), (key, v)
            checked += 1
    assert checked >= len(keys)


def test_schema_of_an_unknown_model_names_the_models():
    with pytest.raises(_core.ConfigError, match=r"^model: .* is not a model; allowed: pools, "):
        _core.schema("nope")


def test_the_drifts_the_schema_removed():
    """The issue's examples: every local scheduler the core accepts is accepted
    by Python too, and the two desktop models accept the same cluster keys."""
    assert parsched.CoschedConfig(local="o1").local == "o1"
    assert parsched.CoschedConfig.choices("local") == ("ts", "rr", "o1", "fair")
    assert (parsched.FcsConfig.choices("local") == parsched.FcsFigureConfig.choices("local")
            == ("o1", "rr", "fair"))
    fcs = {k["key"]: k for k in _core.schema("fcs")}
    for k in _core.schema("fcs_figure"):
        if k["key"] in fcs:
            assert {**k, "default": None} == {**fcs[k["key"]], "default": None}, k["key"]
