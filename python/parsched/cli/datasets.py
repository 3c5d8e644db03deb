"""``parsched datasets``: the workload logs that come with parsched."""

from __future__ import annotations

import argparse
import json
from typing import Any


def cmd_datasets(args: argparse.Namespace) -> int:
    """List the workload logs that come with parsched (name, machine, jobs,
    processors, provenance). Every --trace option and trace argument takes
    their names: `parsched simulate batch --trace kth-sp2`."""
    from parsched.datasets import DATASETS, path

    rows = [{"name": d.name, "machine": d.machine, "jobs": d.jobs, "procs": d.procs,
             "file": path(d.name), "source": d.source, "notes": d.notes}
            for d in DATASETS.values()]
    if args.json:
        print(json.dumps(rows))
        return 0
    import pandas as pd

    from parsched.cli.common import _console, _print_table

    con = _console()
    _print_table(con, "workload logs that come with parsched (--trace NAME)",
                 pd.DataFrame([{k: r[k] for k in ("name", "machine", "jobs", "procs", "notes")}
                               for r in rows]))
    for r in rows:
        con.print(f"{r['name']}: {r['source']}", highlight=False, soft_wrap=True)
    con.print("Cite the Parallel Workloads Archive (Feitelson, Tsafrir, Krakov, JPDC 2014) "
              "and each log's contributor (its header's Acknowledge line).", highlight=False)
    return 0


def add_parser(sub: Any, fmt: Any) -> None:
    """Registers ``parsched datasets``."""
    from parsched.cli.common import _doc

    p = sub.add_parser("datasets", help=_doc(cmd_datasets).splitlines()[0],
                       description=_doc(cmd_datasets), formatter_class=fmt)
    p.add_argument("--json", action="store_true", help="print the list as JSON")
    p.set_defaults(func=cmd_datasets)
