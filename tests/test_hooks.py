"""Policies written in Python for two more families (issue #26, item 4): gang admission's
slot (``simulate_batch(..., gang_place=f)``) and the periodic boost's target
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
