"""``parsched sweep SPEC.toml --out DIR``: a sweep spec run from the command
line (the spec, resuming and the executors: :mod:`parsched.sim.sweep_spec`)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

from parsched.errors import ConfigError, Terminated
from parsched.sim.sweep_spec import (
    RESULTS,
    SweepOutcome,
    load_spec,
    make_executor,
    missed_targets,
    pending,
    run_spec,
)


def add_parser(sub: Any) -> None:
    """Registers ``parsched sweep`` on the CLI's subparsers."""
    from parsched.cli.common import _doc, _workers

    p = sub.add_parser("sweep", help=_doc(cmd_sweep).splitlines()[0],
                       description=_doc(cmd_sweep),
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("spec", metavar="SPEC.toml", help="sweep spec (docs/formats/sweep-spec.md)")
    p.add_argument("--out", required=True, metavar="DIR",
                   help="output directory: results.parquet and points/ (resumed if present)")
    p.add_argument("--executor", choices=("processes", "threads", "dask"), default=None,
                   help="where the runs go (default threads; dask when --scheduler is given)")
    p.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="address of a running Dask scheduler (implies --executor dask)")
    p.add_argument("--workers", type=_workers, default=None, metavar="N",
                   help="threads, processes or LocalCluster workers (default: one per CPU)")
    p.add_argument("--json", action="store_true", help="print one JSON object at the end")
    p.set_defaults(func=cmd_sweep)


def cmd_sweep(args: argparse.Namespace) -> int:
    """Run a parameter sweep from a spec file, with Parquet output and resume.

    SPEC.toml names the model (any of `parsched simulate --help`), a [base]
    configuration, a [grid] of KEY = [VALUES] (cartesian product) and/or
    [[points]] tables, and [replications] (seeds = N, or ci_half_width = X /
    ci_relative = X with metric, min and max: replications until the 90% CI
    half-width of the metric is below the target). One row per point goes to
    DIR/points/KEY.parquet as it finishes and DIR/results.parquet holds every
    finished point; running the same command again skips finished points.
    --executor threads (default), processes or dask (a LocalCluster of
    --workers processes, or the cluster at --scheduler ADDRESS, e.g. one
    started by dask-jobqueue on Slurm or PBS). Ctrl-C or SIGTERM keeps what
    finished (exit 130; SIGTERM 143). Format: docs/formats/sweep-spec.md;
    docs/sweeps.md.
    """
    from parsched.cli.common import fail
    from parsched.display import jsonable

    kind = args.executor or ("dask" if args.scheduler else "threads")
    if args.scheduler and kind != "dask":
        raise ConfigError("--scheduler", f"given with --executor {kind}",
                          "--executor dask (or leave --executor out)")
    spec = load_spec(args.spec)
    if os.path.exists(args.out) and not os.path.isdir(args.out):
        raise ConfigError("--out", f"{args.out!r} exists and is not a directory",
                          "a directory path")
    from parsched._io import check_output_dir

    check_output_dir(args.out, "--out")
    t0 = time.perf_counter()
    outcome: SweepOutcome | None = None
    todo = pending(spec, args.out)
    try:
        if not todo:  # all done: no executor to start
            outcome = run_spec(spec, args.out, None, progress=False)
        else:
            with make_executor(kind, args.workers, args.scheduler, len(todo)) as ex:
                outcome = run_spec(spec, args.out, ex, progress=True)
    except KeyboardInterrupt as e:
        saved = _count_rows(os.path.join(args.out, RESULTS))
        term = isinstance(e, Terminated)  # (the CLI's SIGTERM handler: exit 143)
        what = "terminated (SIGTERM)" if term else "interrupted"
        return fail(f"{what}: {saved} of {len(spec.points)} points saved in "
                     f"{os.path.join(args.out, RESULTS)}; run the same command to resume",
                     code=143 if term else 130)
    elapsed = time.perf_counter() - t0
    assert outcome is not None
    missed = missed_targets(outcome.results)
    msg = {"spec": args.spec, "model": spec.model, "points": outcome.total,
           "skipped": outcome.skipped, "ran": outcome.ran, "executor": kind,
           "results": outcome.path, "seconds": round(elapsed, 3),
           "missed_ci_target": missed}
    if args.json:
        print(json.dumps(jsonable(msg)))
    else:
        print(f"sweep {spec.model}: {outcome.total} points, {outcome.skipped} already done, "
              f"{outcome.ran} run ({kind}) in {elapsed:.1f} s; wrote {outcome.path}")
    if missed:
        print(f"parsched: warning: {missed}", file=sys.stderr)
    return 0


def _count_rows(path: str) -> int:
    try:
        import pyarrow.parquet as pq

        return int(pq.ParquetFile(path).metadata.num_rows)
    except Exception:
        return 0
