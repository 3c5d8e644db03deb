"""What a new user hits first: output modes, closed pipes, hints for near-miss
keys and commands, units, the warm-up, help texts, reprs, the docs' examples."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

import parsched
from conftest import needs_core, one_error_line
from parsched.cli import main
from parsched.config import BarrierConfig, BatchConfig, CoschedConfig, PoolsConfig

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SMALL = ["--set", "jobs=200", "warmup=20", "reps=1"]


def _cli(*args: str, umask: int | None = None, shell_tail: str = "", cwd=None):
    exe = [sys.executable, "-m", "parsched", *args]
    if shell_tail:
        cmd = " ".join(f"'{a}'" for a in exe) + shell_tail + "; echo rc=${PIPESTATUS[0]} >&2"
        return subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, cwd=cwd,
                              timeout=120)
    pre = (lambda: os.umask(umask)) if umask is not None else None
    return subprocess.run(exe, capture_output=True, text=True, cwd=cwd, timeout=120,
                          preexec_fn=pre)


@needs_core
@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_output_files_follow_the_umask(tmp_path, umask, mode):
    out = tmp_path / "jobs.csv"
    r = _cli("simulate", "pools", *SMALL, "--jobs-out", str(out), "--json", umask=umask)
    assert r.returncode == 0, r.stderr
    assert out.stat().st_mode & 0o777 == mode


@needs_core
def test_a_closed_pipe_is_not_an_error(tmp_path):
    out = tmp_path / "jobs.csv"
    r = _cli("simulate", "pools", *SMALL, "--jobs-out", str(out), shell_tail=" | head -1",
             cwd=tmp_path)
    assert "rc=0" in r.stderr and "error" not in r.stderr, r.stderr
    assert len(r.stdout.splitlines()) == 1
    assert out.stat().st_size > 0  # results on disk do not depend on stdout


def test_slot_needs_a_unit(capsys):
    assert main(["run", "--slot", "50", "--", "/bin/true"]) == 2
    err = one_error_line(capsys.readouterr().err)
    assert "--slot" in err and "no unit" in err and "50ms" in err


@pytest.mark.parametrize(
    ("argv", "hint"),
    [
        (["simulate", "barrier", "--set", "Tq=5"], "did you mean tq?"),
        (["simulate", "pools", "--set", "pool_sise=3"], "did you mean pool_size?"),
        (["simulate", "barrier", "--set", "pool_size=3"],
         "pool_size is a key of `parsched simulate pools`"),
        (["simulate", "pools", "--set", "scheme=PB"], "`parsched simulate cosched`"),
        (["simulat", "pools"], "did you mean simulate?"),
        (["simulate", "pool"], "did you mean pools?"),
        (["simulate", "pools", "D=10"], "use --set D=10"),
        (["simulate", "barrier", "--set", "tq=50ms"], "plain numbers in ms"),
    ],
)
def test_near_misses_get_a_hint(capsys, argv, hint):
    assert main(argv) == 2
    assert hint in one_error_line(capsys.readouterr().err)


def test_a_table_of_another_model_names_its_command(tmp_path, capsys):
    f = tmp_path / "b.toml"
    f.write_text("[barrier]\nn = 4\n")
    assert main(["simulate", "pools", "--config", str(f)]) == 2
    assert "parsched simulate barrier --config" in one_error_line(capsys.readouterr().err)


def test_long_bad_keys_are_cut(capsys):
    assert main(["simulate", "pools", "--set", "x" * 5000 + "=1"]) == 2
    assert len(one_error_line(capsys.readouterr().err)) < 1000


@needs_core
def test_setting_jobs_scales_the_default_warmup():
    cfg = PoolsConfig().apply_overrides(["jobs=100"])
    assert cfg.warmup == 10
    assert PoolsConfig().apply_overrides(["jobs=100", "warmup=0"]).warmup == 0
    assert PoolsConfig().apply_overrides(["jobs=50000"]).warmup == 1000  # large: unchanged
    with pytest.raises(parsched.ConfigError, match="give warmup with jobs"):
        PoolsConfig(jobs=100)


@needs_core
def test_barrier_json_names_the_time_per_iteration_once(capsys):
    assert main(["simulate", "barrier", "--set", "k=200", "--json"]) == 0
    out = capsys.readouterr().out
    assert '"time_per_iteration"' in out and '"time_per_iter"' not in out


@pytest.mark.parametrize(("model", "cls"), [("pools", PoolsConfig), ("barrier", BarrierConfig),
                                            ("batch", BatchConfig), ("cosched", CoschedConfig)])
def test_help_lists_every_key_and_speaks_of_papers(capsys, model, cls):
    with pytest.raises(SystemExit):
        main(["simulate", model, "--help"])
    text = capsys.readouterr().out
    words = set(re.findall(r"\w+", text))
    assert [k for k in cls._kinds() if k not in words] == []
    assert not re.search(r"\bissue \d|\bseed 00\d", text)


def test_dir_shows_the_public_api_only():
    names = dir(parsched)
    for private in ("Any", "TYPE_CHECKING", "annotations", "import_module"):
        assert private not in names
    assert "simulate" in names and "PoolsConfig" in names


@needs_core
def test_results_have_a_short_repr_and_an_html_one():
    r = parsched.simulate(PoolsConfig(jobs=200, warmup=20, reps=2))
    text = repr(r)
    assert len(text) < 300 and "mean_response_time=" in text and "jobs=200" in text
    assert "<table>" in r._repr_html_() and "mean_response_time" in r._repr_html_()
    b = parsched.simulate_barrier(BarrierConfig(k=100))
    assert len(repr(b)) < 300 and "time_per_iteration=" in repr(b)


def _doc_block(path: str, lang: str = "") -> str:
    with open(os.path.join(ROOT, path), encoding="utf-8") as fh:
        text = fh.read()
    m = re.search(rf"```{lang}\n(.*?)```", text, re.S)
    assert m, path
    return m.group(1)


@needs_core
def test_the_arrivals_page_example_is_accepted(tmp_path):
    f = tmp_path / "arr.csv"
    f.write_text(_doc_block("docs/formats/arrivals.md"))
    arr = parsched.load_arrivals(str(f), P=60)
    assert len(arr) == 3 and arr.para_work[1] is None
    r = parsched.simulate(PoolsConfig(jobs=3, warmup=0, reps=1, arrivals=arr))
    assert r.summary["jobs"] == 3


def test_config_page_has_every_batch_key():
    with open(os.path.join(ROOT, "docs/formats/config-toml.md"), encoding="utf-8") as fh:
        text = fh.read()
    section = text.split("## `[batch]`", 1)[1]
    missing = [k for k in BatchConfig._kinds() if not re.search(rf"^#? ?{k} =", section, re.M)]
    assert missing == []
