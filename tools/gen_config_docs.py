#!/usr/bin/env python3
"""Regenerates what the Rust core's configuration schemas define.

The keys of each model are declared once, in Rust (``parsched_core::schema``),
and exported through ``parsched._core.schema(model)``. This script writes,
between ``BEGIN schema ...`` / ``END schema ...`` marker lines:

* the key table of each model in ``docs/formats/config-toml.md``;
* the field annotations of each model's config class in its ``.pyi`` stub
  (``python/parsched/config/MODEL.pyi``) and of its ``TypedDict`` in
  ``python/parsched/_core.pyi``.

``python tools/gen_config_docs.py`` rewrites the files; ``--check`` only
reports the stale ones (exit status 1), as ``tests/test_config_schema.py``
does. Needs the built extension (``maturin develop``).
"""

from __future__ import annotations

import argparse
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent

#: Models whose keys come from a schema, with the class stub of each.
MODELS = {
    "pools": "python/parsched/config/pools.pyi",
    "barrier": "python/parsched/config/barrier.pyi",
    "batch": "python/parsched/config/batch.pyi",
    "cosched": "python/parsched/config/cosched.pyi",
    "fcs": "python/parsched/config/fcs.pyi",
    "fcs_figure": "python/parsched/config/fcs.pyi",
    "regions": "python/parsched/config/regions.pyi",
    "lublin": "python/parsched/config/lublin.pyi",
}

#: Models converted in Rust whose Python class is not built yet: only their
#: key table is generated.
TABLE_ONLY: tuple[str, ...] = ()

#: Keys a class holds in a form of its own (a tuple the core spells back).
CLASS_TYPES = {"fcs": {"jobs": "tuple[tuple[float, ...], ...]"},
               "fcs_figure": {"schedulers": "tuple[str, ...]"}}


#: Models whose input dict has a TypedDict in ``python/parsched/_core.pyi``.
CORE_STUBS = ("pools", "barrier", "batch", "cosched")


def _replace(text: str, tag: str, body: str, comment: str) -> str:
    """``text`` with the lines between ``COMMENT BEGIN TAG`` and
    ``COMMENT END TAG`` replaced by ``body``."""
    begin, end = f"{comment} BEGIN {tag}", f"{comment} END {tag}"
    pat = re.compile(rf"(^[ \t]*{re.escape(begin)}[^\n]*\n).*?(^[ \t]*{re.escape(end)})",
                     re.S | re.M)
    if not pat.search(text):
        raise SystemExit(f"marker {begin!r} ... {end!r} not found")
    return pat.sub(lambda m: m.group(1) + body + "\n" + m.group(2), text, count=1)


def orders_table() -> str:
    """The table of ``docs/policies/batch-orders.md``: a row per queue
    order of the core's one table (``_core.queue_orders()``)."""
    from parsched import _core

    lines = ["| `order` | score, lowest first | which jobs go first | source |",
             "|---|---|---|---|"]
    lines += [f"| `{o['name']}` | {o['formula']} | {o['doc']} | {o['source']} |"
              for o in _core.queue_orders()]
    return "\n".join(lines)


def generated() -> dict[pathlib.Path, str]:
    """Every generated file's expected text."""
    sys.path.insert(0, str(ROOT / "python"))
    from parsched.config.schema import markdown_table, stub_fields

    out: dict[pathlib.Path, str] = {}

    def edit(rel: str, tag: str, body: str, comment: str) -> None:
        path = ROOT / rel
        text = out.get(path) or path.read_text()
        out[path] = _replace(text, tag, body, comment)

    for model, stub in MODELS.items():
        edit("docs/formats/config-toml.md", f"schema table: {model}", markdown_table(model),
             "<!--")
        edit(stub, f"schema fields: {model}", stub_fields(model, types=CLASS_TYPES.get(model)),
             "#")
        if model in CORE_STUBS:
            edit("python/parsched/_core.pyi", f"schema fields: {model}",
                 stub_fields(model, inputs=True), "#")
    for model in TABLE_ONLY:
        edit("docs/formats/config-toml.md", f"schema table: {model}", markdown_table(model),
             "<!--")
    edit("docs/policies/batch-orders.md", "orders table", orders_table(), "<!--")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only report stale files")
    args = ap.parse_args(argv)
    stale = [p for p, text in generated().items() if p.read_text() != text]
    if args.check:
        for p in stale:
            print(f"stale: {p.relative_to(ROOT)} (run tools/gen_config_docs.py)")
        return 1 if stale else 0
    for p, text in generated().items():
        if p in stale:
            p.write_text(text)
            print(f"wrote {p.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
