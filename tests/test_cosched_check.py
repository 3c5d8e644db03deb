"""The independent spin-block model (reproduce/cosched_check.py) against first
principles and against parsched's cluster machine."""

import dataclasses

import pytest

from parsched.reproduce import cosched_check as cc

BASE = cc.Params(iterations=200, compute_us=1600.0, jitter=0.0, col_bytes=600, row_bytes=300)


def test_one_job_alone_takes_compute_plus_its_message_chain():
    """One job, one process per node: never a switch after the first, so each
    iteration is its compute plus the exchange and barrier chains."""
    p = dataclasses.replace(BASE, jobs=1, switch_us=0.0, interrupt_us=0.0)
    t = cc.simulate(p)
    per_iter = t * 1e6 / p.iterations
    # compute + 4 sends + the slowest boundary (32 us + 600 B) + 4 receive overheads
    # + 3 barrier rounds (32 us each), to within the overlap of sends and receives
    lo = p.compute_us + 4 * 5 + 32 + 600 * 0.03
    assert lo <= per_iter <= lo + 4 * 5 + 3 * 32 + 1e-6, per_iter


def test_short_spin_block_stays_near_the_ideal_even_without_boost():
    """Four jobs with the least favourable dispatch (FIFO, no boost, no preemption)
    and 300 us per switch and per interrupt: still within 2x of four jobs' work, far
    below the paper's 2849 s on W5 (scaled to the same work)."""
    one = cc.simulate(dataclasses.replace(BASE, jobs=1))
    slow = dataclasses.replace(BASE, switch_us=300.0, interrupt_us=300.0, jitter=0.04)
    four = cc.simulate(slow)
    assert 4 * one * 0.8 < four < 4 * one * 2.0, (one, four)
    assert four / (4 * one) < 2849 / 100 / 10


@pytest.mark.parametrize("iterations", [200])
def test_parsched_spin_block_agrees_with_the_independent_model(iterations):
    r = cc.check(iterations)
    assert 0.8 < r["ratio"] < 1.3, r


def _busy(quantum_ms, seed=1, **kw):
    p = dataclasses.replace(BASE, iterations=60, jitter=0.04, quantum_us=quantum_ms * 1e3,
                            seed=seed, **kw)
    return cc.simulate_busy(p) / p.iterations


def test_busy_waiting_alone_runs_at_the_dedicated_pace():
    alone = _busy(50, jobs=1)
    assert 1.6e-3 < alone < 2.0e-3, alone  # 1.6 ms compute + its message chains


def test_busy_waiting_loses_about_a_dozen_quanta_an_iteration():
    """Four jobs on independent round-robin nodes: the loss per iteration grows in
    proportion to the quantum (each of the iteration's dependent hops waits for a
    partner's next turn)."""
    short = sum(_busy(25, s) for s in (1, 2, 3)) / 3
    long = sum(_busy(100, s) for s in (1, 2, 3)) / 3
    assert 6 * 0.025 < short < 20 * 0.025, short
    assert 3.0 < long / short < 5.0, (short, long)


def test_parsched_local_loses_what_round_robin_at_solaris_slices_loses():
    """parsched's Local on W5 (Solaris's table) per LIFE(12) iteration lies between
    the independent model's 40 ms and 100 ms round robin (the table's slices for a
    spinning process below level 59 are 40-200 ms)."""
    from parsched import _core

    full = {a["app"]: a for a in _core.cosched_applications()["apps"]}["LIFE12"]["iterations"]
    r = _core.simulate_cosched({"workload": 5, "scheme": "Local", "scale": 60 / full,
                                "reps": 1, "seed": 1})
    ours = r["completion_time"] / 60
    lo = sum(_busy(40, s) for s in (1, 2)) / 2
    hi = sum(_busy(100, s) for s in (1, 2)) / 2
    assert lo < ours < hi, (lo, ours, hi)
