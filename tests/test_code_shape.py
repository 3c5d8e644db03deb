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
