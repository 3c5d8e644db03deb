"""The report page's frame: one section's HTML and table-of-contents entry
(:func:`render_section`, figures embedded as ``data:`` URIs), the inline style
sheet (:data:`CSS`) and the page template (:data:`PAGE`)."""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Callable
from string import Template

from parsched.report.markup import badge, esc, inline, markdown_html, score_badge
from parsched.report.seeds import Section


def _data_uri(path: str) -> str:
    ext = os.path.splitext(path)[1].lower()
    mime = {".png": "image/png", ".svg": "image/svg+xml"}[ext]
    with open(path, "rb") as fh:
        data = base64.b64encode(fh.read()).decode("ascii")
    return f"data:{mime};base64,{data}"


def _figure_id(sec: Section, name: str) -> str:
    return f"{sec.anchor}-fig-{re.sub(r'[^A-Za-z0-9_-]+', '-', name)}"


def render_section(sec: Section, figure_src: Callable[[str], str] | None = None,
                   heading: bool = True) -> tuple[str, str]:
    """(body html, toc entry html) of one reproduction. ``figure_src(path)`` is
    the ``src`` of a figure file (default: the file embedded as a ``data:``
    URI); ``heading=False`` leaves out the ``<h2>`` title (a page that has its
    own, as the documentation site's)."""
    s = sec.seed
    a = sec.anchor
    held = sum(c.holds for c in sec.checks)
    n = len(sec.checks)
    score = score_badge(held, n)
    parts = [f"<section id='{a}'>",
             f"<h2>{esc(s.title)}</h2>" if heading else "",
             f"<p class='cite'>{esc(s.cite)} · <code>{esc(s.command)}</code> → "
             f"<code>{esc(sec.path)}</code> · {score}</p>"]
    if sec.mode:
        parts.append(f"<p class='mode'>{inline(sec.mode)}</p>")
    if sec.intro:
        parts.append(f"<p>{inline(sec.intro)}</p>")
    toc_sub = []
    if sec.checks:
        parts.append(f"<h3 id='{a}-checks'>Checks: {held} of {n} hold</h3>")
        toc_sub.append(f"<li><a href='#{a}-checks'>Checks</a></li>")
        if sec.note:
            parts.append(f"<p class='note'>{inline(sec.note)}</p>")
        rows = []
        told: dict[str, str] = {}  # an explanation shared by several checks: once
        for c in sorted(sec.checks, key=lambda c: c.holds):
            why = ""
            if c.why and not c.holds:
                if c.why in told:
                    why = (f"<div class='why'><b>Why:</b> as for <code>{esc(told[c.why])}"
                           "</code> above.</div>")
                else:
                    told[c.why] = c.name
                    why = f"<div class='why'><b>Why:</b> {inline(c.why)}</div>"
            rows.append(f"<tr class='{'ok' if c.holds else 'bad'}'><td>{badge(c.holds)}</td>"
                        f"<td><code>{esc(c.name)}</code></td><td>{inline(c.claim)}{why}</td>"
                        f"<td>{inline(c.evidence)}</td></tr>")
        parts.append("<div class='tw'><table class='checks'><thead><tr><th></th><th>check</th>"
                     "<th>claim (and why, where it does not hold)</th><th>parsched</th></tr>"
                     "</thead><tbody>" + "".join(rows) + "</tbody></table></div>")
    elif sec.note:
        parts.append(f"<p class='note'>{inline(sec.note)}</p>")
    if sec.tables:
        parts.append(f"<h3 id='{a}-tables'>Tables</h3>")
        toc_sub.append(f"<li><a href='#{a}-tables'>Tables</a></li>")
        for title, body in sec.tables:
            if title:
                parts.append(f"<h4>{esc(title)}</h4>")
            parts.append(body)
    if sec.figures:
        parts.append(f"<h3 id='{a}-figures'>Figures</h3>")
        toc_sub.append(f"<li><a href='#{a}-figures'>Figures</a></li>")
        for name, caption in sec.figures:
            uri = (figure_src or _data_uri)(os.path.join(sec.path, name))
            cap = f"{esc(caption)} — " if caption else ""
            parts.append(f"<figure id='{_figure_id(sec, name)}'><img src='{uri}' "
                         f"alt='{esc(name)}' loading='eager'><figcaption>{cap}"
                         f"<code>{esc(name)}</code></figcaption></figure>")
    if sec.summary_md:
        names = {n for n, _ in sec.figures}

        def link(alt: str, target: str) -> str:
            base = os.path.basename(target)
            if base in names:
                return f"<a href='#{_figure_id(sec, base)}'>↑ figure {esc(base)}</a>"
            return f"(figure {esc(base)} not found)"

        src = "summary.md" if sec.kind != "batch" else "batch.md"
        parts.append(f"<h3 id='{a}-summary'>The reproduction's write-up</h3>")
        toc_sub.append(f"<li><a href='#{a}-summary'>Write-up</a></li>")
        parts.append(f"<details><summary>{esc(src)} — every table and explanation the "
                     f"reproduction wrote</summary><div class='md'>"
                     f"{markdown_html(sec.summary_md, link)}</div></details>")
    parts.append("</section>")
    toc = (f"<li><a href='#{a}'>{esc(s.title)}</a> {score}"
           f"<div class='tocsub'>{esc(s.cite)}</div><ul>{''.join(toc_sub)}</ul></li>")
    return "\n".join(parts), toc


CSS = """
:root { --fg:#1d232b; --muted:#5b6675; --line:#d9dee5; --bg:#fff; --zebra:#f6f8fa;
  --accent:#2457a6; --pass:#1a7f37; --passbg:#dafbe1; --fail:#b42318; --failbg:#ffe4e0; }
* { box-sizing: border-box; }
body { margin:0; color:var(--fg); background:var(--bg);
  font:16px/1.55 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif; }
main { max-width: 1180px; margin: 0 auto; padding: 2rem 1.5rem 4rem; }
h1 { font-size: 2rem; margin: 0 0 .3rem; letter-spacing: -.01em; }
h2 { font-size: 1.55rem; margin: 3rem 0 .2rem; padding-top: 1rem;
  border-top: 3px solid var(--accent); }
h3 { font-size: 1.2rem; margin: 2rem 0 .6rem; }
h4 { font-size: 1rem; margin: 1.4rem 0 .4rem; color: var(--muted); }
a { color: var(--accent); text-decoration: none; } a:hover { text-decoration: underline; }
code { font: .86em/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;
  background:#eef1f5; padding:.05em .3em; border-radius:4px; }
.lead { color: var(--muted); max-width: 60rem; }
.cite { color: var(--muted); margin: .2rem 0 1rem; }
.mode, .note { background:#f3f6fb; border-left:4px solid var(--accent); padding:.6rem .9rem;
  border-radius: 0 6px 6px 0; font-size:.93rem; }
nav.toc { background:#f8fafc; border:1px solid var(--line); border-radius:10px;
  padding: 1rem 1.4rem; margin: 1.5rem 0 2rem; }
nav.toc > ol { margin: .3rem 0 0; padding-left: 1.3rem; }
nav.toc li { margin: .35rem 0; }
nav.toc ul { margin: .15rem 0 .2rem; padding-left: 1.1rem; font-size: .9rem;
  display:flex; gap: 1rem; list-style: none; }
.tocsub { color: var(--muted); font-size: .85rem; }
.badge { display:inline-block; font-size:.78rem; font-weight:600; padding:.12em .6em;
  border-radius: 999px; white-space: nowrap; vertical-align: middle; }
.badge.pass { color:var(--pass); background:var(--passbg); border:1px solid #aceebb; }
.badge.fail { color:var(--fail); background:var(--failbg); border:1px solid #ffc1b8; }
.badge.partial { color:#8a4b00; background:#fff1d6; border:1px solid #f5cf8a; }
.badge.info { color:var(--muted); background:#eef1f5; border:1px solid var(--line); }
.tw { overflow-x: auto; margin: .4rem 0 1.2rem; }
table { border-collapse: collapse; font-size: .86rem; min-width: 40%; }
th, td { padding: .35rem .6rem; border-bottom: 1px solid var(--line); text-align: left;
  vertical-align: top; }
thead th { background:#eef2f7; position: sticky; top: 0; font-weight: 600;
  border-bottom: 2px solid #c5ccd6; }
tbody tr:nth-child(even) { background: var(--zebra); }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.checks td:first-child { white-space: nowrap; }
table.checks tr.bad td { background: #fff8f7; }
.paper { color: var(--muted); white-space: nowrap; }
.why { margin-top: .35rem; color: #4a3b36; font-size: .84rem; }
figure { margin: 1.2rem 0 2rem; text-align: center; }
figure img { max-width: 100%; height: auto; border: 1px solid var(--line); border-radius: 6px;
  box-shadow: 0 1px 3px rgba(0,0,0,.06); }
figcaption { color: var(--muted); font-size: .88rem; margin-top: .4rem; }
details { border:1px solid var(--line); border-radius:8px; padding:.5rem .9rem; }
details > summary { cursor: pointer; font-weight: 600; }
.md h3, .md h4, .md h5 { margin-top: 1.4rem; }
.figref { font-size: .9rem; }
footer { margin-top: 3rem; color: var(--muted); font-size: .85rem;
  border-top: 1px solid var(--line); padding-top: 1rem; }
"""

PAGE = Template("""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>$title</title>
<style>$css</style>
</head>
<body>
<main>
<h1>$title</h1>
<p class="lead">$lead</p>
<nav class="toc"><b>Contents</b> $overall<ol>$toc</ol></nav>
$sections
<footer>$footer</footer>
</main>
</body>
</html>
""")
