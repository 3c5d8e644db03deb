"""Shared helpers for the parsched test-suite."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

import parsched

#: Test modules that run real jobs on this machine's CPUs and measure them:
#: ``make test`` runs them alone, after the others ran on two workers.
SERIAL_MODULES = {"test_runtime.py", "test_fcs_real.py", "test_regions_real.py",
                  "test_mpi_library.py"}


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.path.name in SERIAL_MODULES:
            item.add_marker(pytest.mark.serial)


#: The v1 cpu cgroup the real-machine tests run in (the Rust runtime tests'
#: ``tests/common`` uses the same group and weight).
SHIELD_GROUP = "parsched-tests"
#: Its ``cpu.shares``: the maximum (a task of the root group weighs 1024).
SHIELD_SHARES = 262144


def _v1_cpu_mount() -> str | None:
    try:
        with open("/proc/self/mountinfo") as fh:
            for line in fh:
                pre, _, post = line.partition(" - ")
                f = post.split()
                if len(f) >= 3 and f[0] == "cgroup" and "cpu" in f[2].split(","):
                    return pre.split()[4]
    except OSError:
        pass
    return None


def enter_cpu_shield() -> str | None:
    """Moves this test process (and so every job it starts) into a v1 cpu
    cgroup of the highest weight, ``SHIELD_GROUP``: other programs on the
    machine (a compiler, a busy loop, at nice 0 in the root group) then take
    about 0.4% of a CPU the tests' jobs want instead of half of it, and still
    get every cycle the jobs leave idle. What the tests check is unchanged (a
    quiet machine behaves the same in or out of the group). Returns why it
    could not (not root, no v1 cpu hierarchy, ``PARSCHED_TEST_SHIELD=0``),
    or None."""
    if os.environ.get("PARSCHED_TEST_SHIELD") == "0":
        return "PARSCHED_TEST_SHIELD=0"
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "not root"
    mount = _v1_cpu_mount()
    if mount is None:
        return "no cgroup v1 cpu hierarchy"
    d = os.path.join(mount, SHIELD_GROUP)
    try:
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "cpu.shares"), "w") as fh:
            fh.write(str(SHIELD_SHARES))
        rt = os.path.join(d, "cpu.rt_runtime_us")
        if os.path.exists(rt):
            with open(rt) as fh:
                zero = fh.read().strip() == "0"
            if zero:  # room for the controller's SCHED_FIFO (RT group scheduling)
                with open(rt, "w") as fh:
                    fh.write("50000")
        with open(os.path.join(d, "cgroup.procs"), "w") as fh:
            fh.write(str(os.getpid()))
    except OSError as e:
        return f"{d}: {e}"
    return None


_SHIELD: list[str | None] = []


@pytest.fixture(autouse=True)
def _cpu_shield(request):
    """Real-machine (``serial``) tests run in the CPU shield, entered once."""
    if request.node.get_closest_marker("serial") is not None and not _SHIELD:
        _SHIELD.append(enter_cpu_shield())
        if _SHIELD[0] is not None:
            print(f"real-machine tests not shielded from other programs: {_SHIELD[0]}")
    yield


#: A short run: fast enough for unit tests, long enough to be non-trivial.
SMALL = {"jobs": 400, "warmup": 50, "reps": 2}


def has_core() -> bool:
    try:
        from parsched import _core  # noqa: F401
    except ImportError:
        return False
    return True


needs_core = pytest.mark.skipif(not has_core(), reason="parsched._core is not built")


@pytest.fixture
def small() -> parsched.PoolsConfig:
    return parsched.PoolsConfig(**SMALL)


def run_cli(*args: str, cwd: str | os.PathLike[str] | None = None, timeout: float = 120):
    """Runs ``python -m parsched ARGS`` in a fresh process (real exit status, real stderr)."""
    env = dict(os.environ, PYTHONWARNINGS="ignore", COLUMNS="120")
    return subprocess.run(
        [sys.executable, "-m", "parsched", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False,
    )


def wait_for_run(pid: int, timeout: float = 60.0) -> None:
    """Waits until process ``pid`` runs a simulation (its ``parsched-run``
    thread exists), so that a signal reaches the run, not the imports."""
    import time

    task = f"/proc/{pid}/task"
    if not os.path.isdir(task):  # pragma: no cover - not Linux
        time.sleep(3.0)
        return
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        for t in os.listdir(task):
            try:
                with open(os.path.join(task, t, "comm")) as fh:
                    if fh.read().strip() == "parsched-run":
                        return
            except OSError:
                pass
        time.sleep(0.02)
    raise AssertionError("the run did not start")


def sigint_default() -> None:
    """``preexec_fn`` for a child that a test sends SIGINT: a shell's background
    job (``make test &``, some CI runners) starts with SIGINT ignored, which a
    child inherits, and Python then never raises KeyboardInterrupt."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def one_error_line(err: str) -> str:
    """The message of a command's one-line error (``parsched: error: MESSAGE``);
    fails the test unless stderr is exactly that one line, with no traceback."""
    lines = err.strip("\n").split("\n")
    assert len(lines) == 1, err
    assert lines[0].startswith("parsched: error: "), err
    assert "Traceback" not in err
    return lines[0][len("parsched: error: "):]


def assert_toml_round_trip(c, *, table: bool) -> None:
    """``c.to_toml()`` is valid TOML that ``from_toml`` (through a file) reads
    back to a config equal to ``c``."""
    text = c.to_toml(table=table)
    assert tomllib.loads(text)  # valid TOML
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "c.toml")
        with open(path, "w") as fh:
            fh.write(text)
        assert type(c).from_toml(path) == c
