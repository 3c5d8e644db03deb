#!/usr/bin/env python3
"""Builds the documentation site: ``make docs``.

1. Runs the reproductions (``parsched reproduce KIND --quick``) into
   ``--results`` (default ``build/docs-results``), unless they are there
   already (``--rerun`` runs them again); ``desktop`` only where real
   processes can run (root, cgroups, a C compiler).
2. Assembles ``build/docs-src``: ``docs/``, the README as the home page, the
   CHANGELOG, and the generated pages (``tools/docs_pages.py``).
3. Builds ``build/site`` with mkdocs-material (``mkdocs.yml``), warnings as
   errors.
4. Checks every link and image of every built page: the file exists and the
   ``#anchor`` is an id in it. External (http) links are listed, not fetched.

Exit status 0 when the site is built and every link holds; 1 otherwise, with
one line per problem.
"""

from __future__ import annotations

import argparse
import html.parser
import os
import pathlib
import re
import shutil
import subprocess
import sys
import time
import urllib.parse

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "tools"))

import docs_pages  # noqa: E402

from parsched.report.seeds import ORDER as KINDS  # noqa: E402  (the reproductions, in order)

SITE_CSS = """
.badge { display:inline-block; font-size:.75rem; font-weight:600; padding:.1em .55em;
  border-radius:999px; white-space:nowrap; }
.badge.pass { color:#1a7f37; background:#dafbe1; }
.badge.fail { color:#b42318; background:#ffe4e0; }
.badge.partial { color:#8a4b00; background:#fff1d6; }
.badge.info { color:#5b6675; background:#eef1f5; }
.cite { color:#5b6675; }
.mode, .note { background:#f3f6fb; border-left:4px solid #3f51b5; padding:.5rem .8rem; }
.paper { color:#5b6675; white-space:nowrap; }
.why { margin-top:.3rem; font-size:.85em; color:#4a3b36; }
table.checks tr.bad td { background:#fff8f7; }
.tw { overflow-x:auto; }
td.num { text-align:right; font-variant-numeric:tabular-nums; white-space:nowrap; }
figure img { max-width:100%; height:auto; }
"""


# ------------------------------------------------------------------ reproductions


def desktop_possible() -> str | None:
    """None when ``reproduce desktop`` can run here, else why not."""
    try:
        from parsched.reproduce import desktop

        desktop.check_runtime()
        desktop.ensure_bsp(None)
    except Exception as e:
        return str(e).splitlines()[0] if str(e) else type(e).__name__
    return None


def run_reproductions(results: pathlib.Path, rerun: bool, quick_args: dict[str, list[str]]
                      ) -> dict[str, str]:
    """``{kind: output directory}`` of every reproduction run (or found)."""
    from parsched.report.html import detect

    found: dict[str, str] = {}
    code = _code_mtime()
    for kind in KINDS:
        d = results / kind
        if d.is_dir() and detect(str(d)) == kind and not rerun and _mtime(d) >= code:
            found[kind] = str(d)
            continue
        if kind == "desktop":
            why = desktop_possible()
            if why:
                print(f"docs: reproduce desktop not run here ({why})", file=sys.stderr)
                continue
        if d.exists():
            shutil.rmtree(d)
        cmd = [sys.executable, "-m", "parsched", "reproduce", kind, "--out", str(d),
               *quick_args.get(kind, ["--quick"])]
        t0 = time.monotonic()
        r = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if r.returncode != 0:
            raise SystemExit(f"docs: {' '.join(cmd[2:])} failed ({r.returncode}):\n"
                             + r.stderr[-3000:])
        print(f"docs: reproduce {kind} in {time.monotonic() - t0:.0f} s", file=sys.stderr)
        found[kind] = str(d)
    return found


def _mtime(d: pathlib.Path) -> float:
    """When the output in ``d`` was written (its newest file)."""
    return max((p.stat().st_mtime for p in d.iterdir()), default=0.0)


def _code_mtime() -> float:
    """When the code that writes the reproductions last changed: the Python
    package and the built extension. Older outputs are run again, so the site
    cannot show results the code would no longer give."""
    pkg = ROOT / "python" / "parsched"
    files = [*pkg.rglob("*.py"), *pkg.glob("_core*.so")]
    return max((p.stat().st_mtime for p in files), default=0.0)


#: How the site runs each reproduction: the quick runs, and for ``desktop``
#: the shortest real one (about 15 s of real processes).
QUICK_ARGS = {"desktop": ["--quick", "--solo-seconds", "0.02", "--reps", "1"]}


# ------------------------------------------------------------------ assembling


def _home(readme: str) -> str:
    """The README as the site's home page: links into ``docs/`` made
    relative to the site, directory links to their index pages."""
    def fix(m: re.Match[str]) -> str:
        text, target = m.group(1), m.group(2)
        if target.startswith(("http://", "https://", "#", "mailto:")):
            return m.group(0)
        if target == "CHANGELOG.md":
            target = "changelog.md"
        target = target.removeprefix("docs/")
        if target.endswith("/"):
            target += "index.md"
        return f"[{text}]({target})"

    return re.sub(r"\[([^\]]+)\]\(([^)\s]+)\)", fix, readme)


def _title(md_path: pathlib.Path) -> str:
    for line in md_path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            return line.lstrip("#").strip().strip("`")
    return md_path.stem


def _index(src: pathlib.Path, sub: str, heading: str, lead: str) -> str:
    out = [f"# {heading}", "", lead, ""]
    for p in sorted((src / sub).rglob("*.md")):
        rel = p.relative_to(src / sub).as_posix()
        if rel != "index.md":
            out.append(f"- [{_title(p)}]({rel})")
    return "\n".join(out) + "\n"


def assemble(src: pathlib.Path, results: dict[str, str]) -> None:
    if src.exists():
        shutil.rmtree(src)
    shutil.copytree(ROOT / "docs", src)

    def w(rel: str, text: str) -> None:
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text, encoding="utf-8")

    w("index.md", _home((ROOT / "README.md").read_text(encoding="utf-8")))
    w("changelog.md", (ROOT / "CHANGELOG.md").read_text(encoding="utf-8"))
    w("assets/parsched.css", SITE_CSS)
    w("policies/index.md", _index(src, "policies", "Policies",
                                  "One page per policy and mechanism, each citing its paper."))
    w("formats/index.md", _index(src, "formats", "File formats",
                                 "Every file parsched reads or writes."))
    w("measurements/index.md", _index(
        src, "measurements", "Measured on this machine",
        "Real-process measurements kept with the repository (the date is in each name)."))
    w("models/index.md", docs_pages.models_index())
    for m in docs_pages.MODELS:
        w(f"models/{m.name}.md", docs_pages.model_page(m))
    rep = src / "reproductions"
    rep.mkdir(parents=True, exist_ok=True)
    w("reproductions/index.md", docs_pages.reproductions_index(results))
    for kind in KINDS:
        if kind in results:
            w(f"reproductions/{kind}.md",
              docs_pages.reproduction_page(kind, results[kind], str(rep)))
        else:
            w(f"reproductions/{kind}.md",
              f"# `parsched reproduce {kind}`\n\n{docs_pages.REPRODUCTIONS[kind]}\n\n"
              "Not run where this site was built: it runs real processes and needs root, "
              "cgroups and a C compiler. Run it with "
              f"`parsched reproduce {kind} --quick`, then `parsched report`.\n")
    w("cli.md", docs_pages.cli_page())
    w("api.md", docs_pages.api_page())


# ------------------------------------------------------------------ link check


class _Page(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.refs: list[tuple[str, str]] = []  # (attribute, url)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        for key in ("id", "name"):
            if a.get(key) and (key == "id" or tag == "a"):
                self.ids.add(a[key] or "")
        if tag == "a" and a.get("href"):
            self.refs.append(("href", a["href"] or ""))
        if tag in ("img", "script") and a.get("src"):
            self.refs.append(("src", a["src"] or ""))
        if tag == "link" and a.get("href"):
            self.refs.append(("href", a["href"] or ""))


def check_links(site: pathlib.Path) -> tuple[list[str], int, set[str]]:
    """(problems, links checked, external urls) over every page of ``site``."""
    pages: dict[pathlib.Path, _Page] = {}
    for p in site.rglob("*.html"):
        if p.name == "404.html" and p.parent == site:
            continue  # the server's error page: its links are root-absolute by design
        parser = _Page()
        parser.feed(p.read_text(encoding="utf-8"))
        pages[p.resolve()] = parser
    problems, n, external = [], 0, set()
    for path, page in sorted(pages.items()):
        for attr, url in page.refs:
            parts = urllib.parse.urlsplit(url)
            if parts.scheme in ("http", "https", "mailto"):
                external.add(url)
                continue
            if parts.scheme == "data" or url.startswith("javascript:"):
                continue
            n += 1
            target = (path.parent / urllib.parse.unquote(parts.path)).resolve() \
                if parts.path else path
            if target.is_dir():
                target = target / "index.html"
            rel = path.relative_to(site.resolve())
            if not target.exists():
                problems.append(f"{rel}: {attr}={url!r}: no such file")
                continue
            if parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else set()
                if urllib.parse.unquote(parts.fragment) not in ids:
                    problems.append(f"{rel}: {attr}={url!r}: no id "
                                    f"{parts.fragment!r} in {target.name}")
    return problems, n, external


# ------------------------------------------------------------------ main


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", default=str(ROOT / "build" / "docs-results"),
                    help="where the reproductions' outputs are (run there when missing)")
    ap.add_argument("--rerun", action="store_true", help="run the reproductions again")
    ap.add_argument("--src", default=str(ROOT / "build" / "docs-src"))
    ap.add_argument("--site", default=str(ROOT / "build" / "site"))
    args = ap.parse_args(argv)
    results = run_reproductions(pathlib.Path(args.results), args.rerun, QUICK_ARGS)
    src, site = pathlib.Path(args.src), pathlib.Path(args.site)
    assemble(src, results)
    cmd = [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet",
           "-f", str(ROOT / "mkdocs.yml"), "--site-dir", str(site)]
    env = dict(os.environ, PARSCHED_DOCS_SRC=str(src))
    r = subprocess.run(cmd, cwd=ROOT, env=env, check=False, capture_output=True, text=True)
    out = (r.stdout + r.stderr).strip()
    if r.returncode != 0 or re.search(r"^(WARNING|ERROR)", out, re.M):
        print(out, file=sys.stderr)
        print("docs: mkdocs build failed (warnings are errors)", file=sys.stderr)
        return 1
    problems, n, external = check_links(site)
    for p in problems:
        print(f"docs: broken link: {p}", file=sys.stderr)
    pages = sum(1 for _ in site.rglob("*.html"))
    print(f"docs: {pages} pages in {site}, {n} links and images checked, "
          f"{len(problems)} broken, {len(external)} external (not fetched)", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
