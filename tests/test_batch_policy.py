"""Your own batch policy (issue 26): ``select`` with full control, checked
by the machine; violations as errors or rows; fallback; stalls; the
``on_submit`` / ``on_complete`` hooks; bad policies."""

from __future__ import annotations

import os

import numpy as np
import pytest

import parsched
from conftest import needs_core
from parsched import BatchConfig, ConfigError, Decision, PolicyError
from parsched.reproduce.batch import default_traces_dir

pytestmark = needs_core

TRACES = default_traces_dir()
SMALL = os.path.join(TRACES, "HPC2N-subset.swf.gz")
needs_traces = pytest.mark.skipif(not os.path.exists(SMALL),
                                  reason="../shared/traces is not available")

HEADER = "; MaxProcs: 4\n"
# J1 (t=0, 2 procs, 10 s), J2 (0, 4 procs, 10 s), J3 (0, 2 procs, 30 s),
# J4 (5, 1 proc, 5 s); requested = run.
JOBS = [(1, 0, 10, 2), (2, 0, 10, 4), (3, 0, 30, 2), (4, 5, 5, 1)]


@pytest.fixture
def four(tmp_path):
    p = tmp_path / "four.swf"
    lines = [f"{i} {s} -1 {r} {n} -1 -1 {n} {r} -1 1 7 1 -1 -1 -1 -1 -1" for i, s, r, n in JOBS]
    p.write_text(HEADER + "\n".join(lines) + "\n")
    return str(p)


class Script:
    """Answers from a script {time: Decision}; raises if asked to."""

    def __init__(self, script=None, raises=False):
        self.script, self.raises = script or {}, raises

    def select(self, view):
        if self.raises:
            return 1 / 0
        return self.script.get(int(view["now"]))


class EasySelect:
    """EASY written as a select policy: start in order while jobs fit; the
    first that does not is reserved at its shadow time."""

    def select(self, v):
        now, free = int(v["now"]), int(v["free"])
        ends = sorted(zip(np.maximum(v["running_requested_end"], now + 1).tolist(),
                          v["running_procs"].tolist(), strict=True))
        start = []
        for i, p, r in zip(v["id"].tolist(), v["procs"].tolist(), v["requested"].tolist(),
                           strict=True):
            if p <= free:
                free -= p
                start.append(i)
                ends = sorted([*ends, (now + max(r, 1), p)])
                continue
            f = free
            for t, q in ends:
                f += q
                if f >= p:
                    return Decision(start=start, reserve={i: t})
        return Decision(start=start)


@needs_traces
@pytest.mark.parametrize("name", ["HPC2N-subset.swf.gz", "SDSC-SP2-5K-sample.swf.gz",
                                  "lublin_256.swf.gz"])
def test_easy_written_with_select_is_easy(name):
    path = os.path.join(TRACES, name)
    got = parsched.simulate_batch(path, policy=EasySelect())
    want = parsched.simulate_batch(path, BatchConfig(policy="easy"))
    assert (got.jobs["starting_time"].to_numpy() == want.jobs["starting_time"].to_numpy()).all()
    assert got.violations.empty and got.policy == "select"


CASES = [
    # J2 needs 4 processors, 2 free after J1
    ({0: Decision(start=[1, 2], wake_at=10)}, False, "job 2 needs 4 processors, 2 free",
     "does_not_fit"),
    # J1 again while it runs
    ({0: Decision(start=[1], wake_at=5), 5: Decision(start=[1])}, False, "job 1 is running",
     "not_waiting"),
    # J2 reserved at 10; J3 started at 5 would hold 2 processors until 35
    ({0: Decision(start=[1], reserve={2: 10}), 5: Decision(start=[3])}, False,
     "would delay job 2's reservation", "breaks_reservation"),
    ({0: Decision(start=[1], reserve={2: 5})}, False, "only 2 free at 5", "bad_reservation"),
    ({0: Decision(start=[99])}, False, "job 99 is not a job of this run", "unknown_job"),
    ({}, True, "select raised ZeroDivisionError", "raised"),
    ({}, False, "stalled: 4 jobs wait", "stalled"),
]


@pytest.mark.parametrize(("script", "raises", "msg", "kind"), CASES,
                         ids=[c[3] for c in CASES])
def test_each_bad_decision_is_an_error_or_a_violation_row(four, script, raises, msg, kind):
    with pytest.raises(PolicyError) as e:
        parsched.simulate_batch(four, BatchConfig(policy="fcfs"),
                                policy=Script(script, raises))
    text = str(e.value)
    assert msg in text and f"({kind})" in text and "\n" not in text
    r = parsched.simulate_batch(four, BatchConfig(policy="fcfs"), policy=Script(script, raises),
                                on_violation="repair")
    v = r.violations
    assert list(v.columns) == ["time", "job_id", "kind", "message"]
    assert ((v["kind"] == kind) & v["message"].str.contains(msg, regex=False)).any(), v
    assert (r.jobs["finish_time"] >= r.jobs["starting_time"]).all() and len(r.jobs) == 4


def test_a_raising_policy_falls_back_to_a_built_in(four):
    r = parsched.simulate_batch(four, BatchConfig(policy="fcfs"), policy=Script(raises=True),
                                fallback="easy")
    easy = parsched.simulate_batch(four, BatchConfig(policy="easy"))
    assert (r.jobs["starting_time"].to_numpy() == easy.jobs["starting_time"].to_numpy()).all()
    assert set(r.violations["kind"]) == {"raised"}


def test_reservations_are_kept_and_the_machine_backfills_around_them(four):
    # J2 reserved at 10 starts at 10 with no further decision; backfilling
    # starts J4 at 5 (it ends at 10) but not J3 (it would delay J2)
    r = parsched.simulate_batch(four, BatchConfig(policy="easy"),
                                policy=Script({0: Decision(start=[1], reserve={2: 10})}))
    assert r.jobs.sort_values("job_id")["starting_time"].tolist() == [0, 10, 20, 5]


def test_on_submit_and_on_complete_are_batched_per_timestamp(four):
    seen = []

    class Watch(EasySelect):
        def on_submit(self, ids):
            seen.append(("submit", ids.tolist()))

        def on_complete(self, ids):
            seen.append(("complete", ids.tolist()))

    parsched.simulate_batch(four, policy=Watch())
    assert seen[0] == ("submit", [1, 2, 3]) and ("submit", [4]) in seen
    done = [j for k, ids in seen if k == "complete" for j in ids]
    assert sorted(done) == [1, 2, 3, 4]

    class WatchPriority:
        def priority(self, q):
            return q["submit"]

        def on_complete(self, ids):
            seen.append(("p", ids.tolist()))

    seen.clear()
    parsched.simulate_batch(four, policy=WatchPriority())
    assert sorted(j for _, ids in seen for j in ids) == [1, 2, 3, 4]


def test_bad_policies_are_one_clear_error(four):
    class Nothing:
        def on_submit(self, ids):
            pass

    class Both(EasySelect):
        def priority(self, q):
            return q["submit"]

    for policy, field in [(Nothing(), "policy"), (Both(), "policy")]:
        with pytest.raises(ConfigError) as e:
            parsched.simulate_batch(four, policy=policy)
        assert e.value.field == field and "\n" not in str(e.value)
    with pytest.raises(ConfigError, match="on_violation"):
        parsched.simulate_batch(four, policy=EasySelect(), on_violation="ignore")
    with pytest.raises(ConfigError, match="fallback"):
        parsched.simulate_batch(four, policy=EasySelect(), fallback="sjf")

    class Short:
        def priority(self, q):
            return q["submit"][:-1]

    class NaN:
        def priority(self, q):
            return np.full(len(q["submit"]), np.nan)

    class Returns:
        def select(self, v):
            return 42

    for policy, msg in [(Short(), "scores for a queue of"), (NaN(), "returned NaN for job"),
                        (Returns(), "select returned int")]:
        with pytest.raises(PolicyError, match=msg) as e:
            parsched.simulate_batch(four, policy=policy)
        assert "\n" not in str(e.value)


def test_a_built_in_name_as_policy(four):
    a = parsched.simulate_batch(four, policy="conservative")
    b = parsched.simulate_batch(four, BatchConfig(policy="conservative"))
    assert a.summary["avg_wait"] == b.summary["avg_wait"] and a.policy == "conservative"


# The hand-worked EASY instances of crates/parsched-sim/tests/integration.rs
# (batch_machine::hand_01..hand_12, pyss-style): processors, jobs as
# (submit, run, procs, requested), and EASY's starts worked out by hand there.
HAND = {
    "01 backfill past a blocked head": (4, [(0, 10, 2, 10), (0, 5, 4, 5), (1, 2, 1, 2)],
                                        [0, 10, 1]),
    "02 a candidate that would delay waits": (
        4, [(0, 10, 3, 10), (0, 5, 4, 5), (0, 20, 1, 20), (0, 10, 1, 10)], [0, 10, 15, 0]),
    "03 easy delays the second job": (
        4, [(0, 10, 2, 10), (0, 5, 3, 5), (0, 5, 4, 5), (0, 20, 1, 20)], None),
    "04 early completion moves reservations": (
        4, [(0, 4, 3, 10), (0, 5, 4, 5), (0, 8, 1, 8), (5, 2, 2, 3)], None),
    "05 a job as wide as the machine": (
        8, [(0, 10, 2, 10), (0, 10, 8, 10), (2, 3, 2, 3), (2, 20, 2, 20)], None),
    "06 completion and submissions at one time": (
        4, [(0, 5, 4, 5), (5, 5, 3, 5), (5, 5, 2, 5), (5, 1, 1, 1)], None),
    "07 extra processors": (
        10, [(0, 100, 6, 100), (0, 10, 8, 10), (0, 500, 3, 500), (0, 500, 2, 500),
             (0, 50, 2, 50)], [0, 100, 110, 0, 0]),
    "08 an overrunning job": (4, [(0, 20, 2, 5), (0, 5, 4, 5), (6, 1, 1, 1), (6, 3, 1, 3)],
                              None),
    "09 a chain of reservations": (
        6, [(0, 10, 4, 10), (0, 10, 4, 10), (0, 10, 4, 10), (0, 30, 2, 30), (0, 5, 1, 5)],
        [0, 10, 20, 0, 30]),
    "10 simultaneous completions": (
        4, [(0, 10, 2, 10), (0, 10, 2, 10), (10, 5, 4, 5), (10, 5, 1, 5)], None),
    "11 zero run times": (2, [(0, 0, 2, 0), (0, 5, 2, 5), (0, 0, 1, 1)], None),
    "12 every job ending at the shadow time counts": (
        7, [(0, 10, 2, 10), (0, 10, 2, 10), (0, 10, 1, 10), (0, 5, 5, 5), (0, 50, 2, 50)],
        [0, 0, 0, 10, 0]),
}


@pytest.mark.parametrize("name", sorted(HAND))
def test_python_easy_equals_easy_on_the_hand_made_cases(tmp_path, name):
    """A FCFS priority, EASY written with select, and the Gymnasium
    environment's first-job agent all give the built-in EASY schedule."""
    procs, jobs, want = HAND[name]
    p = tmp_path / "hand.swf"
    p.write_text(f"; MaxProcs: {procs}\n" + "".join(
        f"{i + 1} {s} -1 {r} {n} -1 -1 {n} {q} -1 1 1 1 -1 -1 -1 -1 -1\n"
        for i, (s, r, n, q) in enumerate(jobs)))
    cfg = BatchConfig(policy="easy", missing_requested_time="runtime")
    easy = parsched.simulate_batch(str(p), cfg).jobs.sort_values("job_id")
    starts = easy["starting_time"].tolist()
    if want is not None:
        assert starts == want
    for policy in (None, EasySelect()):
        r = parsched.simulate_batch(str(p), cfg, policy=policy,
                                    priority=(lambda q: q["submit"]) if policy is None else None)
        assert r.jobs.sort_values("job_id")["starting_time"].tolist() == starts, policy
    gym = pytest.importorskip("parsched.gym")
    env = gym.BatchEnv(str(p), cfg, episode_jobs=None, window=8)
    env.reset(seed=0)
    done = False
    while not done:
        _, _, done, _, _ = env.step(0)
    assert env.result().jobs.sort_values("job_id")["starting_time"].tolist() == starts
