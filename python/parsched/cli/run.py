"""``parsched run`` (real processes on Linux) and ``parsched reproduce desktop``."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from parsched.cli.common import (
    _console,
    _doc,
    _print_table,
    _slot,
    _workers,
)
from parsched.display import jsonable
from parsched.errors import (
    ConfigError,
)


def _signame(sig: Any) -> str | None:
    """``SIGINT`` for 2; None for no signal."""
    if sig is None:
        return None
    import signal as _signal

    try:
        return _signal.Signals(int(sig)).name
    except ValueError:
        return str(sig)


def _fmt_status(st: dict[str, Any]) -> str:
    if st.get("signal") is not None:
        return f"killed by {_signame(st['signal'])}"
    return f"exit {st.get('code')}"


def _job_row(r: dict[str, Any], policy: str | None) -> dict[str, Any]:
    """One job's row of the report table (the policy's own columns added)."""
    return {
        "job": r["name"],
        "command": " ".join(r["argv"])[:40],
        "status": _fmt_status(r["status"]),
        "ok": bool(r["success"]),
        "wall s": float(r["wall_s"]),
        "CPU s": float(r["user_s"]) + float(r["sys_s"]),
        "suspended s": float(r["suspended_s"]),
        "slots": int(r["slots_run"]),
        "width": r["width"] if r["width"] is not None else "",
        "cpus": ",".join(str(c) for c in r["cpus"]),
        **({"classes": " ".join(f"{c}@{float(t):.1f}s" for t, c in r.get("classes", []))}
           if policy == "fcs" else {}),
        **({"WSS MB": float(r.get("wss_bytes") or 0) / 2**20,
            # "unreliable": another user of the accessed bits (DAMON) cleared them.
            "WSS": "unreliable" if r.get("wss_unreliable") else "measured"}
           if policy == "regions" else {}),
        **({"ranks@cpu": " ".join(f"{k}@{c}" for k, c in r.get("ranks", []))}
           if policy == "cosched" else {}),
    }


def cmd_run(args: argparse.Namespace) -> int:
    """Run real programs on this Linux machine under a scheduling policy.

    Jobs come from --jobs FILE.toml (RunSpec keys plus [[jobs]] tables with argv,
    name, width, env, cwd, stdout, stderr) and/or the command line after `--`,
    separated by a lone `:` like mpirun's MPMD syntax:

      parsched run --policy gang --slot 50ms -- ./a.out ARGS : ./b.out ARGS

    The policies and each one's own keys (its [TABLE] in the job file, e.g.
    [fcs] window_s, or the flat spelling, fcs_window_s) are listed below, from
    the runtime's one table of policies. Prints each job's
    exit status, wall time, CPU time, time suspended and slots (under fcs also its
    classes over time, under regions its working set), and the controller's stats;
    --json reports each job's classes as a list of [t_s, class].
    With --json stdout holds exactly one JSON object: the jobs' own output goes
    to stderr (unless a job sets its stdout). Exit status 0 if every job
    succeeded, 1 if any failed, 2 on bad input, 130 (143) when Ctrl-C (SIGTERM)
    stopped the run — its jobs are stopped and the report says so. Needs
    cgroups (root or a delegated cgroup) except with --backend signal.
    """
    from parsched.runtime import load_job_file, make_spec, run_jobs, split_commands

    base = load_job_file(args.jobs) if args.jobs else {}
    cmds = split_commands(args.command or [])
    jobs = list(base.get("jobs", []) or [])
    for argv in cmds:
        job: dict[str, Any] = {"argv": argv}
        if args.width is not None:
            job["width"] = args.width
        jobs.append(job)
    if not jobs:
        raise ConfigError("command", "no command given",
                          "parsched run [OPTIONS] -- PROGRAM ARGS [: PROGRAM ARGS ...] "
                          "or --jobs FILE.toml")
    if args.json:
        # one JSON object on stdout: the jobs write theirs to stderr
        for job in jobs:
            if isinstance(job, dict) and not job.get("stdout"):
                job["stdout"] = "/dev/stderr"
    base["jobs"] = jobs
    cosched = {k: v for k, v in (("scheme", args.scheme), ("layout", args.layout),
                                 ("spin_us", args.spin_us)) if v is not None}
    if isinstance(base.get("cosched"), dict):
        # the job file has the [cosched] table: the command line's keys go into it
        base["cosched"] = {**base["cosched"], **cosched}
        cosched = {}
    spec = make_spec(base, policy=args.policy, slot=args.slot, backend=args.backend,
                     max_slots=args.max_slots, **{f"cosched_{k}": v for k, v in cosched.items()})
    if args.json:
        sys.stdout.flush()
    out = run_jobs(spec, stop_on_signal=False)
    reports, stats = out["jobs"], out["controller"]
    ok = all(r["success"] for r in reports)
    sig = stats.get("signal")
    code = 128 + int(sig) if sig else (0 if ok else 1)
    from parsched.runtime.policies import canonical, default_policy

    policy = spec.get("policy") or default_policy()
    # the slot only means something where slots are switched
    slotted = canonical(policy) in ("gang", "fcs")
    if args.json:
        print(json.dumps(jsonable({"policy": policy,
                                    "slot": spec.get("slot", "50ms") if slotted else None,
                                    "success": ok, "interrupted": _signame(sig), **out})))
        return code
    import pandas as pd

    rows = [_job_row(r, canonical(policy)) for r in reports]
    con = _console()
    scheme = spec.get("cosched_scheme") or (spec.get("cosched") or {}).get("scheme")
    what = (f", scheme {scheme or _key_default('cosched', 'scheme')}" if policy == "cosched"
            else f", slot {spec.get('slot', '50ms')}" if slotted
            else "")
    con.print(f"parsched run: policy {policy}{what}, backend "
              f"{stats['backend']}"
              f"{' (controller at SCHED_FIFO)' if stats['realtime'] else ''}", highlight=False)
    _print_table(con, "", pd.DataFrame(rows))
    crow = [
        ("slot switches", stats["switches"]),
        ("controller wake-ups", stats["wakeups"]),
        ("time in switches (ms)", float(stats["switch_s"]) * 1e3),
        ("longest switch (ms)", float(stats["max_switch_s"]) * 1e3),
        ("time spreading threads (ms)", float(stats["spread_s"]) * 1e3),
        ("controller CPU (s)", float(stats["cpu_s"])),
        # the policy's own report (fcs: dc_slots, cosched: boosts, regions: regions)
        *([("DC slots", stats["dc_slots"])] if "dc_slots" in stats else []),
        *([("boosts (SCHED_FIFO)", stats["boosts"])] if "boosts" in stats else []),
        *([("working-set scans", stats["regions"]["scans"]),
           ("time scanning (ms)", float(stats["regions"]["scan_s"]) * 1e3),
           ("placement decisions", " ".join(
               f"{d['decision']}@{float(d['at_s']):.1f}s"
               for d in stats["regions"]["decisions"]) or "none")]
          if stats.get("regions") else []),
        ("wall (s)", float(stats["wall_s"])),
    ]
    _print_table(con, "controller", pd.DataFrame(crow, columns=["measure", "value"]))
    failed = [r["name"] for r in reports if not r["success"]]
    if sig:
        con.print(f"interrupted by {_signame(sig)}: the jobs were stopped", highlight=False)
    elif failed:
        con.print(f"failed: {', '.join(failed)}", highlight=False)
    return code

def _key_default(table: str | None, key: str) -> str:
    """The default of ``key`` of the runtime policies' ``[table]`` (of the
    common keys for None), as help shows it."""
    from parsched.runtime.policies import common_key, table_key

    k = common_key(key) if table is None else table_key(table, key)
    return "?" if k is None else str(k["default"]).lower() if isinstance(
        k["default"], bool) else str(k["default"])


def add_run_parser(sub: Any, fmt: Any) -> None:
    """The ``run`` command's parser: its choices and the policy list of its
    help come from the runtime's table of policies (parsched.runtime.policies)."""
    from parsched.runtime import policies as rtp

    ru = sub.add_parser("run", help=_doc(cmd_run).splitlines()[0],
                        description=_doc(cmd_run) + "\n\n" + rtp.policies_help(),
                        formatter_class=fmt)
    ru.add_argument("--policy", choices=rtp.policy_names() or None, default=None,
                    help=f"scheduling policy (default: the job file's, else "
                         f"{rtp.default_policy()}); each is listed below with its keys")
    # no argparse choices: the runtime refuses a bad scheme in one line naming the key
    schemes = rtp.choices("cosched", "scheme")
    ru.add_argument("--scheme", default=None, metavar="NAME",
                    help="cosched: [cosched] scheme, "
                         + (" | ".join(schemes) if schemes else "see below")
                         + f" (default {_key_default('cosched', 'scheme')})")
    ru.add_argument("--layout", choices=rtp.choices("cosched", "layout"), default=None,
                    help="cosched: [cosched] layout (default "
                         f"{_key_default('cosched', 'layout')}; see below)")
    ru.add_argument("--spin-us", type=_workers, default=None, metavar="N",
                    help="cosched: [cosched] spin_us, the ranks' spin time before blocking "
                         f"or yielding (us; default {_key_default('cosched', 'spin_us')}; "
                         "`parsched tune mpi-spin` chooses it)")
    ru.add_argument("--slot", type=_slot, default=None, metavar="LEN",
                    help="slot length with its unit, e.g. 50ms, 0.05s, 500us (default "
                         f"{_key_default(None, 'slot')}; a bare number is refused)")
    ru.add_argument("--backend", choices=rtp.choices(None, "backend"), default=None,
                    help=f"how jobs are frozen (default {_key_default(None, 'backend')})")
    ru.add_argument("--jobs", metavar="FILE.toml", default=None,
                    help="TOML job file: RunSpec keys and [[jobs]] tables")
    ru.add_argument("--width", type=_workers, default=None, metavar="N",
                    help="gang width of the command-line jobs (default: all CPUs)")
    ru.add_argument("--max-slots", type=_workers, default=None, metavar="N",
                    help="multiprogramming level (jobs beyond it wait)")
    ru.add_argument("--json", action="store_true",
                    help="print the reports as one JSON object, alone on stdout (the jobs' "
                         "output goes to stderr)")
    ru.add_argument("command", nargs=argparse.REMAINDER, metavar="-- PROGRAM ARGS [: ...]",
                    help="jobs separated by a lone ':'")
    ru.set_defaults(func=cmd_run)


def cmd_reproduce_desktop(args: argparse.Namespace) -> int:
    """Frachtenberg's parallel-desktop experiment (section 4.1, Figures 1-2) on this machine.

    k parallel programs (bench/bsp: 2 threads, spin barrier every 1 ms) plus s
    sequential stressors (busy loops, s = 0..3), under default Linux and under
    parsched's gang scheduling (50 ms slots); then a granularity sweep in the
    manner of Feitelson & Rudolph (two 2-thread spin-barrier jobs, barrier
    every 0.1, 1, 10 ms). The ideal time-sharing reference is the sum of the solo runtimes. Prints
    tables, writes desktop.csv, granularity.csv, PNG plots and summary.md to
    --out (with the load average at each run); --json prints the data. Builds
    bench/bsp (make -C bench) if it is missing. Needs root and cgroups. A full run
    takes a few minutes, --quick under one.
    """
    from parsched._io import atomic_dir, check_output_dir
    from parsched.reproduce import desktop as reproduce_desktop

    check_output_dir(args.out, "--out")
    reproduce_desktop.check_runtime()
    bsp = reproduce_desktop.ensure_bsp(args.bsp)
    con = _console()
    start = time.perf_counter()
    quiet = args.json
    with atomic_dir(args.out) as tmp:
        res = reproduce_desktop.run(
            tmp, bsp, quick=args.quick, solo_s=args.solo_seconds, reps=args.reps,
            echo=None if quiet else (lambda title, obj: _print_table(con, title, obj)),
            progress=None if quiet else (lambda msg: con.print(msg, highlight=False)),
        )
    elapsed = time.perf_counter() - start
    if args.json:
        print(json.dumps(jsonable({"out": args.out, "seconds": elapsed, **res})))
    else:
        con.print(f"wrote {args.out}/ (desktop.csv, granularity.csv, *.png, summary.md) in "
                  f"{elapsed:.1f} s", highlight=False)
    return 0




def cmd_tune_mpi_spin(args: argparse.Namespace) -> int:
    """Choose a real MPI program's spin time the way seed 003 did, on this machine.

    Runs --copies copies of the program at once (--np ranks each, with
    libparsched_mpi and PARSCHED_MPI_WAIT=spin-block), once per spin time of
    a grid fixed in advance (10 us to 10 ms), --reps times, interleaved; the
    spin with the lowest median makespan wins, and of the spins within 3% of
    it the shortest (Nagar et al. §2: "an empirical approach to quantify the
    optimal spin time for a given application"). Pass the result on with
    PARSCHED_MPI_SPIN_US. Needs `make mpi`.

      parsched tune mpi-spin --impl mpich -- ./a.out ARGS
    """
    import shutil

    from parsched.cli.common import UsageError
    from parsched.runtime import mpi

    argv = list(args.command or [])
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        raise UsageError("command: no program given; allowed: -- PROGRAM ARGS")
    if shutil.which(argv[0]) is None:
        raise UsageError(f"command: program {argv[0]!r} not found or not executable; "
                         "allowed: an executable file or a command on PATH")
    if shutil.which(f"mpirun.{args.impl}") is None:
        raise UsageError(f"impl: mpirun.{args.impl} is not installed here; `make mpi` "
                         "installs Open MPI and MPICH (Debian, as root)")
    try:
        mpi.library(args.impl)
    except FileNotFoundError as e:
        raise UsageError(f"impl: {e}") from None
    quiet = args.json
    con = _console()

    def progress(row: dict[str, Any]) -> None:
        if not quiet:
            con.print(f"spin {row['spin_us']:>6} us, rep {row['rep'] + 1}: "
                      f"{row['makespan_s']:.3f} s", highlight=False)

    try:
        res = mpi.tune_spin(args.impl, argv, np=args.np, copies=args.copies, reps=args.reps,
                            progress=progress)
    except RuntimeError as e:
        print(f"parsched: error: runtime: {e}", file=sys.stderr)
        return 1
    if quiet:
        print(json.dumps(jsonable(res)))
        return 0
    import pandas as pd

    _print_table(con, f"median makespan (s) of {args.copies} copies, per spin (us)",
                 pd.DataFrame([{"spin_us": s, "makespan_s": round(m, 3)}
                               for s, m in res["medians"].items()]))
    con.print(f"chosen: PARSCHED_MPI_SPIN_US={res['spin_us']}", highlight=False)
    return 0
