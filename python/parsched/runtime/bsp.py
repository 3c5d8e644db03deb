"""The benchmark program ``bench/bsp`` (bulk-synchronous threads, seed 002's
experiments): built where missing (:func:`ensure_bsp`), its compute rate
measured (:func:`calibrate`); and whether this machine's runtime can freeze
jobs (:func:`check_runtime`)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

from parsched._io import source_root
from parsched.errors import ConfigError, RuntimeUnavailable

__all__ = ["calibrate", "check_runtime", "ensure_bsp"]


def ensure_bsp(path: str | None = None) -> str:
    """Returns the bsp binary, building it with ``make -C bench`` when missing."""
    if path:
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            raise ConfigError("--bsp", f"{path!r} is not an executable file")
        return os.path.abspath(path)
    bench = os.path.join(source_root(), "bench")
    binary = os.path.join(bench, "bsp")
    source = os.path.join(bench, "bsp.c")
    if (os.path.isfile(binary) and os.access(binary, os.X_OK)
            and not (os.path.isfile(source)
                     and os.path.getmtime(source) > os.path.getmtime(binary))):
        return binary  # built, and not older than its source
    if not os.path.isfile(os.path.join(bench, "bsp.c")):
        raise ConfigError("bench", f"{bench}/bsp.c not found (not a source checkout)",
                          "--bsp PATH to a built bench/bsp")
    if not shutil.which("make"):
        raise ConfigError("bench", "make is not installed; cannot build bench/bsp",
                          "install make and gcc, or pass --bsp PATH")
    cc = os.environ.get("CC", "cc")
    if not (shutil.which(cc) or shutil.which("gcc")):
        raise ConfigError("bench", f"no C compiler ({cc} or gcc) to build bench/bsp",
                          "install gcc, or pass --bsp PATH")
    proc = subprocess.run(["make", "-s", "-C", bench], capture_output=True, text=True,
                          check=False)
    if proc.returncode != 0 or not os.path.isfile(binary):
        last = (proc.stderr.strip().splitlines() or ["unknown error"])[-1]
        raise ConfigError("bench", f"make -C bench failed: {last}")
    return binary


def check_runtime() -> None:
    """Fails early (one line) where the runtime cannot freeze jobs."""
    from parsched import _core as c

    if not hasattr(c, "run_jobs"):
        raise RuntimeUnavailable("this build of parsched._core has no runtime (run_jobs)")
    if os.geteuid() != 0:
        raise RuntimeUnavailable("reproduce desktop needs root (cgroup freezer and "
                                 "real-time controller); run it with sudo")
    if not os.path.isdir("/sys/fs/cgroup"):
        raise RuntimeUnavailable("no cgroup filesystem at /sys/fs/cgroup")


def calibrate(bsp: str, tries: int = 3) -> float:
    """The compute rate of bsp (loops per microsecond), best of a few runs."""
    best = 0.0
    for _ in range(tries):
        p = subprocess.run([bsp, "--threads", "1", "--iters", "0"], capture_output=True,
                           text=True, check=True)
        best = max(best, float(json.loads(p.stdout.strip().splitlines()[-1])["loops_per_us"]))
    return best
