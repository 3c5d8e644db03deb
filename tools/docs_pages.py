"""The generated pages of the documentation site (``tools/docs_site.py``).

Nothing here is written by hand twice: a model's keys come from the Rust
core's schema (``parsched.config.schema.markdown_table``), a reproduction's
page from its ``parsched reproduce`` output directory (the same section
builder as ``parsched report``), the command-line reference from the argument
parser itself, and the Python reference from the docstrings (mkdocstrings).
"""

from __future__ import annotations

import argparse
import html
import os
import re
import shutil
from dataclasses import dataclass


@dataclass(frozen=True)
class Model:
    """One simulated model: its page ``models/<name>.md``."""

    name: str
    title: str
    paper: str
    what: str
    cli: str
    python: str
    #: the schema models whose keys the page lists
    schemas: tuple[str, ...]
    #: (link text, site path) of the policy pages
    policies: tuple[tuple[str, str], ...]
    #: the reproduction kinds that regenerate its paper's results
    reproductions: tuple[str, ...]


def _models() -> tuple[Model, ...]:
    """One page per distinct page of the core's table of models
    (``parsched._core.models_table()``), with the schemas of every model on it."""
    from parsched.config.table import rows

    pages: dict[str, Model] = {}
    for r in rows():
        p = r["page"]
        name = p["path"].removeprefix("models/").removesuffix(".md")
        if name in pages:
            m = pages[name]
            pages[name] = Model(**{**m.__dict__, "schemas": (*m.schemas, r["name"])})
            continue
        pages[name] = Model(name, p["title"], p["paper"], p["what"], p["cli"], p["python"],
                            (r["name"],), tuple(tuple(x) for x in p["policies"]),
                            tuple(p["reproductions"]))
    return tuple(pages.values())


#: Every model page, in the table's order.
MODELS: tuple[Model, ...] = _models()

#: Reproduction kinds in the site's order, with the one-sentence summary of each.
REPRODUCTIONS: dict[str, str] = {
    "pools": "Zhou & Brecht's Figures 1 and 3-8: which pool size minimises response time, "
             "and why spanning and restricted parallelism matter.",
    "gang": "Feitelson & Rudolph's experiments 1-4 and phase diagram: when gang scheduling "
            "beats blocking for fine-grain barriers.",
    "desktop": "Frachtenberg's Figures 1-2 on this machine's real processes: gang "
               "scheduling against Linux beside sequential stressors.",
    "fcs": "Frachtenberg's Table 1 in simulation: flexible coscheduling against Linux, "
           "FCFS, gang and spin-block on a load-imbalanced workload.",
    "cosched": "Nagar et al.'s Tables 3-5 across the ten coscheduling schemes.",
    "regions": "Lee & Schwan's memlat and balancing experiments: when region scheduling "
               "pays.",
    "batch": "Every batch policy on every bundled log: waits, bounded slowdown, "
             "utilization, Gantt charts.",
}


def model_page(m: Model) -> str:
    """``models/<name>.md``: what the model is, how to run it, its keys."""
    from parsched.config.schema import markdown_table

    out = [f"# {m.title}", "", f"**Paper.** {m.paper}.", "", m.what, "",
           "## Run it", "", "```sh", m.cli, "```", "", "```python", "import parsched", "",
           m.python, "```", "",
           "Every key below can be given as `--set KEY=VALUE`, in a TOML file "
           "(`--config FILE`, [format](../formats/config-toml.md)) or as a keyword of "
           "the configuration class; a wrong key or value is one line naming it, exit "
           "status 2.", "", "## Policies and mechanisms", ""]
    out += [f"- [{text}](../{path})" for text, path in m.policies]
    out += ["", "## Its paper's results, regenerated", ""]
    out += [f"- [`parsched reproduce {k}`](../reproductions/{k}.md): {REPRODUCTIONS[k]}"
            for k in m.reproductions]
    for schema in m.schemas:
        title = "Keys" if len(m.schemas) == 1 else f"Keys of `{schema}`"
        out += ["", f"## {title}", "",
                "Generated from the Rust core's schema: the defaults are the paper's "
                "values; *paper* names a key's symbol and section there.", "",
                markdown_table(schema)]
    return "\n".join(out) + "\n"


def models_index() -> str:
    out = ["# Models", "",
           "Each model is a typed configuration whose defaults are its paper's values, "
           "simulated on the one event engine (`parsched simulate MODEL`, "
           "`parsched.simulate(config)`).", "", "| model | paper |", "|---|---|"]
    out += [f"| [{m.title}]({m.name}.md) | {m.paper} |" for m in MODELS]
    return "\n".join(out) + "\n"


def reproduction_page(kind: str, directory: str, dest_dir: str) -> str:
    """``reproductions/<kind>.md`` from one ``parsched reproduce`` output
    directory: the checks, the paper's numbers beside parsched's, the figures
    (copied to ``dest_dir/<kind>/``) and the write-up."""
    from parsched.report.html import _build
    from parsched.report.page import render_section
    from parsched.report.seeds import SEEDS

    sec = _build(kind, directory)
    fig_dir = os.path.join(dest_dir, kind)
    os.makedirs(fig_dir, exist_ok=True)

    def figure_src(path: str) -> str:
        shutil.copy2(path, os.path.join(fig_dir, os.path.basename(path)))
        return f"{kind}/{os.path.basename(path)}"

    body, _ = render_section(sec, figure_src=figure_src, heading=False)
    # the section's own path is where the build found it: name the command instead
    body = body.replace(f"<code>{html.escape(sec.path, quote=True)}</code>",
                        f"<code>results/{kind}</code>")
    body = body.replace(f"<code>{sec.path}</code>", f"<code>results/{kind}</code>")
    s = SEEDS[kind]
    head = [f"# {s.title}", "", f"*{REPRODUCTIONS[kind]}*", "",
            "This page is generated from the output of "
            f"`{s.command}` when the site is built (`make docs`), so it cannot go stale; "
            "the mode line below says how long the runs were. Regenerate the full "
            f"results with `{s.command}` (without `--quick`) and `parsched report`.", ""]
    return "\n".join(head) + "\n" + body + "\n"


def reproductions_index(found: dict[str, str]) -> str:
    out = ["# Reproductions", "",
           "One command per seed paper writes CSV tables, figures and a `summary.md` "
           "that puts the paper's numbers beside parsched's; `parsched report` gathers "
           "them into one HTML page ([how](../report.md)). Each page below was generated "
           "from that output when this site was built.", "", "| reproduction | what it "
           "shows |", "|---|---|"]
    for kind, text in REPRODUCTIONS.items():
        if kind in found:
            out.append(f"| [`parsched reproduce {kind}`]({kind}.md) | {text} |")
        else:
            out.append(f"| `parsched reproduce {kind}` | {text} (not run where this site "
                       "was built: it needs root and cgroups) |")
    return "\n".join(out) + "\n"


# ------------------------------------------------------------------ CLI


def _usage(parser: argparse.ArgumentParser, prog: str) -> str:
    parser.prog = prog
    return parser.format_usage().strip().removeprefix("usage: ")


def _options_table(parser: argparse.ArgumentParser) -> list[str]:
    rows = []
    for a in parser._actions:  # argparse has no public walk of its actions
        if isinstance(a, argparse._SubParsersAction) or a.help == argparse.SUPPRESS:
            continue
        if a.option_strings:
            name = ", ".join(a.option_strings)
            if a.nargs != 0 and a.metavar is not argparse.SUPPRESS:
                meta = a.metavar or a.dest.upper()
                name += f" {meta if isinstance(meta, str) else ' '.join(meta)}"
        else:
            name = a.metavar if isinstance(a.metavar, str) else a.dest
        helptext = (a.help or "") % {"default": a.default, "prog": parser.prog} \
            if a.help and "%(" in a.help else (a.help or "")
        if a.choices and not isinstance(a.choices, dict) and "{" not in name:
            helptext += f" (one of: {', '.join(map(str, a.choices))})"
        cell = " ".join(helptext.split()).replace("|", "\\|")
        rows.append(f"| `{name}` | {cell} |")
    if not rows:
        return []
    return ["| argument | meaning |", "|---|---|", *rows, ""]


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            return dict(a.choices)
    return {}


def _describe(parser: argparse.ArgumentParser) -> str:
    text = parser.description or ""
    # keep paragraphs; argparse descriptions are wrapped prose
    paras = [" ".join(p.split()) for p in re.split(r"\n\s*\n", text) if p.strip()]
    return "\n\n".join(p.replace("<", "&lt;") for p in paras)


def cli_page() -> str:
    """``cli.md``: every command of ``parsched``, from the argument parser."""
    from parsched.cli import build_parser

    root = build_parser()
    out = ["# Command line", "",
           "Generated from `parsched`'s own argument parser when the site is built "
           "(`parsched COMMAND --help` prints the same). Bad input of any kind is one "
           "line `parsched: error: FIELD: ...` on stderr with exit status 2 and no output "
           "written; Ctrl-C stops any run with exit status 130.", "",
           "```text", _usage(root, "parsched"), "```", ""]

    def walk(parser: argparse.ArgumentParser, path: list[str], depth: int) -> None:
        for name, sub in _subparsers(parser).items():
            prog = " ".join(["parsched", *path, name])
            out.extend([f"{'#' * min(depth, 4)} `{prog}`", ""])
            desc = _describe(sub)
            if desc:
                out.extend([desc, ""])
            out.extend(["```text", _usage(sub, prog), "```", ""])
            out.extend(_options_table(sub))
            walk(sub, [*path, name], depth + 1)

    walk(root, [], 2)
    return "\n".join(out) + "\n"


# ------------------------------------------------------------------ Python API

#: (heading, objects) of the Python reference page, in reading order.
API_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Running a model", ("simulate", "simulate_pools", "simulate_barrier",
                         "simulate_batch", "simulate_cosched", "simulate_fcs",
                         "simulate_fcs_figure", "simulate_regions", "sweep")),
    ("Configurations", ("PoolsConfig", "BarrierConfig", "BatchConfig", "CoschedConfig",
                        "FcsConfig", "FcsFigureConfig", "RegionsConfig", "LublinConfig",
                        "from_toml", "apply_overrides")),
    ("Results", ("Result", "SimResult", "BarrierResult", "BatchResult", "CoschedResult",
                 "FcsResult", "FcsFigureResult", "RegionsResult")),
    ("Your own policy", ("Decision", "ZhouBrechtPolicy", "LeastLoadedSpread")),
    ("Workloads", ("generate_lublin", "load_arrivals", "Arrivals")),
    ("Real programs", ("run_jobs",)),
    ("Errors", ("ConfigError", "TraceError", "SimulationError", "TimeLimitError",
                "PolicyError", "RuntimeUnavailable", "RuntimeFailure")),
)


def api_page() -> str:
    """``api.md``: mkdocstrings directives for the public names of
    ``parsched`` (the docstrings are the reference), grouped."""
    import parsched

    public = set(parsched.__all__)
    listed = [n for _, names in API_GROUPS for n in names]
    missing = sorted(public - set(listed) - {"__version__", "cosched_applications",
                                              "cosched_sweep", "fcs_figure", "fcs_table",
                                              "sweep", "simulate_pools"})
    if missing:
        raise SystemExit(f"tools/docs_pages.py: API_GROUPS misses {', '.join(missing)}")
    out = ["# Python API", "",
           "Generated from the docstrings of the `parsched` package. Every error is a "
           "subclass of `ValueError` or `RuntimeError` carrying the field it names; "
           "results hold pandas DataFrames.", ""]
    for heading, names in API_GROUPS:
        out += [f"## {heading}", ""]
        for n in names:
            if n in public or hasattr(parsched, n):
                out += [f"::: parsched.{n}", "    options:", "      heading_level: 3", ""]
    out += ["## The Gymnasium environment", "", "::: parsched.gym", "    options:",
            "      heading_level: 3", "      members: [BatchEnv, BatchVectorEnv]", ""]
    return "\n".join(out) + "\n"
