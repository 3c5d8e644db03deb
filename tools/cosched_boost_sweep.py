"""Tables 3-5 of seed 003 under candidate boost mechanisms, side by side.

For each candidate (a dict of CoschedConfig overrides, e.g. ``boost_to=57``)
runs the ten schemes on the nine workloads exactly as ``parsched reproduce
cosched`` does (``--quick``: scale 0.25, one replication, seed 1; ``--full``:
scale 1, three replications) and prints one line per candidate: the mean
Spearman rank correlation with Tables 3-4, the median sim/paper ratio and how
many of the reproduction's findings hold.

    .venv/bin/python tools/cosched_boost_sweep.py [--full] [--csv OUT] \\
        'top' 'boost_to=sleep_return' 'boost_to=57' 'boost_cap=20' ...

Each argument is a candidate: ``top`` (the defaults) or KEY=VALUE[,KEY=VALUE].
"""

from __future__ import annotations

import argparse
import math
import sys
import time

from parsched.reproduce import cosched as rc


def parse(arg: str) -> dict:
    if arg in ("top", "default", ""):
        return {}
    out = {}
    for kv in arg.split(","):
        k, v = kv.split("=", 1)
        v = v.strip()
        k = k.strip()
        if "/" in v:  # a list, e.g. app_spin_us=100000/100000/100000/100000/100000
            out[k] = [float(x) for x in v.split("/")]
        elif v in ("true", "false"):
            out[k] = v == "true"
        elif v.isdigit() and k != "boost_to":
            out[k] = int(v)
        else:
            out[k] = v
    return out


def evaluate(over: dict, plan: rc.Plan) -> dict:
    base = {"seed": plan.seed, "reps": plan.reps, "scale": plan.scale,
            "max_time_s": 20_000.0 * plan.scale}
    tasks = [{"part": "tables", "scheme": s, "workload": w, "scale": plan.scale,
              "timeline": s in rc.FAIR_SCHEMES and w in (3, 5),
              "config": {**base, **over, "scheme": s, "workload": w}}
             for s in rc.SCHEMES for w in rc.WORKLOADS]
    results = rc._simulate(tasks, None, False)
    tab = rc.tables(tasks, results)
    T = rc.wide(tab).T.to_dict()
    T = {s: {int(w): v for w, v in row.items()} for s, row in T.items()}
    rho = rc.spearman(tab)
    t5 = rc.table5(tasks, results, plan.scale)
    fair = rc.fairness(tasks, results)
    lat = {(t["scheme"], t["workload"]): r.get("latency_us", math.nan)
           for t, r in zip(tasks, results, strict=True) if not r["livelock"]}
    found = rc.findings(T, fair, t5, lat)
    within = rc.within(tab)
    return {"rho": rho["mean"], "median_ratio": float(tab["ratio"].median()),
            "within": within["cells_within_1_25"], "cells": within["cells_predicted"],
            "rho_w": " ".join(f"{rho[f'W{w}']:.2f}" for w in rc.WORKLOADS),
            "held": sum(f["holds"] for f in found), "findings": len(found),
            "held_ids": " ".join(f["id"] for f in found if f["holds"]),
            "livelocks": int(tab["livelock"].sum()), "T": T,
            "w5_cv": {r.scheme: round(r.sim_cv, 2) for r in t5.itertuples()
                      if r.workload == 5}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("candidates", nargs="+")
    ap.add_argument("--full", action="store_true")
    ap.add_argument("--csv")
    a = ap.parse_args(argv)
    plan = rc.Plan.make(not a.full)
    rows = []
    for c in a.candidates:
        t0 = time.time()
        r = evaluate(parse(c), plan)
        T = r["T"]
        w5 = " ".join(f"{s} {T[s][5]:.0f}" for s in ("DCS", "PB", "PBT", "PB-SY"))
        print(f"{c:32s} rho {r['rho']:.2f}  median {r['median_ratio']:.2f}  "
              f"held {r['held']}/{r['findings']}  x1.25 {r['within']}/{r['cells']}  "
              f"livelocks {r['livelocks']}  "
              f"W5: {w5}  ({time.time() - t0:.0f} s)", flush=True)
        print(f"    held: {r['held_ids']}", flush=True)
        print(f"    rho per W: {r['rho_w']}", flush=True)
        for s in rc.SCHEMES:
            print(f"    {s:7s}" + " ".join(f"{T[s][w]:6.0f}" for w in rc.WORKLOADS), flush=True)
        print(f"    W5 CV: {r['w5_cv']}", flush=True)
        rows.append({"candidate": c, **{k: v for k, v in r.items() if k != "T"},
                     **{f"{s}_W{w}": T[s][w] for s in rc.SCHEMES for w in rc.WORKLOADS}})
    if a.csv:
        import pandas as pd

        pd.DataFrame(rows).to_csv(a.csv, index=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
