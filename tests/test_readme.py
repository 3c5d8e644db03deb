"""The README's commands, as written, run (issue 27): every shell line and
Python block of README.md (the quick start's `make demo` / `make test` are
what CI itself runs), and every `parsched reproduce X` it names has its
command."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from conftest import needs_core

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as _f:
    README = _f.read()
BLOCKS = re.findall(r"```(sh|python)\n(.*?)```", README, re.S)
SKIP = {"make demo", "make test"}  # the quick start: CI runs `make test` itself


def _shell_lines() -> list[str]:
    lines = []
    for lang, body in BLOCKS:
        if lang != "sh":
            continue
        for line in body.replace("\\\n", " ").splitlines():
            line = line.split(" #")[0].strip()
            if line and not line.startswith("#") and line not in SKIP:
                lines.append(line)
    return lines


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONWARNINGS="ignore", COLUMNS="120", MPLBACKEND="Agg")


def test_the_readme_has_the_blocks_it_should():
    assert sum(1 for lang, _ in BLOCKS if lang == "sh") >= 8
    assert sum(1 for lang, _ in BLOCKS if lang == "python") >= 2
    assert len(README.splitlines()) <= 200


@needs_core
@pytest.mark.parametrize("line", _shell_lines())
def test_every_readme_command_runs(line, tmp_path):
    assert line.startswith("parsched "), line
    argv = [sys.executable, "-m", "parsched", *line.split()[1:]]
    r = subprocess.run(argv, cwd=tmp_path, env=_env(), capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, (line, r.stderr[-2000:])


@needs_core
@pytest.mark.parametrize("k", [k for k, (lang, _) in enumerate(BLOCKS) if lang == "python"])
def test_every_readme_python_block_runs(k, tmp_path):
    pytest.importorskip("gymnasium")
    r = subprocess.run([sys.executable, "-c", BLOCKS[k][1]], cwd=tmp_path, env=_env(),
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]


@needs_core
@pytest.mark.parametrize("name", sorted(set(re.findall(r"`parsched reproduce (\w+)`", README))))
def test_every_named_reproduction_exists(name):
    r = subprocess.run([sys.executable, "-m", "parsched", "reproduce", name, "--help"],
                       env=_env(), capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr


def test_every_readme_link_exists():
    links = re.findall(r"\]\(([^)#]+)\)", README)
    assert links
    missing = [x for x in links if not x.startswith("http")
               and not os.path.exists(os.path.join(ROOT, x))]
    assert not missing, missing
