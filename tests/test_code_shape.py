"""The code's shape: sizes of files and functions, and the architecture page naming every
module (docs/architecture.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_no_new_long_file_or_function():
    """No non-test source file over 800 lines and no function over 120 lines, except the
    ones in tools/size_allowlist.txt, which may only shrink."""
    r = subprocess.run([sys.executable, str(ROOT / "tools/check_sizes.py"), "--check",
                        str(ROOT / "tools/size_allowlist.txt")], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_size_checker_finds_long_rust_and_python_functions(tmp_path):
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import check_sizes as cs
    finally:
        sys.path.pop(0)
    body = "\n".join(f"    let x{i} = \"{{\"; // }}" for i in range(125))
    rs = tmp_path / "a.rs"
    rs.write_text(f"fn long() {{\n{body}\n}}\nfn short() {{ }}\n#[cfg(test)]\nmod tests {{\n"
                  f"    fn in_test() {{\n{body}\n    }}\n}}\n")
    assert [k for k, _ in cs.rust_offenders(rs, "a.rs")] == ["a.rs::long"]
    py = tmp_path / "a.py"
    py.write_text("def long():\n" + "    x = 1\n" * 125 + "\ndef short():\n    pass\n")
    assert [k for k, _ in cs.python_offenders(py, "a.py")] == ["a.py::long"]


def _sections(text: str) -> dict[str, str]:
    """The text under each ``### crates/...`` / ``### python/...`` heading of the
    architecture page, up to the next heading."""
    import re

    out: dict[str, str] = {}
    parts = re.split(r"^(#{2,3} .*)$", text, flags=re.M)
    for head, body in zip(parts[1::2], parts[2::2], strict=True):
        name = head.lstrip("#").strip()
        if name.startswith(("crates/", "python/")):
            out[name] = body
    return out


def _unnamed(root: Path, section: str, pattern: str, exempt: set[str]) -> list[str]:
    """Modules under ``root`` (files matching ``pattern`` and their folders) whose file
    name (``name.rs``) or folder (``name/``) the section does not mention."""
    import re

    missing = []
    for p in sorted(root.rglob(pattern)):
        rel = p.relative_to(root)
        names = [f"{d}/" for d in rel.parts[:-1]]
        if p.name not in exempt:
            names.append(p.name)
        for n in names:
            if not re.search(r"(?<![\w/.])" + re.escape(n) + r"(?![\w])", section):
                missing.append(f"{rel.as_posix()} ({n})")
    return sorted(set(missing))


def test_architecture_page_names_every_module():
    doc = (ROOT / "docs/architecture.md").read_text()
    sections = _sections(doc)
    missing = []
    for crate in sorted((ROOT / "crates").iterdir()):
        src = crate / "src"
        if not src.is_dir():
            continue
        key = f"crates/{crate.name}"
        assert key in sections, f"docs/architecture.md has no section '### {key}'"
        missing += [f"{key}/src/{m}" for m in
                    _unnamed(src, sections[key], "*.rs", {"lib.rs", "mod.rs", "tests.rs"})]
    assert "python/parsched" in sections, "docs/architecture.md has no '### python/parsched'"
    missing += [f"python/parsched/{m}" for m in
                _unnamed(ROOT / "python/parsched", sections["python/parsched"], "*.py", set())]
    assert not missing, "modules not named in docs/architecture.md:\n" + "\n".join(missing)


def test_architecture_check_catches_an_unnamed_module(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "named.rs").write_text("")
    (tmp_path / "a" / "hidden.rs").write_text("")
    section = "a/  named.rs"
    assert _unnamed(tmp_path, section, "*.rs", set()) == ["a/hidden.rs (hidden.rs)"]


def test_workloads_import_no_machine():
    """``workloads/`` (generators, trace formats) depends on no machine, so the machines
    may depend on it without a cycle."""
    for p in sorted((ROOT / "crates/parsched-sim/src/workloads").rglob("*.rs")):
        assert "crate::machines" not in p.read_text(), p


def test_python_layers_point_down_without_circles():
    """Every import of python/parsched points down the layers of
    tools/check_layers.py (docs/architecture.md) and no modules import each
    other in a circle, except the ones in tools/layers_allowlist.txt, which may
    only shrink."""
    r = subprocess.run([sys.executable, str(ROOT / "tools/check_layers.py"), "--check",
                        str(ROOT / "tools/layers_allowlist.txt")], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_layer_checker_finds_an_upward_import_and_a_circle(tmp_path, monkeypatch):
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import check_layers as cl
    finally:
        sys.path.pop(0)
    pkg = tmp_path / "parsched"
    (pkg / "sim").mkdir(parents=True)
    (pkg / "config").mkdir()
    (pkg / "__init__.py").write_text("from parsched import sim\n")
    (pkg / "sim" / "__init__.py").write_text("")
    (pkg / "sim" / "a.py").write_text("from parsched.sim import b\n")
    (pkg / "sim" / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from parsched.cli import x\n"
        "def f():\n    from parsched.sim.a import g\n")
    (pkg / "config" / "__init__.py").write_text("")
    (pkg / "config" / "c.py").write_text("def f():\n    from ..sim import a\n")
    monkeypatch.setattr(cl, "PKG", pkg)
    assert cl.upward() == ["parsched.config.c -> parsched.sim.a"]
    assert cl.circles() == ["parsched.sim.a -> parsched.sim.b -> parsched.sim.a"]


def _code(p: Path) -> str:
    """A Rust file without its comment lines (doc comments name other modules freely)."""
    return "\n".join(ln for ln in p.read_text().splitlines() if not ln.lstrip().startswith("//"))


def _refers_to(code: str, module: str) -> bool:
    """Whether ``code`` names module ``module`` as a sibling (``super::``) or a machine."""
    import re

    return re.search(r"\b(?:super|machines)::" + module + r"\b", code) is not None


def test_the_machines_of_nodes_import_in_one_direction():
    """No import circle in ``machines/cluster/`` (``config.rs`` imports
    ``calibrate.rs``, which imports ``apps.rs``; the calibration is a value, not a global
    cache), ``cluster/`` imports nothing of ``desktop/`` (the desktop lowers onto the
    cluster) and the node-costs fragment imports no machine."""
    m = ROOT / "crates/parsched-sim/src/machines"
    apps, cal = _code(m / "cluster/apps.rs"), _code(m / "cluster/calibrate.rs")
    assert not _refers_to(apps, "calibrate") and not _refers_to(apps, "config")
    assert not _refers_to(cal, "config") and "ClusterConfig" not in cal
    assert "OnceLock" not in cal and "Mutex" not in cal
    for p in sorted((m / "cluster").rglob("*.rs")):
        assert not _refers_to(_code(p), "desktop"), p
    fragment = _code(m / "node_costs.rs").split("#[cfg(test)]")[0]
    assert "machines::" not in fragment.replace("$crate::machines::node_costs::", "")


def test_rust_modules_import_each_other_in_no_circle():
    """No Rust modules that are not parent and child import each other in a
    circle, except the sets in tools/rust_modules_allowlist.txt, which may
    only shrink."""
    r = subprocess.run([sys.executable, str(ROOT / "tools/check_rust_modules.py"), "--check",
                        str(ROOT / "tools/rust_modules_allowlist.txt")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_rust_module_checker_finds_a_circle_of_siblings(tmp_path):
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import check_rust_modules as cr
    finally:
        sys.path.pop(0)
    src = tmp_path / "src"
    (src / "m").mkdir(parents=True)
    (src / "lib.rs").write_text("pub mod m;\n")
    (src / "m" / "mod.rs").write_text("mod a;\nmod b;\nmod c;\nuse a::X;\n")
    (src / "m" / "a.rs").write_text("use super::b::{Y, Z};\npub struct X;\n")
    (src / "m" / "b.rs").write_text("pub struct Y;\nfn f() { let _ = crate::m::a::X; }\n")
    (src / "m" / "c.rs").write_text("use super::X; // the parent's: not counted\n"
                                    "#[cfg(test)]\nmod tests { use crate::m::a::X; }\n")
    assert cr.circles(cr.edges(src)) == ["m::a <-> m::b"]
