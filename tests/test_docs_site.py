"""The documentation site (``make docs``, ``tools/docs_site.py``): every page
renders in headless Chromium with its images decoded and no broken link, it
shows every model and every reproduction, and the build's own checks can fail.

``make test`` builds the site first (``make docs``: mkdocs with warnings as
errors and the link check) and points ``PARSCHED_DOCS_SITE`` at it; run alone,
this file builds it into a temporary directory from quick reproductions.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import threading

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

pytest.importorskip("mkdocs", reason="the docs tools come with make test (mkdocs-material)")

import docs_pages  # noqa: E402
import docs_site  # noqa: E402
import griffe_roles  # noqa: E402


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> pathlib.Path:
    ready = os.environ.get("PARSCHED_DOCS_SITE")
    if ready:
        return pathlib.Path(ready)
    root = tmp_path_factory.mktemp("docs")
    code = docs_site.main(["--results", str(ROOT / "build" / "docs-results"),
                           "--src", str(root / "src"), "--site", str(root / "site")])
    assert code == 0
    return root / "site"


# ------------------------------------------------------------------ content


def test_every_model_and_reproduction_has_a_page(site):
    import parsched._core as core
    from parsched.report.seeds import SEEDS

    for m in docs_pages.MODELS:
        page = (site / "models" / f"{m.name}.html").read_text(encoding="utf-8")
        for schema in m.schemas:  # every key of the model's schema is listed
            for field in core.schema(schema):
                assert f"<code>{field['key']}</code>" in page, (m.name, field["key"])
    for kind in SEEDS:
        page = (site / "reproductions" / f"{kind}.html").read_text(encoding="utf-8")
        assert SEEDS[kind].title.split(":")[0][:40] in page, kind
    nav = (site / "index.html").read_text(encoding="utf-8")
    for kind in SEEDS:
        assert f"reproductions/{kind}.html" in nav, kind
    for m in docs_pages.MODELS:
        assert f"models/{m.name}.html" in nav, m.name


def test_reproduction_pages_put_the_papers_numbers_beside_parscheds(site):
    from parsched.report.html import _build

    results = ROOT / "build" / "docs-results"
    page = (site / "reproductions" / "pools.html").read_text(encoding="utf-8")
    assert "holds" in page and "paper" in page
    if (results / "pools").is_dir() and not os.environ.get("PARSCHED_DOCS_SITE"):
        sec = _build("pools", str(results / "pools"))
        for c in sec.checks:  # each check's evidence, as the report shows it
            assert c.name in page
    figs = list((site / "reproductions" / "pools").glob("*.png"))
    assert len(figs) >= 7


def test_cli_page_has_every_command(site):
    from parsched.cli import build_parser

    page = (site / "cli.html").read_text(encoding="utf-8")
    sub = docs_pages._subparsers(build_parser())
    for name, parser in sub.items():
        assert f"parsched {name}" in page, name
        for inner in docs_pages._subparsers(parser):
            assert f"parsched {name} {inner}" in page, (name, inner)
    assert "--gantt-window" in page


def test_api_page_documents_the_public_names(site):
    page = (site / "api.html").read_text(encoding="utf-8")
    for name in ("simulate_batch", "BatchConfig", "Decision", "BatchEnv", "ConfigError"):
        assert f'id="parsched.{name}"' in page or f'id="parsched.gym.{name}"' in page, name
    assert ":class:" not in page and ":func:" not in page  # roles became code


def test_sphinx_roles_become_code():
    assert griffe_roles.plain_roles("a :class:`~parsched.sim.result.SimResult` b") == \
        "a `SimResult` b"
    assert griffe_roles.plain_roles(":func:`simulate_pools`") == "`simulate_pools`"


def test_home_links_point_into_the_site():
    text = docs_site._home("[a](docs/policies/pools.md) [b](docs/formats/) "
                           "[c](CHANGELOG.md) [d](https://x.org/y) [e](#q)")
    assert "[a](policies/pools.md)" in text and "[b](formats/index.md)" in text
    assert "[c](changelog.md)" in text and "[d](https://x.org/y)" in text and "[e](#q)" in text


# ------------------------------------------------------------------ the checks can fail


def test_link_check_finds_a_missing_file_and_a_missing_anchor(tmp_path):
    (tmp_path / "a.html").write_text("<h1 id='top'>A</h1><a href='b.html#nowhere'>b</a>"
                                     "<a href='c.html'>c</a><img src='x.png'>"
                                     "<a href='#top'>ok</a><a href='https://e.org'>e</a>")
    (tmp_path / "b.html").write_text("<p id='here'>B</p>")
    problems, n, external = docs_site.check_links(tmp_path)
    assert n == 4 and external == {"https://e.org"}
    assert any("c.html" in p and "no such file" in p for p in problems)
    assert any("x.png" in p for p in problems)
    assert any("'nowhere'" in p for p in problems)
    assert len(problems) == 3


def test_a_broken_link_in_the_docs_fails_the_build(tmp_path, monkeypatch):
    """Warnings are errors: a page linking a page that does not exist stops
    ``make docs`` (exit 1), whatever the link checker would say."""
    src, site = tmp_path / "src", tmp_path / "site"
    real_assemble = docs_site.assemble

    def broken(s, results):
        real_assemble(s, results)
        p = s / "glossary.md"
        p.write_text(p.read_text(encoding="utf-8") + "\n[gone](no-such-page.md)\n",
                     encoding="utf-8")

    monkeypatch.setattr(docs_site, "assemble", broken)
    monkeypatch.setattr(docs_site, "run_reproductions", lambda *a: {})
    assert docs_site.main(["--src", str(src), "--site", str(site)]) == 1


# ------------------------------------------------------------------ rendering

PROBE = """<!DOCTYPE html><html><body><pre id="result">pending</pre><script>
const PAGES = %s;
function load(src) {
  return new Promise(res => { const f = document.createElement('iframe');
    f.style.width = '1280px'; f.style.height = '900px';
    f.onload = () => res(f); f.src = src; document.body.appendChild(f); });
}
async function run() {
  const out = {pages: {}, links: {}};
  const targets = new Set();
  for (const p of PAGES) {
    const f = await load(p);
    const d = f.contentDocument;
    const imgs = [...d.images].map(i => [i.getAttribute('src'), i.complete ? i.naturalWidth : -1]);
    const h1 = d.querySelector('article h1, .md-content h1');
    const links = [...d.querySelectorAll('a[href]')].map(a => a.href)
      .filter(h => h.startsWith(location.origin));
    links.forEach(h => targets.add(h));
    out.pages[p] = {imgs: imgs, text: (d.body.innerText || '').length,
                    h1: h1 ? h1.textContent.trim() : null,
                    height: d.documentElement.scrollHeight};
    f.remove();
  }
  const cache = {};
  for (const url of targets) {
    const [base, frag] = url.split('#');
    if (!(base in cache)) {
      const r = await fetch(base);
      cache[base] = {ok: r.ok, html: r.ok && base.endsWith('.html') ? await r.text() : ''};
    }
    let ok = cache[base].ok;
    if (ok && frag && cache[base].html) {
      const doc = new DOMParser().parseFromString(cache[base].html, 'text/html');
      ok = doc.getElementById(decodeURIComponent(frag)) !== null
        || doc.getElementsByName(decodeURIComponent(frag)).length > 0;
    }
    if (!ok) out.links[url] = 'broken';
  }
  out.checked = targets.size;
  await fetch('/__result', {method: 'POST', body: JSON.stringify(out)});
}
run().catch(e => fetch('/__result', {method: 'POST', body: 'ERROR ' + e}));
</script></body></html>"""


class _Site(http.server.SimpleHTTPRequestHandler):
    """The built site, and ``POST /__result``: the probe's findings."""

    result: list[str]
    done: threading.Event

    def do_POST(self) -> None:
        n = int(self.headers.get("Content-Length", 0))
        self.result.append(self.rfile.read(n).decode("utf-8"))
        self.send_response(204)
        self.end_headers()
        self.done.set()

    def log_message(self, *args) -> None:  # the test's output stays clean
        pass


def test_every_page_renders_in_headless_chromium(site, tmp_path):
    chromium = _chromium()
    if chromium is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium; .ci/run does it)")
    pages = sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html")
                   if p.name != "404.html" and "__probe" not in p.name)
    assert len(pages) > 50
    probe = site / "__probe.html"
    probe.write_text(PROBE % json.dumps(pages), encoding="utf-8")
    result: list[str] = []
    done = threading.Event()
    handler_cls = type("Handler", (_Site,), {"result": result, "done": done})
    handler = functools.partial(handler_cls, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    profile = tempfile.mkdtemp(prefix="parsched-chromium-")
    url = f"http://127.0.0.1:{server.server_address[1]}/__probe.html"
    proc = subprocess.Popen(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-extensions", "--disable-dev-shm-usage", f"--user-data-dir={profile}", url],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        finished = done.wait(timeout=600)
    finally:
        proc.kill()
        _, err = proc.communicate()
        server.shutdown()
        probe.unlink()
        shutil.rmtree(profile, ignore_errors=True)
    assert finished and result, f"the probe never reported: {err[-2000:]}"
    raw = result[0]
    assert raw.startswith("{"), raw[:500]
    out = json.loads(raw)
    assert sorted(out["pages"]) == pages  # every page loaded
    for page, info in out["pages"].items():
        assert info["h1"], f"{page}: no title rendered"
        assert info["text"] > 200, f"{page}: nearly empty ({info['text']} characters)"
        bad = [src for src, w in info["imgs"] if w <= 0]
        assert not bad, f"{page}: images not decoded: {bad}"
    assert out["links"] == {}, out["links"]
    assert out["checked"] > 100
    figures = sum(1 for info in out["pages"].values() for src, w in info["imgs"]
                  if "reproductions/" in src or "/" in src)
    assert figures > 20
