"""Issue 12 on real processes: `parsched run --policy fcs` and the real Table 1
(parsched.runtime.fcs_real). Tests that start real jobs need the compiled runtime, root
and a cgroup freezer; elsewhere they are skipped with a message saying which.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

import parsched
from conftest import run_cli
from parsched.runtime import fcs_real as fcs_real
from parsched.runtime import make_spec

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
BSP = os.path.join(ROOT, "bench", "bsp")


def _runtime_missing() -> str | None:
    try:
        from parsched import _core
    except ImportError:
        return "parsched._core is not built"
    if not hasattr(_core, "run_jobs"):
        return "this build of parsched._core has no run_jobs"
    if not os.path.isdir("/sys/fs/cgroup"):
        return "no cgroup filesystem at /sys/fs/cgroup (the runtime needs cgroups)"
    if os.geteuid() != 0:
        return "the runtime tests need root (cgroup freezer, real-time controller)"
    return None


needs_runtime = pytest.mark.skipif(_runtime_missing() is not None,
                                   reason=f"SKIP: {_runtime_missing()}")


def _bsp_or_skip() -> str:
    if shutil.which("make") and (shutil.which("cc") or shutil.which("gcc")):
        # make rebuilds bsp when bsp.c is newer (e.g. --mult, --then)
        subprocess.run(["make", "-s", "-C", os.path.join(ROOT, "bench")], check=True)
    if os.path.isfile(BSP) and os.access(BSP, os.X_OK):
        return BSP
    pytest.skip("bench/bsp is not built and there is no C compiler")


def test_job_multipliers_follow_seed_002():
    # job 1: second half doubled; job 2: first half; job 3 balanced
    assert fcs_real.job_multipliers(2) == [[1, 2], [2, 1], [1, 1]]
    assert fcs_real.job_multipliers(4) == [[1, 1, 2, 2], [2, 2, 1, 1], [1, 1, 1, 1]]
    assert fcs_real.job_multipliers(3) == [[1, 2, 2], [2, 1, 1], [1, 1, 1]]
    assert set(fcs_real.WAITING) == set(fcs_real.SCHEMES)


def test_fcs_policy_and_flexible_alias_are_accepted():
    assert make_spec({"policy": "fcs", "jobs": [["true"]]})["policy"] == "fcs"
    assert make_spec({"policy": "flexible", "jobs": [["true"]]})["policy"] == "flexible"


def test_table1_real_rejects_bad_input(tmp_path):
    with pytest.raises(parsched.ConfigError) as e:
        fcs_real.table1_real(str(tmp_path / "nope"), schemes=("gang",))
    assert e.value.field == "bsp"
    with pytest.raises(parsched.ConfigError) as e:
        fcs_real.table1_real(BSP, schemes=("fifo",))
    assert e.value.field == "scheme"
    with pytest.raises(parsched.ConfigError):
        fcs_real.table1_real(BSP, solo_s=0)
    with pytest.raises(parsched.ConfigError) as e:
        fcs_real.table1_real(BSP, waiting={"fcs": "yield"})
    assert e.value.field == "waiting"


@pytest.mark.skipif(_runtime_missing() is None, reason="runs only where the runtime is unavailable")
def test_table1_real_without_runtime_raises_runtime_unavailable():
    bsp = _bsp_or_skip()
    with pytest.raises(parsched.RuntimeUnavailable, match="real Table 1"):
        fcs_real.table1_real(bsp, quick=True)


@needs_runtime
def test_table1_real_quick():
    bsp = _bsp_or_skip()
    seen: list[str] = []
    # solo 0.6 s: jobs of about 2.5 s under FCS, whose first classes come
    # 0.7-1.1 s into the run (at 0.3 s the whole run could end unclassified)
    rows = fcs_real.table1_real(bsp, schemes=("default", "gang", "fcs"), solo_s=0.6, reps=1,
                                quick=True, progress=seen.append)
    assert [r["scheme"] for r in rows] == ["default", "gang", "fcs"]
    assert len(seen) == 3
    p = rows[0]["procs"]
    for r in rows:
        assert r["job1_s"] > 0 and r["job2_s"] > 0 and r["job3_s"] > 0
        assert r["makespan_s"] == max(r["job1_s"], r["job2_s"], r["job3_s"])
        # total demand / P: (sum of every worker's multiplier) x iters x 1 ms / P
        demand = sum(sum(m) for m in fcs_real.job_multipliers(p)) * r["iters"] * 1e-3
        assert r["optimum_s"] == pytest.approx(demand / p)
        assert r["makespan_s"] >= 0.9 * r["optimum_s"]
        assert "load_before" in r and r["reps"] == 1
        # the jobs' own CPU seconds, against the machine's time
        assert r["cpu_s"] > 0
        assert r["utilization"] == pytest.approx(r["cpu_s"] / (p * r["makespan_s"]))
        assert 0 < r["utilization"] <= 1.05
    # gang scheduling's spinners use the CPU while they wait; blocking ones do not
    assert rows[1]["cpu_s"] > 0.9 * rows[0]["cpu_s"]
    fcs = rows[2]
    assert len(fcs["classes"]) == 3
    # a short job may still end unclassified, but the run classifies some
    assert any(fcs["classes"]), fcs["classes"]
    for hist in fcs["classes"]:
        assert all(c in ("CS", "F", "DC") for _, c in hist)
        assert [t for t, _ in hist] == sorted(t for t, _ in hist)


@needs_runtime
def test_run_policy_fcs_json_reports_classes_over_time():
    bsp = _bsp_or_skip()
    job = [bsp, "--threads", "2", "--iters", "400", "--grain-us", "1000", "--wait", "spin"]
    r = run_cli("run", "--policy", "fcs", "--json", "--width", "2", "--", *job, ":", *job,
                timeout=120)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout.strip().splitlines()[-1])
    assert d["policy"] == "fcs"
    for j in d["jobs"]:
        assert isinstance(j["classes"], list)
        for t, c in j["classes"]:
            assert t >= 0 and c in ("CS", "F", "DC")
    assert any(j["classes"] for j in d["jobs"])
    assert "dc_slots" in d["controller"]
