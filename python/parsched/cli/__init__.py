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

from parsched.cli.bench import add_parser as add_bench_parser
from parsched.cli.common import (  # noqa: F401  (re-exported for the other modules)
    PROG,
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
    add_simulate_parser,
    fail,
)
from parsched.cli.reproduce import (
    cmd_reproduce_batch,
    cmd_reproduce_cosched,
    cmd_reproduce_fcs,
    cmd_reproduce_gang,
    cmd_reproduce_pools,
    cmd_reproduce_regions,
    cmd_tune_cosched,
)
from parsched.cli.run import add_run_parser, cmd_reproduce_desktop, cmd_tune_mpi_spin
from parsched.cli.simulate import COMMANDS as SIMULATE_COMMANDS
from parsched.cli.simulate import (  # noqa: F401  (the commands, by name)
    cmd_generate_lublin,
    cmd_simulate_barrier,
    cmd_simulate_batch,
    cmd_simulate_cosched,
    cmd_simulate_fcs,
    cmd_simulate_fcs_figure,
    cmd_simulate_pools,
    cmd_simulate_regions,
)
from parsched.config.schema import keys_help
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




# ------------------------------------------------------------------ parser


def build_parser() -> argparse.ArgumentParser:
    fmt = argparse.RawDescriptionHelpFormatter
    p = _Parser(prog=PROG, description=_doc(sys.modules[__name__]), formatter_class=fmt)
    p.add_argument("--version", action=_VersionAction, nargs=0,
                   help="show the version and exit")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)

    sim = sub.add_parser("simulate", help="run one simulation", description="Run one simulation.")
    sim_sub = sim.add_subparsers(dest="model", metavar="MODEL", required=True)
    for model, func, workers, options in SIMULATE_COMMANDS:
        add_simulate_parser(sim_sub, model, func, fmt, workers, options)

    gen = sub.add_parser("generate", help="write a synthetic workload",
                         description="Write a synthetic workload.")
    gen_sub = gen.add_subparsers(dest="model", metavar="MODEL", required=True)
    gl = gen_sub.add_parser("lublin", help=_doc(cmd_generate_lublin).splitlines()[0],
                            description=_doc(cmd_generate_lublin), formatter_class=fmt,
                            epilog=keys_help("lublin"))
    gl.add_argument("--set", metavar="KEY=VALUE", action="extend", nargs="+", default=[],
                    help="a generator key, listed below (repeatable)")
    gl.add_argument("-o", "--output", metavar="FILE.swf[.gz]", required=True,
                    help="the SWF file to write (.gz: gzip)")
    gl.add_argument("--json", action="store_true", help="print one JSON object")
    gl.set_defaults(func=cmd_generate_lublin)
    _add_reproduce_parsers(sub, fmt)
    tune = sub.add_parser("tune", help="choose a model's free parameters by a stated procedure",
                          description="Choose a model's free parameters by a stated procedure.")
    tune_sub = tune.add_subparsers(dest="model", metavar="MODEL", required=True)
    tc = tune_sub.add_parser("cosched", help=_doc(cmd_tune_cosched).splitlines()[0],
                             description=_doc(cmd_tune_cosched), formatter_class=fmt)
    tc.add_argument("--quick", action="store_true",
                    help="a quarter of the iterations, one replication (seconds)")
    tc.add_argument("--workers", type=_workers, default=None, metavar="N",
                    help="parallel simulations (default: one per CPU)")
    tc.add_argument("--json", action="store_true", help="print the result as one JSON object")
    tc.set_defaults(func=cmd_tune_cosched)
    tm = tune_sub.add_parser("mpi-spin", help=_doc(cmd_tune_mpi_spin).splitlines()[0],
                             description=_doc(cmd_tune_mpi_spin), formatter_class=fmt)
    tm.add_argument("--impl", choices=("mpich", "openmpi"), default="mpich",
                    help="the MPI the program was built with (default mpich)")
    tm.add_argument("--np", type=_workers, default=2, help="ranks per copy (default 2)")
    tm.add_argument("--copies", type=_workers, default=4,
                    help="copies run at once (default 4: the paper's four per workstation)")
    tm.add_argument("--reps", type=_workers, default=3,
                    help="runs per spin; the median counts (default 3)")
    tm.add_argument("--json", action="store_true", help="print the result as one JSON object")
    tm.add_argument("command", nargs=argparse.REMAINDER, metavar="-- PROGRAM ARGS")
    tm.set_defaults(func=cmd_tune_mpi_spin)

    add_run_parser(sub, fmt)

    add_bench_parser(sub, fmt)

    from parsched.cli.datasets import add_parser as add_datasets

    add_datasets(sub, fmt)

    from parsched.report.html import add_subcommand as add_report

    add_report(sub, fmt)

    from parsched.cli.sweep import add_parser as add_sweep_parser

    add_sweep_parser(sub)  # parsched sweep SPEC.toml --out DIR (cli/sweep.py)
    return p


def _add_reproduce_parsers(sub: Any, fmt: Any) -> None:
    """``parsched reproduce MODEL``: one command a paper's reproduction."""
    rep = sub.add_parser("reproduce", help="regenerate a seed paper's figures",
                         description="Regenerate a seed paper's figures.")
    rep_sub = rep.add_subparsers(dest="model", metavar="MODEL", required=True)
    quick = {"pools": "short runs, fewer points (< 1 min)",
             "gang": "fewer points, shorter runs (< 1 min)",
             "cosched": "a quarter of the iterations, one replication (about a minute)",
             "fcs": "a tenth of the iterations (seconds)",
             "regions": "a smaller grid (seconds)"}
    real = {"fcs": "also measure Table 1 on this machine's processors (needs cgroups)",
            "cosched": "also run the schemes on this machine with real MPI jobs (needs "
                       "root, cgroups and `make mpi`)",
            "regions": "also the measurements on this machine "
                       "(parsched.runtime.regions_real)"}
    headline = "print the headline numbers as one JSON object (no tables)"
    for name, func, json_help in (("pools", cmd_reproduce_pools, None),
                                  ("gang", cmd_reproduce_gang, headline),
                                  ("cosched", cmd_reproduce_cosched, headline),
                                  ("fcs", cmd_reproduce_fcs, headline),
                                  ("regions", cmd_reproduce_regions, headline)):
        r = rep_sub.add_parser(name, help=_doc(func).splitlines()[0],
                               description=_doc(func), formatter_class=fmt)
        r.add_argument("--quick", action="store_true", help=quick[name])
        if name in real:
            r.add_argument("--real", action="store_true", help=real[name])
        r.add_argument("--out", default=os.path.join("results", name), metavar="DIR",
                       help=f"output directory (default: results/{name})")
        if name not in real or name == "cosched":
            r.add_argument("--workers", type=_workers, default=None, metavar="N",
                           help="parallel simulations (default: one per CPU)")
        if json_help:
            r.add_argument("--json", action="store_true", help=json_help)
        r.set_defaults(func=func)
    rb = rep_sub.add_parser("batch", help=_doc(cmd_reproduce_batch).splitlines()[0],
                            description=_doc(cmd_reproduce_batch), formatter_class=fmt)
    rb.add_argument("--out", default=os.path.join("results", "batch"), metavar="DIR",
                    help="output directory (default: results/batch)")
    rb.add_argument("--traces", metavar="DIR", default=None,
                    help="directory of .swf/.swf.gz traces (default: <repo>/../shared/traces)")
    rb.add_argument("--json", action="store_true", help="print the rows as one JSON object")
    # every other reproduction takes --quick; batch's full run takes seconds,
    # so the same command works for all seven (issue 27)
    rb.add_argument("--quick", action="store_true",
                    help="accepted as by the other reproductions: the full run takes seconds, "
                         "so --quick runs the same")
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


class _VersionAction(argparse.Action):
    """``--version``, looked up only when asked for (importlib.metadata costs
    ~40 ms at every start otherwise)."""

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"{parser.prog} {_version()}")
        parser.exit()


def _version() -> str:
    from parsched import __version__

    return str(__version__)


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


#: Set when SIGTERM arrived: the exception its handler raises can land inside
#: library code (a thread pool's lock) and surface as another error.
_terminated = False


def _on_sigterm(signum: int, frame: Any) -> None:
    global _terminated
    _terminated = True
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
    global _terminated
    _terminated = False
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


@contextlib.contextmanager
def _progress_line(simulate: bool):
    """``parsched simulate``: a run longer than 2 s shows its events so far on
    stderr when stderr is a terminal (or ``PARSCHED_PROGRESS=1``)."""
    on = simulate and (sys.stderr.isatty() or os.environ.get("PARSCHED_PROGRESS") == "1")
    if not on:
        yield
        return
    from parsched import _core

    _core.show_progress(True)
    try:
        yield
    finally:
        _core.show_progress(False)


def _main(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> int:
    try:
        args = parser.parse_args(argv)
        if getattr(args, "model_opt", None):
            args.model = args.model_opt
        with _progress_line(getattr(args.func, "__name__", "").startswith("cmd_simulate_")):
            return int(args.func(args) or 0)
    except UsageError as e:
        return fail(str(e))
    except (ConfigError, TraceError) as e:
        return fail(str(e))
    except PolicyError as e:
        return fail(f"policy: {e}")
    except SimulationError as e:
        return fail(f"simulation: {e}", code=1)
    except RuntimeUnavailable as e:
        return fail(f"runtime unavailable: {e}")
    except RuntimeFailure as e:
        return fail(f"runtime: {e}", code=1)
    except BrokenPipeError:
        return 0  # a reader that stops early is not an error
    except OSError as e:
        name = getattr(e, "filename", None)
        where = f" {name!r}" if name else ""
        return fail(f"io: {e.strerror or e}{where}")
    except ImportError as e:
        return fail(str(e), code=1)
    except Terminated:
        return fail("terminated (SIGTERM)", code=143)
    except KeyboardInterrupt:
        return fail("interrupted", code=130)
    except Exception:
        # SIGTERM's exception raised inside a lock's release (a thread pool
        # submitting work) comes out as "release unlocked lock": still SIGTERM
        if _terminated:
            return fail("terminated (SIGTERM)", code=143)
        raise


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

