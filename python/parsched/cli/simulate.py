"""``parsched simulate MODEL`` (one command a model, :data:`COMMANDS`) and
``parsched generate lublin``.

Every ``simulate MODEL`` takes ``--config FILE.toml`` (a ``[MODEL]`` table or
flat keys), ``--set KEY=VALUE ...`` and ``--json`` (the result's
``to_json()``), built by one helper (:func:`parsched.cli.common.add_simulate_parser`)
and read by one (:func:`parsched.cli.common.load_config`); a model adds only
its own options (files to write, ``--workers``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import time
from typing import Any

from parsched.cli.common import (
    _console,
    _print_table,
    _window,
    load_config,
    print_json,
    print_measures,
)
from parsched.display import FIGURE_FORMATS, fmt_precise, jsonable
from parsched.errors import (
    ConfigError,
)

# ---------------------------------------------------------------- commands


def cmd_simulate_pools(args: argparse.Namespace) -> int:
    """Simulate Zhou & Brecht's processor-pool model (SIGMETRICS 1991) once.

    Starts from Table 2's defaults (or --config FILE.toml), applies --set
    KEY=VALUE overrides (the keys are listed below), and
    optionally replaces the generated workload with --arrivals FILE.csv (header
    arrival,d[,para_work]). Setting jobs alone scales the warm-up with it (a
    tenth). A run whose estimated event count is above max_events (default 1e10,
    about a quarter of an hour) is refused before it starts (max_events=0: no
    limit). `parsched.PoolsConfig.field_doc(KEY)` describes a key.
    """
    from parsched._io import atomic_file, check_output_file
    from parsched.config.arrivals import load_arrivals
    from parsched.sim.api import simulate

    cfg = load_config(args)
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
        return print_json(res)
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
    con = print_measures(f"pools model, {cfg.summary_label()}", rows)
    if args.jobs_out:
        con.print(f"wrote {len(res.jobs)} job records to {args.jobs_out}", highlight=False)
    return 0


def cmd_simulate_barrier(args: argparse.Namespace) -> int:
    """Simulate Feitelson & Rudolph's iterative-barrier machine (JPDC 1992) once.

    A gang of n threads (one per processor) iterates k times: compute
    U(grain, grain+var) + barrier_cost ms, then a barrier; l threads share each
    processor (the gang and l-1 competitors). Starts from the defaults (or
    --config FILE.toml with a [barrier] table or flat keys) and applies --set
    KEY=VALUE overrides (the keys are listed below; samples, for dist=empirical,
    as a,b,c or @FILE); times in ms. Each time key is at most 1e9 ms and a run
    at most 1e12 ms of simulated time;
    a run whose estimated event count is above max_events (default 1e10, about a
    quarter of an hour) is refused before it starts (max_events=0: no limit).
    """
    from parsched.sim.api import simulate_barrier

    cfg = load_config(args)
    res = simulate_barrier(cfg)
    if args.json:
        return print_json(res)
    # the model values (t_p, t_w, eqs. 6-13) as `parsched reproduce gang` computes them
    s = {**res.summary, **res.model}
    rows = [
        ("time per iteration (ms)", s["time_per_iteration"]),
        ("90% CI half-width (ms)", s["ci90_half_width"]),
        ("iteration time min / p50 / p90 / p99 / max (ms)",
         " / ".join(f"{s[k]:.4g}" for k in ("iteration_min", "iteration_p50", "iteration_p90",
                                           "iteration_p99", "iteration_max"))),
        ("useful utilization", s["useful_utilization"]),
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
    print_measures(f"barrier model, {cfg.summary_label()}", rows)
    return 0


def cmd_simulate_batch(args: argparse.Namespace) -> int:
    """Run a workload trace (SWF, .swf or .swf.gz) under a batch scheduler once.

    Policies: fcfs, easy (EASY backfilling), conservative (conservative
    backfilling), gang (time slicing on an Ousterhout matrix, mpl slots, with
    backfilling). Starts from the defaults (or --config FILE.toml with a [batch]
    table or flat keys) and applies --set KEY=VALUE overrides (the keys are
    listed below; workload=lublin generates the jobs by the Lublin-Feitelson
    model from the workload_* keys, no --trace). Prints the
    metrics and what loading dropped or repaired and why; --jobs-out writes
    Batsim's jobs CSV, --swf-out the schedule as SWF, --gantt and --utilization
    plots (.png, .svg or .pdf; --gantt-window START:END sets the Gantt chart's
    window).
    """

    from parsched.sim.batch import _source, simulate_batch

    cfg = load_config(args)
    if args.trace:
        cfg = cfg.with_(trace=args.trace)
    path = _source(cfg)
    if args.gantt_window and not args.gantt:
        raise ConfigError("--gantt-window", "given without --gantt", "--gantt FILE.png")
    outs = {"jobs_out": (args.jobs_out, "--jobs-out", (".csv",)),
            "swf_out": (args.swf_out, "--swf-out", (".swf",)),
            "gantt": (args.gantt, "--gantt", FIGURE_FORMATS),
            "utilization": (args.utilization, "--utilization", FIGURE_FORMATS)}
    with _writing(outs) as tmp:
        res = simulate_batch(path, cfg, jobs_csv=tmp["jobs_out"], swf_out=tmp["swf_out"])
        if tmp["gantt"]:
            try:
                res.plot_gantt(tmp["gantt"], window=args.gantt_window)
            except ConfigError as e:
                if e.field != "window":
                    raise
                raise ConfigError("--gantt-window", e.message, e.allowed) from None
        if tmp["utilization"]:
            res.plot_utilization(tmp["utilization"])
    s = res.summary
    written = {k: v[0] for k, v in outs.items() if v[0]}
    if args.json:
        return print_json(res, written)
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
    source = (os.path.basename(path) if path is not None else
              f"Lublin-Feitelson model ({cfg.workload_jobs} jobs, seed {cfg.workload_seed})")
    con = print_measures(f"batch: {source}, policy {res.policy}, P = {s['procs']} "
                         f"({cfg.with_(trace=None).summary_label()})", rows)
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
    Table 1's schemes (the key scheme, below) or by the references gang and
    fcfs. Starts from the defaults (PB on workload 5,
    8 nodes; or --config FILE.toml with a [cosched] table or flat keys) and
    applies --set KEY=VALUE overrides (the keys are listed below; jobs e.g.
    LIFE12,MG,LU,EP; dispatch_table a file of dispadmin -c TS -g text).
    Prints the completion time (± 90% CI over reps), each job's completion
    time and communication share, the cv and the excess over the ideal;
    --timeline writes the probed node's CPU shares over time (first
    replication): FILE.csv as data, FILE.png/.svg/.pdf as the Figures 2-3 plot
    (--plot FILE.png is the same plot). A run that passes max_time_s (a
    livelock) is an error (exit 2).
    """

    from parsched.errors import TimeLimitError
    from parsched.sim.cosched import simulate_cosched

    cfg = load_config(args)
    figs = (".png", ".svg", ".pdf")
    outs = {"timeline": (args.timeline, "--timeline", (".csv", *figs)),
            "plot": (args.plot, "--plot", figs)}
    with _writing(outs) as tmp:
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
        return print_json(res, written)
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
        ("over ideal: (completion − ideal) / ideal", res.over_ideal),
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
    con = print_measures(f"cosched model, {cfg.label()}", rows)
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


def cmd_generate_lublin(args: argparse.Namespace) -> int:
    """Write a synthetic workload of the Lublin-Feitelson model as SWF.

    The model of rigid parallel jobs of Lublin and Feitelson (JPDC 2003; the
    Parallel Workloads Archive's m_lublin99), retargeted to the machine size.
    Keys (--set KEY=VALUE): procs (processors, default 128), jobs (default
    10000), load (offered load the arrivals are scaled to, e.g. 0.9; default
    none: the model's own arrivals), seed (default 1), include_types (batch and
    interactive types, default true; false: the typeless model), requested
    (requested times: none, the default, leaves them unknown; exact: the run
    time; tsafrir05: user estimates of Tsafrir, Etsion & Feitelson, JSSPP
    2005, tuned by estimate_max, estimate_max_percent, estimate_bins). -o
    FILE.swf or FILE.swf.gz (gzip). The same jobs run without a file through
    `parsched simulate batch --set workload=lublin workload_jobs=N
    workload_load=L workload_seed=S workload_requested=R procs=P`.
    """
    from parsched._io import atomic_file, check_output_file
    from parsched.sim.api import core
    from parsched.sim.generate import LUBLIN_KEYS, parse_lublin_overrides

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




def cmd_simulate_fcs(args: argparse.Namespace) -> int:
    """Simulate Frachtenberg's parallel desktop (seed 002, Table 1) once.

    Three MPI-like jobs of four processes on two dual-processor nodes iterate
    1 ms of compute and a synchronization of all four; job 1's processes 3-4
    and job 2's processes 1-2 compute twice as long (120, 120 and 60 s alone).
    Starts from the defaults (or --config FILE.toml with an [fcs] table or
    flat keys) and applies --set KEY=VALUE overrides. --set
    scheme=default|fcfs|gang|sb|fcs picks the scheduler (default fcs):
    the Linux 2.6 O(1) scheduler with blocking waits, batch FCFS, gang
    scheduling, spin-block, or flexible coscheduling (CS jobs in gang slots, F
    jobs share a row and fill idle processors). The other keys are listed
    below (jobs: per-process multipliers, jobs separated by ';', e.g.
    1,1,2,2;2,2,1,1;1,1,1,1). Prints each
    job's run time, the makespan, the optimum (total demand over processors)
    and, under fcs, the classes assigned over time; --json prints one object
    with job_times and makespan.
    """
    from parsched.sim.fcs import PAPER_TABLE1, simulate_fcs

    cfg, res = _run(simulate_fcs, args, workers=args.workers)
    if args.json:
        return print_json(res)
    import pandas as pd

    con = _console()
    con.print(f"fcs model (seed 002), scheme {res.scheme}", highlight=False)
    default = type(cfg)().to_dict()
    changed = {k for k, v in cfg.to_dict().items() if v != default[k]}
    paper = PAPER_TABLE1.get(res.scheme) if changed <= {"scheme", "seed", "reps"} else None
    rows = [(f"job {j + 1}", t, paper[j] if paper and j < 3 else None)
            for j, t in enumerate(res.job_times)]
    rows.append(("makespan", res.makespan, paper[3] if paper else None))
    rows.append(("optimum (demand / processors)", res.optimum, 240.0 if paper else None))
    table = pd.DataFrame(rows, columns=["measure", "simulated (s)", "paper (s)"])
    if paper is None:
        table = table.drop(columns=["paper (s)"])
    _print_table(con, "", table)
    con.print(f"over the optimum: {res.over_optimum * 100:.1f}%", highlight=False)
    if res.classes:
        _print_table(con, "classes (FCS)", res.classes_frame())
    return 0


def cmd_simulate_regions(args: argparse.Namespace) -> int:
    """Simulate region scheduling (seed 004, Lee & Schwan) on one workload.

    The same work runs under the standard scheduler (each thread stays on
    its processor, its regions share that last-level cache) and under region
    scheduling (regions bin-packed over the caches by working set; a touch of
    a region mapped to another cache micro-schedules the thread there at the
    paper's cost). Starts from the defaults (or --config FILE.toml with a
    [regions] table or flat keys) and applies --set KEY=VALUE overrides (the
    keys are listed below): memlat is Figure 9's two-region benchmark (one
    thread), balance §5.2's two large and two small programs; fallback=true
    lets conditions 1-3 decide per program (default false, the forced
    unification of Figure 9); regioning=online estimates the regions' working
    sets from simulated access bits during the run and re-balances after each
    scan.
    Prints normalized_performance (standard time over region time),
    microschedules_per_s, the per-cache loads, and for balance the speedup;
    --json prints one object.
    """
    from parsched.sim.regions import simulate_regions

    res = simulate_regions(load_config(args))
    if args.json:
        return print_json(res)
    mb = 1024 * 1024
    rows = [
        ("normalized performance (standard / region)", f"{res.normalized_performance:.4f}"),
        ("micro-schedules per s", f"{res.microschedules_per_s:.1f}"),
        ("micro-schedules", str(res.microschedules)),
        ("miss ratio standard / region",
         f"{res.miss_ratio_standard:.4f} / {res.miss_ratio_region:.4f}"),
        ("cache loads, region (MB)", ", ".join(f"{x / mb:.3f}" for x in res.cache_loads)),
        ("cache loads, standard (MB)",
         ", ".join(f"{x / mb:.3f}" for x in res.cache_loads_standard)),
        ("decisions", ", ".join(res.region.get("decisions", []))),
    ]
    if res.speedup is not None:
        rows.insert(0, ("speedup (balance)", f"{res.speedup:.4f}"))
        rows.insert(1, ("speedup per program",
                        ", ".join(f"{x:.3f}" for x in res.speedup_per_program)))
    print_measures(f"regions model (seed 004), {res.workload} on {res.machine}", rows)
    return 0


def cmd_simulate_fcs_figure(args: argparse.Namespace) -> int:
    """Simulate seed 002's Figures 1-2 (Frachtenberg): programs beside stressors.

    k = 1..programs parallel programs plus s = 0..stressors sequential
    stressors under each of schedulers (default, gang) on machine es40 (4
    processors) or potomac (4 cores x 2 hardware threads). Starts from the
    defaults (or --config FILE.toml with an [fcs_figure] table or flat keys)
    and applies --set KEY=VALUE overrides (the keys are listed below;
    docs/policies/fcs.md, "Figures 1-2"). Prints the
    last parallel program's finish per (scheduler, k, s); --json prints one
    object.
    """
    from parsched.sim.fcs import simulate_fcs_figure

    _, res = _run(simulate_fcs_figure, args, workers=args.workers)
    if args.json:
        return print_json(res)
    con = _console()
    con.print(f"fcs figures (seed 002), {res.summary['machine']}: one program's work "
              f"{res.summary['work_s']:.4g} s alone", highlight=False)
    _print_table(con, "", res.runs)
    return 0


@contextlib.contextmanager
def _writing(outs: dict[str, tuple[str | None, str, tuple[str, ...]]]) -> Any:
    """Checks the output files ``outs`` names (key: (path or None, flag,
    suffixes)), before any work, and yields their temporary paths by key
    (None where not asked for), renamed to the real paths only on success."""
    from parsched._io import atomic_file, check_output_file

    for target, flag, suffixes in outs.values():
        if target:
            check_output_file(target, flag, suffixes)
    with contextlib.ExitStack() as stack:
        yield {k: stack.enter_context(atomic_file(v[0])) if v[0] else None
               for k, v in outs.items()}


def _run(simulate: Any, args: argparse.Namespace, **options: Any) -> tuple[Any, Any]:
    """The command's config (:func:`load_config`) and ``simulate(config,
    **options)``; a run that passes ``max_time_s`` (a livelock) is reported
    as a bad ``max_time_s``."""
    from parsched.errors import TimeLimitError

    cfg = load_config(args)
    try:
        return cfg, simulate(cfg, **options)
    except TimeLimitError as e:
        raise ConfigError("max_time_s", str(e)) from None


# ------------------------------------------------------------ options


def _pools_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--arrivals", metavar="FILE.csv",
                   help="explicit job stream: CSV with header arrival,d[,para_work]")
    p.add_argument("--jobs-out", metavar="FILE", help="write per-job records (.csv or .parquet)")


def _batch_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--trace", metavar="FILE", help="SWF trace (.swf or .swf.gz)")
    p.add_argument("--jobs-out", metavar="FILE.csv", help="write Batsim's jobs CSV")
    p.add_argument("--swf-out", metavar="FILE.swf", help="write the schedule as SWF")
    p.add_argument("--gantt", metavar="FILE.png", help="write a Gantt chart (.png, .svg, .pdf)")
    p.add_argument("--gantt-window", type=_window, default=None, metavar="START:END",
                   help="the Gantt chart's time window, seconds since the first submission "
                        "(the chart's axis)")
    p.add_argument("--utilization", metavar="FILE.png",
                   help="write processors in use and queue length over time (.png, .svg, "
                        ".pdf)")


def _cosched_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--timeline", metavar="FILE",
                   help="the probed node's CPU shares over time (first replication): "
                        "FILE.csv as data, FILE.png/.svg/.pdf as a plot")
    p.add_argument("--plot", metavar="FILE.png",
                   help="plot the timeline (Figures 2-3 style; .png, .svg or .pdf)")


_REPLICATION_THREADS = "threads for the replications (results do not depend on it)"

def cmd_simulate_generic(args: argparse.Namespace) -> int:
    """Simulate a model of the core's table through its generic run.

    Starts from the model's defaults (or --config FILE.toml with a [MODEL]
    table or flat keys) and applies --set KEY=VALUE overrides (the keys are
    listed below). Prints the model's summary measures; --json prints one
    object.
    """
    from parsched.sim.generic import simulate_generic

    _, res = _run(simulate_generic, args, workers=args.workers or 1)
    if args.json:
        return print_json(res)
    rows = [(k, fmt_precise(v)) for k, v in res.summary.items()]
    print_measures(f"{args.model} model, {res.config.summary_label()}", rows)
    return 0


#: The models with a command of their own: (command, ``--workers`` as
#: (default, help) or None, the model's own options or None).
_OWN: dict[str, tuple[Any, tuple[int | None, str] | None, Any]] = {
    "pools": (cmd_simulate_pools, (1, _REPLICATION_THREADS), _pools_options),
    "barrier": (cmd_simulate_barrier, None, None),
    "batch": (cmd_simulate_batch, None, _batch_options),
    "cosched": (cmd_simulate_cosched,
                (None, "threads for the replications (default: one per CPU, at most reps; "
                       "results do not depend on it)"), _cosched_options),
    "fcs": (cmd_simulate_fcs, (None, _REPLICATION_THREADS), None),
    "fcs_figure": (cmd_simulate_fcs_figure, (None, _REPLICATION_THREADS), None),
    "regions": (cmd_simulate_regions, None, None),
}

#: A model with no command of its own: the generic one.
_GENERIC: tuple[Any, tuple[int | None, str] | None, Any] = (
    cmd_simulate_generic, (None, _REPLICATION_THREADS), None)


def _commands() -> tuple[tuple[str, Any, tuple[int | None, str] | None, Any], ...]:
    from parsched.config.table import rows

    return tuple((r["name"], *_OWN.get(r["name"], _GENERIC)) for r in rows("simulated")
                 if r["name"] in _OWN or r["run"])


#: ``parsched simulate MODEL``: (model, command, ``--workers`` as (default,
#: help) or None, the model's own options or None), for every simulated model
#: of the core's table, in its order (``--help``'s).
COMMANDS = _commands()
