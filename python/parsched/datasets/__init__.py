"""Workload logs that come with parsched, addressable by name.

Six small logs in the Standard Workload Format ship inside the package
(1.3 MB compressed): five real ones from the Parallel Workloads Archive and
one trace of the Lublin–Feitelson model. Every command and function that
takes a trace file also takes their names::

    parsched simulate batch --trace kth-sp2
    parsched.simulate_batch("kth-sp2")
    parsched datasets                      # the list, with provenance

Each file is the archive's own, header included (its ``Acknowledge``,
``Information`` and, for SDSC-SP2, ``Copyright`` lines are its terms). When
you publish results on them, cite the archive — D. G. Feitelson, D. Tsafrir,
D. Krakov, "Experience with using the Parallel Workloads Archive", JPDC 74(10),
2014 — and acknowledge the log's contributor named in its header.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from importlib import resources

__all__ = ["DATASETS", "Dataset", "names", "path", "resolve"]


@dataclass(frozen=True)
class Dataset:
    """One bundled log: its file, the machine it comes from and its provenance."""

    name: str
    file: str
    machine: str
    jobs: int
    procs: int
    source: str
    notes: str


_PWA = "Parallel Workloads Archive, https://www.cs.huji.ac.il/labs/parallel/workload/"

DATASETS: dict[str, Dataset] = {d.name: d for d in (
    Dataset("kth-sp2", "KTH-SP2-1996-2.1-cln.swf.gz", "IBM SP2, KTH (Sweden), 1996-97",
            28476, 100, f"{_PWA} (KTH-SP2 cleaned, version 2.1; contributed by Lars Malinowsky)",
            "requested times known; the site ran EASY backfilling"),
    Dataset("nasa-ipsc", "NASA-iPSC-1993-3.1-cln.swf.gz", "Intel iPSC/860, NASA Ames, 1993",
            18239, 128, f"{_PWA} (NASA-iPSC cleaned, version 3.1; contributed by Bill Nitzberg)",
            "no requested times (field 9 = -1)"),
    Dataset("sdsc-par", "SDSC-Par-1996-3.1-cln.swf.gz", "Intel Paragon, SDSC, 1996",
            32135, 400, f"{_PWA} (SDSC-Par-1996 cleaned, version 3.1; contributed by Reagan "
            "Moore and Allen Downey)", "no requested times"),
    Dataset("sdsc-sp2-5k", "SDSC-SP2-5K-sample.swf.gz", "IBM SP2, SDSC, 1998-2000",
            4961, 128, f"{_PWA} (a 5,000-job sample of an older conversion of SDSC-SP2; JOBLOG "
            "data, copyright notice in its header)", "a sample, not the whole log"),
    Dataset("hpc2n-subset", "HPC2N-subset.swf.gz", "Linux cluster, HPC2N (Sweden), 2002",
            3170, 240, f"{_PWA} (a subset of an older, uncleaned conversion of HPC2N; "
            "contributed by Ake Sandgren)", "uncleaned: some run times unknown"),
    Dataset("lublin-256", "lublin_256.swf.gz", "synthetic, 256 nodes",
            10000, 256, "U. Lublin, D. G. Feitelson, 'The workload on parallel supercomputers: "
            "modeling the characteristics of rigid jobs', JPDC 63(11), 2003; the model's "
            "published generator", "10,000 jobs of the model"),
)}


def names() -> list[str]:
    """The bundled logs' names."""
    return list(DATASETS)


def path(name: str) -> str:
    """The file of bundled log ``name`` (a :class:`KeyError` naming the choices
    if there is none)."""
    d = DATASETS.get(name.lower())
    if d is None:
        raise KeyError(f"{name!r}: no bundled log of that name; allowed: {', '.join(DATASETS)}")
    return str(resources.files(__name__).joinpath(d.file))


def resolve(trace: str | os.PathLike[str]) -> str:
    """``trace`` itself if it is a file, else the bundled log of that name (as
    ``kth-sp2`` or its file name ``KTH-SP2-1996-2.1-cln.swf.gz``), else ``trace``
    unchanged (for the caller's "cannot open" error)."""
    t = os.fspath(trace)
    if os.path.exists(t):
        return t
    key = t.lower()
    if key in DATASETS:
        return path(key)
    for d in DATASETS.values():
        if t == d.file:
            return path(d.name)
    return t


def directory() -> str:
    """The folder of the bundled logs (what ``reproduce batch`` and ``bench
    batch`` fall back to without ``../shared/traces`` beside a checkout)."""
    return str(resources.files(__name__))
