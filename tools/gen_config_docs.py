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

def _stubs() -> dict[str, str]:
    """Every model of the core's table with the ``.pyi`` stub of its class."""
    sys.path.insert(0, str(ROOT / "python"))
    import parsched.config
    from parsched.config.table import rows

    out = {}
    for r in rows():
        module = getattr(parsched.config, r["class"]).__module__
        out[r["name"]] = "python/" + module.replace(".", "/") + ".pyi"
    return out


def _units() -> str:
    """The glossary's table of the simulated models and their time units."""
    from parsched.config.table import rows

    lines = ["| model | paper | time unit |", "|---|---|---|"]
    lines += [f"| `{r['name']}` | {r['page']['paper']} | {r['time_unit']} |"
              for r in rows("simulated")]
    return "\n".join(lines)


def _nav() -> str:
    """The site's Models section: the overview, then each page of the core's
    table of models once, in its order."""
    from parsched.config.table import rows

    lines, seen = ["      - Overview: models/index.md"], set()
    for r in rows():
        p = r["page"]
        if p["path"] not in seen:
            seen.add(p["path"])
            lines.append(f"      - {p['nav']}: {p['path']}")
    return "\n".join(lines)


#: Models converted in Rust whose Python class is not built yet: only their
#: key table is generated.
TABLE_ONLY: tuple[str, ...] = ()

#: Keys a class holds in a form of its own (a tuple the core spells back).
CLASS_TYPES: dict[str, dict[str, str]] = {}




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

    core_stubs = (ROOT / "python/parsched/_core.pyi").read_text()
    for model, stub in _stubs().items():
        edit("docs/formats/config-toml.md", f"schema table: {model}", markdown_table(model),
             "<!--")
        edit(stub, f"schema fields: {model}", stub_fields(model, types=CLASS_TYPES.get(model)),
             "#")
        # (the models whose input dict has a TypedDict there)
        if f"# BEGIN schema fields: {model}" in core_stubs:
            edit("python/parsched/_core.pyi", f"schema fields: {model}",
                 stub_fields(model, inputs=True), "#")
    edit("mkdocs.yml", "models nav", _nav(), "#")
    edit("docs/glossary.md", "models and units", _units(), "<!--")
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
