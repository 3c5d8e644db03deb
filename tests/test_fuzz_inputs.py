"""Fuzzing the Python-side input parsers with hypothesis: ``--set KEY=VALUE``
values, TOML config files, arrivals CSV files and dispatch tables. Whatever
the input, the only outcome besides success is a ``ConfigError`` (or
``TraceError``) of one line that echoes at most 60 characters of a value —
never another exception, never a traceback on the command line.

``make test`` runs a few dozen examples per parser (seconds);
``make fuzz`` sets ``PARSCHED_FUZZ_EXAMPLES`` (default there 3000) for a
longer run. A failing input is shrunk by hypothesis and stored in its
database (.hypothesis/); add it as an ``@example`` here to keep it."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from conftest import needs_core, one_error_line
from parsched import BarrierConfig, BatchConfig, ConfigError, PoolsConfig, TraceError
from parsched.cli import main
from parsched.config import CoschedConfig
from parsched.config.arrivals import load_arrivals

pytestmark = needs_core

EXAMPLES = int(os.environ.get("PARSCHED_FUZZ_EXAMPLES", "40"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None,
                suppress_health_check=[HealthCheck.too_slow,
                                       HealthCheck.function_scoped_fixture])

LONG = "9" * 5000
CLASSES = [PoolsConfig, BarrierConfig, BatchConfig, CoschedConfig]

#: Values worth trying for any key, beside random text.
EDGE = ["", " ", "-1", "0", "1e308", "-1e308", "nan", "inf", "-inf", "1e-320", "2**64",
        "18446744073709551616", "9" * 30, "0x10", "1_000", "true", "True", "none", "None",
        "auto", "50%", "50 %", "1ms", "é", "\x00", "a,b", "1,2,3", "@/nonexistent", "[1]",
        "{}", LONG, "x" * 5000]

values = st.one_of(st.sampled_from(EDGE), st.text(max_size=40),
                   st.from_regex(r"-?[0-9]{1,25}(\.[0-9]{0,20})?(e-?[0-9]{1,4})?%?",
                                 fullmatch=True))


def _check_error(e: Exception) -> None:
    text = str(e)
    assert "\n" not in text, text
    assert "9" * 61 not in text and "x" * 61 not in text, f"a long value echoed: {text[:200]}"


def _apply(cls, items: list[str]) -> None:
    try:
        cls().apply_overrides(items)
    except (ConfigError, TraceError) as e:
        _check_error(e)


@FUZZ
@given(cls=st.sampled_from(CLASSES), data=st.data())
@example(cls=BarrierConfig, data=None)
def test_set_values_never_crash(cls, data):
    if data is None:  # the examples
        for items in (["tq=1e308", "k=1"], ["barrier_cost=1e308"], ["var=1e9"],
                      [f"samples={LONG}"], [f"wait={LONG}"],
                      # found by this test: a key with a newline, a long key
                      ["0\n0="], [f"{LONG}=1"]):
            _apply(cls, items)
        return
    keys = sorted(cls._kinds())
    items = data.draw(st.lists(
        st.builds(lambda k, v: f"{k}={v}",
                  st.one_of(st.sampled_from(keys), st.text(max_size=12)), values),
        min_size=1, max_size=4))
    _apply(cls, items)


toml_scalars = st.one_of(st.booleans(), st.integers(-2**70, 2**70),
                         st.floats(allow_nan=True, allow_infinity=True),
                         st.sampled_from(EDGE), st.text(max_size=20))
toml_values = st.one_of(toml_scalars, st.lists(toml_scalars, max_size=4),
                        st.dictionaries(st.text(max_size=8), toml_scalars, max_size=3))


def _toml_value(v) -> str:
    import json
    import math

    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    return "{" + ", ".join(f"{json.dumps(k)} = {_toml_value(x)}" for k, x in v.items()) + "}"


@FUZZ
@given(cls=st.sampled_from(CLASSES), data=st.data(), raw=st.booleans())
def test_toml_files_never_crash(tmp_path, cls, data, raw):
    if raw:
        text = data.draw(st.one_of(st.text(max_size=200),
                                   st.binary(max_size=200).map(lambda b: b.decode("latin-1"))))
    else:
        keys = sorted(cls._kinds())
        entries = data.draw(st.dictionaries(
            st.one_of(st.sampled_from(keys), st.text(min_size=1, max_size=10)),
            toml_values, max_size=5))
        table = data.draw(st.sampled_from([cls.TOML_TABLE, "", "other"]))
        head = f"[{table}]\n" if table else ""
        import json
        text = head + "".join(f"{json.dumps(k)} = {_toml_value(v)}\n" for k, v in entries.items())
    path = tmp_path / "c.toml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        cls.from_toml(str(path))
    except (ConfigError, TraceError) as e:
        _check_error(e)


csv_cells = st.one_of(st.sampled_from(EDGE), st.integers(-5, 300).map(str),
                      st.floats(-1e3, 1e6).map(repr), st.text(max_size=8))


@FUZZ
@given(data=st.data())
def test_arrivals_csv_never_crashes(tmp_path, data):
    header = data.draw(st.sampled_from(["arrival,d", "arrival,d,para_work", "d,arrival",
                                        "arrival", "", "arrival,d,x"]))
    rows = data.draw(st.lists(st.lists(csv_cells, min_size=0, max_size=4), max_size=6))
    text = header + "\n" + "".join(",".join(r) + "\n" for r in rows)
    path = tmp_path / "a.csv"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        load_arrivals(str(path), P=100)
    except (ConfigError, TraceError) as e:
        _check_error(e)


@FUZZ
@given(data=st.data())
def test_dispatch_tables_never_crash(tmp_path, data):
    lines = data.draw(st.lists(st.one_of(
        st.sampled_from(["RES=1000", "RES=0", "RES=x", "# c", "", LONG]),
        st.lists(csv_cells, min_size=1, max_size=6).map(" ".join)), max_size=8))
    path = tmp_path / "ts.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
    try:
        CoschedConfig().apply_overrides([f"dispatch_table={path}"])
    except (ConfigError, TraceError) as e:
        _check_error(e)


@settings(max_examples=max(5, EXAMPLES // 8), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(model=st.sampled_from(["pools", "barrier", "cosched"]), value=values,
       key=st.sampled_from(["seed", "k", "jobs", "tq", "L", "scheme", "nodes", "workload"]))
def test_cli_set_gives_one_line_or_runs(capsys, model, key, value):
    """On the command line: exit 0 or one error line with status 2 (tiny runs)."""
    tiny = {"pools": ["jobs=50", "warmup=5", "reps=1"],
            "barrier": ["k=20"],
            "cosched": ["scale=0.002", "reps=1"]}[model]
    rc = main(["simulate", model, "--json", "--set", *tiny, f"{key}={value}"])
    cap = capsys.readouterr()
    if rc == 0:
        assert cap.err == ""
        return
    assert rc == 2, cap.err
    msg = one_error_line(cap.err)
    assert "9" * 61 not in msg and "x" * 61 not in msg, msg


@pytest.mark.parametrize("text", ["", "\n\n", "; only comments\n"])
def test_cli_batch_empty_traces_say_nothing_was_simulated(tmp_path, capsys, text):
    p = tmp_path / "e.swf"
    p.write_text("; MaxProcs: 4\n" + text)
    assert main(["simulate", "batch", "--trace", str(p)]) == 2
    assert "nothing to simulate" in one_error_line(capsys.readouterr().err)
