"""The seed reproductions ``parsched report`` knows (:data:`SEEDS`: the files that
identify each one's output directory, its paper and command) and the pieces a page
section is made of (:class:`Check`, :class:`Section`)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

#: The field named by the report's one-line errors.
FIELD = "RESULTS_DIR"


@dataclass(frozen=True)
class Seed:
    kind: str
    #: files that identify the directory (all must be present)
    marks: tuple[str, ...]
    title: str
    cite: str
    command: str


SEEDS: dict[str, Seed] = {s.kind: s for s in (
    Seed("pools", ("paper_comparison.csv", "fig3.csv", "summary.md"),
         "Processor Pool-Based Scheduling for Large-Scale NUMA Multiprocessors",
         "seed 000 — Zhou & Brecht, SIGMETRICS 1991", "parsched reproduce pools"),
    Seed("gang", ("headlines.csv", "equations_summary.csv", "fig9_agreement.csv", "summary.md"),
         "Gang Scheduling Performance Benefits for Fine-Grain Synchronization",
         "seed 001 — Feitelson & Rudolph, JPDC 1992", "parsched reproduce gang"),
    Seed("desktop", ("desktop.csv", "granularity.csv", "summary.md"),
         "Process Scheduling for the Parallel Desktop",
         "seed 002 — Frachtenberg (§4.1, Figures 1-2), on this machine",
         "parsched reproduce desktop"),
    Seed("cosched", ("tables34.csv", "findings.csv", "summary.md"),
         "A Closer Look At Coscheduling Approaches for a Network of Workstations",
         "seed 003 — Nagar, Banerjee, Sivasubramaniam & Das, SPAA 1999",
         "parsched reproduce cosched"),
    Seed("fcs", ("table1.csv", "findings.csv", "variants.csv", "summary.md"),
         "Process Scheduling for the Parallel Desktop: flexible coscheduling",
         "seed 002 — Frachtenberg (§4.2, Table 1), in simulation",
         "parsched reproduce fcs"),
    Seed("regions", ("fig9abs_bands.csv", "balance.csv", "boundaries.csv", "findings.csv",
                     "summary.md"),
         "Region Scheduling: Efficiently Using the Cache Architectures via Page-Level Affinity",
         "seed 004 — Lee & Schwan, ASPLOS 2012", "parsched reproduce regions"),
    Seed("batch", ("batch.csv", "batch.md"),
         "Batch space-sharing and gang scheduling on real workload traces",
         "no seed paper — FCFS, EASY, conservative backfilling and gang on the shared traces",
         "parsched reproduce batch"),
)}

#: Order of the sections (the seeds' order).
ORDER = ("pools", "gang", "desktop", "fcs", "cosched", "regions", "batch")

FIGURE_EXTS = (".png", ".svg")


@dataclass
class Check:
    name: str
    holds: bool
    claim: str
    evidence: str = ""
    why: str = ""


@dataclass
class Section:
    kind: str
    path: str
    mode: str = ""
    intro: str = ""
    checks: list[Check] = field(default_factory=list)
    #: (title, html) of the tables beside the paper
    tables: list[tuple[str, str]] = field(default_factory=list)
    #: (file name, caption)
    figures: list[tuple[str, str]] = field(default_factory=list)
    summary_md: str = ""
    note: str = ""

    @property
    def seed(self) -> Seed:
        return SEEDS[self.kind]

    @property
    def anchor(self) -> str:
        base = os.path.basename(os.path.normpath(self.path)) or self.kind
        return "sec-" + re.sub(r"[^A-Za-z0-9_-]+", "-", f"{self.kind}-{base}")
