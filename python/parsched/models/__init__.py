"""Closed-form performance models from the seed papers (pure Python, numpy/pandas).

* :mod:`parsched.models.feitelson_rudolph` — Feitelson & Rudolph (1992): busy
  waiting with gang scheduling vs. blocking vs. uncoordinated busy waiting for a
  gang of iterating, barrier-synchronising threads (seed 001, eqs. 5-17, Fig. 9).
* :mod:`parsched.models.reference_rr` — an independent, slow re-implementation of
  seed 001's uncoordinated round robin (blocking and busy waiting), used as an
  oracle beside the simulator (``reference_run``, ``ps_alike_coarse``).
"""

from . import feitelson_rudolph, reference_rr
from .feitelson_rudolph import (
    MAKBILAN,
    SystemParams,
    barrier_model,
    classify,
    experiment2_headlines,
    experiment_predictions,
    makbilan_mapping,
    phase_boundaries,
    phase_diagram,
    t_block_compute,
    t_block_same,
    t_gang_busy,
    t_uncoord_busy,
)

__all__ = [
    "MAKBILAN",
    "SystemParams",
    "barrier_model",
    "classify",
    "experiment2_headlines",
    "experiment_predictions",
    "feitelson_rudolph",
    "makbilan_mapping",
    "phase_boundaries",
    "phase_diagram",
    "reference_rr",
    "t_block_compute",
    "t_block_same",
    "t_gang_busy",
    "t_uncoord_busy",
]
