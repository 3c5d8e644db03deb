"""PoolsConfig: Table 2 defaults, KEY=VALUE overrides, TOML, and round trips."""

from __future__ import annotations

import dataclasses
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import parsched
from conftest import assert_toml_round_trip
from parsched import ConfigError, PoolsConfig


def test_defaults_are_table_2():
    c = PoolsConfig()
    assert (c.P, c.L, c.D, c.T, c.F, c.G, c.p0) == (60, 0.6, 20.0, 10.0, 0.8, 0.5, 10)
    assert (c.t, c.W, c.S, c.r, c.c) == (0.25, 0.005, 0.01, 0.003, 0.005)
    assert (c.init, c.final, c.para_unit, c.spread) == (10.0, 10.0, 100.0, 10.0)
    assert c.pool_size == 30 and c.spanning == "limited" and c.parallelism == "restricted"


def test_every_field_is_documented():
    for name in PoolsConfig.field_names():
        assert PoolsConfig.field_doc(name), name
    for sym in ("P", "L", "D", "T", "F", "G", "p0", "t", "W", "S", "r", "c"):
        assert "[" in PoolsConfig.field_doc(sym)  # cites the paper symbol
    assert "Attributes:" in (PoolsConfig.__doc__ or "")


def test_frozen_and_hashable():
    c = PoolsConfig()
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.L = 0.5  # type: ignore[misc]
    # ints given for float fields are stored as floats (25 == 25.0 and their hashes
    # agree in Python whatever is stored, so the type and repr are what show it)
    d = PoolsConfig(D=25)
    assert isinstance(d.D, float) and repr(d) == repr(PoolsConfig(D=25.0))
    assert d == PoolsConfig(D=25.0) and hash(d) == hash(PoolsConfig(D=25.0))
    assert d != c and hash(c) == hash(PoolsConfig())


def test_overrides_parse_by_field_type():
    c = PoolsConfig().apply_overrides([
        "P=120", "L=0.75", "D=30", "W=0.5%", "pool_size=40", "spanning=none",
        "jobs=1e4", "inflate_master=true", "tie_break='most_idle'",
    ])
    assert c.P == 120 and isinstance(c.P, int)
    assert c.L == 0.75 and c.D == 30.0 and isinstance(c.D, float)
    assert math.isclose(c.W, 0.005)
    assert c.pool_size == 40 and c.spanning == "none" and c.jobs == 10000
    assert c.inflate_master is True and c.tie_break == "most_idle"
    assert parsched.apply_overrides(PoolsConfig(), ["G=1"]).G == 1.0


def test_overrides_apply_together():
    # P=120 and pool_size=40 are only valid together (40 does not divide 60)
    assert PoolsConfig().apply_overrides(["pool_size=40", "P=120"]).pool_size == 40


@pytest.mark.parametrize(
    ("item", "field"),
    [
        ("L=1", "L"), ("L=0", "L"), ("L=1.5", "L"), ("pool_size=7", "pool_size"),
        ("G=1.5", "G"), ("G=-0.1", "G"), ("W=-1", "W"), ("S=-0.01", "S"), ("jobs=-5", "jobs"),
        ("jobs=0", "jobs"), ("warmup=10000", "warmup"), ("P=abc", "P"), ("T=0", "T"),
        ("T=nan", "T"), ("D=40", "D"), ("D=0.5", "D"), ("spanning=some", "spanning"),
        ("bogus=1", "bogus"), ("reps=0", "reps"), ("seed=-1", "seed"), ("noequals", "--set"),
        ("arrivals=x.csv", "arrivals"), ("inflate_master=maybe", "inflate_master"),
    ],
)
def test_bad_overrides_name_the_field_in_one_line(item, field):
    with pytest.raises(ConfigError) as ei:
        PoolsConfig().apply_overrides([item])
    msg = str(ei.value)
    assert msg.startswith(f"{field}: ")
    assert "\n" not in msg
    assert ei.value.field == field


def test_unknown_key_lists_allowed_keys():
    with pytest.raises(ConfigError) as ei:
        PoolsConfig().apply_overrides(["Q=1"])
    assert "allowed: P, L, D, T" in str(ei.value)
    with pytest.raises(ConfigError):
        PoolsConfig().with_(Q=1)
    with pytest.raises(ConfigError):
        PoolsConfig.from_dict({"Q": 1})


def test_config_error_is_value_error_and_pickles():
    import pickle

    e = ConfigError("L", "1.0 is out of range", "0 < L < 1")
    assert isinstance(e, ValueError)
    e2 = pickle.loads(pickle.dumps(e))
    assert str(e2) == str(e) == "L: 1.0 is out of range; allowed: 0 < L < 1"
    r = ConfigError.from_message("pool_size: 7 does not divide P = 60; allowed: divisors of P")
    assert (r.field, r.message, r.allowed) == ("pool_size", "7 does not divide P = 60",
                                               "divisors of P")


def test_toml_pools_table_and_flat(tmp_path):
    a = tmp_path / "a.toml"
    a.write_text('[pools]\nP = 120\npool_size = 40\nW = 0.01\nspanning = "unlimited"\n')
    c = PoolsConfig.from_toml(a)
    assert (c.P, c.pool_size, c.W, c.spanning) == (120, 40, 0.01, "unlimited")
    b = tmp_path / "b.toml"
    b.write_text("L = 0.3\nD = 10\n")
    assert parsched.from_toml(b) == PoolsConfig(L=0.3, D=10)


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("[pools]\nL = \n", "config"),            # malformed
        ("[pools]\nbogus = 1\n", "bogus"),        # unknown key
        ("[pools]\nL = 1.2\n", "L"),              # out of range
        ("[pools]\nP = 60.5\n", "P"),             # not an integer
        ('[pools]\nG = "half"\n', "G"),           # not a number
        ("L = 0.5\n[pools]\nD = 10\n", "L"),      # key outside the table
        ("pools = 3\n", "config"),                # pools is not a table
    ],
)
def test_bad_toml(tmp_path, text, field):
    f = tmp_path / "bad.toml"
    f.write_text(text)
    with pytest.raises(ConfigError) as ei:
        PoolsConfig.from_toml(f)
    assert str(ei.value).startswith(f"{field}: ") and "\n" not in str(ei.value)


def test_missing_toml(tmp_path):
    with pytest.raises(ConfigError, match=r"^config: cannot read"):
        PoolsConfig.from_toml(tmp_path / "nope.toml")


def test_toml_arrivals_as_table_or_csv_path(tmp_path):
    (tmp_path / "jobs.csv").write_text("arrival,d\n0,4\n1.5,2\n3,8\n")
    f = tmp_path / "c.toml"
    f.write_text('[pools]\nwarmup = 0\narrivals = "jobs.csv"\n')
    c = PoolsConfig.from_toml(f)
    assert c.arrivals is not None and c.arrivals.d == (4, 2, 8)
    g = tmp_path / "d.toml"
    g.write_text(c.to_toml())
    assert PoolsConfig.from_toml(g) == c


# ----------------------------------------------------------------- hypothesis

_divisors = {P: [k for k in range(1, P + 1) if P % k == 0] for P in (1, 8, 12, 30, 60, 120)}


@st.composite
def configs(draw) -> PoolsConfig:
    P = draw(st.sampled_from(sorted(_divisors)))
    pool_size = draw(st.sampled_from(_divisors[P]))
    limit = (P + 1) / 2
    D = 1.0 if P == 1 else draw(st.floats(1.0, limit, exclude_max=True))
    fin = {"allow_nan": False, "allow_infinity": False}
    jobs = draw(st.integers(1, 10**6))
    kw = {
        "P": P, "pool_size": pool_size, "D": D,
        "L": draw(st.floats(0.0, 1.0, exclude_min=True, exclude_max=True)),
        "T": draw(st.floats(1e-3, 1e3, **fin)),
        "F": draw(st.floats(0.0, 10.0, **fin)),
        "G": draw(st.floats(0.0, 1.0)),
        "p0": draw(st.integers(0, 200)),
        "t": draw(st.floats(0.0, 1.0)),
        "W": draw(st.floats(0.0, 1.0)),
        "S": draw(st.floats(0.0, 1.0)),
        "r": draw(st.floats(0.0, 1.0)),
        "c": draw(st.floats(0.0, 1.0)),
        "spanning": draw(st.sampled_from(["limited", "none", "unlimited"])),
        "parallelism": draw(st.sampled_from(["restricted", "unrestricted"])),
        "jobs": jobs,
        "warmup": draw(st.integers(0, jobs - 1)),
        "reps": draw(st.integers(1, 100)),
        "seed": draw(st.integers(0, 2**64 - 1)),
        "workload": draw(st.sampled_from(["correlated", "uncorrelated"])),
        "init": draw(st.floats(0.0, 1e3)),
        "final": draw(st.floats(0.0, 1e3)),
        "para_unit": draw(st.floats(1e-3, 1e3)),
        "spread": draw(st.floats(0.0, 1e3)),
        "combine": draw(st.sampled_from(["add", "multiply"])),
        "switch_cost": draw(st.sampled_from(["every_dispatch", "preemption_only"])),
        "f_rounding": draw(st.sampled_from(["nearest", "floor", "ceil"])),
        "g_rounding": draw(st.sampled_from(["nearest", "floor", "ceil"])),
        "tie_break": draw(st.sampled_from(["lowest_index", "most_idle"])),
        "inflate_master": draw(st.booleans()),
        "ci": draw(st.sampled_from(["auto", "replications", "batch_means"])),
        # no event limit: drawn workloads may be estimated above the default
        "max_events": 0,
    }
    return PoolsConfig(**kw)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs())
def test_dict_round_trip(c):
    assert PoolsConfig.from_dict(c.to_dict()) == c
    assert PoolsConfig(**c.to_dict()) == c


@settings(max_examples=150, deadline=None)
@given(configs(), st.booleans())
def test_toml_round_trip(c, table):
    assert_toml_round_trip(c, table=table)


@settings(max_examples=150, deadline=None)
@given(configs())
def test_override_round_trip(c):
    items = [f"{k}={v!r}" if isinstance(v, float) else f"{k}={v}" for k, v in c.scalars().items()]
    assert PoolsConfig().apply_overrides(items) == c


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.floats(0, 1e6), st.integers(1, 60)), min_size=1, max_size=30),
    st.booleans(),
)
def test_arrivals_round_trip(rows, with_work):
    rows = sorted(rows)
    arr = parsched.Arrivals(
        tuple(a for a, _ in rows), tuple(d for _, d in rows),
        tuple(float(d) * 100 for _, d in rows) if with_work else None,
    )
    c = PoolsConfig(warmup=0, arrivals=arr)
    assert PoolsConfig.from_dict(c.to_dict()) == c
    assert PoolsConfig(**{**c.to_dict(), "arrivals": arr.to_dict()}) == c
