"""``parsched report``: one self-contained HTML page from the ``reproduce`` outputs.

Each argument is the output directory of ``parsched reproduce pools | gang |
batch | desktop | fcs | cosched | regions`` (the seed is told from the files in it; a directory
holding such directories stands for them); with none, ``results/*`` is searched.
Per seed the page has a heading with the paper's title, the checks (holds or
not, with the evidence and the reproduction's own explanation of a departure),
the paper's numbers beside parsched's, every figure, and the reproduction's
``summary.md`` (rendered, folded). Figures are embedded as ``data:`` URIs and
the style sheet is inline: the page needs no network and no other file.

Everything shown is read from the directories: the report runs no simulation.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any

from parsched.errors import ConfigError
from parsched.report.markup import esc, markdown_html, score_badge
from parsched.report.page import CSS, PAGE, render_section
from parsched.report.sections import BUILDERS
from parsched.report.seeds import FIELD, ORDER, SEEDS, Check, Section

# the section builders, the pieces and the markup helpers live beside this module
# (sections.py, seeds.py, markup.py, page.py); these names stay importable from here
__all__ = ["BUILDERS", "ORDER", "SEEDS", "Check", "Section", "build_html", "detect", "esc",
           "find_results", "markdown_html", "score_badge", "write_report"]

# ------------------------------------------------------------------ finding


def detect(path: str) -> str | None:
    """The reproduction that wrote ``path`` (a key of :data:`SEEDS`), or None."""
    if not os.path.isdir(path):
        return None
    names = set(os.listdir(path))
    for kind in ORDER:
        if all(m in names for m in SEEDS[kind].marks):
            return kind
    return None


def find_results(dirs: Sequence[str] | None = None,
                 default_root: str = "results") -> list[tuple[str, str]]:
    """``(kind, directory)`` of every reproduction named by ``dirs`` (a
    reproduction's directory, or a directory holding some), in seed order; with
    no ``dirs``, the reproductions under ``default_root``. Raises
    :class:`ConfigError` (field RESULTS_DIR) for a path that is not one and when
    nothing is found."""
    found: list[tuple[str, str]] = []
    if not dirs:
        if not os.path.isdir(default_root):
            raise ConfigError(FIELD, f"no results: {default_root!r} is not a directory",
                              "the output directories of parsched reproduce ...")
        dirs_found = _children(default_root)
        if not dirs_found:
            raise ConfigError(FIELD, f"no reproduction output under {default_root!r}",
                              "run parsched reproduce "
                              "pools|gang|batch|desktop|fcs|cosched|regions first")
        found = dirs_found
    else:
        for d in dirs:
            if not os.path.exists(d):
                raise ConfigError(FIELD, f"{d!r} does not exist")
            if not os.path.isdir(d):
                raise ConfigError(FIELD, f"{d!r} is not a directory")
            kind = detect(d)
            if kind:
                found.append((kind, d))
                continue
            inner = _children(d)
            if not inner:
                raise ConfigError(FIELD, f"{d!r} is not the output of a reproduction",
                                  "a directory written by parsched reproduce "
                                  "pools|gang|batch|desktop|fcs|cosched|regions "
                                  "(or one holding some)")
            found += inner
    seen: set[str] = set()
    out = []
    for kind, d in sorted(found, key=lambda kd: (ORDER.index(kd[0]), kd[1])):
        key = os.path.realpath(d)
        if key not in seen:
            seen.add(key)
            out.append((kind, d))
    return out


def _children(root: str) -> list[tuple[str, str]]:
    out = []
    for name in sorted(os.listdir(root)):
        p = os.path.join(root, name)
        kind = detect(p) if not name.startswith(".") else None
        if kind:
            out.append((kind, p))
    return out



def _build(kind: str, directory: str) -> Section:
    """One section; a directory whose files do not read as the reproduction's
    (a truncated or foreign CSV) is a ConfigError naming it."""
    try:
        return BUILDERS[kind](directory)
    except ConfigError:
        raise
    except (KeyError, ValueError, IndexError, TypeError, AttributeError, OSError) as e:
        what = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
        raise ConfigError(FIELD, f"{directory!r} looks like a {kind} reproduction but cannot "
                          f"be read ({what})") from None


def build_html(results: Iterable[tuple[str, str]], *, title: str = "parsched: the seed papers "
               "reproduced") -> str:
    """The page for ``(kind, directory)`` pairs (see :func:`find_results`)."""
    from parsched import __version__

    sections = [_build(kind, d) for kind, d in results]
    bodies, toc = [], []
    for sec in sections:
        b, t = render_section(sec)
        bodies.append(b)
        toc.append(t)
    held = sum(c.holds for s in sections for c in s.checks)
    n = sum(len(s.checks) for s in sections)
    overall = score_badge(held, n) if n else ""
    quick = [s.kind for s in sections if "quick" in (s.mode or "").lower()]
    if quick and n:
        # a check that does not hold in a smaller run is not a failed reproduction
        overall += (f" <span class='mode'>from quick runs of {esc(', '.join(quick))} "
                    "(shorter than the papers': some checks need the full runs, "
                    "<code>parsched reproduce …</code> without <code>--quick</code>)</span>")
    lead = ("Each section is one reproduction's output directory: the paper's title, the "
            "checks (where one does not hold, the reproduction's own explanation), the "
            "paper's numbers beside parsched's, the figures, and the full write-up. "
            "Regenerate with <code>parsched reproduce …</code> then "
            "<code>parsched report</code>.")
    return PAGE.substitute(
        title=esc(title), css=CSS, lead=lead, overall=overall, toc="\n".join(toc),
        sections="\n".join(bodies),
        footer=f"parsched {esc(__version__)} · built from "
               + ", ".join(f"<code>{esc(d)}</code>" for _, d in results))


def write_report(dirs: Sequence[str] | None, out: str, *,
                 default_root: str = "results") -> dict[str, Any]:
    """Finds the reproductions, builds the page and writes it to ``out``
    atomically; returns ``{"out", "sections": [(kind, dir)], "bytes"}``."""
    from parsched._io import atomic_file, check_output_file

    check_output_file(out, "--output", (".html", ".htm"))
    results = find_results(dirs, default_root)
    page = build_html(results)
    with atomic_file(out) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        fh.write(page)
    return {"out": out, "sections": results, "bytes": len(page.encode("utf-8"))}


# ------------------------------------------------------------------ command


def cmd_report(args: Any) -> int:
    """Build one self-contained HTML page from the reproductions' outputs.

    RESULTS_DIR: output directories of parsched reproduce pools, gang, batch,
    cosched, fcs, regions or desktop (which one is told from the files in it; the
    list is sections.BUILDERS), or directories
    holding such directories; default: every reproduction under results/. Per
    seed: the paper's title, the checks (holds or not, with the reproduction's
    explanation where one does not), the paper's numbers beside parsched's, the
    figures and the full write-up (summary.md). Figures are embedded and the
    style is inline: the page needs no network and no other file. Written
    atomically; no reproduction found, or a directory that is not one: one line
    on stderr, exit 2.
    """
    res = write_report(args.dirs, args.output)
    kinds = ", ".join(f"{k} ({d})" for k, d in res["sections"])
    print(f"wrote {res['out']} ({res['bytes'] / 1e6:.1f} MB): {kinds}")
    return 0


def add_subcommand(sub: Any, formatter_class: Any) -> None:
    """Registers ``parsched report`` on the CLI's subparsers."""
    import inspect

    doc = inspect.cleandoc(cmd_report.__doc__ or "")
    p = sub.add_parser("report", help=doc.splitlines()[0], description=doc,
                       formatter_class=formatter_class)
    p.add_argument("dirs", nargs="*", metavar="RESULTS_DIR",
                   help="reproduction output directories (default: results/*)")
    p.add_argument("-o", "--output", default="report.html", metavar="FILE.html",
                   help="the page to write (default: report.html)")
    p.set_defaults(func=cmd_report)
