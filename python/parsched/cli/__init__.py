"""parsched: simulate parallel-job scheduling policies (Rust core, Python front end).

Bad input of any kind is reported as one line ``parsched: error: FIELD: ...`` on
stderr with exit status 2, and no output file is written.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Sequence
from typing import Any

from parsched.cli.bench import cmd_bench
from parsched.cli.common import (  # noqa: F401  (re-exported for the other modules)
    UsageError,
    _cell,
    _console,
    _doc,
    _Parser,
    _positive_float,
    _print_table,
    _slot,
    _usage_hint,
    _window,
    _workers,
)
from parsched.cli.reproduce import (
    cmd_reproduce_batch,
    cmd_reproduce_cosched,
    cmd_reproduce_fcs,
    cmd_reproduce_gang,
    cmd_reproduce_pools,
    cmd_reproduce_regions,
)
from parsched.cli.run import cmd_reproduce_desktop, cmd_run
from parsched.cli.simulate import (
    cmd_generate_lublin,
    cmd_simulate_barrier,
    cmd_simulate_batch,
    cmd_simulate_cosched,
    cmd_simulate_fcs,
    cmd_simulate_pools,
    cmd_simulate_regions,
)
from parsched.errors import (
    ConfigError,
    PolicyError,
    RuntimeFailure,
    RuntimeUnavailable,
    SimulationError,
    Terminated,
    TraceError,
)

__all__ = ["main"]

PROG = "parsched"



# ------------------------------------------------------------------ parser


def build_parser() -> argparse.ArgumentParser:
    fmt = argparse.RawDescriptionHelpFormatter
    p = _Parser(prog=PROG, description=_doc(sys.modules[__name__]), formatter_class=fmt)
    p.add_argument("--version", action=_VersionAction, nargs=0,
                   help="show the version and exit")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)

    sim = sub.add_parser("simulate", help="run one simulation", description="Run one simulation.")
    sim_sub = sim.add_subparsers(dest="model", metavar="MODEL", required=True)
    sp = sim_sub.add_parser("pools", help=_doc(cmd_simulate_pools).splitlines()[0],
                            description=_doc(cmd_simulate_pools), formatter_class=fmt)
    sp.add_argument("--config", metavar="FILE.toml",
                    help="TOML file with a [pools] table (or flat keys)")
    sp.add_argument("--set", metavar="KEY=VALUE", action="extend", nargs="+", default=[],
                    help="override a config key (repeatable)")
    sp.add_argument("--arrivals", metavar="FILE.csv",
                    help="explicit job stream: CSV with header arrival,d[,para_work]")
    sp.add_argument("--json", action="store_true", help="print one JSON object")
    sp.add_argument("--jobs-out", metavar="FILE", help="write per-job records (.csv or .parquet)")
    sp.add_argument("--workers", type=_workers, default=1, metavar="N",
                    help="threads for the replications (results do not depend on it)")
    sp.set_defaults(func=cmd_simulate_pools)
    sb = sim_sub.add_parser("barrier", help=_doc(cmd_simulate_barrier).splitlines()[0],
                            description=_doc(cmd_simulate_barrier), formatter_class=fmt)
    sb.add_argument("--config", metavar="FILE.toml",
                    help="TOML file with a [barrier] table (or flat keys)")
    sb.add_argument("--set", metavar="KEY=VALUE", action="extend", nargs="+", default=[],
                    help="override a config key (repeatable)")
    sb.add_argument("--json", action="store_true", help="print one JSON object")
    sb.set_defaults(func=cmd_simulate_barrier)
    sc = sim_sub.add_parser("batch", help=_doc(cmd_simulate_batch).splitlines()[0],
                            description=_doc(cmd_simulate_batch), formatter_class=fmt)
    sc.add_argument("--trace", metavar="FILE", help="SWF trace (.swf or .swf.gz)")
    sc.add_argument("--config", metavar="FILE.toml",
                    help="TOML file with a [batch] table (or flat keys)")
    sc.add_argument("--set", metavar="KEY=VALUE", action="extend", nargs="+", default=[],
                    help="override a config key (repeatable)")
    sc.add_argument("--jobs-out", metavar="FILE.csv", help="write Batsim's jobs CSV")
    sc.add_argument("--swf-out", metavar="FILE.swf", help="write the schedule as SWF")
    sc.add_argument("--gantt", metavar="FILE.png", help="write a Gantt chart (.png, .svg, .pdf)")
    sc.add_argument("--gantt-window", type=_window, default=None, metavar="START:END",
                    help="the Gantt chart's time window, seconds of trace time")
    sc.add_argument("--utilization", metavar="FILE.png",
                    help="write processors in use and queue length over time (.png, .svg, "
                         ".pdf)")
    sc.add_argument("--json", action="store_true", help="print one JSON object")
    sc.set_defaults(func=cmd_simulate_batch)
    sn = sim_sub.add_parser("cosched", help=_doc(cmd_simulate_cosched).splitlines()[0],
                            description=_doc(cmd_simulate_cosched), formatter_class=fmt)
    sn.add_argument("--config", metavar="FILE.toml",
                    help="TOML file with a [cosched] table (or flat keys)")
    sn.add_argument("--set", metavar="KEY=VALUE", action="extend", nargs="+", default=[],
                    help="override a config key (repeatable)")
    sn.add_argument("--workers", type=_workers, default=None, metavar="N",
                    help="threads for the replications (default: one per CPU, at most "
                         "reps; results do not depend on it)")
    sn.add_argument("--json", action="store_true", help="print one JSON object")
    sn.add_argument("--timeline", metavar="FILE",
                    help="the probed node's CPU shares over time (first replication): "
                         "FILE.csv as data, FILE.png/.svg/.pdf as a plot")
    sn.add_argument("--plot", metavar="FILE.png",
                    help="plot the timeline (Figures 2-3 style; .png, .svg or .pdf)")
    sn.set_defaults(func=cmd_simulate_cosched)
    sf = sim_sub.add_parser("fcs", help=_doc(cmd_simulate_fcs).splitlines()[0],
                            description=_doc(cmd_simulate_fcs), formatter_class=fmt)
    sf.add_argument("--set", metavar="KEY=VALUE", action="extend", nargs="+", default=[],
                    help="set a key (repeatable)")
    sf.add_argument("--workers", type=_workers, default=None, metavar="N",
                    help="threads for the replications (results do not depend on it)")
    sf.add_argument("--json", action="store_true", help="print one JSON object")
    sf.set_defaults(func=cmd_simulate_fcs)
    sr = sim_sub.add_parser("regions", help=_doc(cmd_simulate_regions).splitlines()[0],
                            description=_doc(cmd_simulate_regions), formatter_class=fmt)
    sr.add_argument("--set", metavar="KEY=VALUE", action="extend", nargs="+", default=[],
                    help="set a key (repeatable)")
    sr.add_argument("--json", action="store_true", help="print one JSON object")
    sr.set_defaults(func=cmd_simulate_regions)

    gen = sub.add_parser("generate", help="write a synthetic workload",
                         description="Write a synthetic workload.")
    gen_sub = gen.add_subparsers(dest="model", metavar="MODEL", required=True)
    gl = gen_sub.add_parser("lublin", help=_doc(cmd_generate_lublin).splitlines()[0],
                            description=_doc(cmd_generate_lublin), formatter_class=fmt)
    gl.add_argument("--set", metavar="KEY=VALUE", action="extend", nargs="+", default=[],
                    help="a generator key: procs jobs load seed include_types (repeatable)")
    gl.add_argument("-o", "--output", metavar="FILE.swf[.gz]", required=True,
                    help="the SWF file to write (.gz: gzip)")
    gl.add_argument("--json", action="store_true", help="print one JSON object")
    gl.set_defaults(func=cmd_generate_lublin)
    rep = sub.add_parser("reproduce", help="regenerate a seed paper's figures",
                         description="Regenerate a seed paper's figures.")
    rep_sub = rep.add_subparsers(dest="model", metavar="MODEL", required=True)
    rp = rep_sub.add_parser("pools", help=_doc(cmd_reproduce_pools).splitlines()[0],
                            description=_doc(cmd_reproduce_pools), formatter_class=fmt)
    rp.add_argument("--quick", action="store_true", help="short runs, fewer points (< 1 min)")
    rp.add_argument("--out", default=os.path.join("results", "pools"), metavar="DIR",
                    help="output directory (default: results/pools)")
    rp.add_argument("--workers", type=_workers, default=None, metavar="N",
                    help="parallel simulations (default: one per CPU)")
    rp.set_defaults(func=cmd_reproduce_pools)
    rg = rep_sub.add_parser("gang", help=_doc(cmd_reproduce_gang).splitlines()[0],
                            description=_doc(cmd_reproduce_gang), formatter_class=fmt)
    rg.add_argument("--quick", action="store_true", help="fewer points, shorter runs (< 1 min)")
    rg.add_argument("--out", default=os.path.join("results", "gang"), metavar="DIR",
                    help="output directory (default: results/gang)")
    rg.add_argument("--workers", type=_workers, default=None, metavar="N",
                    help="parallel simulations (default: one per CPU)")
    rg.add_argument("--json", action="store_true",
                    help="print the headline numbers as one JSON object (no tables)")
    rg.set_defaults(func=cmd_reproduce_gang)
    rn = rep_sub.add_parser("cosched", help=_doc(cmd_reproduce_cosched).splitlines()[0],
                            description=_doc(cmd_reproduce_cosched), formatter_class=fmt)
    rn.add_argument("--quick", action="store_true",
                    help="a quarter of the iterations, one replication (about a minute)")
    rn.add_argument("--out", default=os.path.join("results", "cosched"), metavar="DIR",
                    help="output directory (default: results/cosched)")
    rn.add_argument("--workers", type=_workers, default=None, metavar="N",
                    help="parallel simulations (default: one per CPU)")
    rn.add_argument("--json", action="store_true",
                    help="print the headline numbers as one JSON object (no tables)")
    rn.set_defaults(func=cmd_reproduce_cosched)
    rf = rep_sub.add_parser("fcs", help=_doc(cmd_reproduce_fcs).splitlines()[0],
                            description=_doc(cmd_reproduce_fcs), formatter_class=fmt)
    rf.add_argument("--quick", action="store_true",
                    help="a tenth of the iterations (seconds)")
    rf.add_argument("--real", action="store_true",
                    help="also measure Table 1 on this machine's processors (needs cgroups)")
    rf.add_argument("--out", default=os.path.join("results", "fcs"), metavar="DIR",
                    help="output directory (default: results/fcs)")
    rf.add_argument("--json", action="store_true",
                    help="print the headline numbers as one JSON object (no tables)")
    rf.set_defaults(func=cmd_reproduce_fcs)
    rr = rep_sub.add_parser("regions", help=_doc(cmd_reproduce_regions).splitlines()[0],
                            description=_doc(cmd_reproduce_regions), formatter_class=fmt)
    rr.add_argument("--quick", action="store_true", help="a smaller grid (seconds)")
    rr.add_argument("--real", action="store_true",
                    help="also the measurements on this machine (parsched.runtime.regions_real)")
    rr.add_argument("--out", default=os.path.join("results", "regions"), metavar="DIR",
                    help="output directory (default: results/regions)")
    rr.add_argument("--json", action="store_true",
                    help="print the headline numbers as one JSON object (no tables)")
    rr.set_defaults(func=cmd_reproduce_regions)
    rb = rep_sub.add_parser("batch", help=_doc(cmd_reproduce_batch).splitlines()[0],
                            description=_doc(cmd_reproduce_batch), formatter_class=fmt)
    rb.add_argument("--out", default=os.path.join("results", "batch"), metavar="DIR",
                    help="output directory (default: results/batch)")
    rb.add_argument("--traces", metavar="DIR", default=None,
                    help="directory of .swf/.swf.gz traces (default: <repo>/../shared/traces)")
    rb.add_argument("--json", action="store_true", help="print the rows as one JSON object")
    rb.set_defaults(func=cmd_reproduce_batch)

    rd = rep_sub.add_parser("desktop", help=_doc(cmd_reproduce_desktop).splitlines()[0],
                            description=_doc(cmd_reproduce_desktop), formatter_class=fmt)
    rd.add_argument("--quick", action="store_true",
                    help="shorter runs, one repetition, fewer points (< 1 min)")
    rd.add_argument("--out", default=os.path.join("results", "desktop"), metavar="DIR",
                    help="output directory (default: results/desktop)")
    rd.add_argument("--json", action="store_true", help="print the data as one JSON object")
    rd.add_argument("--bsp", metavar="PATH", default=None,
                    help="the benchmark binary (default: <repo>/bench/bsp, built on demand)")
    rd.add_argument("--solo-seconds", type=_positive_float, default=None, metavar="S",
                    help="target solo runtime of one job (default 1.0, --quick 0.4)")
    rd.add_argument("--reps", type=_workers, default=None, metavar="N",
                    help="repetitions per point, median reported (default 3, --quick 1)")
    rd.set_defaults(func=cmd_reproduce_desktop)

    ru = sub.add_parser("run", help=_doc(cmd_run).splitlines()[0],
                        description=_doc(cmd_run), formatter_class=fmt)
    ru.add_argument("--policy", choices=("gang", "pools", "fcs", "flexible", "regions", "default"),
                    default=None,
                    help="scheduling policy (default: the job file's, else gang); flexible is "
                         "an alias of fcs")
    ru.add_argument("--slot", type=_slot, default=None, metavar="LEN",
                    help="slot length with its unit, e.g. 50ms, 0.05s, 500us (default "
                         "50ms; a bare number is refused)")
    ru.add_argument("--backend", choices=("auto", "cgroup2", "cgroup1", "signal"), default=None,
                    help="how slots are switched (default auto)")
    ru.add_argument("--jobs", metavar="FILE.toml", default=None,
                    help="TOML job file: RunSpec keys and [[jobs]] tables")
    ru.add_argument("--width", type=_workers, default=None, metavar="N",
                    help="gang width of the command-line jobs (default: all CPUs)")
    ru.add_argument("--max-slots", type=_workers, default=None, metavar="N",
                    help="multiprogramming level (jobs beyond it wait)")
    ru.add_argument("--json", action="store_true",
                    help="print the reports as one JSON object (the last line of stdout)")
    ru.add_argument("command", nargs=argparse.REMAINDER, metavar="-- PROGRAM ARGS [: ...]",
                    help="jobs separated by a lone ':'")
    ru.set_defaults(func=cmd_run)

    bp = sub.add_parser("bench", help=_doc(cmd_bench).splitlines()[0],
                        description=_doc(cmd_bench), formatter_class=fmt)
    bp.add_argument("model", nargs="?", choices=("pools", "barrier", "batch", "cosched"),
                    default="pools", help="which simulator to time (default pools)")
    bp.add_argument("--model", dest="model_opt", choices=("pools", "barrier", "batch", "cosched"),
                    default=None, help="same as the positional MODEL")
    bp.add_argument("--jobs", type=int, default=100000, metavar="N",
                    help="pools: jobs to simulate (default 100000)")
    bp.add_argument("--iterations", "-k", type=int, default=50000, metavar="K",
                    help="barrier: iterations of the measured gang (default 50000)")
    bp.add_argument("--wait", choices=("busy", "block", "twophase", "yield"), default="busy",
                    help="barrier: waiting strategy (default busy)")
    bp.add_argument("--trace", metavar="FILE", default=None,
                    help="batch: SWF trace (default: the shared KTH-SP2 trace)")
    bp.add_argument("--lublin", type=int, default=None, metavar="N",
                    help="batch: a generated Lublin-Feitelson workload of N jobs instead of "
                         "a trace (e.g. 450000; with --procs and --load)")
    bp.add_argument("--procs", type=int, default=8192, metavar="P",
                    help="batch --lublin: processors (default 8192)")
    bp.add_argument("--load", type=float, default=0.9, metavar="L",
                    help="batch --lublin: offered load (default 0.9)")
    bp.add_argument("--repeat", type=int, default=5, metavar="N",
                    help="batch and barrier: runs per configuration, best reported "
                         "(default 5)")
    bp.add_argument("--scale", type=float, default=0.25, metavar="F",
                    help="cosched: fraction of the paper's iterations (default 0.25)")
    bp.add_argument("--json", action="store_true", help="print one JSON object")
    bp.set_defaults(func=cmd_bench)

    from parsched.report.html import add_subcommand as add_report

    add_report(sub, fmt)

    from parsched.sim.sweep_spec import add_parser as add_sweep_parser

    add_sweep_parser(sub)  # parsched sweep SPEC.toml --out DIR (sweep_spec.py)
    return p


class _VersionAction(argparse.Action):
    """``--version``, looked up only when asked for (importlib.metadata costs
    ~40 ms at every start otherwise)."""

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"{parser.prog} {_version()}")
        parser.exit()


def _version() -> str:
    from parsched import __version__

    return str(__version__)


def _fail(message: str, code: int = 2) -> int:
    from parsched.errors import clip

    # every word cut to 200 characters: a safety net for echoed values that
    # were not cut where they were quoted (60 characters)
    line = " ".join(clip(w, 200) for w in str(message).split())
    print(f"{PROG}: error: {line}", file=sys.stderr)
    return code


def _exit_now_if_threads_remain(code: int) -> None:
    """After Ctrl-C or SIGTERM on the command line (temporary files already
    removed): exit at once even if a worker thread is still busy with pure
    Python work, which interpreter shutdown would otherwise wait for."""
    import threading

    if any(t.is_alive() and not t.daemon and t is not threading.main_thread()
           for t in threading.enumerate()):
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)


def _on_sigterm(signum: int, frame: Any) -> None:
    raise Terminated("terminated")


class _PipeSafe:
    """Standard output that a closed pipe (``parsched ... | head``) silences
    instead of failing: the run goes on, its files are written, exit 0."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self.closed_pipe = False

    def write(self, text: str) -> int:
        if self.closed_pipe:
            return len(text)
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._silence()
            return len(text)

    def flush(self) -> None:
        if self.closed_pipe:
            return
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._silence()

    def _silence(self) -> None:
        self.closed_pipe = True
        # the interpreter flushes stdout at exit: point the descriptor at
        # /dev/null so that flush cannot fail again
        try:
            fd = self._stream.fileno()
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, fd)
            os.close(devnull)
        except (OSError, ValueError, AttributeError):
            pass

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``parsched`` command; returns the exit status.

    Ctrl-C (SIGINT) and SIGTERM stop any run within ~50 ms, remove the
    temporary outputs and print one line: exit 130 (SIGINT) or 143 (SIGTERM)."""
    import signal
    import threading

    parser = build_parser()
    if not isinstance(sys.stdout, _PipeSafe):
        sys.stdout = _PipeSafe(sys.stdout)
    old_term = None
    if threading.current_thread() is threading.main_thread():
        old_term = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        code = _main(parser, argv)
        if argv is None and code in (130, 143):
            _exit_now_if_threads_remain(code)
        return code
    finally:
        if old_term is not None:
            signal.signal(signal.SIGTERM, old_term)
        if isinstance(sys.stdout, _PipeSafe):
            sys.stdout = sys.stdout._stream


def _main(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> int:
    try:
        args = parser.parse_args(argv)
        if getattr(args, "model_opt", None):
            args.model = args.model_opt
        return int(args.func(args) or 0)
    except UsageError as e:
        return _fail(str(e))
    except (ConfigError, TraceError) as e:
        return _fail(str(e))
    except PolicyError as e:
        return _fail(f"policy: {e}")
    except SimulationError as e:
        return _fail(f"simulation: {e}", code=1)
    except RuntimeUnavailable as e:
        return _fail(f"runtime unavailable: {e}")
    except RuntimeFailure as e:
        return _fail(f"runtime: {e}", code=1)
    except BrokenPipeError:
        return 0  # a reader that stops early is not an error
    except OSError as e:
        name = getattr(e, "filename", None)
        where = f" {name!r}" if name else ""
        return _fail(f"io: {e.strerror or e}{where}")
    except ImportError as e:
        return _fail(str(e), code=1)
    except Terminated:
        return _fail("terminated (SIGTERM)", code=143)
    except KeyboardInterrupt:
        return _fail("interrupted", code=130)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

