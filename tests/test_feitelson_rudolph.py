"""Feitelson & Rudolph (1992) analytic model: equations (6)-(17), eq. (14), Table 1,
experiments 1-4 and the Fig. 9 phase diagram (parsched.models.feitelson_rudolph)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from parsched.models import feitelson_rudolph as fr

TQ, TCS = 50.0, 0.2


# ---------------------------------------------------------------- parameters


def test_system_params_defaults_and_frozen():
    p = fr.SystemParams()
    assert (p.tq_ms, p.tcs_ms, p.alpha, p.n, p.load) == (50.0, 0.2, 1.5, 10, 3)
    assert p == fr.MAKBILAN
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.n = 4  # type: ignore[misc]
    assert p.kwargs() == {"n": 10, "l": 3, "tq": 50.0, "tcs": 0.2}
    assert fr.t_gang_busy(1.0, 0.5, **p.kwargs()) == pytest.approx(1.004 * 1.5 * 3)


@pytest.mark.parametrize(
    "bad", [{"tq_ms": 0.0}, {"tcs_ms": -1.0}, {"alpha": 0.0}, {"n": 0}, {"load": 0}]
)
def test_system_params_validation(bad):
    with pytest.raises(ValueError):
        fr.SystemParams(**bad)


def test_table1_overheads():
    assert fr.default_library_switch_ms(1) == pytest.approx(0.21)
    assert fr.default_library_switch_ms(2) == pytest.approx(0.14)
    assert fr.default_library_switch_ms(4) == pytest.approx(0.105)
    np.testing.assert_allclose(fr.default_library_switch_ms([1, 7]), [0.21, 0.09])
    assert fr.gang_library_switch_ms() == 0.2
    assert fr.gang_library_switch_ms(5) == 0.2
    np.testing.assert_array_equal(fr.gang_library_switch_ms([1, 2, 3]), [0.2] * 3)
    assert fr.GANG_LIBRARY_SWITCH_MS == 0.2
    assert (fr.DEFAULT_SPAWN_MS, fr.GANG_SPAWN_MS) == (1.6, 2.5)


# ---------------------------------------------------------------- eq (6)


def test_eq6_hand_value():
    # (1 + 0.2/50) * (0.3 + 0.1) * 3 = 1.004 * 0.4 * 3
    assert fr.t_gang_busy(0.3, 0.1, 10, 3, TQ, TCS) == pytest.approx(1.2048)


@given(
    tp=st.floats(0, 100),
    tw=st.floats(0, 100),
    tq=st.floats(1, 1000),
    tcs=st.floats(0, 10),
)
def test_eq6_load_one_limit(tp, tw, tq, tcs):
    assert fr.t_gang_busy(tp, tw, 10, 1, tq, tcs) == pytest.approx((1 + tcs / tq) * (tp + tw))


def test_eq6_independent_of_n_and_linear_in_load():
    a = fr.t_gang_busy(0.2, 0.05, 2, 1)
    for l in range(1, 6):
        assert fr.t_gang_busy(0.2, 0.05, 10, l) == pytest.approx(l * a)
        assert fr.t_gang_busy(0.2, 0.05, 2, l) == pytest.approx(l * a)


def test_vectorised():
    tp = np.linspace(0.1, 1, 5)
    out = fr.t_gang_busy(tp, 0.1, 10, np.arange(1, 6))
    assert out.shape == (5,)
    np.testing.assert_allclose(
        out, [fr.t_gang_busy(a, 0.1, 10, l) for a, l in zip(tp, range(1, 6), strict=True)]
    )
    assert fr.t_uncoord_busy(tp, 0.1, 3, 2).shape == (5,)
    assert fr.t_block_same(tp, 0.1, 10, 2).shape == (5,)
    assert fr.t_block_compute(tp, 0.1, 10, 2).shape == (5,)
    assert fr.t_block_compute(0.1, tp, 10, 2).shape == (5,)


# ---------------------------------------------------------------- eq (8)


def test_eq8_hand_value():
    # n=2, l=2: (1.004)^2 * 0.5 * 4
    assert fr.t_uncoord_busy(0.4, 0.1, 2, 2, TQ, TCS, grain="fine") == pytest.approx(
        1.004**2 * 0.5 * 4
    )


@given(
    tp=st.floats(1e-4, 1.0),
    tw=st.floats(0, 1.0),
    n=st.integers(1, 6),
    l=st.integers(1, 4),
    tcs=st.floats(0, 1.0),
)
def test_eq8_is_eq6_times_overlap_factor(tp, tw, n, l, tcs):
    tq = 1e9  # keep the cap out of the way
    eq6 = fr.t_gang_busy(tp, tw, n, l, tq, tcs)
    eq8 = fr.t_uncoord_busy(tp, tw, n, l, tq, tcs, grain="fine")
    assert eq8 == pytest.approx(eq6 * l ** (n - 1) * (1 + tcs / tq) ** (n - 1))


def test_eq8_min_cap():
    # n=10, l=3: eq 8 = 1.004^10 * 0.5 * 3^10 ≈ 30,700 ms > (50.2)*3 = 150.6 ms
    uncapped = 1.004**10 * 0.5 * 3**10
    assert uncapped > 150.6
    assert fr.t_uncoord_busy(0.4, 0.1, 10, 3, TQ, TCS, grain="fine") == pytest.approx(150.6)
    assert fr.t_uncoord_busy(0.4, 0.1, 10, 3, TQ, TCS) == pytest.approx(150.6)
    # below the cap eq. (8) itself
    assert fr.t_uncoord_busy(0.4, 0.1, 2, 3, TQ, TCS) == pytest.approx(1.004**2 * 0.5 * 9)
    # load 1: equals eq (6) times (1 + tcs/tq)^(n-1)
    assert fr.t_uncoord_busy(0.4, 0.1, 10, 1) == pytest.approx(1.004**10 * 0.5)


def test_uncoord_coarse_grain_is_eq6():
    tp, tw = 400.0, 100.0  # t_p + t_w = 10 quanta
    eq6 = fr.t_gang_busy(tp, tw, 10, 3)
    assert fr.t_uncoord_busy(tp, tw, 10, 3, grain="coarse") == pytest.approx(eq6)
    assert fr.t_uncoord_busy(tp, tw, 10, 3) == pytest.approx(eq6)  # auto
    # the raw fine-grain cap would (wrongly) claim less than gang scheduling here
    assert fr.t_uncoord_busy(tp, tw, 10, 3, grain="fine") < eq6


@given(
    tp=st.floats(0, 200),
    tw=st.floats(0, 200),
    n=st.integers(1, 12),
    l=st.integers(1, 6),
)
def test_uncoord_auto_never_beats_gang(tp, tw, n, l):
    auto = fr.t_uncoord_busy(tp, tw, n, l)
    assert auto >= fr.t_gang_busy(tp, tw, n, l) * (1 - 1e-12)
    if tp + tw <= TQ:
        assert auto == pytest.approx(fr.t_uncoord_busy(tp, tw, n, l, grain="fine"))


def test_bad_grain():
    with pytest.raises(ValueError):
        fr.t_uncoord_busy(1, 1, grain="medium")
    with pytest.raises(ValueError):
        fr.t_block_same(1, 1, grain="auto")
    with pytest.raises(ValueError):
        fr.t_block_compute(1, 1, grain="x")


# ---------------------------------------------------------------- eqs (10), (12), (13)


def test_eq10_coarse_same():
    # (1 + 0.2/50) * 120 * 2
    assert fr.t_block_same(120.0, 80.0, 10, 2, TQ, TCS, 1.5, grain="coarse") == pytest.approx(
        1.004 * 240
    )


def test_eq12_fine_same():
    # (0.3 + 9/10 * 1.5 * 0.2) * 3 = (0.3 + 0.27) * 3
    assert fr.t_block_same(0.3, 0.5, 10, 3, TQ, TCS, 1.5) == pytest.approx(1.71)
    # the paper's form (1 + (n-1) α τcs / (n t_p)) t_p ℓ
    tp, n, l, a = 0.3, 10, 3, 1.5
    assert fr.t_block_same(tp, 0.0, n, l, TQ, TCS, a) == pytest.approx(
        (1 + (n - 1) * a * TCS / (n * tp)) * tp * l
    )
    # n = 1: nobody blocks
    assert fr.t_block_same(0.3, 0.0, 1, 2) == pytest.approx(0.6)


def test_eq13_fine_compute():
    # 0.3 + 2*50 + (3 + 1.5 - 1)*0.2 = 100.3 + 0.7
    assert fr.t_block_compute(0.3, 0.1, 10, 3, TQ, TCS, 1.5) == pytest.approx(101.0)
    assert fr.t_block_compute(0.3, 0.1, 10, 1, TQ, TCS, 1.5) == pytest.approx(0.3 + 1.5 * 0.2)


def test_block_compute_coarse_is_eq6():
    assert fr.t_block_compute(300.0, 100.0, 10, 3, grain="coarse") == pytest.approx(
        fr.t_gang_busy(300.0, 100.0, 10, 3)
    )


# ---------------------------------------------------------------- eqs (15)-(17)


def test_fig9_boundaries_hand_values():
    b = fr.phase_boundaries(0.5, 10, 1.5, TQ, TCS)
    r = 50 / 50.2
    assert b.gang_busy.slope == pytest.approx(0.5 * r - 1)
    assert b.gang_busy.intercept == pytest.approx(0.5 * 0.27 * r)
    assert b.blocking.slope == pytest.approx(2 * r - 1)
    assert b.blocking.intercept == pytest.approx(2 * 0.27 * r)
    # paper: gang-busy region ≈ t_p + 2 t_w <= 0.3 ms; blocking when t_w > t_p + ~0.6 ms
    assert 2 * b.gang_busy.intercept == pytest.approx(0.27, abs=0.005)
    assert b.blocking.slope == pytest.approx(1.0, abs=0.01)
    assert 0.5 < b.blocking.intercept < 0.6
    # sigma = 1: the two lines coincide; t_w ≈ α τcs (n-1)/n ≈ 0.27 ≈ "0.3 ms"
    b1 = fr.phase_boundaries(1.0)
    assert b1.gang_busy == pytest.approx(b1.blocking)
    assert b1.gang_busy.intercept == pytest.approx(0.27 * r)


def test_eq17_matches_paper_form():
    s, a, l = 0.5, 1.5, 3
    b = fr.phase_boundaries(s, 10, a, TQ, TCS, competitors="compute", l=l)
    assert b.gang_busy.intercept == pytest.approx(
        s * TQ * (l - 1) / l + s * a * TQ * TCS / ((TQ + TCS) * l)
    )
    assert b.gang_busy.slope == pytest.approx(s * TQ / ((TQ + TCS) * l) - 1)
    with pytest.raises(ValueError):
        fr.phase_boundaries(0.5, competitors="compute")
    with pytest.raises(ValueError):
        fr.phase_boundaries(0.5, competitors="other")
    with pytest.raises(ValueError):
        fr.phase_boundaries(1.5)


params = st.fixed_dictionaries(
    {
        "sigma": st.floats(0.05, 1.0),
        "n": st.integers(1, 64),
        "alpha": st.floats(1.0, 5.0),
        "tq": st.floats(1.0, 200.0),
        "tcs": st.floats(0.0, 2.0),
        "l": st.integers(1, 8),
    }
)


@settings(max_examples=300)
@given(p=params, tp=st.floats(0.0, 5.0))
def test_ratio_is_sigma_on_the_lines_same(p, tp):
    s, n, a, tq, tcs, l = (p[k] for k in ("sigma", "n", "alpha", "tq", "tcs", "l"))
    b = fr.phase_boundaries(s, n, a, tq, tcs)
    tw = b.gang_busy(tp)
    blk = fr.t_block_same(tp, tw, n, l, tq, tcs, a)
    if blk > 1e-9:
        assert fr.t_gang_busy(tp, tw, n, l, tq, tcs) / blk == pytest.approx(s, rel=1e-9)
    tw = b.blocking(tp)
    bw = fr.t_gang_busy(tp, tw, n, l, tq, tcs)
    if bw > 1e-9:
        assert fr.t_block_same(tp, tw, n, l, tq, tcs, a) / bw == pytest.approx(s, rel=1e-9)


@settings(max_examples=300)
@given(p=params, tp=st.floats(0.0, 5.0))
def test_ratio_is_sigma_on_the_lines_compute(p, tp):
    s, n, a, tq, tcs, l = (p[k] for k in ("sigma", "n", "alpha", "tq", "tcs", "l"))
    b = fr.phase_boundaries(s, n, a, tq, tcs, competitors="compute", l=l)
    tw = b.gang_busy(tp)
    blk = fr.t_block_compute(tp, tw, n, l, tq, tcs, a)
    if blk > 1e-9:
        assert fr.t_gang_busy(tp, tw, n, l, tq, tcs) / blk == pytest.approx(s, rel=1e-9)
    tw = b.blocking(tp)
    bw = fr.t_gang_busy(tp, tw, n, l, tq, tcs)
    if bw > 1e-9:
        assert fr.t_block_compute(tp, tw, n, l, tq, tcs, a) / bw == pytest.approx(s, rel=1e-9)


@settings(max_examples=300)
# (subnormal times lose every digit of the ratios compared below)
@given(p=params, tp=st.floats(0.0, 3.0, allow_subnormal=False),
       tw=st.floats(0.0, 3.0, allow_subnormal=False))
def test_classify_agrees_with_ratios(p, tp, tw):
    s, n, a, tq, tcs = (p[k] for k in ("sigma", "n", "alpha", "tq", "tcs"))
    if s == 1.0:
        s = 0.99
    bw = fr.t_gang_busy(tp, tw, n, 1, tq, tcs)
    blk = fr.t_block_same(tp, tw, n, 1, tq, tcs, a)
    region = fr.classify(tp, tw, s, n, a, tq, tcs)
    assert isinstance(region, str)
    slack = 1e-9
    if bw <= (s - slack) * blk:
        assert region == "gang-busy"
    elif blk <= (s - slack) * bw:
        assert region == "blocking"
    elif bw > (s + slack) * blk and blk > (s + slack) * bw:
        assert region == "neither"


def test_classify_fig9_points():
    assert fr.classify(0.05, 0.05) == "gang-busy"
    assert fr.classify(0.3, 0.05) == "neither"
    assert fr.classify(0.1, 1.0) == "blocking"
    out = fr.classify([0.05, 0.3, 0.1], [0.05, 0.05, 1.0])
    assert list(out) == ["gang-busy", "neither", "blocking"]


def test_phase_diagram_grid():
    df = fr.phase_diagram(num=21)
    assert len(df) == 21 * 21
    assert set(df.region) == {"gang-busy", "neither", "blocking"}
    assert df.loc[(df.tp == 0) & (df.tw == 0), "region"].item() == "gang-busy"
    assert df.loc[(df.tp == 0) & (df.tw == 1), "region"].item() == "blocking"
    gb = df[df.region == "gang-busy"]
    assert (gb.ratio <= 0.5 + 1e-12).all()
    bl = df[df.region == "blocking"]
    assert (1 / bl.ratio <= 0.5 + 1e-12).all()
    # the whole gang-busy region lies in t_p + 2 t_w <= 0.3 ms (paper, §4)
    assert (gb.tp + 2 * gb.tw <= 0.3).all()
    dfc = fr.phase_diagram(num=11, competitors="compute", l=3)
    # with compute-bound competitors gang-busy wins everywhere on [0, 1]^2 (eq 17)
    assert (dfc.region == "gang-busy").all()


# ---------------------------------------------------------------- eq (14)


def test_makbilan_mapping_eq14():
    tp, tw = fr.makbilan_mapping(1000, 1000)
    assert tp == pytest.approx(0.137 + 0.00141 * 1500)
    assert tw == pytest.approx(0.58)
    tp, tw = fr.makbilan_mapping(100, 0)
    assert (tp, tw) == (pytest.approx(0.278), 0.0)
    tps, tws = fr.makbilan_mapping(np.array([0, 100]), np.array([0, 100]))
    np.testing.assert_allclose(tps, [0.137, 0.137 + 0.00141 * 150])
    np.testing.assert_allclose(tws, [0.0, 0.058])


def test_tw_coefficient_reproduces_000058():
    c = fr.tw_ms_per_var_unit(10)
    assert c == pytest.approx(0.00141 * (10 / 11 - 0.5))
    assert c == pytest.approx(0.000576818, rel=1e-6)
    assert round(c, 5) == 0.00058  # the paper's precision (2 significant digits)
    assert abs(c - fr.TW_PER_VAR_PRINTED) / fr.TW_PER_VAR_PRINTED < 0.006
    # E[max] - E[mean] of n uniforms, times ms/instruction
    g, v = 100.0, 300.0
    assert fr.expected_max_uniform(g, v, 10) == pytest.approx(g + 10 / 11 * v)
    assert (fr.expected_max_uniform(g, v, 10) - (g + v / 2)) * 0.00141 == pytest.approx(c * v)
    # general form for n != 10; explicit coefficient override
    assert fr.makbilan_mapping(100, 100, n=2)[1] == pytest.approx(0.00141 / 6 * 100)
    assert fr.makbilan_mapping(0, 100, tw_coeff=c)[1] == pytest.approx(100 * c)


def test_expected_max_uniform_monte_carlo():
    rng = np.random.default_rng(1)
    x = rng.uniform(100, 400, size=(200_000, 10)).max(axis=1).mean()
    assert x == pytest.approx(fr.expected_max_uniform(100, 300, 10), rel=2e-3)


# ---------------------------------------------------------------- experiments


def test_exp1_columns_and_values():
    df = fr.experiment_predictions(1, grains=[0, 100])
    assert (df.load == 1).all() and (df["var"] == 0).all() and (df.tw == 0).all()
    r = df.iloc[1]
    assert r.tp == pytest.approx(0.278)
    assert r.t_gang_busy == pytest.approx(1.004 * 0.278)
    # blocking: default library τcs = 0.07 + 0.14 = 0.21, α = 1.5
    assert r.t_block == pytest.approx(0.278 + 0.9 * 1.5 * 0.21)
    # additive constant overhead of blocking at load 1 (experiment 1's point)
    full = fr.experiment_predictions(1)
    extra = full.t_block - full.tp
    np.testing.assert_allclose(extra, 0.9 * 1.5 * 0.21)
    assert (full.t_block > full.t_gang_busy).all()


def test_exp2_headlines():
    h = fr.experiment2_headlines()
    assert 0.5 <= h["crossover_ms"] <= 1.2
    assert h["crossover_ms"] == pytest.approx(0.853, abs=1e-3)
    assert h["crossover_grain"] == pytest.approx(265.67, abs=0.01)
    assert 1.5 <= h["ratio_at"] <= 2.5
    assert h["ratio_at"] == pytest.approx(1.946, abs=1e-3)
    assert h["at_ms"] == pytest.approx(0.16)
    df = fr.experiment_predictions(2, grains=[h["crossover_grain"]])
    assert df.t_block.item() == pytest.approx(df.t_gang_busy.item())


def test_exp2_curves():
    df = fr.experiment_predictions(2)
    assert (df.load == 3).all() and (df["var"] == df.grain).all()
    fine = df[df.tp_plus_tw < 0.8]
    coarse = df[df.tp_plus_tw > 0.9]
    assert (fine.t_gang_busy < fine.t_block).all()
    assert (coarse.t_block < coarse.t_gang_busy).all()
    assert df.ratio_block_over_gang.is_monotonic_decreasing


def test_exp3_altruism():
    df = fr.experiment_predictions(3)
    assert list(df.load) == [1, 2, 3, 4]
    np.testing.assert_allclose(df.alpha, [4.0, 4 - 2.8 / 3, 4 - 5.6 / 3, 1.2])
    assert df.tp.iloc[0] == pytest.approx(2.252)
    assert df.tw.iloc[0] == pytest.approx(0.58)
    # eq 13 ≈ (LOAD - 1) τq: grows by ≈ one quantum per extra gang
    steps = np.diff(df.t_block_compute)
    assert ((steps > 49) & (steps < 51)).all()
    assert (df.t_block_compute.iloc[1:] > 5 * df.t_block_same.iloc[1:]).all()
    r = df.iloc[2]
    assert r.t_block_same == pytest.approx((2.252 + 0.9 * r.alpha * (0.07 + 0.14 / 3)) * 3)
    assert r.t_block_compute == pytest.approx(
        2.252 + 2 * 50 + (3 + r.alpha - 1) * (0.07 + 0.14 / 3)
    )
    # constant alpha override
    assert (fr.experiment_predictions(3, alpha=2.0).alpha == 2.0).all()


def test_exp4_linear_vs_quadratic():
    df = fr.experiment_predictions(4)
    assert (df.n == 2).all()
    loads = df.load.to_numpy(dtype=float)
    # gang-busy exactly linear through the origin
    np.testing.assert_allclose(df.t_gang_busy / loads, df.t_gang_busy.iloc[0])
    # blocking linear in l (up to the 0.14/l Table 1 term)
    assert np.polyfit(loads, df.t_block, 2)[0] == pytest.approx(0, abs=2e-3)
    # uncoordinated busy waiting: (1+τcs/τq)^2 (t_p+t_w) l^2, quadratic
    c2, c1, c0 = np.polyfit(loads, df.t_uncoord_busy, 2)
    assert c2 > 0.3 and abs(c1) < 0.05 and abs(c0) < 0.05
    assert (df.t_uncoord_busy.iloc[1:] > df.t_gang_busy.iloc[1:]).all()
    assert df.tw.iloc[0] == pytest.approx(0.00141 / 6 * 100)


def test_experiment_bad_number():
    with pytest.raises(ValueError):
        fr.experiment_predictions(5)
