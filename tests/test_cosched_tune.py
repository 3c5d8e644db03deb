"""Seed 003's spin-time procedure (parsched.reproduce.cosched_tune)."""

from __future__ import annotations

import json
import math

import pytest

from parsched.cli import main
from parsched.reproduce import cosched as rc
from parsched.reproduce import cosched_tune as tune


def test_choose_takes_the_lowest_time_and_the_shorter_spin_on_ties():
    assert tune.choose({100.0: 120.0, 1000.0: 110.0, 10000.0: 300.0}) == 1000.0
    assert tune.choose({100.0: 110.0, 1000.0: 110.0}) == 100.0
    # an unfinished run (NaN) never wins
    assert tune.choose({100.0: math.nan, 1000.0: 500.0}) == 1000.0
    assert tune.choose({100.0: math.nan, 1000.0: math.nan}) == 100.0


def test_the_grid_is_fixed_and_spans_latency_to_beyond_a_quantum():
    assert list(tune.SPIN_GRID_US) == sorted(tune.SPIN_GRID_US)
    assert tune.SPIN_GRID_US[0] <= 100.0 and tune.SPIN_GRID_US[-1] >= 200_000.0
    assert tune.APPS == ("LIFE3.5", "LIFE12", "MG", "LU", "EP")


def test_the_procedure_does_not_read_the_papers_tables(monkeypatch):
    """Scrambling Tables 3-5 changes nothing the procedure chooses."""
    first = tune.run(scale=0.02, reps=1, progress=False)
    monkeypatch.setattr(rc, "PAPER", {k: (1,) * 9 for k in rc.PAPER})
    monkeypatch.setattr(rc, "PAPER_T5", {})
    again = tune.run(scale=0.02, reps=1, progress=False)
    assert first["spins"] == again["spins"]
    assert first["tuning"]["completion_s"].tolist() == again["tuning"]["completion_s"].tolist()
    # one chosen spin per application, the lowest time of its rows
    t = first["tuning"]
    for app, spin in zip(tune.APPS, first["spins"], strict=True):
        rows = t[t["app"] == app]
        assert len(rows) == len(tune.SPIN_GRID_US)
        assert rows[rows["chosen"]]["spin_us"].tolist() == [spin]
        assert rows[rows["chosen"]]["completion_s"].iloc[0] == rows["completion_s"].min()


def test_the_calibration_check_compares_each_application_with_table2():
    cal = tune.run(scale=0.25, reps=1, progress=False)["calibration"]  # the quick size
    assert cal["app"].tolist() == list(tune.APPS)
    assert cal["table2_pct"].tolist() == [tune.TABLE2_SHARE[a] for a in tune.APPS]
    # the shipped applications are calibrated to Table 2 (LU within 15%)
    assert cal["as_table2"].all(), cal
    # and the check can fail: a share far from Table 2's is flagged
    fake = cal.copy()
    fake.loc[0, "comm_share_pct"] = 10.0
    ok = [abs(s / p - 1) <= tune.SHARE_TOLERANCE for s, p in
          zip(fake["comm_share_pct"][:4], fake["table2_pct"][:4], strict=True)]
    assert not ok[0]


def test_fitted_parameters_name_what_each_was_fitted_to():
    rows = tune.fitted_parameters([100.0] * 5)
    names = [r["parameter"] for r in rows]
    assert all(f"spin time of {a}" in names for a in tune.APPS)
    assert all(r["fitted to"] for r in rows)
    # Nothing is fitted to Tables 3-5: every fitted value names Table 2, the text or
    # the model's own runs, and no row names a completion-time table.
    assert not any("Table 3" in r["fitted to"] or "Table 4" in r["fitted to"]
                   or "W1" in r["fitted to"] for r in rows)
    assert any("Table 2" in r["fitted to"] for r in rows)
    assert rc.FITTED_CELLS == ()


def test_applications_are_sized_from_table2_shares():
    """The calibration's outputs: every application alone communicates Table 2's share
    (LU to within its integer grid) and runs 25 s; LIFE(3.5) is the coarse one."""
    from parsched import _core

    cal = _core.cosched_applications()
    apps = {a["app"]: a for a in cal["apps"]}
    for a in ("LIFE3.5", "LIFE12", "MG"):
        assert abs(apps[a]["share"] - apps[a]["paper_share"]) < 0.002, apps[a]
    assert abs(apps["LU"]["share"] - 0.16) < 0.01
    for a in apps.values():
        alone_s = a["iterations"] * a["compute_us"] * 1e-6
        assert alone_s <= cal["alone_s"] + 1e-9, a  # compute alone is at most 25 s
    assert apps["LIFE3.5"]["compute_us"] > 50 * apps["LIFE12"]["compute_us"]
    assert 0 < cal["jitter"] < 0.2 and 5 < cal["mflops"] < 100


def test_cli_tune_cosched_json(monkeypatch, capsys):
    monkeypatch.setattr(rc.Plan, "make", staticmethod(
        lambda quick: rc.Plan(scale=0.02, reps=1, mech_scale=0.02)))
    assert main(["tune", "cosched", "--quick", "--workers", "1", "--json"]) == 0
    obj = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert set(obj["spins_us"]) == set(tune.APPS)
    assert obj["app_spin_us"].count(",") == 4
    assert len(obj["tuning"]) == len(tune.APPS) * len(tune.SPIN_GRID_US)


@pytest.mark.parametrize("value", ["1,2", "a,b,c,d,e"])
def test_app_spin_us_bad_values_are_one_line_errors(value, capsys):
    assert main(["simulate", "cosched", "--set", f"app_spin_us={value}"]) == 2
    err = capsys.readouterr().err.strip()
    assert "app_spin_us" in err and len(err.splitlines()) == 1


def test_public_cosched_applications_follow_the_costs():
    import parsched

    paper = parsched.cosched_applications().set_index("app")
    slow = parsched.cosched_applications(per_byte_ns=60.0).set_index("app")
    assert list(paper.index) == list(tune.APPS)
    # dearer bytes: a coarser LIFE(12) with the same 12 % share
    assert slow.loc["LIFE12", "size"] > paper.loc["LIFE12", "size"]
    assert abs(slow.loc["LIFE12", "share"] - 0.12) < 0.003
    assert paper.attrs["mg_edge"] == 32 and 0 < paper.attrs["jitter"] < 0.2
    with pytest.raises(parsched.ConfigError, match="per_byte_ns"):
        parsched.cosched_applications(per_byte_ns=-1.0)
