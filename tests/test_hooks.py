"""Policies written in Python for two more families (issue #26, item 4): gang admission's
slot (``simulate_batch(..., gang_place=f)``, and the barrier machine's gangs:
``simulate_barrier(..., gang_place=f)``) and the periodic boost's target
(``simulate_cosched(..., boost=f)``). Each: a Python rule equal to the built-in gives the
built-in result exactly; a different rule a different, hand-checked one; every bad answer
a PolicyError naming the job or node."""

from __future__ import annotations

import os

import pytest

import parsched
from conftest import needs_core
from parsched import BatchConfig, ConfigError
from parsched.reproduce.batch import default_traces_dir

TRACES = default_traces_dir()
SMALL = [os.path.join(TRACES, f) for f in ("HPC2N-subset.swf.gz", "lublin_256.swf.gz")]
needs_traces = pytest.mark.skipif(not all(os.path.exists(t) for t in SMALL),
                                  reason="../shared/traces is not available")


def first_fit(v):
    """The matrix's own rule: the lowest slot with room, else a new slot under mpl."""
    fits = (v["slot_free"] >= v["procs"]).nonzero()[0]
    if len(fits):
        return int(fits[0])
    return v["slots"] if v["slots"] < v["mpl"] else None


def last_fit(v):
    fits = (v["slot_free"] >= v["procs"]).nonzero()[0]
    if len(fits):
        return int(fits[-1])
    return v["slots"] if v["slots"] < v["mpl"] else None


class FirstFitObject:
    """The same rule as an object with a ``place`` method (counting its calls)."""

    def __init__(self):
        self.calls = 0

    def place(self, view):
        self.calls += 1
        return first_fit(view)


def schedule(r):
    j = r.jobs
    return list(zip(j["starting_time"].tolist(), j["finish_time"].tolist(),
                    r.slots.tolist(), strict=True))


@needs_core
@needs_traces
@pytest.mark.parametrize("trace", SMALL, ids=os.path.basename)
@pytest.mark.parametrize("backfill", [True, False])
def test_a_python_first_fit_is_exactly_the_built_in_gang_schedule(trace, backfill):
    cfg = BatchConfig(policy="gang", gang_backfill=backfill)
    built_in = parsched.simulate_batch(trace, cfg)
    obj = FirstFitObject()
    mine = parsched.simulate_batch(trace, cfg, gang_place=obj)
    assert obj.calls > 0
    assert schedule(mine) == schedule(built_in)
    assert mine.summary["avg_wait"] == built_in.summary["avg_wait"]
    assert schedule(parsched.simulate_batch(trace, cfg, gang_place=first_fit)) == \
        schedule(built_in)


def _hand_trace(tmp_path):
    """4 processors: A and B (3 wide, 100 s) at 0, C (1 wide, 5 s) at 1."""
    p = tmp_path / "hand.swf"
    p.write_text("; MaxProcs: 4\n"
                 "1 0 -1 100 3 -1 -1 3 100 -1 1 -1 -1 -1 -1 -1 -1 -1\n"
                 "2 0 -1 100 3 -1 -1 3 100 -1 1 -1 -1 -1 -1 -1 -1 -1\n"
                 "3 1 -1 5 1 -1 -1 1 5 -1 1 -1 -1 -1 -1 -1 -1 -1\n")
    return p


HAND = BatchConfig(policy="gang", mpl=3, quantum=10)


@needs_core
def test_last_slot_with_room_gives_the_hand_computed_schedule(tmp_path):
    """A and B take slots 0 and 1 (quantum 10: A ends 190, B 200). First fit puts C in
    running slot 0: 1..6; the last slot with room is slot 1, which runs 10..20: 10..15."""
    trace = _hand_trace(tmp_path)
    seen = []

    def rule(v):
        seen.append({k: (v[k].tolist() if hasattr(v[k], "tolist") else v[k]) for k in v})
        return last_fit(v)

    ff = parsched.simulate_batch(trace, HAND)
    assert schedule(ff) == [(0, 190, 0), (10, 200, 1), (1, 6, 0)]
    lf = parsched.simulate_batch(trace, HAND, gang_place=rule)
    assert schedule(lf) == [(0, 190, 0), (10, 200, 1), (10, 15, 1)]
    assert seen[-1] == {"now": 1, "id": 3, "procs": 1, "requested": 5, "submit": 1,
                        "slot_free": [1, 1], "slot_jobs": [1, 1], "mpl": 3, "slots": 2}
    assert seen[0]["slots"] == 0 and seen[0]["slot_free"] == []
    # None: not now. C, declined at 1, is asked again at the next admission pass (the
    # next arrival or end: A's, at 190) and goes to slot 0, whose quantum (180..190) is
    # over: slot 1 runs B's last 10 s (190..200), then slot 0 runs C: 200..205
    late = parsched.simulate_batch(
        trace, HAND, gang_place=lambda v: None if v["id"] == 3 and v["now"] < 10 else
        first_fit(v))
    assert schedule(late)[2] == (200, 205, 0)


@needs_core
@pytest.mark.parametrize("answer, match", [
    (7, r"gang_place for job 3: slot 7 is out of range; allowed: 0\.\.2 \(an existing "
        r"slot\) or 2 \(a new slot\)"),
    (-1, r"gang_place for job 3: slot -1 is out of range"),
    (0.0, r"gang_place for job 3: returned 0\.0 \(float\); allowed: a slot index"),
    ("0", r"gang_place for job 3: returned '0' \(str\)"),
    (True, r"gang_place for job 3: returned True \(bool\)"),
])
def test_a_bad_slot_answer_is_a_policy_error_naming_the_job(tmp_path, answer, match):
    trace = _hand_trace(tmp_path)

    def rule(v):
        return answer if v["id"] == 3 else first_fit(v)

    with pytest.raises(parsched.PolicyError, match=match):
        parsched.simulate_batch(trace, HAND, gang_place=rule)


@needs_core
def test_no_room_new_slot_beyond_mpl_and_raising_are_policy_errors(tmp_path):
    trace = _hand_trace(tmp_path)
    # slot 0 has 1 free cell: job 2 (3 wide) does not fit there
    with pytest.raises(parsched.PolicyError,
                       match=r"gang_place for job 2: slot 0 has no room \(1 free cells, the "
                             r"job needs 3\)"):
        parsched.simulate_batch(trace, HAND, gang_place=lambda v: 0)
    with pytest.raises(parsched.PolicyError,
                       match=r"gang_place for job 3: a new slot \(2\) is beyond mpl = 2"):
        parsched.simulate_batch(trace, HAND.with_(mpl=2), gang_place=lambda v: v["slots"])

    def boom(v):
        raise ValueError("no idea")

    with pytest.raises(parsched.PolicyError,
                       match=r"gang_place for job 1: place raised ValueError: no idea"):
        parsched.simulate_batch(trace, HAND, gang_place=boom)


@needs_core
def test_gang_place_needs_policy_gang_and_a_callable(tmp_path):
    trace = _hand_trace(tmp_path)
    for policy in ("fcfs", "easy", "conservative"):
        with pytest.raises(ConfigError, match="gang_place") as e:
            parsched.simulate_batch(trace, BatchConfig(policy=policy), gang_place=first_fit)
        assert e.value.field == "gang_place"
    with pytest.raises(ConfigError, match="gang_place"):
        parsched.simulate_batch(trace, HAND, gang_place=3)
    with pytest.raises(ConfigError, match="gang_place"):
        parsched.simulate_batch(trace, HAND, gang_place=first_fit,
                                priority=lambda q: q["submit"])


# ---------------------------------------------------------------- the barrier machine's gangs

# Gangs of 4 on 8 processors, 3 per processor, no skewing gang: the measured gang is gang
# 0, the competitors gangs 1 and 2; a few hundred iterations (a fraction of a second).
EIGHT = parsched.BarrierConfig(n=4, P=8, l=3, k=400, tq=5.0, skew=False)


def _summary(r):
    return {k: v for k, v in r.summary.items() if k != "wall_seconds"}


@needs_core
@pytest.mark.parametrize("sched", ["gang", "local"])
@pytest.mark.parametrize("skew", [False, True])
def test_a_python_first_fit_places_the_barrier_gangs_as_the_built_in(sched, skew):
    cfg = EIGHT.with_(sched=sched, skew=skew)
    obj = FirstFitObject()
    views = []

    def rule(v):
        views.append((v["id"], v["procs"], v["slot_free"].tolist(), v["slot_jobs"].tolist(),
                       v["now"], v["mpl"], v["slots"]))
        return obj.place(v)

    built_in = parsched.simulate_barrier(cfg)
    mine = parsched.simulate_barrier(cfg, gang_place=rule)
    assert _summary(mine) == _summary(built_in)
    assert mine.batch_means == built_in.batch_means
    assert mine.histogram == built_in.histogram
    # Once per gang, in order (skew, measured, competitors), with the matrix so far.
    first = int(skew)
    assert [v[0] for v in views] == list(range(first + 3))
    assert views[first] == (first, 4, [0] * first, [1] * first, 0, 2**32 - 1, first)
    assert views[-1][2:4] == ([0] * first + [0], [1] * first + [2])
    assert parsched.simulate_barrier(cfg, gang_place=first_fit).summary["events"] == \
        built_in.summary["events"]


@needs_core
def test_barrier_competitors_each_in_a_new_slot():
    # First fit: the measured gang (processors 0-3) and the first competitor (4-7) share
    # slot 0, the second competitor has slot 1 (processors 4-7 idle): the measured gang
    # runs one slot in 2, a quarter of the cells idle. A new slot for every gang (each on
    # processors 0-3): the measured gang runs one slot in 3, so an iteration (a few ms,
    # inside its 5 ms quanta either way) takes 3/2 as long, and half of the cells idle.
    ff = parsched.simulate_barrier(EIGHT, audit=True)
    ns = parsched.simulate_barrier(EIGHT, audit=True, gang_place=lambda v: v["slots"])
    ratio = ns.summary["time_per_iteration"] / ff.summary["time_per_iteration"]
    assert ratio == pytest.approx(1.5, rel=0.02)
    assert ff.summary["fragmentation"] == pytest.approx(0.25, rel=0.02)
    assert ns.summary["fragmentation"] == pytest.approx(0.5, rel=0.02)
    # Under local round robin the allocation fixes the processors: first fit puts two
    # threads on processors 0-3 and one on 4-7; new slots put all three on 0-3 and leave
    # 4-7 idle, so the measured gang's threads wait for two others, not one.
    local = EIGHT.with_(sched="local", wait="block")
    ff = parsched.simulate_barrier(local, audit=True)
    ns = parsched.simulate_barrier(local, audit=True, gang_place=lambda v: v["slots"])
    assert ns.summary["time_per_iteration"] > 1.3 * ff.summary["time_per_iteration"]
    assert ns.summary["useful_utilization"] < 0.6 * ff.summary["useful_utilization"]


def _boom(v):
    raise ValueError("no idea")


@needs_core
@pytest.mark.parametrize(("answer", "match"), [
    (lambda v: 7, r"gang_place for gang 1 \(competitor\): slot 7 is out of range; allowed: "
                  r"0\.\.1 \(an existing slot\) or 1 \(a new slot\)"),
    (lambda v: -1, r"gang_place for gang 1 \(competitor\): slot -1 is out of range"),
    (lambda v: None, r"gang_place for gang 1 \(competitor\): returned None; allowed: a slot "
                     r"index in 0\.\.=1 \(every gang is placed when the machine is built\)"),
    (lambda v: 0.0, r"gang_place for gang 1 \(competitor\): returned 0\.0 \(float\); "
                    r"allowed: a slot index \(int\) in 0\.\.=1$"),
    (lambda v: "0", r"gang_place for gang 1 \(competitor\): returned '0' \(str\)"),
    (lambda v: True, r"gang_place for gang 1 \(competitor\): returned True \(bool\)"),
    (_boom, r"gang_place for gang 1 \(competitor\): place raised ValueError: no idea"),
])
def test_a_bad_barrier_placement_is_a_policy_error_naming_the_gang(answer, match):
    rule = lambda v: answer(v) if v["id"] == 1 else first_fit(v)  # noqa: E731
    with pytest.raises(parsched.PolicyError, match=match):
        parsched.simulate_barrier(EIGHT, gang_place=rule)


@needs_core
def test_a_barrier_slot_without_room_and_a_bad_gang_place():
    # The skewing gang fills slot 0 (all 8 processors): the measured gang has no room there.
    with pytest.raises(parsched.PolicyError,
                       match=r"gang_place for gang 1 \(measured\): slot 0 has no room "
                             r"\(0 free cells, the gang needs 4\)"):
        parsched.simulate_barrier(EIGHT.with_(skew=True), gang_place=lambda v: 0)
    with pytest.raises(parsched.PolicyError, match=r"gang_place for gang 0 \(measured\)"):
        parsched.simulate_barrier(EIGHT, gang_place=lambda v: None)
    with pytest.raises(ConfigError, match="gang_place") as e:
        parsched.simulate_barrier(EIGHT, gang_place=3)
    assert e.value.field == "gang_place"


# ---------------------------------------------------------------- the periodic boost

SMALL_COSCHED = {"scheme": "PB", "workload": 5, "scale": 0.02, "reps": 2}


def pb_rule(v):
    """PB's own choice from the view: round robin from ``next``, the first live process
    with a pending message (not the running one when ``skip_running``)."""
    import numpy as np

    ok = (v["pending"] > 0) & ~v["done"]
    if v["skip_running"]:
        ok &= ~v["running"]
    n = len(ok)
    order = (np.arange(n) + v["next"]) % n
    hits = order[ok[order]]
    return int(hits[0]) if len(hits) else None


def _runs(r):
    return [{k: v for k, v in row.items() if k != "wall_seconds"} for row in r.run_rows]


def _same(a, b):
    assert _runs(a) == _runs(b)
    assert a.completion_time == b.completion_time
    assert a.job_completion_times == b.job_completion_times
    assert a.timeline_columns == b.timeline_columns


@needs_core
@pytest.mark.parametrize("skip_running", [True, False])
def test_a_python_pb_is_exactly_the_built_in_periodic_boost(skip_running):
    cfg = dict(SMALL_COSCHED, pb_skip_running=skip_running)
    built_in = parsched.simulate_cosched(cfg)
    calls = []

    class Booster:
        def boost(self, v):
            calls.append(v["node"])
            return pb_rule(v)

    mine = parsched.simulate_cosched(cfg, boost=Booster())
    _same(mine, built_in)
    assert built_in.run_rows[0]["boosts"] > 0
    assert len(set(calls)) == 8  # every node's timer asks


@needs_core
def test_a_rule_that_never_boosts_is_local_with_a_timer():
    """Never boosting leaves PB's timer without effect: with a free timer (timer_us = 0)
    the run is Local's, event for event except the timer's own; with its cost it differs
    from both."""
    free = dict(SMALL_COSCHED, timer_us=0.0)
    never = parsched.simulate_cosched(free, boost=lambda v: None)
    local = parsched.simulate_cosched(dict(free, scheme="Local"))
    pb = parsched.simulate_cosched(free)
    assert all(row["boosts"] == 0 for row in never.run_rows)
    assert never.completion_time != pb.completion_time
    drop = {"events"}
    assert [{k: v for k, v in r.items() if k not in drop} for r in _runs(never)] == \
        [{k: v for k, v in r.items() if k not in drop} for r in _runs(local)]
    assert never.job_completion_times == local.job_completion_times


@needs_core
@pytest.mark.parametrize("answer, match", [
    (99, r"boost on node \d+: endpoint 99 is out of range; allowed: 0\.\.\d+ \(the "
         r"node's processes\) or None"),
    (-2, r"boost on node \d+: endpoint -2 is out of range"),
    (1.5, r"boost on node \d+: returned 1\.5 \(float\); allowed: an endpoint index"),
    (False, r"boost on node \d+: returned False \(bool\)"),
])
def test_a_bad_boost_answer_is_a_policy_error_naming_the_node(answer, match):
    with pytest.raises(parsched.PolicyError, match=match):
        parsched.simulate_cosched(SMALL_COSCHED, boost=lambda v: answer)


@needs_core
def test_boosting_a_finished_process_or_raising_is_a_policy_error():
    def finished(v):
        done = v["done"].nonzero()[0]
        return int(done[0]) if len(done) else None

    with pytest.raises(parsched.PolicyError,
                       match=r"boost on node \d+: endpoint \d+ has no live process"):
        parsched.simulate_cosched(SMALL_COSCHED, boost=finished)

    def boom(v):
        raise KeyError("nope")

    with pytest.raises(parsched.PolicyError, match=r"boost on node \d+: boost raised KeyError"):
        parsched.simulate_cosched(SMALL_COSCHED, boost=boom)


@needs_core
@pytest.mark.parametrize("scheme", ["Local", "SB", "DCS", "SY", "gang", "fcfs"])
def test_boost_needs_a_scheme_with_a_periodic_boost(scheme):
    with pytest.raises(ConfigError, match="boost") as e:
        parsched.simulate_cosched(dict(SMALL_COSCHED, scheme=scheme), boost=pb_rule)
    assert e.value.field == "boost"


@needs_core
def test_boost_must_be_callable():
    with pytest.raises(ConfigError, match="boost"):
        parsched.simulate_cosched(SMALL_COSCHED, boost=42)
