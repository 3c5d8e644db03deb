"""``parsched reproduce cosched`` (seed 003): the findings checked on the
paper's own tables, and a miniature run of the whole reproduction."""

from __future__ import annotations

import json
import math
import os

import pandas as pd
import pytest

from conftest import needs_core, one_error_line
from parsched.cli import main
from parsched.reproduce import cosched as rc


def paper_table() -> dict[str, dict[int, float]]:
    return {s: {w + 1: float(v) for w, v in enumerate(rc.PAPER[s])} for s in rc.SCHEMES}


def paper_t5() -> pd.DataFrame:
    rows = []
    for w, by_scheme in rc.PAPER_T5.items():
        for s, jobs in by_scheme.items():
            rows.append({"workload": w, "scheme": s,
                         "sim_jobs": " / ".join(str(x) for x in jobs),
                         "sim_cv": rc._cv([float(x) for x in jobs])})
    return pd.DataFrame(rows)


def test_every_finding_holds_on_the_papers_own_tables():
    found = rc.findings(paper_table(), t5=paper_t5(),
                        latencies={(s, w): 32.0 for s in rc.SCHEMES for w in rc.WORKLOADS})
    assert len(found) >= 20
    failed = [f["id"] for f in found if not f["holds"]]
    assert failed == []
    assert len({f["id"] for f in found}) == len(found)
    for f in found:
        assert f["claim"] and f["evidence"]


@pytest.mark.parametrize(
    ("edit", "broken"),
    [
        ({("PB", 3): 400.0}, {"pb-near-best", "pb-far-ahead-dcs", "pb-best", "pb-below-dcs"}),
        ({("SY", 4): 1000.0}, {"sy-above-sb"}),
        ({("Local", 6): 130.0}, {"w6-near-ideal"}),
        ({("PBT", 5): 500.0}, {"pbt-ahead-w5-w9", "pbt-below-pb-heavy"}),
        ({("SB", 5): 200.0}, {"growth-w1-w5", "pb-far-ahead-sb", "sb-vs-dcs"}),
    ],
)
def test_findings_fail_when_the_numbers_break_them(edit, broken):
    T = paper_table()
    for (s, w), v in edit.items():
        T[s][w] = v
    failed = {f["id"] for f in rc.findings(T) if not f["holds"]}
    assert broken <= failed


def test_latency_finding_reads_w6_and_names_the_worst_elsewhere():
    lat = {(s, w): 32.0 for s in rc.SCHEMES for w in rc.WORKLOADS}
    lat[("PB", 1)] = 600.0
    f = {x["id"]: x for x in rc.findings(paper_table(), latencies=lat)}["latency-32us"]
    assert f["holds"] and "600" in f["evidence"] and "PB W1" in f["evidence"]
    lat[("SB", 6)] = 80.0
    f = {x["id"]: x for x in rc.findings(paper_table(), latencies=lat)}["latency-32us"]
    assert not f["holds"]


def test_every_explained_id_is_a_finding():
    ids = {f["id"] for f in rc.findings(paper_table(), t5=paper_t5(),
                                        latencies={("SB", 6): 32.0})}
    ids |= {"fig-w5", "fig-w3"}  # need timelines
    assert set(rc.EXPLANATIONS) <= ids


def test_mechanism_rows_name_known_keys():
    import parsched._core as core

    keys = set(core.keys("cosched"))
    for _name, over, schemes in rc.MECHANISMS:
        assert set(over) <= keys
        assert set(schemes) <= set(rc.SCHEMES)
    for key, _values in rc.SENSITIVITY:
        assert key in keys


@needs_core
def test_cli_reproduce_cosched_miniature(tmp_path, monkeypatch, capsys):
    tiny = rc.Plan(scale=0.02, reps=1, mech_scale=0.02)
    monkeypatch.setattr(rc.Plan, "make", staticmethod(lambda quick: tiny))
    out = tmp_path / "rc"
    rc_ = main(["reproduce", "cosched", "--quick", "--out", str(out), "--workers", "1",
                "--json"])
    obj = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert rc_ == 0
    for name in ("tables34.csv", "tables34.png", "table5.csv", "fairness.csv",
                 "mechanisms.csv", "sensitivity.csv", "findings.csv", "fig2_w5.png",
                 "fig3_w3.png", "summary.md", "tuning.csv", "calibration.csv",
                 "fitted.csv"):
        assert (out / name).stat().st_size > 0, name
    tab = pd.read_csv(out / "tables34.csv")
    assert len(tab) == (len(rc.SCHEMES) + 2) * 9
    assert set(tab["scheme"]) == {*rc.SCHEMES, "gang", "fcfs"}
    ok = tab[~tab["livelock"]]
    # gang and batch FCFS are about the ideal (jobs x 25 s; at scale 0.02 the
    # iteration counts round, LIFE(3.5) to a few iterations)
    refs = ok[ok["scheme"].isin(["gang", "fcfs"])]
    assert ((refs["sim"] > 75) & (refs["sim"] < 120)).all()
    assert (ok["sim"] >= 25).all()
    f = pd.read_csv(out / "findings.csv")
    assert len(obj["findings"]) == len(f)
    assert f["holds"].sum() == obj["findings_held"]
    # explanations only where a finding fails (a miniature run is too short for
    # the findings themselves to mean much)
    assert f[f["holds"]]["explanation"].isna().all()
    assert set(f["id"]) >= set(rc.EXPLANATIONS)
    assert -1 <= obj["spearman_mean"] <= 1 and not math.isnan(obj["spearman_mean"])
    assert "Findings:" in (out / "summary.md").read_text()
    assert "what they were fitted to" in (out / "summary.md").read_text()
    # an explanation shared by several findings is written once, then referred to
    # (one ~400-word paragraph was repeated 13 times)
    whys = [ln for ln in (out / "summary.md").read_text().splitlines()
            if ln.strip().startswith("Why:") and len(ln) > 200]
    assert len(whys) == len(set(whys)), "a long explanation is repeated"
    assert set(obj["spins_us"]) == {"LIFE3.5", "LIFE12", "MG", "LU", "EP"}
    assert 0 <= obj["cells_within_1_25"] <= obj["cells_predicted"] == 90
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".parsched-")]


def test_cli_reproduce_cosched_bad_out_is_one_line(tmp_path, capsys):
    f = tmp_path / "file"
    f.write_text("x")
    assert main(["reproduce", "cosched", "--quick", "--out", str(f)]) == 2
    assert one_error_line(capsys.readouterr().err).startswith("--out")


@needs_core
def test_bench_cosched_reports_events_per_second(capsys):
    assert main(["bench", "cosched", "--scale", "0.02", "--repeat", "1", "--json"]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert [r["scheme"] for r in obj["runs"]] == ["Local", "PB"]
    for r in obj["runs"]:
        assert r["events"] > 0 and r["events_per_second"] > 0 and r["workload"] == 5
    assert main(["bench", "cosched", "--scale", "2"]) == 2
