"""The allowlists of the code-shape checkers (``check_layers.py``,
``check_rust_modules.py``): what a checker found, against a file of one
finding a line (``#`` comments) that may only shrink."""

from __future__ import annotations

import pathlib


def against(found: list[str], path: str, what: str) -> int:
    """Prints each finding not in the allowlist at ``path`` (``what`` says
    what it is) and each allowed one no longer found; 1 if any, else 0."""
    allowed = {line.strip() for line in pathlib.Path(path).read_text().splitlines()
               if line.strip() and not line.startswith("#")}
    bad = [f for f in found if f not in allowed]
    gone = sorted(allowed - set(found))
    for f in bad:
        print(f"{what} and not allowed: {f}")
    for f in gone:
        print(f"allowed but gone (remove it from {path}): {f}")
    return 1 if bad or gone else 0
