"""parsched: simulate parallel-job scheduling policies (Rust core, Python front end).

Bad input of any kind is reported as one line ``parsched: error: FIELD: ...`` on
stderr with exit status 2, and no output file is written.
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import json
import math
import os
import sys
import time
from collections.abc import Sequence
from typing import Any, NoReturn

from ._report import FIGURE_FORMATS, jsonable
from .config import BarrierConfig, BatchConfig, PoolsConfig
from .errors import (
    ConfigError,
    PolicyError,
    RuntimeFailure,
    RuntimeUnavailable,
    SimulationError,
    TraceError,
    shown,
)

__all__ = ["main"]

PROG = "parsched"


class UsageError(Exception):
    """An argparse usage error (reported in one line, exit status 2)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        import re

        # argparse quotes the bad argument in full: cut long ones
        message = re.sub(r"'([^']{61,})'", lambda m: shown(m.group(1)), message)
        raise UsageError(_usage_hint(message))


def _usage_hint(message: str) -> str:
    """argparse's message with a hint: the closest command, or --set for KEY=VALUE."""
    import difflib
    import re

    m = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
    if m:
        choices = re.findall(r"'([^']*)'", m.group(2))
        near = difflib.get_close_matches(m.group(1), choices, n=1, cutoff=0.6)
        if near:
            return f"{message} (did you mean {near[0]}?)"
    m = re.search(r"unrecognized arguments: (.*)", message)
    if m:
        pairs = [a for a in m.group(1).split() if "=" in a and not a.startswith("-")]
        if pairs:
            return f"{message} (to set a key, use --set {' '.join(pairs)})"
    return message


def _positive_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{shown(text)} is not a number") from None
    if not (v > 0 and math.isfinite(v)):
        raise argparse.ArgumentTypeError(f"{v} is out of range; allowed: a number > 0")
    return v


def _window(text: str) -> tuple[float, float]:
    """``--gantt-window START:END`` (seconds, START < END)."""
    parts = text.split(":")
    try:
        lo, hi = (float(x) for x in parts) if len(parts) == 2 else (math.nan, math.nan)
    except ValueError:
        lo = hi = math.nan
    if not (math.isfinite(lo) and math.isfinite(hi) and hi > lo):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a window; allowed: START:END in seconds with START < END")
    return lo, hi


def _doc(fn: Any) -> str:
    return inspect.cleandoc(fn.__doc__ or "")


def _workers(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{shown(text)} is not an integer") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"{n} is out of range; allowed: integer >= 1")
    return n


def _slot(text: str) -> str:
    """``--slot``: a length with its unit (a bare number is refused: 50 could
    be ms or s)."""
    import re

    if not re.fullmatch(r"\s*\d+(\.\d*)?\s*(ns|us|µs|ms|s|m|min)\s*", text):
        if re.fullmatch(r"\s*\d+(\.\d*)?\s*", text):
            raise argparse.ArgumentTypeError(
                f"{shown(text)} has no unit; allowed: a length with its unit, e.g. 50ms, "
                "0.05s, 500us")
        raise argparse.ArgumentTypeError(
            f"cannot parse {text[:60]!r}; allowed: a length with its unit, e.g. 50ms, "
            "0.05s, 500us")
    return text.strip()


# ------------------------------------------------------------------ output


def _console():
    from rich.console import Console

    c = Console()
    return c if c.is_terminal else Console(width=120, color_system=None)


def _print_table(console, title: str, obj: Any) -> None:
    from rich.table import Table

    try:
        import pandas as pd
    except ImportError:  # pragma: no cover
        pd = None
    if pd is not None and isinstance(obj, pd.DataFrame):
        t = Table(title=title or None, title_justify="left")
        for col in obj.columns:
            numeric = pd.api.types.is_numeric_dtype(obj[col])
            t.add_column(str(col), justify="right" if numeric else "left")
        for _, row in obj.iterrows():
            t.add_row(*(_cell(v) for v in row))
        console.print(t)
    else:
        console.print(f"[bold]{title}[/bold]: {obj}" if title else str(obj), highlight=False)


def _cell(v: Any) -> str:
    if isinstance(v, bool):
        return "yes" if v else ""
    if isinstance(v, float):
        if math.isnan(v):
            return ""
        if v.is_integer() and abs(v) < 1e9:
            return str(int(v))
        if abs(v) >= 100:
            return f"{v:.1f}"
        return f"{v:.3f}" if abs(v) < 1 else f"{v:.2f}"
    return str(v)


# ---------------------------------------------------------------- commands


def cmd_simulate_pools(args: argparse.Namespace) -> int:
    """Simulate Zhou & Brecht's processor-pool model (SIGMETRICS 1991) once.

    Starts from Table 2's defaults (or --config FILE.toml), applies --set
    KEY=VALUE overrides (keys: P L D T F G p0 t W S r c pool_size spanning
    parallelism jobs warmup reps seed workload init final para_unit spread combine
    switch_cost f_rounding g_rounding tie_break inflate_master ci), and optionally
    replaces the generated workload with --arrivals FILE.csv (header
    arrival,d[,para_work]). Setting jobs alone scales the warm-up with it (a
    tenth). `parsched.PoolsConfig.field_doc(KEY)` describes a key.
    """
    from ._io import atomic_file, check_output_file
    from .api import simulate
    from .arrivals import load_arrivals

    cfg = PoolsConfig.from_toml(args.config) if args.config else PoolsConfig()
    cfg = cfg.apply_overrides(args.set or [])
    if args.arrivals:
        cfg = cfg.with_(arrivals=load_arrivals(args.arrivals, P=cfg.P))
    suffix = None
    if args.jobs_out:
        suffix = check_output_file(args.jobs_out, "--jobs-out", (".csv", ".parquet"))
    res = simulate(cfg, records=bool(args.jobs_out), workers=args.workers)
    if args.jobs_out:
        with atomic_file(args.jobs_out) as tmp:
            if suffix == ".parquet":
                res.jobs.to_parquet(tmp, index=False)
            else:
                res.jobs.to_csv(tmp, index=False)
    s = res.summary
    if args.json:
        obj = dict(s)
        obj["config"] = cfg.scalars()
        if cfg.arrivals is not None:
            obj["config"]["arrivals"] = len(cfg.arrivals)
        print(json.dumps(jsonable(obj), sort_keys=False))
        return 0
    import pandas as pd

    rows = [
        ("mean response time", s["mean_response_time"]),
        ("90% CI half-width", s["ci90_half_width"]),
        ("actual parallelism A", s["actual_parallelism"]),
        ("utilization U", s["utilization"]),
        ("jobs measured", s["jobs"]),
        ("replications", s.get("reps")),
        ("context switches", s.get("context_switches")),
        ("events", s["events"]),
        ("wall seconds", s["wall_seconds"]),
    ]
    con = _console()
    con.print(f"pools model, {cfg.summary_label()}", highlight=False)
    _print_table(con, "", pd.DataFrame(rows, columns=["measure", "value"]))
    if args.jobs_out:
        con.print(f"wrote {len(res.jobs)} job records to {args.jobs_out}", highlight=False)
    return 0


def cmd_simulate_barrier(args: argparse.Namespace) -> int:
    """Simulate Feitelson & Rudolph's iterative-barrier machine (JPDC 1992) once.

    A gang of n threads (one per processor) iterates k times: compute
    U(grain, grain+var) + barrier_cost ms, then a barrier; l threads share each
    processor (the gang and l-1 competitors). Starts from the defaults (or
    --config FILE.toml with a [barrier] table or flat keys) and applies --set
    KEY=VALUE overrides; keys: n l P k grain var dist (uniform|exponential|empirical)
    samples (empirical: a,b,c or @FILE) barrier_cost tq tcs alpha wait
    (busy|block|twophase|yield) spin_limit wakeup (tail|priority) sched (gang|local)
    competitors (same|compute) skew shuffle batches seed max_events; times in ms.
    Each time key is at most 1e9 ms and a run at most 1e12 ms of simulated time;
    a run whose estimated event count is above max_events (default 1e10, about a
    quarter of an hour) is refused before it starts (max_events=0: no limit).
    """
    from .api import simulate_barrier

    cfg = BarrierConfig.from_toml(args.config) if args.config else BarrierConfig()
    cfg = cfg.apply_overrides(args.set or [])
    res = simulate_barrier(cfg)
    # the model values (t_p, t_w, eqs. 6-13) as `parsched reproduce gang` computes them
    s = {**res.summary, **res.model}
    if args.json:
        obj = dict(s)
        obj["batch_means"] = list(res.batch_means)
        obj["iteration_histogram"] = [list(b) for b in res.histogram]
        obj["config"] = cfg.scalars()
        print(json.dumps(jsonable(obj), sort_keys=False))
        return 0
    import pandas as pd

    rows = [
        ("time per iteration (ms)", s["time_per_iteration"]),
        ("90% CI half-width (ms)", s["ci90_half_width"]),
        ("iteration time min / p50 / p90 / p99 / max (ms)",
         " / ".join(f"{s[k]:.4g}" for k in ("iteration_min", "iteration_p50", "iteration_p90",
                                           "iteration_p99", "iteration_max"))),
        ("utilization", s["utilization"]),
        ("fragmentation", s["fragmentation"]),
        ("busy-wait time (ms, all gangs)", s["busy_wait_time"]),
        ("switch/blocking overhead (ms)", s["overhead_time"]),
        ("context switches", s["context_switches"]),
        ("blocking events", s["blocking_events"]),
        ("yields (α measured)", f"{s['yields']} ({s['alpha_measured']:.3g})"
         if s.get("alpha_measured") is not None else s["yields"]),
        ("preemptions", s["preemptions"]),
        ("slot switches", s["slot_switches"]),
        ("t_p, t_w (ms)", f"{s['t_p']:.4g}, {s['t_w']:.4g}"),
        ("model: eq6 gang busy", s["eq6"]),
        ("model: eq8 uncoordinated busy", s["eq8"]),
        ("model: eq12 blocking (same)", s["eq12"]),
        ("model: eq13 blocking (compute)", s["eq13"]),
        ("events", s["events"]),
        ("wall seconds", s["wall_seconds"]),
    ]
    con = _console()
    con.print(f"barrier model, {cfg.summary_label()}", highlight=False)
    _print_table(con, "", pd.DataFrame(rows, columns=["measure", "value"]))
    return 0


def cmd_simulate_batch(args: argparse.Namespace) -> int:
    """Run a workload trace (SWF, .swf or .swf.gz) under a batch scheduler once.

    Policies: fcfs, easy (EASY backfilling), conservative (conservative
    backfilling), gang (time slicing on an Ousterhout matrix, mpl slots, with
    backfilling). Starts from the defaults (or --config FILE.toml with a [batch]
    table or flat keys) and applies --set KEY=VALUE overrides; keys: policy procs
    (default: the header's MaxProcs) kill_on_overrun bsld_tau procs_rule
    missing_requested_time requested_time_factor missing_runtime zero_runtime
    cancelled unsorted extra_fields (ignore|error) too_wide (drop|clamp|error, alias
    reject) mpl quantum gang_backfill slot_allocation load_factor track_resources
    max_events (gang: runs estimated above it are refused; 0: no limit), and
    workload (trace, or lublin: jobs generated by the Lublin-Feitelson model, no
    --trace) workload_jobs workload_load workload_seed workload_types. Prints the
    metrics and what loading dropped or repaired and why; --jobs-out writes
    Batsim's jobs CSV, --swf-out the schedule as SWF, --gantt and --utilization
    plots (.png, .svg or .pdf; --gantt-window START:END sets the Gantt chart's
    window).
    """
    import contextlib

    from ._io import atomic_file, check_output_file
    from .batch import _source, simulate_batch

    cfg = BatchConfig.from_toml(args.config) if args.config else BatchConfig()
    cfg = cfg.apply_overrides(args.set or [])
    if args.trace:
        cfg = cfg.with_(trace=args.trace)
    path = _source(cfg)
    if args.gantt_window and not args.gantt:
        raise ConfigError("--gantt-window", "given without --gantt", "--gantt FILE.png")
    outs = {"jobs_out": (args.jobs_out, "--jobs-out", (".csv",)),
            "swf_out": (args.swf_out, "--swf-out", (".swf",)),
            "gantt": (args.gantt, "--gantt", FIGURE_FORMATS),
            "utilization": (args.utilization, "--utilization", FIGURE_FORMATS)}
    for target, flag, suffixes in outs.values():
        if target:
            check_output_file(target, flag, suffixes)
    with contextlib.ExitStack() as stack:
        tmp = {k: stack.enter_context(atomic_file(v[0])) if v[0] else None
               for k, v in outs.items()}
        res = simulate_batch(path, cfg, jobs_csv=tmp["jobs_out"], swf_out=tmp["swf_out"])
        if tmp["gantt"]:
            res.plot_gantt(tmp["gantt"], window=args.gantt_window)
        if tmp["utilization"]:
            res.plot_utilization(tmp["utilization"])
    s = res.summary
    written = {k: v[0] for k, v in outs.items() if v[0]}
    if args.json:
        obj: dict[str, Any] = {"trace": path, "policy": res.policy}
        obj.update(s)
        obj["records"] = res.records
        obj["dropped"] = res.dropped
        obj["report"] = dict(res.report)
        h = res.header
        obj["header"] = {k: h.get(k) for k in ("max_procs", "max_nodes", "unix_start_time",
                                              "computer", "installation", "version")}
        obj["config"] = cfg.to_dict()
        obj["outputs"] = written
        print(json.dumps(jsonable(obj), sort_keys=False))
        return 0
    import pandas as pd

    rows = [
        ("jobs run", s["jobs"]),
        ("processors", s["procs"]),
        ("average wait (s)", s["avg_wait"]),
        ("maximum wait (s)", s["max_wait"]),
        ("average response (s)", s["avg_response"]),
        ("average slowdown", s["avg_slowdown"]),
        (f"average bounded slowdown (tau = {cfg.bsld_tau:g} s)", s["avg_bounded_slowdown"]),
        ("utilization", s["utilization"]),
        ("makespan (s)", s["makespan"]),
        ("killed at requested time", s["killed"]),
        ("queue length: max, time average", f"{s['max_queue']}, {s['avg_queue']:.2f}"),
        ("slot switches (gang)", s["slot_switches"]),
        ("simulation time (ms)", s["wall_seconds"] * 1e3),
    ]
    con = _console()
    source = (os.path.basename(path) if path is not None else
              f"Lublin-Feitelson model ({cfg.workload_jobs} jobs, seed {cfg.workload_seed})")
    con.print(f"batch: {source}, policy {res.policy}, P = {s['procs']} "
              f"({cfg.with_(trace=None).summary_label()})", highlight=False)
    _print_table(con, "", pd.DataFrame(rows, columns=["measure", "value"]))
    con.print(f"loading: {res.records} records, {s['jobs']} run, {res.dropped} dropped",
              highlight=False)
    if res.report:
        rep = pd.DataFrame(list(res.report.items()), columns=["what and why", "records"])
        _print_table(con, "", rep)
    else:
        con.print("  nothing dropped or repaired", highlight=False)
    for flag, target in written.items():
        con.print(f"wrote {flag.replace('_', '-')}: {target}", highlight=False)
    return 0


def cmd_simulate_cosched(args: argparse.Namespace) -> int:
    """Simulate Nagar et al.'s network of workstations (SPAA 1999) once.

    Message-passing jobs (LIFE3.5, LIFE12, MG, LU, EP) on workstations whose
    Solaris time-sharing schedulers run independently, coscheduled by one of
    Table 1's schemes (Local SB DCS DCS-SB PB PBT PB-SB SY DCS-SY PB-SY) or by
    the references gang and fcfs. Starts from the defaults (PB on workload 5,
    8 nodes; or --config FILE.toml with a [cosched] table or flat keys) and
    applies --set KEY=VALUE overrides; keys: workload (1-9) jobs (e.g.
    LIFE12,MG,LU,EP) scheme nodes cpus_per_node job_width local (ts|rr)
    rr_quantum_ms dispatch_table (a file: dispadmin -c TS -g text) initial_level
    age_running boost_refreshes_quantum boost_to (top|sleep_return|sleep_return+K|a
    level 0-59) boost_cap boost_queue (head|tail)
    boost_transient tick_ms launch_gap_ms start_skew_ms
    latency_us send_overhead_us recv_overhead_us per_byte_ns context_switch_us
    interrupt_us syscall_us timer_us spin_time_us boost_period_ms
    spin_cap_at_boost_period pending (unpolled|unconsumed) pb_sb_wake_interrupts
    nic_sample_us wake_delay_us wake_loss block_timeout_ms daemon_period_ms
    daemon_run_us gang_slot_ms probe_ms probe_node scale alone_s max_time_s seed
    reps. Prints the completion time (± 90% CI over reps), each job's completion
    time and communication share, the cv and the slowdown against the ideal;
    --timeline writes the probed node's CPU shares over time (first
    replication): FILE.csv as data, FILE.png/.svg/.pdf as the Figures 2-3 plot
    (--plot FILE.png is the same plot). A run that passes max_time_s (a
    livelock) is an error (exit 2).
    """
    import contextlib

    from ._io import atomic_file, check_output_file
    from .config import CoschedConfig
    from .cosched import simulate_cosched
    from .errors import TimeLimitError

    cfg = CoschedConfig.from_toml(args.config) if args.config else CoschedConfig()
    cfg = cfg.apply_overrides(args.set or [])
    figs = (".png", ".svg", ".pdf")
    outs = {"timeline": (args.timeline, "--timeline", (".csv", *figs)),
            "plot": (args.plot, "--plot", figs)}
    for target, flag, suffixes in outs.values():
        if target:
            check_output_file(target, flag, suffixes)
    with contextlib.ExitStack() as stack:
        tmp = {k: stack.enter_context(atomic_file(v[0])) if v[0] else None
               for k, v in outs.items()}
        try:
            res = simulate_cosched(cfg, workers=args.workers)
        except TimeLimitError as e:
            raise ConfigError("max_time_s", str(e)) from None
        for key in ("timeline", "plot"):
            if not tmp[key]:
                continue
            ext = os.path.splitext(outs[key][0])[1].lower()
            if ext == ".csv":
                res.timeline.to_csv(tmp[key], index=False)
            else:
                res.plot_timeline().savefig(tmp[key], format=ext[1:], dpi=110)
    written = {k: v[0] for k, v in outs.items() if v[0]}
    if args.json:
        obj = res.to_dict()
        obj["outputs"] = written
        print(json.dumps(obj, sort_keys=False))
        return 0
    import pandas as pd

    ci = res.completion_time_ci90
    runs = res.runs
    rows = [
        ("scheme", res.scheme),
        ("jobs", ", ".join(res.jobs)),
        ("completion time (s)", f"{res.completion_time:.3f}"
         + ("" if math.isnan(ci) else f" ± {ci:.3f} (90% CI)")),
        ("mean job time (s)", res.mean_job_time),
        ("cv of the job times", res.cv),
        ("ideal (s): jobs × alone_s × scale", res.ideal),
        ("slowdown vs ideal", res.slowdown),
        ("replications", len(runs)),
        ("mean message latency (µs)", float(runs["latency_us"].mean())),
        ("spin time, all nodes (s)", float(runs["spin_time"].mean())),
        ("context switches", float(runs["context_switches"].mean())),
        ("interrupts", float(runs["interrupts"].mean())),
        ("boosts", float(runs["boosts"].mean())),
        ("blocks / wake-ups", f"{runs['blocks'].mean():.0f} / {runs['wakeups'].mean():.0f}"),
        ("yields", float(runs["yields"].mean())),
        ("events", int(runs["events"].sum())),
        ("wall seconds", float(runs["wall_seconds"].sum())),
    ]
    con = _console()
    con.print(f"cosched model, {cfg.label()}", highlight=False)
    _print_table(con, "", pd.DataFrame(rows, columns=["measure", "value"]))
    jobs = pd.DataFrame({
        "job": list(range(len(res.jobs))),
        "application": res.jobs,
        "completion time (s)": res.job_completion_times,
        "comm share": res.comm_share,
    })
    _print_table(con, "jobs", jobs)
    for flag, target in written.items():
        con.print(f"wrote {flag}: {target}", highlight=False)
    return 0


def _fmt_status(st: dict[str, Any]) -> str:
    if st.get("signal") is not None:
        import signal as _signal

        try:
            name = _signal.Signals(st["signal"]).name
        except ValueError:
            name = str(st["signal"])
        return f"killed by {name}"
    return f"exit {st.get('code')}"


def cmd_generate_lublin(args: argparse.Namespace) -> int:
    """Write a synthetic workload of the Lublin-Feitelson model as SWF.

    The model of rigid parallel jobs of Lublin and Feitelson (JPDC 2003; the
    Parallel Workloads Archive's m_lublin99), retargeted to the machine size.
    Keys (--set KEY=VALUE): procs (processors, default 128), jobs (default
    10000), load (offered load the arrivals are scaled to, e.g. 0.9; default
    none: the model's own arrivals), seed (default 1), include_types (batch and
    interactive types, default true; false: the typeless model). -o FILE.swf or
    FILE.swf.gz (gzip). The same jobs run without a file through `parsched
    simulate batch --set workload=lublin workload_jobs=N workload_load=L
    workload_seed=S procs=P`.
    """
    from ._io import atomic_file, check_output_file
    from .api import core
    from .generate import LUBLIN_KEYS, parse_lublin_overrides

    kw = dict(LUBLIN_KEYS)
    kw.update(parse_lublin_overrides(args.set or []))
    if not (args.output.endswith(".swf") or args.output.endswith(".swf.gz")):
        raise ConfigError("--output", f"{args.output!r} is not an SWF file name",
                          ".swf or .swf.gz")
    check_output_file(args.output, "--output")
    c = core()
    t0 = time.perf_counter()
    try:
        with atomic_file(args.output) as tmp:
            out = c.generate_lublin(kw, tmp)
    except c.ConfigError as e:
        raise ConfigError.from_message(str(e)) from None
    wall = time.perf_counter() - t0
    obj = {"output": args.output, "load_factor": out["factor"], "wall_seconds": wall, **kw}
    if args.json:
        print(json.dumps(jsonable(obj)))
    else:
        load = "the model's arrivals" if kw["load"] is None else f"offered load {kw['load']:g}"
        _console().print(
            f"wrote {args.output}: {kw['jobs']} jobs for {kw['procs']} processors, {load} "
            f"(interarrival factor {out['factor']:.4g}), seed {kw['seed']}, {wall:.2f} s",
            highlight=False)
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    """Run real programs on this Linux machine under a scheduling policy.

    Jobs come from --jobs FILE.toml (RunSpec keys plus [[jobs]] tables with argv,
    name, width, env, cwd, stdout, stderr) and/or the command line after `--`,
    separated by a lone `:` like mpirun's MPMD syntax:

      parsched run --policy gang --slot 50ms -- ./a.out ARGS : ./b.out ARGS

    Policies: gang (Ousterhout matrix, slots switched by freezing each job's
    cgroup), pools (cpusets from the topology), flexible (gang only the jobs that
    spin), default (start all, let Linux schedule). Prints each job's exit status,
    wall time, CPU time, time suspended and slots, and the controller's stats.
    Exit status 0 if every job succeeded, 1 if any failed, 2 on bad input. Needs
    cgroups (root or a delegated cgroup) except with --backend signal.
    """
    from .runtime import load_job_file, make_spec, run_jobs, split_commands

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
    base["jobs"] = jobs
    spec = make_spec(base, policy=args.policy, slot=args.slot, backend=args.backend,
                     max_slots=args.max_slots)
    if args.json:
        sys.stdout.flush()
    out = run_jobs(spec)
    reports, stats = out["jobs"], out["controller"]
    ok = all(r["success"] for r in reports)
    if args.json:
        print(json.dumps(jsonable({"policy": spec.get("policy", "gang"),
                                    "slot": spec.get("slot", "50ms"),
                                    "success": ok, **out})))
        return 0 if ok else 1
    import pandas as pd

    rows = [{
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
    } for r in reports]
    con = _console()
    con.print(f"parsched run: policy {spec.get('policy', 'gang')}, slot "
              f"{spec.get('slot', '50ms')}, backend {stats['backend']}"
              f"{' (controller at SCHED_FIFO)' if stats['realtime'] else ''}", highlight=False)
    _print_table(con, "", pd.DataFrame(rows))
    crow = [
        ("slot switches", stats["switches"]),
        ("controller wake-ups", stats["wakeups"]),
        ("time in switches (ms)", float(stats["switch_s"]) * 1e3),
        ("longest switch (ms)", float(stats["max_switch_s"]) * 1e3),
        ("time spreading threads (ms)", float(stats["spread_s"]) * 1e3),
        ("controller CPU (s)", float(stats["cpu_s"])),
        ("wall (s)", float(stats["wall_s"])),
    ]
    _print_table(con, "controller", pd.DataFrame(crow, columns=["measure", "value"]))
    failed = [r["name"] for r in reports if not r["success"]]
    if failed:
        con.print(f"failed: {', '.join(failed)}", highlight=False)
    return 0 if ok else 1


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
    from . import reproduce_desktop
    from ._io import atomic_dir, check_output_dir

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


def _make_executor(workers: int | None):
    import concurrent.futures as cf

    from .api import default_executor, spawned_pool

    if workers == 1:
        return cf.ThreadPoolExecutor(max_workers=1)
    if workers:
        return spawned_pool(workers)
    return default_executor()


def _stop_executor(executor, interrupted: bool) -> None:
    from .api import stop_executor

    stop_executor(executor, interrupted)


def cmd_reproduce_gang(args: argparse.Namespace) -> int:
    """Reproduce Feitelson & Rudolph (JPDC 1992): model vs simulation vs paper.

    (a) eqs. 6, 8, 10, 12, 13 against simulation over t_p (0.05-200 ms), loads
    1-4 and gang sizes 2, 4, 10, each flagged in or out of its regime; (b)
    experiments 1-4 of section 3.3 with the Makbilan parameters (eq. 14, Table 1);
    (c) the phase diagram of Figure 9 (sigma = 1/2) from the formulas and from
    simulation; (d) two-phase waiting beside busy waiting and blocking. Writes CSV
    tables, PNG plots and summary.md to --out; --quick runs fewer points and
    shorter runs (well under a minute); --json prints the headline numbers.
    """
    from . import reproduce_gang
    from ._io import atomic_dir, check_output_dir

    check_output_dir(args.out, "--out")
    executor = _make_executor(args.workers)
    con = _console()
    start = time.perf_counter()
    quiet = args.json
    interrupted = False
    try:
        with atomic_dir(args.out) as tmp:
            res = reproduce_gang.run(
                tmp, quick=args.quick, executor=executor, progress=not quiet,
                echo=None if quiet else (lambda title, obj: _print_table(con, title, obj)),
            )
    except KeyboardInterrupt:
        interrupted = True
        raise
    finally:
        _stop_executor(executor, interrupted)
    elapsed = time.perf_counter() - start
    if args.json:
        obj = dict(res["headlines"])
        obj["out"] = args.out
        obj["seconds"] = elapsed
        print(json.dumps(jsonable(obj)))
    else:
        con.print(f"wrote {args.out}/ (*.csv, *.png, summary.md) in {elapsed:.1f} s",
                  highlight=False)
    return 0


def cmd_reproduce_cosched(args: argparse.Namespace) -> int:
    """Reproduce Nagar et al. (SPAA 1999): ten coscheduling schemes on a NOW.

    Tables 3-4 (the ten schemes of Table 1 on the nine workloads of Table 2,
    plus gang scheduling and batch FCFS as references) beside the paper's
    numbers with the rank agreement per workload; Table 5 (individual job
    times, mean, CV on W3 and W5); Figures 2-3 (CPU shares at one node over
    time); every checkable claim of section 3 checked, with an explanation
    where it does not hold; the candidate mechanisms of the slow spin-block
    rows; sensitivity to the interrupt and context-switch costs. Full runs are
    at the paper's size (about 25 s alone per job) with 3 replications;
    --quick runs a quarter of the iterations, one replication (about a
    minute on 2 cores). Writes CSV tables, PNG plots and summary.md to --out;
    --json prints the headline numbers.
    """
    from . import reproduce_cosched
    from ._io import atomic_dir, check_output_dir

    check_output_dir(args.out, "--out")
    executor = _make_executor(args.workers)
    con = _console()
    start = time.perf_counter()
    quiet = args.json
    interrupted = False
    try:
        with atomic_dir(args.out) as tmp:
            res = reproduce_cosched.run(
                tmp, quick=args.quick, executor=executor, progress=not quiet,
                echo=None if quiet else (lambda title, obj: _print_table(con, title, obj)),
            )
    except KeyboardInterrupt:
        interrupted = True
        raise
    finally:
        _stop_executor(executor, interrupted)
    elapsed = time.perf_counter() - start
    if args.json:
        obj = dict(res["headlines"])
        obj["out"] = args.out
        obj["seconds"] = elapsed
        obj["findings"] = [{k: f[k] for k in ("id", "holds")} for f in res["findings"]]
        print(json.dumps(jsonable(obj)))
    else:
        con.print(f"wrote {args.out}/ (*.csv, *.png, summary.md) in {elapsed:.1f} s",
                  highlight=False)
    return 0


def cmd_reproduce_batch(args: argparse.Namespace) -> int:
    """Run every shared workload trace under FCFS, EASY, conservative and gang.

    Every .swf / .swf.gz file in --traces (default: <repo>/../shared/traces) runs
    under the four policies with the default configuration (machine size from the
    header, default loading rules; gang: mpl 4, quantum 60 s). Writes batch.csv and
    batch.md (jobs, procs, average wait, average bounded slowdown, utilization,
    makespan, wall time, and what loading dropped or repaired) to --out, checks
    determinism by running the smallest trace twice under EASY, and draws that
    trace's Gantt chart and utilization under EASY and gang (PNG).
    """
    from . import reproduce_batch
    from ._io import atomic_dir, check_output_dir

    traces = args.traces or reproduce_batch.default_traces_dir()
    reproduce_batch.find_traces(traces)  # fail early, before any output
    check_output_dir(args.out, "--out")
    con = _console()
    start = time.perf_counter()
    quiet = args.json
    with atomic_dir(args.out) as tmp:
        res = reproduce_batch.run(
            tmp, traces,
            echo=None if quiet else (lambda title, obj: _print_table(con, title, obj)),
        )
    elapsed = time.perf_counter() - start
    if args.json:
        print(json.dumps(jsonable({"out": args.out, "seconds": elapsed, **res})))
    else:
        con.print(f"wrote {args.out}/ (batch.csv, batch.md, *.png) in {elapsed:.1f} s",
                  highlight=False)
    return 0 if res["deterministic"] else 1


def cmd_reproduce_pools(args: argparse.Namespace) -> int:
    """Regenerate Zhou & Brecht's (1991) Figures 1, 3-8 as CSV, PNG and summary.md.

    Every configuration of every figure runs as one deduplicated sweep. Full runs
    use 10000 jobs per replication (1000 warm-up) and 5 replications; --quick uses
    2000 (200) and 3 with fewer points. Each table is printed with the paper's
    stated numbers beside ours (Fig. 3: 342 and 265 at D=20, lower bound ~127;
    Fig. 8: A = 12.4 at P=60 vs 14.9 at P=120).
    """
    from . import reproduce
    from ._io import atomic_dir, check_output_dir

    check_output_dir(args.out, "--out")
    executor = _make_executor(args.workers)
    con = _console()
    start = time.perf_counter()
    interrupted = False
    try:
        with atomic_dir(args.out) as tmp:
            reproduce.run(tmp, quick=args.quick, executor=executor, progress=True,
                          echo=lambda title, obj: _print_table(con, title, obj))
    except KeyboardInterrupt:
        interrupted = True
        raise
    finally:
        _stop_executor(executor, interrupted)
    con.print(f"wrote {args.out}/ (fig*.csv, fig*.png, summary.md) in "
              f"{time.perf_counter() - start:.1f} s", highlight=False)
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    """Time a simulator: pools (default), barrier, batch or cosched.

    pools: D=20, pool_size=30, --jobs jobs, no warm-up, one replication, no job
    records, one worker thread; reports simulated events per second.
    barrier: Feitelson & Rudolph's machine with n=10, l=3, k=--iterations (50000), under gang
    and local scheduling (--wait busy by default), best of --repeat runs;
    reports measured-gang iterations per second (k / wall) and all gangs'
    iterations per second (gang_iterations / wall).
    batch: --trace (default the shared KTH-SP2 trace, 28,475 jobs), or --lublin N
    (a generated workload: N jobs on --procs processors at offered load --load),
    under fcfs, easy and conservative, best of --repeat runs; reports jobs per
    second of the simulation alone, of the whole call (reading or generating,
    simulating) and the time with the DataFrames built, and peak memory.
    `cargo run --release -p parsched-sim --example batch` times the Rust side
    alone (and larger traces with concat=N).
    cosched: Nagar et al.'s workload 5 (four LIFE(12) jobs on 8 workstations) under Local
    and PB at --scale (default 0.25 of the paper's 25 s jobs), one
    replication, best of --repeat runs; reports simulated events per second.
    `cargo bench -p parsched-sim --bench cosched` is the criterion version.
    """
    if args.model == "barrier":
        return _bench_barrier(args)
    if args.model == "batch":
        return _bench_batch(args)
    if args.model == "cosched":
        return _bench_cosched(args)
    from .api import simulate

    if args.jobs < 1:
        raise ConfigError("--jobs", f"{args.jobs} is out of range", "integer >= 1")
    cfg = PoolsConfig(D=20.0, pool_size=30, jobs=args.jobs, warmup=0, reps=1)
    t0 = time.perf_counter()
    res = simulate(cfg, records=False, workers=1)
    total = time.perf_counter() - t0
    s = res.summary
    sim_wall = float(s["wall_seconds"]) or total
    out = {
        "jobs": int(s["jobs"]),
        "events": int(s["events"]),
        "wall_seconds": sim_wall,
        "events_per_second": s["events"] / sim_wall if sim_wall > 0 else None,
        "jobs_per_second": s["jobs"] / sim_wall if sim_wall > 0 else None,
        "total_seconds": total,
        "mean_response_time": s["mean_response_time"],
    }
    if args.json:
        print(json.dumps(jsonable(out)))
    else:
        print(f"bench: {out['jobs']} jobs, {out['events']} events in {sim_wall:.3f} s "
              f"(simulator), {total:.3f} s total")
        if out["events_per_second"] is not None:
            print(f"       {out['events_per_second']:,.0f} events/s, "
                  f"{out['jobs_per_second']:,.0f} jobs/s")
    return 0


def _bench_barrier(args: argparse.Namespace) -> int:
    from .api import simulate_barrier

    if args.iterations < 1:
        raise ConfigError("--iterations", f"{args.iterations} is out of range", "integer >= 1")
    if args.repeat < 1:
        raise ConfigError("--repeat", f"{args.repeat} is out of range", "integer >= 1")
    rows = []
    for sched in ("gang", "local"):
        cfg = BarrierConfig(n=10, l=3, k=args.iterations, sched=sched, wait=args.wait)
        best = None
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            res = simulate_barrier(cfg)
            total = time.perf_counter() - t0
            wall = float(res.summary["wall_seconds"]) or total
            if best is None or wall < best[0]:
                best = (wall, total, res)
        wall, total, res = best
        s = res.summary
        rows.append({
            "sched": sched, "wait": args.wait, "n": 10, "l": 3, "k": args.iterations,
            "wall_seconds": wall, "total_seconds": total, "events": int(s["events"]),
            "iterations_per_second": args.iterations / wall,
            "gang_iterations": int(s["gang_iterations"]),
            "gang_iterations_per_second": s["gang_iterations"] / wall,
            "events_per_second": s["events"] / wall,
            "time_per_iteration": s["time_per_iteration"],
        })
    if args.json:
        print(json.dumps(jsonable({"model": "barrier", "runs": rows})))
    else:
        for r in rows:
            print(f"bench barrier {r['sched']:5s} ({r['wait']}): n=10 l=3 k={r['k']} in "
                  f"{r['wall_seconds']:.3f} s: {r['iterations_per_second']:,.0f} measured "
                  f"iterations/s, {r['gang_iterations_per_second']:,.0f} all-gang "
                  f"iterations/s, {r['events_per_second']:,.0f} events/s")
    return 0


def _bench_cosched(args: argparse.Namespace) -> int:
    from .config import CoschedConfig
    from .cosched import simulate_cosched

    if args.repeat < 1:
        raise ConfigError("--repeat", f"{args.repeat} is out of range", "integer >= 1")
    if not (0 < args.scale <= 1):
        raise ConfigError("--scale", f"{args.scale} is out of range", "0 < scale <= 1")
    rows = []
    for scheme in ("Local", "PB"):
        cfg = CoschedConfig(workload=5, scheme=scheme, scale=args.scale, reps=1, seed=1)
        best = None
        for _ in range(args.repeat):
            res = simulate_cosched(cfg, workers=1)
            run = res.runs.iloc[0]
            wall = float(run["wall_seconds"])
            if best is None or wall < best[0]:
                best = (wall, int(run["events"]), res.completion_time)
        wall, events, t = best
        rows.append({"workload": 5, "scheme": scheme, "scale": args.scale, "events": events,
                     "wall_seconds": wall,
                     "events_per_second": events / wall if wall > 0 else None,
                     "completion_time": t})
    if args.json:
        print(json.dumps(jsonable({"model": "cosched", "repeat": args.repeat, "runs": rows})))
    else:
        for r in rows:
            print(f"bench cosched W5 {r['scheme']:5s} (scale {r['scale']}): {r['events']:,} "
                  f"events in {r['wall_seconds']:.3f} s = {r['events_per_second']:,.0f} "
                  f"events/s; completion {r['completion_time']:.1f} s simulated "
                  f"(best of {args.repeat})")
    return 0


def _bench_batch(args: argparse.Namespace) -> int:
    import resource

    from . import reproduce_batch
    from .batch import check_trace, simulate_batch

    if args.repeat < 1:
        raise ConfigError("--repeat", f"{args.repeat} is out of range", "integer >= 1")
    if args.lublin is not None and args.trace is not None:
        raise ConfigError("--lublin", "given with --trace", "one of --trace FILE, --lublin N")
    base: BatchConfig
    if args.lublin is not None:
        base = BatchConfig(workload="lublin", workload_jobs=args.lublin, procs=args.procs,
                           workload_load=args.load)
        source = (f"Lublin-Feitelson model, {args.lublin} jobs, {args.procs} processors, "
                  f"offered load {args.load:g} (generated in memory; generation counted in "
                  "the whole call)")
        path = None
    else:
        path = check_trace(args.trace or os.path.join(reproduce_batch.default_traces_dir(),
                                                      "KTH-SP2-1996-2.1-cln.swf.gz"))
        base = BatchConfig(trace=path)
        source = path
    rows = []
    for policy in ("fcfs", "easy", "conservative"):
        cfg = base.with_(policy=policy)
        best_sim = best_total = best_frames = math.inf
        jobs = 0
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            res = simulate_batch(cfg)
            t1 = time.perf_counter()
            _ = res.jobs, res.queue
            t2 = time.perf_counter()
            best_total = min(best_total, t1 - t0)
            best_frames = min(best_frames, t2 - t0)
            best_sim = min(best_sim, float(res.summary["wall_seconds"]))
            jobs = int(res.summary["jobs"])
            del res, _
        rows.append({
            "policy": policy, "jobs": jobs, "sim_seconds": best_sim,
            "jobs_per_second": jobs / best_sim if best_sim > 0 else None,
            "total_seconds": best_total,
            "total_jobs_per_second": jobs / best_total if best_total > 0 else None,
            "with_dataframes_seconds": best_frames,
        })
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if args.json:
        print(json.dumps(jsonable({"model": "batch", "trace": path, "source": source,
                                    "repeat": args.repeat, "peak_rss_mb": peak_mb,
                                    "runs": rows})))
    else:
        print(f"bench batch: {source}")
        for r in rows:
            print(f"bench batch {r['policy']:12s} {r['jobs']} jobs: simulation "
                  f"{r['sim_seconds'] * 1e3:.1f} ms = {r['jobs_per_second']:,.0f} jobs/s; "
                  f"whole call {r['total_seconds'] * 1e3:.0f} ms = "
                  f"{r['total_jobs_per_second']:,.0f} jobs/s; with the DataFrames "
                  f"{r['with_dataframes_seconds'] * 1e3:.0f} ms (best of {args.repeat})")
        print(f"bench batch: peak resident memory of this process {peak_mb:.0f} MB")
    return 0


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
    ru.add_argument("--policy", choices=("gang", "pools", "flexible", "default"), default=None,
                    help="scheduling policy (default: the job file's, else gang)")
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

    from .report_html import add_subcommand as add_report

    add_report(sub, fmt)

    from .sweep_spec import add_parser as add_sweep_parser

    add_sweep_parser(sub)  # parsched sweep SPEC.toml --out DIR (sweep_spec.py)
    return p


class _VersionAction(argparse.Action):
    """``--version``, looked up only when asked for (importlib.metadata costs
    ~40 ms at every start otherwise)."""

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"{parser.prog} {_version()}")
        parser.exit()


def _version() -> str:
    from . import __version__

    return str(__version__)


def _fail(message: str, code: int = 2) -> int:
    from .errors import clip

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


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised by the handler :func:`main` installs: handled as
    Ctrl-C (runs stopped, temporary files removed), exit status 143."""


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
