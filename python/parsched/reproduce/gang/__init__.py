"""Reproduces seed 001 (Feitelson & Rudolph 1992) with the barrier machine.

Three parts, all simulated in one deduplicated :func:`parsched.sweep`:

(a) **Equations vs simulation** over a grid of granularities t_p (0.05-500
    ms), loads ℓ in {1, 2, 3, 4} and gang sizes n in {2, 4, 10} (VAR = GRAIN,
    barrier cost 0, Makbilan's τq = 50, τcs = 0.2, α = 1.5). Each equation is
    compared with the scheme it describes and labelled with the regime in which
    the seed says it holds (``in_regime``); inside it the relative error is
    flagged against 5%. Where equations part from uncoordinated schedules, an
    independent re-implementation of the seed's mechanism
    (:mod:`parsched.models.reference_rr`) runs beside the simulator (columns
    ``reference*``), so that each departure can be attributed.
(b) **Experiments 1-4** of §3.3 with the Makbilan parameters (eq. 14, Table 1)
    beside the model's numbers (:mod:`parsched.models.feitelson_rudolph`) and the
    paper's stated ones.
(c) **Figure 9** (σ = 1/2): the phase diagram from eqs. (15)/(16) and from
    simulation (gang busy-waiting vs local blocking at each reachable point: uniform
    compute where it reaches, exponential compute above, so that the blocking region
    is simulated too), with the agreement per formula region.
(d) **Two-phase waiting** (spin up to α·τcs, then block) beside busy waiting and
    blocking, under both schedulers (the seed's §2 remark and conclusion 4).

Uncoordinated busy waiting (eq. 8) depends on the scheduling pattern a run
falls into (rigid round robin keeps it for the whole run), so each of its
points pools several seeds; the pooled time per iteration is the **harmonic
mean** over seeds, i.e. k divided by the mean iteration *rate*: eq. (8) is a
round length divided by the *expected* number of iterations per round, so the
rate is the quantity to average.

The package: :mod:`.params` (constants, run lengths, grids), :mod:`.regimes`
(the equations checked and their regimes), :mod:`.plan` (every simulated
configuration), :mod:`.reference` (the reference model beside the simulator),
:mod:`.equations` (part a), :mod:`.experiments` (parts b, d), :mod:`.figure9`
(part c), :mod:`.plots`, :mod:`.stats`, :mod:`.summary` (headlines) and
:mod:`.pipeline` (:func:`run`).
"""

from __future__ import annotations

from parsched.reproduce.gang.equations import grid_summary, grid_table, misses_text, reference_text
from parsched.reproduce.gang.experiments import experiment_tables, plot_experiments, twophase_table
from parsched.reproduce.gang.figure9 import (
    phase_agreement,
    phase_load_table,
    phase_table,
    plot_phase,
)
from parsched.reproduce.gang.params import (
    ALPHA,
    COARSE,
    EQ8_MIN_OVERLAP_ITERS,
    EQ8_ROUNDS_PER_SEED,
    FINE,
    FULL,
    GRID_L_FULL,
    GRID_L_QUICK,
    GRID_N_FULL,
    GRID_N_QUICK,
    GRID_TP_FULL,
    GRID_TP_QUICK,
    PAPER_CROSSOVER_MS,
    PAPER_RATIO,
    PAPER_RATIO_AT_MS,
    PHASE_LOAD_POINT,
    PHASE_LOADS,
    PHASE_TP_MAX,
    PHASE_TW_MAX,
    QUICK,
    SIGMA,
    TCS_GANG,
    TQ,
    Length,
    _k,
)
from parsched.reproduce.gang.pipeline import run
from parsched.reproduce.gang.plan import Plan, build_plan
from parsched.reproduce.gang.plots import plot_grid
from parsched.reproduce.gang.reference import (
    REFERENCE_EQUATIONS,
    REFERENCE_SEEDS,
    REFERENCE_SEEDS_EQ8,
    grid_reference,
    reference_for,
    reference_points,
    reference_samples,
    reference_table,
    reference_value,
    reference_wanted,
)
from parsched.reproduce.gang.regimes import (
    EQUATIONS,
    eq8_in_regime,
    eq8_pooled,
    eq13_residual,
    overlap_iterations,
    regime,
)
from parsched.reproduce.gang.stats import (
    crossover,
    fit_exponent,
    harmonic,
    idle_fraction,
    interp,
    pooled_ci90,
)
from parsched.reproduce.gang.summary import headlines

__all__ = [
    "ALPHA",
    "COARSE",
    "EQ8_MIN_OVERLAP_ITERS",
    "EQ8_ROUNDS_PER_SEED",
    "EQUATIONS",
    "FINE",
    "FULL",
    "GRID_L_FULL",
    "GRID_L_QUICK",
    "GRID_N_FULL",
    "GRID_N_QUICK",
    "GRID_TP_FULL",
    "GRID_TP_QUICK",
    "PAPER_CROSSOVER_MS",
    "PAPER_RATIO",
    "PAPER_RATIO_AT_MS",
    "PHASE_LOADS",
    "PHASE_LOAD_POINT",
    "PHASE_TP_MAX",
    "PHASE_TW_MAX",
    "QUICK",
    "REFERENCE_EQUATIONS",
    "REFERENCE_SEEDS",
    "REFERENCE_SEEDS_EQ8",
    "SIGMA",
    "TCS_GANG",
    "TQ",
    "Length",
    "Plan",
    "_k",
    "build_plan",
    "crossover",
    "eq8_in_regime",
    "eq8_pooled",
    "eq13_residual",
    "experiment_tables",
    "fit_exponent",
    "grid_reference",
    "grid_summary",
    "grid_table",
    "harmonic",
    "headlines",
    "idle_fraction",
    "interp",
    "misses_text",
    "overlap_iterations",
    "phase_agreement",
    "phase_load_table",
    "phase_table",
    "plot_experiments",
    "plot_grid",
    "plot_phase",
    "pooled_ci90",
    "reference_for",
    "reference_points",
    "reference_samples",
    "reference_table",
    "reference_text",
    "reference_value",
    "reference_wanted",
    "regime",
    "run",
    "twophase_table",
]
