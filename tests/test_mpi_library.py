"""libparsched_mpi with real MPI programs (Open MPI and MPICH, C and Fortran):
what it counts and how it makes a process wait (docs/runtime.md, "MPI programs").

Rank 0 computes for a while, then sends; rank 1 waits. Under spin-block the
waiting rank spins its spin time, then sleeps: the library counts the wait as
spinning then blocked, and the process uses (almost) no CPU; under busy waiting
it counts spinning only."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from parsched.runtime import mpi

DELAY_MS = 600

# Without an MPI installation (and none installable: `make mpi` installs Debian's
# Open MPI and MPICH as root) there is nothing to run; with one, a missing build fails.
pytestmark = pytest.mark.skipif(
    not all(shutil.which(f"mpicc.{i}") for i in mpi.IMPLS),
    reason="Open MPI and MPICH are not installed here (make mpi installs them as root on Debian)")


def _built(impl: str, prog: str) -> str:
    path = os.path.join(mpi.build_dir(impl), prog)
    if not os.path.exists(path):
        pytest.fail(f"{path} is not built: run `make mpi` (needs Open MPI and MPICH)")
    return path


def _run(impl, prog, wait, tmp_path, how="recv", extra=()):
    sync = tmp_path / f"{impl}-{wait}-{how}.sync"
    sync.write_bytes(bytes(4096))  # as the controller creates it
    env = {"LD_PRELOAD": mpi.library(impl), "PARSCHED_MPI_WAIT": wait,
           "PARSCHED_FCS_SYNC_FILE": str(sync)}
    args = [_built(impl, prog), str(DELAY_MS)] + ([how] if prog == "wait_probe" else [])
    r = subprocess.run(mpi.mpirun(impl, 2, args, env), capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    m = re.search(r"waited wall\s+([\d.]+)(?: cpu ([\d.]+))? got 42", r.stdout)
    assert m, r.stdout + r.stderr
    stats = {s.rank: s for s in mpi.read_stats(str(sync))}
    return float(m.group(1)), (float(m.group(2)) if m.group(2) else None), stats


@pytest.mark.parametrize("impl", mpi.IMPLS)
@pytest.mark.parametrize("how", ["recv", "wait", "barrier"])
def test_spin_block_counts_spinning_then_blocked_and_uses_no_cpu(impl, how, tmp_path):
    wall, cpu, stats = _run(impl, "wait_probe", "spin-block", tmp_path, how)
    one = stats[1]
    assert wall >= 0.8 * DELAY_MS / 1000
    assert one.syncs >= 1
    assert one.blocked_s >= 0.8 * wall, one  # most of the wait asleep
    assert 0 < one.spin_cpu_s < 0.05, one  # the 100 us spin, not the wait
    # the whole process (MPI's own threads too) used little CPU while it waited:
    # a sleeping process cannot use more on a busy machine
    assert cpu < 0.15 * wall, (cpu, wall)
    if how != "barrier":
        assert one.sent_to >= 1 and one.consumed >= 1 and one.pending == 0, one
        assert one.last_arrival_ns > 0
    # each rank names its process: two ranks, two live-at-the-time pids
    assert stats[0].pid > 0 and stats[1].pid > 0 and stats[0].pid != stats[1].pid
    assert stats[1].tid > 0


@pytest.mark.parametrize("impl", mpi.IMPLS)
def test_busy_waiting_counts_spinning_only(impl, tmp_path):
    wall, cpu, stats = _run(impl, "wait_probe", "busy", tmp_path)
    one = stats[1]
    assert one.blocked_s == 0.0 and one.spin_cpu_s > 0, one
    assert one.wait_s >= 0.8 * wall
    # a spinning process uses the CPU it gets (at least a share of it, on a busy machine)
    assert cpu > 0.1 * wall, (cpu, wall)


@pytest.mark.parametrize("impl", mpi.IMPLS)
def test_spin_yield_never_blocks(impl, tmp_path):
    _, _, stats = _run(impl, "wait_probe", "spin-yield", tmp_path)
    assert stats[1].blocked_s == 0.0 and stats[1].syncs >= 1


@pytest.mark.parametrize("impl", mpi.IMPLS)
def test_fortran_programs_are_wrapped(impl, tmp_path):
    wall, _, stats = _run(impl, "wait_probe_f", "spin-block", tmp_path)
    assert stats[1].blocked_s >= 0.8 * wall, stats[1]
    assert stats[1].consumed >= 1


def test_a_program_without_mpi_is_unaffected():
    lib = mpi.library("openmpi")
    r = subprocess.run(["sh", "-c", "echo unaffected"], capture_output=True, text=True,
                       env={**os.environ, "LD_PRELOAD": lib}, timeout=30)
    assert r.returncode == 0 and r.stdout == "unaffected\n", r.stderr


@pytest.mark.parametrize("bad", [("PARSCHED_MPI_WAIT", "sometimes"),
                                 ("PARSCHED_MPI_SPIN_US", "1.5ms")])
def test_bad_settings_are_one_line_and_exit_2(bad, tmp_path):
    impl = "mpich"
    env = {"LD_PRELOAD": mpi.library(impl), bad[0]: bad[1]}
    r = subprocess.run(mpi.mpirun(impl, 1, [_built(impl, "wait_probe"), "1"], env),
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    lines = [ln for ln in r.stderr.splitlines() if "libparsched_mpi" in ln]
    assert lines and bad[0] in lines[0] and "allowed" in lines[0], r.stderr


def test_tune_spin_takes_the_shortest_spin_within_noise_of_the_fastest(monkeypatch):
    """The choice rule on given makespans (no MPI run): the lowest median wins,
    and of spins within mpi.TIE of it the shortest."""
    times = {10: [1.02, 1.03, 1.01], 30: [1.0, 0.99, 1.0], 100: [1.5, 1.4, 1.6]}
    calls = []

    def fake(cmds, timeout_s):
        argv = cmds[0]
        s = int(argv[argv.index("PARSCHED_MPI_SPIN_US") + 1])  # mpich: -env KEY VALUE
        calls.append((s, len(cmds)))
        return times[s][sum(1 for c in calls if c[0] == s) - 1]

    monkeypatch.setattr(mpi, "_makespan", fake)
    monkeypatch.setattr(mpi, "library", lambda impl: "/lib.so")
    r = mpi.tune_spin("mpich", ["./a.out"], copies=4, reps=3, grid=(10, 30, 100))
    assert r["spin_us"] == 10  # 1.02 is within 3% of 1.00
    assert all(n == 4 for _, n in calls) and len(calls) == 9
    times[10] = [1.2, 1.2, 1.2]
    calls.clear()
    assert mpi.tune_spin("mpich", ["./a.out"], reps=3, grid=(10, 30, 100))["spin_us"] == 30


def test_tune_spin_runs_the_copies_for_real():
    prog = _built("mpich", "mpi_bsp")
    r = mpi.tune_spin("mpich", [prog, "40", "1000"], copies=2, reps=1, grid=(10, 10000))
    assert r["spin_us"] in (10, 10000) and len(r["rows"]) == 2
    # two copies of 40 x 1 ms on two ranks each share this machine's CPUs
    assert all(0.04 < row["makespan_s"] < 30 for row in r["rows"]), r


def test_cli_tune_mpi_spin_refuses_bad_input(capsys):
    from parsched.cli import main

    assert main(["tune", "mpi-spin"]) == 2
    assert "no program given" in capsys.readouterr().err
    assert main(["tune", "mpi-spin", "--", "/nonexistent/prog"]) == 2
    assert "not found" in capsys.readouterr().err


@pytest.mark.skipif(os.geteuid() != 0 or not os.path.isdir("/sys/fs/cgroup"),
                    reason="the runtime needs root and cgroups")
def test_cli_run_cosched_pins_ranks_and_sets_the_waiting(tmp_path):
    """`parsched run --policy cosched`: two MPI jobs, each rank pinned to its
    workstation (rank k of both jobs on one CPU), the ranks spin-blocking."""
    import json
    import sys

    lib, prog = mpi.library("mpich"), _built("mpich", "mpi_bsp")
    job = ["mpirun.mpich", "-np", "2", "-env", "LD_PRELOAD", lib, prog, "200", "1000", "1,2"]
    cmd = [sys.executable, "-m", "parsched", "run", "--policy", "cosched", "--scheme", "SB",
           "--spin-us", "40", "--width", "2", "--json", "--", *job, ":", *job]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    ranks = [j["ranks"] for j in out["jobs"]]
    assert all(len(rk) == 2 and rk[0][1] != rk[1][1] for rk in ranks), ranks
    assert ranks[0] == ranks[1]
    # the table names the scheme, each job's ranks and their CPUs, and the boosts
    table = subprocess.run([c for c in cmd if c != "--json"], capture_output=True,
                           text=True, timeout=120)
    assert table.returncode == 0, table.stdout + table.stderr
    assert "policy cosched, scheme SB" in table.stdout and "0@" in table.stdout
    assert "boosts (SCHED_FIFO)" in table.stdout, table.stdout
    # a reference schedule is not a scheme: refused in one line, exit 2
    bad = subprocess.run([*cmd[:7], "gang", "--", "true"], capture_output=True, text=True,
                         timeout=60)
    assert bad.returncode == 2 and "cosched_scheme" in bad.stderr, bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1, bad.stderr


def test_real_findings_follow_the_medians():
    """The --real findings on given medians (no run): each verdict follows its numbers."""
    from parsched.reproduce import cosched_real as cr

    base = {c: 1.0 for c, _, _ in cr.CONFIGS}
    hi = {**base, "default (busy)": 3.6, "gang (busy)": 1.0, "fcs (busy)": 1.02,
          "Local": 1.6, "PB": 1.5, "SB": 1.0}
    f = {x["id"]: x["holds"] for x in cr.findings({cr.HI_MIX: hi})}
    assert f["gang-vs-linux"] and f[f"implicit-near-gang-{cr.HI_MIX}"] and f[f"fcs-{cr.HI_MIX}"]
    assert not f["paper-pb-best"] and f["paper-local-worst"] and not f["paper-sb-slow"]
    slow = {**hi, "default (busy)": 1.2, "fcs (busy)": 1.3,
            **{s: 1.3 for s in cr.IMPLICIT if s not in ("Local", "PB")}}
    f = {x["id"]: x["holds"] for x in cr.findings({cr.HI_MIX: slow})}
    assert not f["gang-vs-linux"] and not f[f"implicit-near-gang-{cr.HI_MIX}"]
    assert not f[f"fcs-{cr.HI_MIX}"]


@pytest.mark.skipif(os.geteuid() != 0 or not os.path.isdir("/sys/fs/cgroup"),
                    reason="the runtime needs root and cgroups")
def test_real_measure_runs_each_configuration(tmp_path):
    from parsched.reproduce import cosched_real as cr

    configs = tuple(c for c in cr.CONFIGS if c[0] in ("gang (busy)", "SB", "PB", "DCS"))
    rows = cr.measure(quick=True, configs=configs, mixes={"life+mg": ("life", "mg")})
    assert [r["config"] for r in rows] == ["gang (busy)", "SB", "DCS", "PB"]
    # every job verified its result (a failed check is NaN)
    assert all(0.3 < r["makespan_s"] < 30 for r in rows), rows
    assert rows[2]["boosts"] > 0 and rows[3]["boosts"] > 0 and rows[0]["boosts"] == 0, rows


def test_cli_reproduce_cosched_real_says_what_is_missing(monkeypatch, tmp_path, capsys):
    """Where the real part cannot run, one line and exit 2 before any simulation,
    nothing written."""
    from parsched.cli import main
    from parsched.reproduce import cosched_real

    monkeypatch.setattr(cosched_real, "missing", lambda: "needs MPICH (test)")
    out = tmp_path / "o"
    assert main(["reproduce", "cosched", "--quick", "--real", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--real: needs MPICH (test)" in err[0], err
    assert not out.exists()


@pytest.mark.parametrize("impl", mpi.IMPLS)
def test_a_receive_completed_by_mpi_test_counts_as_consumed(impl, tmp_path):
    """A program that polls with MPI_Test (its own busy wait) shows no message pending
    once it has its message."""
    _, _, stats = _run(impl, "wait_probe", "busy", tmp_path, "test")
    assert stats[1].sent_to >= 1 and stats[1].consumed >= 1 and stats[1].pending == 0, stats[1]


@pytest.mark.parametrize("impl", mpi.IMPLS)
def test_life_and_mg_halo_verify_their_results_and_can_fail(impl):
    """The reproduction's programs check what they computed: life against the
    gliders' known drift, mg_halo against the known solution; too few V-cycles
    leave the residual high and mg_halo says FAILED (exit 1)."""
    env = {"LD_PRELOAD": mpi.library(impl)}
    life = subprocess.run(mpi.mpirun(impl, 2, [_built(impl, "life"), "128", "256", "200"], env),
                          capture_output=True, text=True, timeout=120)
    assert life.returncode == 0 and "life: verified" in life.stdout, life.stdout + life.stderr
    mg = [_built(impl, "mg_halo"), "256"]
    ok = subprocess.run(mpi.mpirun(impl, 2, [*mg, "12"], env), capture_output=True, text=True,
                        timeout=120)
    assert ok.returncode == 0 and "mg_halo: verified" in ok.stdout, ok.stdout + ok.stderr
    short = subprocess.run(mpi.mpirun(impl, 2, [*mg, "1"], env), capture_output=True,
                           text=True, timeout=120)
    assert short.returncode != 0 and "FAILED" in short.stdout, short.stdout + short.stderr


def test_hpcc_verification_reads_its_summary(tmp_path):
    from parsched.reproduce import cosched_real as cr

    assert not cr.hpcc_verified(str(tmp_path))  # no output at all
    out = tmp_path / "hpccoutf.txt"
    out.write_text("HPL ... PASSED\nBegin of Summary section.\nSuccess=1\n")
    assert cr.hpcc_verified(str(tmp_path))
    out.write_text("HPL ... FAILED\nBegin of Summary section.\nSuccess=1\n")
    assert not cr.hpcc_verified(str(tmp_path))
    out.write_text("Begin of Summary section.\nSuccess=1\nBegin of Summary section.\nSuccess=0\n")
    assert not cr.hpcc_verified(str(tmp_path))
    with pytest.raises(ValueError, match="allowed: bsp-lo"):
        cr.program_job("nbody", 1.0, None)


@pytest.mark.skipif(os.geteuid() != 0 or not os.path.isdir("/sys/fs/cgroup")
                    or shutil.which("hpcc") is None,
                    reason="needs root, cgroups and HPC Challenge (make mpi installs it)")
def test_hpcc_runs_under_cosched_with_the_library_and_verifies(tmp_path):
    """The public benchmark (Open MPI) under the controller: its ranks get the
    controller's variables (forwarded with -x), are pinned, and HPCC's own
    checks pass."""
    import parsched
    from parsched.reproduce import cosched_real as cr

    job = cr.program_job("hpcc", 0.4, None, str(tmp_path))
    out = parsched.run_jobs({"policy": "cosched", "cosched_scheme": "DCS-SB", "jobs": [job]})
    j = out["jobs"][0]
    assert j["success"], out
    assert sorted(cpu for _, cpu in j["ranks"]) == [0, 1], j
    assert cr.hpcc_verified(str(tmp_path)), (tmp_path / "hpccoutf.txt").read_text()[-2000:]
    # the ranks published through the library: the controller boosted on arrivals
    assert out["controller"].get("boosts", 0) > 0, out["controller"]
