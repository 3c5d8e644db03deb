"""The independent reference model of seed 001's blocking schemes
(parsched.models.reference_rr) against the simulator and against closed forms."""

from __future__ import annotations

import statistics

import pytest

import parsched
from parsched.config import BarrierConfig
from parsched.models import feitelson_rudolph as fr
from parsched.models.reference_rr import ps_alike_coarse, reference_run

SEEDS = (1, 2, 3, 4)


def _sim(seed: int, **kw) -> float:
    kw.setdefault("wait", "block")
    cfg = BarrierConfig(sched="local", barrier_cost=0.0, seed=seed, **kw)
    return parsched.simulate_barrier(cfg).time_per_iteration


def _ref(seed: int, **kw) -> float:
    kw = dict(kw)
    n, l, grain, var = kw.pop("n"), kw.pop("l"), kw.pop("grain"), kw.pop("var")
    return reference_run(n, l, grain, var, warmup=0, seed=seed, **kw).time_per_iteration


# Both competitor kinds, both wakeups, fine and coarse grain, ℓ = 1..4; the
# simulator and the reference measure the same window (first start to the
# k-th barrier) and are compared over the same four seeds.
CASES = [
    dict(n=2, l=2, grain=0.03, var=0.03, competitors="compute", wakeup="tail", k=600),
    dict(n=4, l=3, grain=0.7, var=0.7, competitors="compute", wakeup="tail", k=400),
    dict(n=3, l=3, grain=2.0, var=3.0, competitors="compute", wakeup="priority", k=400),
    dict(n=10, l=2, grain=3.3, var=3.3, competitors="same", wakeup="tail", k=1500),
    dict(n=4, l=4, grain=0.2, var=0.3, competitors="same", wakeup="tail", k=1500),
    dict(n=6, l=3, grain=0.17, var=0.25, competitors="same", wakeup="priority", k=1500,
         tq=10.0, alpha=3.0),
    dict(n=4, l=2, grain=66.7, var=66.7, competitors="same", wakeup="tail", k=300),
    dict(n=3, l=1, grain=0.5, var=0.5, competitors="same", wakeup="tail", k=1500),
    # exponential compute (Figure 9's blocking region: t_w > t_p)
    dict(n=10, l=3, grain=0.3, var=0.7, competitors="same", wakeup="tail", k=1500,
         dist="exponential"),
    # busy waiting at coarse grain (eq. 6 for uncoordinated schedules); at fine
    # grain a run's pattern decides (eq. 8), so single runs are not compared there
    dict(n=10, l=3, grain=66.7, var=66.7, competitors="compute", wakeup="tail", k=300,
         wait="busy"),
    dict(n=4, l=2, grain=133.0, var=133.0, competitors="same", wakeup="tail", k=200,
         wait="busy"),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"n{c['n']}l{c['l']}{c['competitors']}"
                         f"{c['wakeup']}{c.get('wait', 'block')}g{c['grain']}")
def test_reference_agrees_with_the_simulator(case):
    ref = statistics.mean(_ref(s, **case) for s in SEEDS)
    sim = statistics.mean(_sim(s, **case) for s in SEEDS)
    assert ref == pytest.approx(sim, rel=0.03), (ref, sim)


def test_two_threads_two_per_processor_take_half_of_eq13():
    # n = 2, ℓ = 2, compute-bound competitors, tail wakeup: the released threads
    # alternate, waiting r and τq − r of a competitor's quantum, so an
    # iteration takes t_p + τq/2 (+ switches): half of eq. (13), in both models.
    tq, tcs, alpha, grain = 50.0, 0.2, 1.5, 0.05
    want = grain + tq / 2
    eq13 = float(fr.t_block_compute(grain, 0.0, 2, 2, tq, tcs, alpha, grain="fine"))
    for t in (_ref(1, n=2, l=2, grain=grain, var=0.0, competitors="compute", k=400),
              _sim(1, n=2, l=2, grain=grain, var=0.0, competitors="compute", k=400)):
        assert abs(t - want) <= (2 + alpha) * tcs, t
        assert t / eq13 < 0.52


def test_eq13_wait_is_the_slowest_residual_quantum():
    # The iteration waits for the slowest of n − 1 residual quanta: (ℓ − 1 − 1/n)·τq.
    for n, l in ((4, 2), (10, 3)):
        t = statistics.mean(_ref(s, n=n, l=l, grain=0.05, var=0.05, competitors="compute",
                                 k=400, tcs=0.0, alpha=0.0) for s in SEEDS)
        assert t == pytest.approx(0.075 + (l - 1 - 1 / n) * 50.0, rel=0.02), (n, l, t)


def test_processor_sharing_limits():
    # One thread per gang: no barrier wait, a processor shared by ℓ threads, ℓ·t_p.
    r = ps_alike_coarse(1, 3, 10.0, 10.0, k=300)
    assert r.idle == 0.0
    assert r.time_per_iteration == pytest.approx(3 * 15.0, rel=0.05)
    # n = 10, ℓ = 2: processors idle when both their threads wait, so an
    # iteration takes ℓ·t_p/(1 − idle) — more than eq. (10)'s ℓ·t_p.
    r = ps_alike_coarse(10, 2, 10.0, 10.0, k=300)
    assert r.idle > 0.05
    assert r.time_per_iteration > 1.08 * 2 * 15.0
    assert r.time_per_iteration * (1 - r.idle) == pytest.approx(2 * 15.0, rel=0.02)


def test_reference_is_deterministic_and_checks_input():
    a = reference_run(3, 2, 1.0, 1.0, k=200, seed=7)
    assert a == reference_run(3, 2, 1.0, 1.0, k=200, seed=7)
    assert a != reference_run(3, 2, 1.0, 1.0, k=200, seed=8)
    with pytest.raises(ValueError):
        reference_run(0, 2, 1.0, 1.0)
    with pytest.raises(ValueError):
        reference_run(2, 2, 1.0, 1.0, competitors="alike")
    with pytest.raises(ValueError):
        reference_run(2, 2, 1.0, 1.0, wait="spin")
    for bad in ({"grain": -1.0}, {"grain": 0.0, "var": 0.0}, {"tcs": 50.0}, {"alpha": -1.0}):
        with pytest.raises(ValueError):
            reference_run(2, 2, **{"grain": 1.0, "var": 1.0, **bad})
