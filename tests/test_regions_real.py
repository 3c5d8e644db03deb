"""Issue 13 on this machine: bench/memlat, `parsched run --policy regions` and
parsched.runtime.regions_real. Tests that run memlat need a C compiler (skipped
otherwise) and two CPUs; those that start jobs under the runtime also need the
compiled runtime and root.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from conftest import run_cli
from parsched.errors import RuntimeUnavailable
from parsched.runtime import make_spec
from parsched.runtime import regions_real as regions_real


def _runtime_missing() -> str | None:
    try:
        from parsched import _core
    except ImportError:
        return "parsched._core is not built"
    if not hasattr(_core, "run_jobs"):
        return "this build of parsched._core has no run_jobs"
    if os.geteuid() != 0:
        return "the runtime tests need root (cpusets)"
    return None


needs_runtime = pytest.mark.skipif(_runtime_missing() is not None,
                                   reason=f"SKIP: {_runtime_missing()}")
needs_two_cpus = pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2,
                                    reason="SKIP: needs two CPUs")


@pytest.fixture(scope="module")
def memlat() -> str:
    try:
        return regions_real.build_memlat()
    except RuntimeUnavailable as e:
        pytest.skip(f"SKIP: {e}")


def test_memlat_reports_one_json_line_and_refuses_bad_input(memlat):
    r = regions_real.memlat(memlat, "--size", "64K", "--access-time", "1024", "--rounds", "4")
    assert r["bench"] == "memlat" and r["mode"] == "none"
    assert r["size"] == 64 * 1024
    assert r["accesses"] == 2 * 1024 * 4
    assert r["ns_per_access"] > 0 and r["migrations"] == 0
    for args, field in ((["--size", "abc"], "size"), (["--mode", "x"], "mode"),
                        (["--mode", "unify"], "cpus"), (["--access-time", "0"], "access-time")):
        p = subprocess.run([memlat, *args], capture_output=True, text=True)
        assert p.returncode == 2, args
        assert p.stderr.count("\n") == 1 and field in p.stderr, p.stderr


@needs_two_cpus
def test_unify_migrates_once_per_visit_and_fault_traps_each_switch(memlat):
    a, b = sorted(os.sched_getaffinity(0))[:2]
    cpus = f"{a},{b}"
    u = regions_real.memlat(memlat, "--size", "32K", "--access-time", "300", "--rounds", "50",
                            "--mode", "unify", "--cpus", cpus)
    assert u["migrations"] == 100  # two visits per round, each after a move
    assert u["cpus_seen"] == (1 << a) | (1 << b)
    f = regions_real.memlat(memlat, "--size", "32K", "--access-time", "300", "--rounds", "50",
                            "--mode", "fault", "--cpus", cpus)
    assert f["faults"] == 100 and f["migrations"] == 100
    n = regions_real.memlat(memlat, "--size", "32K", "--access-time", "300", "--rounds", "50",
                            "--mode", "none", "--cpus", cpus)
    assert n["migrations"] == 0 and n["cpus_seen"] == 1 << a
    # The same pointer chase whatever the placement: same end positions.
    assert u["end"] == f["end"] == n["end"]


@needs_two_cpus
def test_microschedule_cost_is_measured(memlat):
    m = regions_real.microschedule_cost(memlat, round_trips=200, reps=1)
    assert 0 < m["one_way_us_median"] < 100_000
    assert m["one_way_us_mean"] >= m["one_way_us_median"] * 0.5
    assert m["paper_us"]["clovertown"] == 15.86


@needs_two_cpus
def test_unification_grid_quick_has_every_cell(memlat):
    rows = regions_real.unification_grid(memlat, wss=(256 * 1024,), access=(256, 4096), reps=1,
                                         seconds=0.05, modes=("none", "unify"))
    assert [(r["wss_bytes"], r["access_time"]) for r in rows] == [(262144, 256), (262144, 4096)]
    for r in rows:
        assert r["gain_unify"] == pytest.approx(r["none_ns"] / r["unify_ns"])
        assert r["unify_migrations_per_s"] > 0
    # One micro-schedule per visit: per access (rate x time per access, which
    # foreign load cannot skew as it skews the rate) shorter visits make more.
    per_access = [r["unify_migrations_per_s"] * r["unify_ns"] * 1e-9 for r in rows]
    assert per_access[0] > 4 * per_access[1], per_access


def test_regions_policy_is_accepted():
    assert make_spec({"policy": "regions", "jobs": [["true"]]})["policy"] == "regions"


def test_bad_regions_setting_is_one_line_exit_2(tmp_path):
    f = tmp_path / "jobs.toml"
    f.write_text('policy = "regions"\n[regions]\nplace_after = 0\n[[jobs]]\nargv = ["true"]\n')
    p = run_cli("run", "--jobs", str(f))
    if "no run_jobs" in p.stderr or ("runtime" in p.stderr and "missing" in p.stderr):
        pytest.skip(f"SKIP: {p.stderr.strip()}")
    assert p.returncode == 2, p.stderr
    assert p.stderr.strip().count("\n") == 0 and "regions.place_after" in p.stderr


@needs_runtime
@needs_two_cpus
def test_run_policy_regions_reports_working_sets_and_decisions(memlat):
    jobs = [{"name": n, "width": 1,
             "argv": [memlat, "--size", s, "--access-time", "4096", "--seconds", "2"]}
            for n, s in (("large0", "256K"), ("large1", "256K"), ("small0", "8K"),
                         ("small1", "8K"))]
    out = regions_real._run_policy(jobs, "regions",
                                   {"regions": {"cache_level": 2, "scan": "5ms",
                                                "place_after": 16}})
    reg = out["controller"]["regions"]
    assert reg["scans"] > 0 and reg["observations"] > 0 and reg["decisions"]
    wss = {j["name"]: j["wss_bytes"] for j in out["jobs"]}
    # Each final estimate within a factor 1.5 of the job's working set: two
    # regions plus memlat's stack and data (~12-20 KB). Before the clear
    # flushed the TLB (procfs::clear_refs_flush) a job could read as a few
    # KB here.
    for name, truth in (("large0", 512 * 1024 + 16 * 1024), ("large1", 512 * 1024 + 16 * 1024),
                        ("small0", 32 * 1024), ("small1", 32 * 1024)):
        assert truth / 1.5 <= wss[name] <= truth * 1.5, (name, wss)
    assert all(d["decision"] in ("regioning", "one_cache") or d["decision"].startswith("fallback")
               for d in reg["decisions"])
    # A DAMON monitor clearing accessed bits (this machine kind runs one)
    # marks the estimates and names itself; without one nothing is marked.
    damon = _damon_on()
    for j in out["jobs"]:
        assert (j["wss_unreliable"] is not None) == damon, (j["name"], j["wss_unreliable"])
    assert bool(reg["wss_unreliable"]) == damon, reg["wss_unreliable"]
    assert all("DAMON" in w and "clears accessed bits" in w for w in reg["wss_unreliable"])


def _damon_on() -> bool:
    """Whether a DAMON monitor on physical addresses runs (it touches every
    process): a kdamond of the admin interface whose state is on and whose
    context's operations are paddr, or an enabled DAMON module."""
    def read(*parts: str) -> str:
        try:
            with open(os.path.join(*parts)) as fh:
                return fh.read().strip()
        except OSError:
            return ""
    root = "/sys/kernel/mm/damon/admin/kdamonds"
    kds = os.listdir(root) if os.path.isdir(root) else []
    if any(read(root, k, "state") == "on"
           and read(root, k, "contexts", "0", "operations") == "paddr" for k in kds):
        return True
    return any(read("/sys/module", m, "parameters", "enabled") == "Y"
               for m in ("damon_reclaim", "damon_lru_sort", "damon_stat"))


@needs_runtime
def test_cli_run_policy_regions_json(memlat):
    p = run_cli("run", "--policy", "regions", "--json", "--", memlat, "--size", "64K",
                "--seconds", "0.3")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.strip().splitlines()  # the run's JSON alone on stdout
    assert len(lines) == 1, p.stdout
    job = [ln for ln in p.stderr.splitlines() if ln.startswith("{")]  # the job's own
    assert json.loads(job[0])["bench"] == "memlat"
    d = json.loads(lines[0])
    assert d["policy"] == "regions" and d["success"]
    assert "regions" in d["controller"]


@needs_two_cpus
def test_run_quick_writes_tables_and_summary(memlat, tmp_path):
    note = regions_real.run(tmp_path, quick=True)
    assert note.startswith("this machine") and "micro-schedule" in note
    d = json.loads((tmp_path / "real.json").read_text())
    assert d["quick"] is True
    assert len(d["unification"]) == len(regions_real.QUICK_WSS) * len(regions_real.QUICK_ACCESS)
    assert (tmp_path / "real_unification.csv").read_text().startswith("wss_bytes,")
    assert "speedup_large" in (tmp_path / "real_balancing.csv").read_text()
    if _runtime_missing() is None:
        assert "fallback/default" in note
        assert (tmp_path / "real_fallback.csv").exists()


def test_balance_sizes_follow_the_private_cache(monkeypatch):
    def fake(cpu):
        return [{"level": 1, "type": "Data", "size": "48K", "shared_cpu_list": str(cpu)},
                {"level": 2, "type": "Unified", "size": "2048K", "shared_cpu_list": str(cpu)},
                {"level": 3, "type": "Unified", "size": "300M", "shared_cpu_list": "0-1"}]

    monkeypatch.setattr(regions_real, "cache_info", fake)
    assert regions_real.private_cache_bytes(1) == 2 * 1024 * 1024
    # working sets (two regions) of 3/4 and 1 private cache
    assert regions_real.balance_sizes(1) == (768 * 1024, 1024 * 1024)
    monkeypatch.setattr(regions_real, "cache_info", lambda cpu: [])
    assert regions_real.private_cache_bytes(0) is None
    assert regions_real.balance_sizes(0) == (192 * 1024, 256 * 1024)
