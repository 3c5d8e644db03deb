"""`pip install .` in a fresh virtual environment builds and installs a working
parsched (about a minute: the Rust extension is built by maturin; the cargo
target directory is shared with the development build). Set
PARSCHED_SKIP_INSTALL_TEST=1 to skip it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

pytestmark = pytest.mark.skipif(bool(os.environ.get("PARSCHED_SKIP_INSTALL_TEST")),
                                reason="PARSCHED_SKIP_INSTALL_TEST is set")


def test_pip_install_in_a_fresh_venv_gives_a_working_command(tmp_path):
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    bin_dir = env_dir / "bin"
    env = {k: v for k, v in os.environ.items()
           if k not in ("VIRTUAL_ENV", "PYTHONPATH", "CONDA_PREFIX")}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env.setdefault("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    r = subprocess.run([str(bin_dir / "pip"), "install", "--quiet", ROOT], env=env,
                       capture_output=True, text=True, timeout=1200)
    assert r.returncode == 0, r.stderr[-2000:]
    # run from elsewhere, so that nothing comes from the source tree
    v = subprocess.run([str(bin_dir / "parsched"), "--version"], env=env, cwd=tmp_path,
                       capture_output=True, text=True, timeout=60)
    assert v.returncode == 0 and v.stdout.startswith("parsched "), v.stderr
    s = subprocess.run([str(bin_dir / "parsched"), "simulate", "pools", "--set", "jobs=200",
                        "reps=1", "--json"], env=env, cwd=tmp_path, capture_output=True,
                       text=True, timeout=120)
    assert s.returncode == 0, s.stderr
    assert json.loads(s.stdout)["mean_response_time"] > 0
    where = subprocess.run([str(bin_dir / "python"), "-c",
                            "import parsched, parsched._core as c; print(parsched.__file__);"
                            "print(c.__file__)"], env=env, cwd=tmp_path, capture_output=True,
                           text=True, timeout=60)
    assert where.returncode == 0, where.stderr
    for path in where.stdout.split():
        assert str(env_dir) in path and not path.startswith(os.path.join(ROOT, "python"))
    assert sys.prefix != str(env_dir)
    # the logs that come with the package: by name, and as reproduce batch's and
    # bench batch's default (no ../shared/traces beside an installed package)
    def cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(bin_dir / "parsched"), *args], env=env, cwd=tmp_path,
                              capture_output=True, text=True, timeout=timeout)

    b = cli("simulate", "batch", "--trace", "kth-sp2", "--json")
    assert b.returncode == 0, b.stderr
    assert json.loads(b.stdout)["jobs"] == 28475
    rb = cli("reproduce", "batch", "--out", str(tmp_path / "rb"), "--json")
    assert rb.returncode == 0, rb.stderr
    assert len(json.loads(rb.stdout)["traces"]) == 6
    bb = cli("bench", "batch", "--repeat", "1", "--json")
    assert bb.returncode == 0, bb.stderr
    assert "KTH-SP2" in json.loads(bb.stdout)["trace"]
    # the README's every command and Python block, as written, from the
    # installed package (its Python blocks use gymnasium: installed as a user would)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import test_readme

    g = subprocess.run([str(bin_dir / "pip"), "install", "--quiet", "gymnasium>=1.0"], env=env,
                       capture_output=True, text=True, timeout=600)
    assert g.returncode == 0, g.stderr[-2000:]
    lines = test_readme._shell_lines()
    assert len(lines) >= 6
    for line in lines:
        r = cli(*line.split()[1:])
        assert r.returncode == 0, (line, r.stderr[-2000:])
    for lang, body in test_readme.BLOCKS:
        if lang == "python":
            r = subprocess.run([str(bin_dir / "python"), "-c", body], env=env, cwd=tmp_path,
                               capture_output=True, text=True, timeout=300)
            assert r.returncode == 0, r.stderr[-2000:]
