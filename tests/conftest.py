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
