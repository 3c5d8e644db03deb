"""HTML pieces of the report page: escaping, tables of DataFrames, the holds/does
not hold badges, and the small Markdown subset the reproductions' write-ups use."""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from parsched.display import fmt_precise

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd


def esc(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _is_number(v: Any) -> bool:
    if isinstance(v, bool):
        return False
    if isinstance(v, (int, float)):
        return True
    try:
        import numpy as np
    except ImportError:  # pragma: no cover
        return False
    return isinstance(v, (np.integer, np.floating))


def html_table(df: pd.DataFrame, columns: Sequence[str] | None = None,
               fmt: Callable[[Any], str] = fmt_precise,
               headers: dict[str, str] | None = None,
               cell: Callable[[str, Any, Any], str | None] | None = None) -> str:
    """An HTML table of ``df``'s ``columns`` with cells by ``fmt`` (the same
    formatters as the Markdown tables); numbers right-aligned. ``cell(column,
    value, row)`` may return raw HTML for a cell."""
    columns = [c for c in (list(df.columns) if columns is None else columns) if c in df.columns]
    headers = headers or {}
    head = "".join(f"<th>{esc(headers.get(c, c))}</th>" for c in columns)
    # a column of numbers is right-aligned; one that mixes numbers and text
    # (a paper's "≈ 4 / ≈ 1.2" beside 0.8) is left-aligned throughout
    numeric = {c: all(_is_number(_maybe_number(v)) or v is None or v == ""
                      for v in df[c]) for c in columns}
    rows = []
    for _, r in df.iterrows():
        tds = []
        for c in columns:
            v = _maybe_number(r[c])
            raw = cell(c, v, r) if cell else None
            if raw is not None:
                tds.append(f"<td>{raw}</td>")
                continue
            num = numeric[c] and _is_number(v)
            tds.append(f"<td class='num'>{esc(fmt(v))}</td>" if num else f"<td>{esc(fmt(v))}</td>")
        rows.append("<tr>" + "".join(tds) + "</tr>")
    return (f"<div class='tw'><table><thead><tr>{head}</tr></thead><tbody>"
            + "".join(rows) + "</tbody></table></div>")


def _maybe_number(v: Any) -> Any:
    """A cell read back from a mixed CSV column as text ("0.2790040000000001")
    as the number it is, so that the table's formatter rounds it."""
    if isinstance(v, str) and re.fullmatch(r"\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*", v):
        x = float(v)
        return int(x) if x.is_integer() and "." not in v and "e" not in v.lower() else x
    return v


def slug(text: str, most: int = 48) -> str:
    """An id from ``text``: lower-case words joined by ``-``, at most ``most``
    characters, cut between words (a cut word read as a typo: "…-over-poo")."""
    s = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    if len(s) <= most:
        return s
    cut = s.rfind("-", 0, most + 1)
    return s[:cut] if cut > 0 else s[:most]


def drop_lead_in(text: str) -> str:
    """``text`` without a last sentence that introduces a table (ends with ':')."""
    text = text.strip()
    if text.endswith(":"):
        cut = max(text.rfind(". ", 0, len(text) - 1), text.rfind("; ", 0, len(text) - 1))
        text = text[:cut + 1] if cut > 0 else text
    return text


def badge(holds: bool | None, text: str | None = None) -> str:
    if holds is None:
        return f"<span class='badge info'>{esc(text or 'n/a')}</span>"
    cls, label = ("pass", "holds") if holds else ("fail", "does not hold")
    return f"<span class='badge {cls}'>{esc(text or label)}</span>"


def score_badge(held: int, n: int) -> str:
    """"k of n checks hold": green when all hold, amber when some, red when none."""
    if not n:
        return badge(None, "no checks")
    cls = "pass" if held == n else "partial" if held else "fail"
    return f"<span class='badge {cls}'>{held} of {n} checks hold</span>"


def inline(text: str) -> str:
    """Markdown inline markup (code, bold, italics) on escaped text."""
    parts = re.split(r"(`[^`]*`)", text)
    out = []
    for p in parts:
        if len(p) >= 2 and p.startswith("`") and p.endswith("`"):
            out.append(f"<code>{esc(p[1:-1])}</code>")
            continue
        s = esc(p)
        s = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", s)
        s = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"<em>\1</em>", s)
        out.append(s)
    return "".join(out)


IMG = re.compile(r"!\[([^\]]*)\]\(([^)]+)\)")


def markdown_html(md: str, figure_link: Callable[[str, str], str] | None = None) -> str:
    """The Markdown the reproductions write (headings, paragraphs, bullet lists
    with continuation lines, pipe tables, images, inline code and bold) as
    HTML. Images become ``figure_link(alt, target)`` (default: dropped)."""
    lines = md.splitlines()
    out: list[str] = []
    para: list[str] = []
    items: list[str] = []

    def flush() -> None:
        if para:
            out.append("<p>" + inline(" ".join(para)) + "</p>")
            para.clear()
        if items:
            out.append("<ul>" + "".join(f"<li>{inline(i)}</li>" for i in items) + "</ul>")
            items.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        s = line.strip()
        if not s:
            flush()
            i += 1
            continue
        m = re.match(r"^(#{1,6})\s+(.*)$", s)
        if m:
            flush()
            level = min(6, len(m.group(1)) + 2)  # the page's own h1/h2 come first
            out.append(f"<h{level}>{inline(m.group(2))}</h{level}>")
            i += 1
            continue
        if s.startswith("|") and i + 1 < len(lines) and re.match(r"^\|?\s*:?-{3,}",
                                                                   lines[i + 1].strip()):
            flush()
            rows = []
            while i < len(lines) and lines[i].strip().startswith("|"):
                rows.append(lines[i].strip())
                i += 1
            cells = [[c.strip() for c in r.strip("|").split("|")] for r in rows]
            head = "".join(f"<th>{inline(c)}</th>" for c in cells[0])
            body = []
            for r in cells[2:]:
                tds = "".join(
                    f"<td class='num'>{inline(c)}</td>" if _looks_numeric(c)
                    else f"<td>{inline(c)}</td>" for c in r)
                body.append(f"<tr>{tds}</tr>")
            out.append(f"<div class='tw'><table><thead><tr>{head}</tr></thead><tbody>"
                       + "".join(body) + "</tbody></table></div>")
            continue
        m = IMG.fullmatch(s)
        if m:
            flush()
            if figure_link:
                out.append(f"<p class='figref'>{figure_link(m.group(1), m.group(2))}</p>")
            i += 1
            continue
        m = re.match(r"^[*-]\s+(.*)$", s)
        if m and not line.startswith("  "):
            if para:
                flush()
            items.append(m.group(1))
            i += 1
            continue
        if items and line.startswith("  "):
            items[-1] += " " + s
            i += 1
            continue
        para.append(s)
        i += 1
    flush()
    return "\n".join(out)


def _looks_numeric(text: str) -> bool:
    return bool(re.fullmatch(r"[-+−]?[\d.,]+(e[-+]?\d+)?%?", text.strip()))
