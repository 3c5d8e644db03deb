"""The runtime's policies come from one table: `parsched run
--help`, the command line's choices and Python get the policies, their keys and
choices from ``parsched._core.runtime_policies()``; each policy's own table
(``[fcs]``, ``[cosched]``) is checked by its schema, the old flat keys still
parse, and a policy's counters reach the run's JSON through its report.
"""

from __future__ import annotations

import json

import pytest

import parsched
from conftest import one_error_line, run_cli
from parsched.runtime import policies as rtp
from test_runtime import needs_runtime

pytestmark = pytest.mark.skipif(not rtp.policies(),
                                reason="SKIP: this build of parsched._core has no runtime")


def _help() -> str:
    r = run_cli("run", "--help", timeout=60)
    assert r.returncode == 0, r.stderr
    return " ".join(r.stdout.split())  # the help is wrapped: compare word runs


def test_every_policy_and_each_of_its_keys_is_in_run_help():
    from parsched import _core

    table = _core.runtime_policies()
    assert [p["name"] for p in table] == [p["name"] for p in rtp.policies()]
    names = {p["name"] for p in table}
    assert {"gang", "pools", "fcs", "regions", "cosched", "default"} <= names
    assert sum(p["default"] for p in table) == 1
    text = _help()
    for p in table:
        assert f"{p['name']}{' (also ' + ', '.join(p['aliases']) + ')' if p['aliases'] else ''}" \
            in text, p["name"]
        assert " ".join(p["doc"].split()[:6]) in text, p["name"]
        for k in p["keys"]:
            assert f"[{p['table']}] {k['key']}:" in text, (p["name"], k["key"])
    # the command line's choices are the table's
    assert "{" + ",".join(rtp.policy_names()) + "}" in text
    for scheme in rtp.choices("cosched", "scheme") or []:
        assert scheme in text
    assert len(rtp.choices("cosched", "scheme") or []) == 10
    assert "{" + ",".join(rtp.choices("cosched", "layout") or []) + "}" in text


def test_the_common_keys_choices_come_from_the_runtime():
    import parsched.runtime
    from parsched import _core

    keys = {k["key"]: k for k in _core.runtime_schema()}
    assert keys["policy"]["choices"] == rtp.policy_names()
    backends = keys["backend"]["choices"]
    assert "auto" in backends and "mock" not in backends
    assert list(parsched.runtime.BACKENDS) == backends
    text = _help()
    assert "--backend {" + ",".join(backends) + "}" in text
    assert f"default {keys['slot']['default']};" in text


def test_run_policy_choice_comes_from_the_table():
    r = run_cli("run", "--policy", "fifo", "--", "true", timeout=60)
    assert r.returncode == 2
    line = one_error_line(r.stderr)
    assert "--policy" in line
    for name in rtp.policy_names():
        assert name in line


def _bad_job_file(tmp_path, text: str) -> str:
    f = tmp_path / "jobs.toml"
    f.write_text(text + '\n[[jobs]]\nargv = ["true"]\n')
    return str(f)


@pytest.mark.parametrize("text, field", [
    ('policy = "fcs"\n[fcs]\nwindow_sz = 2.0', "fcs.window_sz"),
    ('policy = "fcs"\n[fcs]\nwindow_s = "soon"', "fcs.window_s"),
    ('policy = "fcs"\nfcs_window_s = "soon"', "fcs_window_s"),
    ('policy = "cosched"\n[cosched]\nlayout = "ring"', "cosched.layout"),
    ('policy = "cosched"\ncosched_scheme = "gang"', "cosched_scheme"),
    ('policy = "fcs"\nfcs_window_s = 1.0\n[fcs]\nwindow_s = 2.0', "fcs_window_s"),
])
def test_a_bad_key_of_a_policys_table_is_one_line_naming_it(tmp_path, text, field):
    if not hasattr(parsched._core, "run_jobs"):
        pytest.skip("SKIP: this build of parsched._core has no run_jobs")
    r = run_cli("run", "--jobs", _bad_job_file(tmp_path, text), timeout=60)
    assert r.returncode == 2, (r.stdout, r.stderr)
    line = one_error_line(r.stderr)
    assert field + ":" in line and "allowed:" in line, line
    if field == "fcs.window_sz":
        # what is allowed: the table's keys
        fcs = next(p for p in rtp.policies() if p["table"] == "fcs")
        keys = [k["key"] for k in fcs["keys"]]
        assert all(k in line for k in keys), line


def test_python_refuses_an_unknown_key_of_a_table_naming_it():
    with pytest.raises(parsched.ConfigError) as e:
        parsched.run_jobs({"policy": "fcs", "fcs": {"windows": 1}, "jobs": [["true"]]})
    assert e.value.field == "fcs.windows"
    assert "window_s" in e.value.allowed


@needs_runtime
@pytest.mark.parametrize("table", [False, True])
def test_old_flat_keys_and_the_tables_both_run(table):
    keys = ({"fcs": {"window_s": 0.5, "dc_min_share": 0.2}} if table
            else {"fcs_window_s": 0.5, "dc_min_share": 0.2})
    out = parsched.run_jobs({"policy": "flexible", "slot": "20ms", "jobs": [["true"]], **keys})
    assert out["jobs"][0]["success"]


@needs_runtime
def test_each_policys_report_reaches_the_run_json():
    def run(policy: str) -> dict:
        r = run_cli("run", "--policy", policy, "--json", "--", "true", ":", "true", timeout=60)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout.strip().splitlines()[-1])["controller"]

    fcs = run("fcs")
    assert fcs["dc_slots"] >= 0 and fcs["dc_slot_s"] >= 0
    cosched = run("cosched")
    assert cosched["boosts"] == 0
    gang = run("gang")
    # another policy's counters are not the controller's
    assert not {"dc_slots", "dc_slot_s", "boosts", "regions"} & set(gang)
    assert "boosts" not in fcs and "dc_slots" not in cosched
