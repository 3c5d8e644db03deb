"""``parsched report``: one self-contained HTML page from real (miniature)
reproductions, rendered in headless Chromium.

The reproductions run once per session, shortened through their own knobs
(pools: ``length``; gang: ``--quick``; cosched: a smaller ``Plan``; fcs and
regions: ``--quick``; batch: a generated Lublin trace; desktop: only where the
runtime can run), so every
number on the page is one the reproductions computed.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile

import pytest

from conftest import needs_core, one_error_line, run_cli
from parsched.cli import main
from parsched.report import html as report_html

TINY_POOLS = {"jobs": 150, "warmup": 20, "reps": 2}


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


@pytest.fixture(scope="session")
def results(tmp_path_factory):
    """Output directories of real, shortened reproductions: {kind: path}."""
    import parsched
    from parsched.reproduce import cosched as rc
    from parsched.reproduce import pools
    from parsched.reproduce.gang import plan as gang_plan
    from parsched.reproduce.gang import reference as gang_reference
    from parsched.reproduce.gang.params import Length

    root = tmp_path_factory.mktemp("results")
    out = {}
    d = root / "pools"
    d.mkdir()
    pools.run(str(d), length=TINY_POOLS, progress=False)
    out["pools"] = d

    d = root / "gang"
    with pytest.MonkeyPatch.context() as mp:  # --quick, with shorter runs still
        mp.setattr(gang_plan, "QUICK", Length(rounds=100, k_min=50, k_max=5000, seeds=2,
                                              seeds_eq8=8))
        mp.setattr(gang_reference, "REFERENCE_SEEDS_EQ8", (48, 2))
        assert main(["reproduce", "gang", "--quick", "--out", str(d), "--workers", "1",
                     "--json"]) == 0
    out["gang"] = d

    d = root / "cosched"
    with pytest.MonkeyPatch.context() as mp:
        tiny = rc.Plan(scale=0.02, reps=1, mech_scale=0.02)
        mp.setattr(rc.Plan, "make", staticmethod(lambda quick: tiny))
        assert main(["reproduce", "cosched", "--quick", "--out", str(d), "--workers", "1",
                     "--json"]) == 0
    out["cosched"] = d

    for kind in ("fcs", "regions"):  # --quick: a few seconds each
        d = root / kind
        assert main(["reproduce", kind, "--quick", "--out", str(d), "--json"]) == 0
        out[kind] = d

    traces = root / "traces"
    traces.mkdir()
    parsched.generate_lublin(traces / "lublin_64.swf", procs=64, jobs=300, load=0.9, seed=3,
                             include_types=False)
    d = root / "batch"
    assert main(["reproduce", "batch", "--traces", str(traces), "--out", str(d),
                 "--json"]) == 0
    out["batch"] = d

    desktop = _desktop_results()
    if desktop:
        dd = root / "desktop"
        shutil.copytree(desktop, dd)
        out["desktop"] = dd
    return out


def _desktop_results() -> str | None:
    """A real ``reproduce desktop`` output (real processes, ~15 s) when asked
    for (PARSCHED_TEST_DESKTOP=1) and this machine can run one (root, cgroups,
    a C compiler), else None."""
    from parsched.errors import ConfigError, RuntimeUnavailable
    from parsched.reproduce import desktop as reproduce_desktop

    if os.environ.get("PARSCHED_TEST_DESKTOP") != "1":
        return None

    try:
        reproduce_desktop.check_runtime()
        reproduce_desktop.ensure_bsp(None)
    except (ConfigError, RuntimeUnavailable, OSError):
        return None
    d = tempfile.mkdtemp(prefix="parsched-desktop-test-")
    code = main(["reproduce", "desktop", "--quick", "--out", d, "--solo-seconds", "0.02",
                 "--reps", "1", "--json"])
    return d if code == 0 else None


@pytest.fixture(scope="session")
def report(results, tmp_path_factory):
    path = tmp_path_factory.mktemp("report") / "report.html"
    assert main(["report", *map(str, results.values()), "-o", str(path)]) == 0
    return path


# ------------------------------------------------------------------ structure


@needs_core
def test_desktop_section(results):
    if "desktop" not in results:
        pytest.skip("the desktop reproduction runs real processes: set PARSCHED_TEST_DESKTOP=1 "
                    "(needs root and cgroups)")
    sec = report_html.BUILDERS["desktop"](str(results["desktop"]))
    assert [c.name for c in sec.checks] == ["speedup", "near-ideal"]
    assert len(sec.tables) == 2 and {n for n, _ in sec.figures} == {"desktop.png",
                                                                    "granularity.png"}


@needs_core
def test_reproduce_batch_draws_schedules(results):
    d = results["batch"]
    for name in ("gantt_easy.png", "gantt_gang.png", "utilization_easy.png",
                 "utilization_gang.png"):
        assert (d / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
    md = (d / "batch.md").read_text()
    assert "![lublin_64 gang Gantt](gantt_gang.png)" in md


@needs_core
def test_every_seed_is_detected(results):
    for kind, d in results.items():
        assert report_html.detect(str(d)) == kind
    # a directory holding reproductions stands for them, in seed order
    root = os.path.dirname(str(results["pools"]))
    kinds = [k for k, _ in report_html.find_results([root])]
    assert kinds == [k for k in report_html.ORDER if k in results]


@needs_core
def test_page_is_self_contained_with_every_section(report, results):
    page = report.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    # nothing fetched from anywhere: no external src/href, no script, no stylesheet link
    assert not re.search(r"""(src|href)\s*=\s*['"](?!data:|#)""", page)
    assert "<script" not in page and "<link" not in page
    for kind in results:
        assert report_html.SEEDS[kind].title in page, kind
    # every figure each reproduction wrote is embedded, once
    imgs = re.findall(r"<img src='data:image/(png|svg\+xml);base64,", page)
    figures = sum(len([n for n in os.listdir(d) if n.endswith((".png", ".svg"))])
                  for d in results.values())
    assert len(imgs) == figures > 0
    # the paper beside parsched, the checks with badges, the explanations
    assert "The paper&#x27;s stated numbers beside parsched&#x27;s" in page
    assert "Tables 3-4: completion time (s), parsched / paper" in page
    assert "Headlines: paper, formula, simulation" in page
    assert page.count("class='badge pass'") + page.count("class='badge fail'") > 20
    assert "<b>Why:</b>" in page  # a miniature cosched run misses findings, explained
    # the overall count says the runs were quick (it read as reproductions failing)
    assert re.search(r"checks hold</span> <span class='mode'>from quick runs of [a-z, ]*gang",
                     page), "the quick runs are not said"
    assert "<nav class=\"toc\">" in page and page.count("<section id=") == len(results)
    for kind, d in results.items():
        sec = report_html.BUILDERS[kind](str(d))
        for c in sec.checks:  # each check's badge matches what the reproduction computed
            assert f"<code>{report_html.esc(c.name)}</code>" in page


@needs_core
def test_checks_follow_the_reproductions(results):
    import pandas as pd

    sec = report_html.BUILDERS["cosched"](str(results["cosched"]))
    f = pd.read_csv(results["cosched"] / "findings.csv")
    assert [c.name for c in sec.checks] == list(f["id"])
    assert [c.holds for c in sec.checks] == [bool(x) for x in f["holds"]]
    missed = [c for c in sec.checks if not c.holds]
    assert missed and all(c.why for c in missed if c.name in
                          __import__("parsched.reproduce.cosched").reproduce.cosched.EXPLANATIONS)
    g = report_html.BUILDERS["gang"](str(results["gang"]))
    gs = pd.read_csv(results["gang"] / "equations_summary.csv")
    for c, (_, r) in zip(g.checks, gs.iterrows(), strict=False):
        assert c.name == r["equation"]
        assert c.holds == (r["within_5pct"] == r["points_in_regime"] > 0)
        assert c.why  # the summary's "where and why they part" bullet
    for kind in ("fcs", "regions"):
        sec = report_html.BUILDERS[kind](str(results[kind]))
        f = pd.read_csv(results[kind] / "findings.csv")
        assert [c.name for c in sec.checks] == list(f["id"]), kind
        assert [c.holds for c in sec.checks] == [bool(x) for x in f["holds"]], kind
    r = report_html.BUILDERS["regions"](str(results["regions"]))
    titles = [t for t, _ in r.tables]
    assert any(t.startswith("Balancing") for t in titles)
    assert any(t.startswith("Figure 9 boundaries") for t in titles)
    b = report_html.BUILDERS["batch"](str(results["batch"]))
    assert [(c.name, c.holds) for c in b.checks] == [("determinism", True)]


@needs_core
def test_bad_input_is_one_line_exit_2(tmp_path, results):
    empty = tmp_path / "empty"
    empty.mkdir()
    out = tmp_path / "r.html"
    r = run_cli("report", str(empty), "-o", str(out))
    assert r.returncode == 2 and "is not the output of a reproduction" in one_error_line(r.stderr)
    r = run_cli("report", str(tmp_path / "missing"), "-o", str(out))
    assert r.returncode == 2 and "does not exist" in one_error_line(r.stderr)
    r = run_cli("report", cwd=str(tmp_path))  # no results/ here
    assert r.returncode == 2 and "no results" in one_error_line(r.stderr)
    (tmp_path / "results").mkdir()
    r = run_cli("report", cwd=str(tmp_path))
    assert r.returncode == 2 and "no reproduction output" in one_error_line(r.stderr)
    r = run_cli("report", str(results["pools"]), "-o", str(tmp_path / "r.txt"))
    assert r.returncode == 2 and "extension" in one_error_line(r.stderr)
    # a broken reproduction directory: one line, nothing written
    broken = tmp_path / "broken"
    shutil.copytree(results["pools"], broken)
    (broken / "paper_comparison.csv").write_text("not,a\n\"table")
    r = run_cli("report", str(broken), "-o", str(out))
    assert r.returncode == 2, r.stderr
    one_error_line(r.stderr)
    assert not out.exists() and not [n for n in os.listdir(tmp_path) if n.startswith(".parsched")]


@needs_core
def test_default_is_results_subdirectories(tmp_path, results):
    res = tmp_path / "results"
    res.mkdir()
    shutil.copytree(results["batch"], res / "batch")
    (res / "notes").mkdir()  # not a reproduction: skipped when searching results/*
    r = run_cli("report", cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert report_html.SEEDS["batch"].title in page and "class='badge pass'" in page


# ------------------------------------------------------------------ rendering


def _render(chromium: str, html_path: str, *args: str) -> subprocess.CompletedProcess:
    profile = tempfile.mkdtemp(prefix="parsched-chromium-")
    try:
        return subprocess.run(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             "--no-first-run", "--disable-extensions", "--disable-dev-shm-usage",
             f"--user-data-dir={profile}", "--virtual-time-budget=10000", *args,
             "file://" + os.path.abspath(html_path)],
            capture_output=True, text=True, timeout=120, check=False)
    finally:
        shutil.rmtree(profile, ignore_errors=True)


@needs_core
def test_renders_in_headless_chromium(report, tmp_path):
    chromium = _chromium()
    if chromium is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium; .ci/run does it)")
    import numpy as np
    from PIL import Image

    shot = tmp_path / "shot.png"
    r = _render(chromium, str(report), f"--screenshot={shot}", "--window-size=1280,2400")
    assert shot.exists(), r.stderr[-2000:]
    px = np.asarray(Image.open(shot).convert("L"), dtype=float)
    assert px.shape[1] == 1280
    assert px.std() > 20  # text, tables, badges: not a blank page
    assert (px < 128).mean() > 0.01  # dark ink somewhere
    # after rendering, every image decoded: a copy of the page with a probe
    # that writes each image's natural size into the DOM on load
    probe = tmp_path / "probe.html"
    page = report.read_text(encoding="utf-8")
    script = ("<script>window.addEventListener('load',function(){var n=0;"
              "for(const im of document.images){im.setAttribute('data-nw',"
              "im.complete?im.naturalWidth:-1);n++;}"
              "document.body.setAttribute('data-images',n);});</script>")
    probe.write_text(page.replace("</body>", script + "</body>"), encoding="utf-8")
    r = _render(chromium, str(probe), "--dump-dom")
    dom = r.stdout
    assert "data-images=" in dom, r.stderr[-2000:]
    n = int(re.search(r'data-images="(\d+)"', dom).group(1))
    widths = [int(w) for w in re.findall(r'data-nw="(-?\d+)"', dom)]
    assert n == len(widths) == page.count("<img ") > 0
    assert min(widths) > 100, widths  # every figure loaded and decoded
    # the tables survived parsing, with their headers
    assert dom.count("<table") >= 10 and dom.count("<th>") > 50


def test_markdown_subset():
    md = ("# Title\n\nSome *em* and **bold** and `a<b`.\n\n| a | b |\n|---|---|\n| x | 1.5 |\n\n"
          "* one\n  continued\n- two\n\n![Figure 3](fig3.png)\n")
    out = report_html.markdown_html(md, lambda alt, t: f"[{alt}->{t}]")
    assert "<h3>Title</h3>" in out and "<em>em</em>" in out and "<strong>bold</strong>" in out
    assert "<code>a&lt;b</code>" in out
    assert "<td class='num'>1.5</td>" in out and "<th>a</th>" in out
    assert "<li>one continued</li>" in out and "<li>two</li>" in out
    assert "[Figure 3->fig3.png]" in out


def test_score_badges():
    assert "badge pass'>3 of 3" in report_html.score_badge(3, 3)
    assert "badge partial'>1 of 3" in report_html.score_badge(1, 3)
    assert "badge fail'>0 of 3" in report_html.score_badge(0, 3)
    assert "no checks" in report_html.score_badge(0, 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))


def test_report_help_names_every_reproduction_it_reads():
    """`report --help` listed five of the seven kinds it reads."""
    from parsched.report.sections import BUILDERS

    r = run_cli("report", "--help")
    assert r.returncode == 0
    text = " ".join(r.stdout.split())
    for kind in BUILDERS:
        assert kind in text, kind


def test_check_ids_are_cut_between_words():
    """An id was cut mid-word ('fig-8-a-d-20-p-120-mean-over-poo')."""
    from parsched.report.markup import slug

    s = slug("Fig. 8(a) D=20, P=120: mean over pools of the response time")
    assert s == "fig-8-a-d-20-p-120-mean-over-pools-of-the"
    assert len(s) <= 48 and slug("short one") == "short-one"
    assert slug("x" * 60) == "x" * 48


def test_fcs_table1_fits_a_page(results):
    """Table 1 had eleven columns (one per number) and was cut at the page's
    edge: it now has one column per measure, parsched's value beside the
    paper's in each cell."""
    from parsched.report.sections import BUILDERS

    sec = BUILDERS["fcs"](str(results["fcs"]))
    body = next(b for t, b in sec.tables if t.startswith("Table 1"))
    header = re.search(r"<thead><tr>(.*?)</tr></thead>", body).group(1)
    assert header.count("<th>") <= 6, header
    rows = re.findall(r"<tr>(.*?)</tr>", body.split("<tbody>")[1])
    assert len(rows) == 5  # the five schemes
    assert all(r.count("· paper") == 5 for r in rows), rows[0]
