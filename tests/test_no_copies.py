"""No hand-written copy of a known list outside its table.

A name list — the models, the queue orders, seed 003's schemes, the runtime's
policies, a model's keys — is written once, in its Rust table, and everything else reads it.
This test reads the lists from the core and looks through the project's
sources and documents for a run of several of a list's names in a row
(separated by commas, bars, spaces or "and"/"or"): a copy that would drift.
Generated text (between ``BEGIN`` / ``END`` marker lines), the change log
(history), measured outputs and the tests themselves (``tests/``, a Rust
file's ``#[cfg(test)]`` module) are not looked at.
"""

from __future__ import annotations

import pathlib
import re

import pytest

from parsched import _core
from parsched.config.table import rows
from parsched.runtime.policies import policies

ROOT = pathlib.Path(__file__).resolve().parent.parent
SUFFIXES = {".py", ".pyi", ".rs", ".md", ".toml", ".yml", ".c", ".sh", ".txt"}
SKIP_DIRS = {"target", ".venv", ".git", "build", "results", "tests", "measurements",
             "node_modules", "__pycache__"}
SKIP_FILES = {"CHANGELOG.md"}
SEP = re.compile(r"[\s,|/`'\"]+(?:(?:and|or)\s+[`'\"]?)?")
MARKED = re.compile(r"^[^\n]*\bBEGIN\b[^\n]*\n.*?^[^\n]*\bEND\b[^\n]*$", re.S | re.M)


def _choices(model: str, key: str) -> list[str]:
    return next(k for k in _core.schema(model) if k["key"] == key)["choices"]


def known_lists() -> dict[str, tuple[list[str], int]]:
    """Each list with the run of its names that counts as a copy."""
    out = {"models": ([r["name"] for r in rows()], 5),
           "queue orders": (_choices("batch", "order"), 7),
           "seed 003's schemes": (_choices("cosched", "scheme"), 6)}
    runtime = [p["name"] for p in policies()]
    if runtime:  # (a build with the Linux runtime)
        out["runtime policies"] = (runtime, 5)
    for r in rows():
        out[f"keys of {r['name']}"] = (_core.keys(r["name"]), 10)
    return out


def runs(names: list[str], text: str, least: int) -> list[str]:
    """Every run of at least ``least`` different names of ``names``, one
    after another with only separators between them."""
    pat = re.compile(r"(?<![\w-])(?:" + "|".join(
        map(re.escape, sorted(names, key=len, reverse=True))) + r")(?![\w-])")
    hits = [(m.start(), m.end(), m.group()) for m in pat.finditer(text)]
    found, i = [], 0
    while i < len(hits):
        j = i
        while j + 1 < len(hits) and SEP.fullmatch(text[hits[j][1]:hits[j + 1][0]] or "x"):
            j += 1
        if len({h[2] for h in hits[i:j + 1]}) >= least:
            found.append(text[hits[i][0]:hits[j][1]])
        i = j + 1
    return found


def text_of(p: pathlib.Path) -> str:
    """The file's text that is looked at: no generated text, no tests."""
    text = MARKED.sub("", p.read_text(errors="replace"))
    if p.suffix == ".rs":
        text = text.split("#[cfg(test)]\nmod tests", 1)[0]
    return text


def sources() -> list[pathlib.Path]:
    return sorted(p for p in ROOT.rglob("*") if p.is_file() and p.suffix in SUFFIXES
                  and p.name not in SKIP_FILES
                  and not SKIP_DIRS & set(p.relative_to(ROOT).parts[:-1]))


def test_the_finder_sees_a_copy_and_not_a_table():
    names = ["fcfs", "sjf", "ljf", "saf", "wfp3", "f1"]
    assert runs(names, "order is one of fcfs, sjf, ljf | saf or wfp3 and f1.", 6)
    assert runs(names, 'Literal["fcfs", "sjf", "ljf", "saf", "wfp3", "f1"]', 6)
    # a table of rows (the Rust `choices!` macro) is not a run
    assert not runs(names, 'Fcfs => "fcfs",\n    Sjf => "sjf",\n    Ljf => "ljf",\n'
                           '    Saf => "saf",\n    Wfp3 => "wfp3",\n    F1 => "f1",', 6)
    assert not runs(names, "fcfs, sjf and ljf, as examples", 6)
    assert MARKED.sub("", "a\n<!-- BEGIN x -->\nfcfs, sjf\n<!-- END x -->\nb") == "a\n\nb"


@pytest.mark.parametrize("name", sorted(known_lists()))
def test_no_hand_copy_of_a_known_list(name):
    names, least = known_lists()[name]
    copies = []
    for p in sources():
        text = text_of(p)
        copies += [f"{p.relative_to(ROOT)}: {c[:100]!r}" for c in runs(names, text, least)]
    assert not copies, f"hand copies of the {name} (read them from the table):\n" + \
        "\n".join(copies)
