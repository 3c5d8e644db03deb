"""The Gymnasium environment (issue 26): Gymnasium's checker, the first-job
agent is EASY on every shared trace, seeding through ``np_random`` only,
rewards, masks, the vector environment, bad input."""

from __future__ import annotations

import glob
import os

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium")

import parsched  # noqa: E402
from conftest import needs_core  # noqa: E402
from parsched import BatchConfig, ConfigError, PolicyError  # noqa: E402
from parsched.reproduce.batch import default_traces_dir  # noqa: E402

TRACES = default_traces_dir()
KTH = os.path.join(TRACES, "KTH-SP2-1996-2.1-cln.swf.gz")
SMALL = os.path.join(TRACES, "HPC2N-subset.swf.gz")
needs_traces = pytest.mark.skipif(not os.path.exists(SMALL),
                                  reason="../shared/traces is not available")

pytestmark = needs_core


def _gym():
    from parsched import gym as pgym

    return pgym


def _first_job_episode(env, seed=0):
    env.reset(seed=seed)
    total, done, steps = 0.0, False, 0
    while not done:
        mask = env.action_masks()
        assert mask[0], "slot 0 always holds a job at a decision point"
        _, r, done, trunc, _ = env.step(0)
        assert not trunc
        total += r
        steps += 1
    return total, steps


@needs_traces
def test_gymnasium_env_checker_passes():
    from gymnasium.utils.env_checker import check_env

    env = _gym().BatchEnv(SMALL, episode_jobs=64, window=16)
    check_env(env, skip_render_check=True)
    env = gymnasium.make("parsched/Batch-v0", trace=SMALL, episode_jobs=32)
    obs, info = env.reset(seed=3)
    assert obs["jobs"].dtype == np.float32 and info == {}


@needs_traces
@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(TRACES, "*.swf.gz"))
                                        + glob.glob(os.path.join(TRACES, "large", "*.swf.gz"))),
                         ids=os.path.basename)
def test_first_job_agent_gives_exactly_the_easy_schedule(path):
    env = _gym().BatchEnv(path, episode_jobs=None)
    total, steps = _first_job_episode(env)
    got = env.result()
    want = parsched.simulate_batch(path, BatchConfig(policy="easy"))
    assert steps > 0
    for col in ("starting_time", "finish_time", "job_id"):
        assert (got.jobs[col].to_numpy() == want.jobs[col].to_numpy()).all(), col
    # the dense rewards add up to -(mean bounded slowdown)
    assert total == pytest.approx(-want.summary["avg_bounded_slowdown"], rel=1e-9)


@needs_traces
def test_seeding_is_np_random_only_and_reproducible():
    import random

    def trajectory(seed, noise):
        random.seed(noise)
        np.random.seed(noise)  # the global generators play no part
        env = _gym().BatchEnv(SMALL, episode_jobs=50, window=8)
        obs, _ = env.reset(seed=seed)
        out = [obs["jobs"].copy()]
        rng = np.random.default_rng(7)
        done = False
        while not done:
            allowed = np.flatnonzero(env.action_masks())
            obs, _, done, _, _ = env.step(int(rng.choice(allowed)))
            out.append(obs["jobs"].copy())
        return out, env.result().summary["avg_wait"]

    a, wa = trajectory(5, 1)
    b, wb = trajectory(5, 2)
    assert len(a) == len(b) and all((x == y).all() for x, y in zip(a, b, strict=True))
    assert wa == wb
    c, _ = trajectory(6, 1)
    assert len(c) != len(a) or any((x != y).any() for x, y in zip(a, c, strict=True))


@needs_traces
def test_observation_and_masks_describe_the_window():
    env = _gym().BatchEnv(SMALL, episode_jobs=200, window=8, time_scale_s=1.0)
    obs, _ = env.reset(seed=1)
    for _ in range(30):
        jobs, machine = obs["jobs"], obs["machine"]
        mask = env.action_masks()
        present = jobs[:, 0] == 1.0
        assert (mask[:-1] == present).all()
        # a job that fits now can start now; one that does not, later
        fits = jobs[present, 4] == 1.0
        assert (jobs[present][fits, 5] == 0).all() and (jobs[present][~fits, 5] > 0).all()
        assert 0.0 <= machine[1] <= 1.0 and (jobs[present, 1] >= 0).all()
        obs, _, done, _, _ = env.step(int(np.flatnonzero(mask)[-1]))
        if done:
            break


@needs_traces
@pytest.mark.parametrize("reward", ["bounded_slowdown", "wait", "turnaround", "utilization"])
def test_dense_rewards_add_up_to_the_episode_metric(reward):
    env = _gym().BatchEnv(SMALL, episode_jobs=120, window=8, reward=reward)
    env.reset(seed=11)
    rng = np.random.default_rng(0)
    total, done = 0.0, False
    while not done:
        _, r, done, _, _ = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        total += r
    s = env.result().summary
    want = {"bounded_slowdown": -s["avg_bounded_slowdown"], "wait": -s["avg_wait"],
            "turnaround": -s["avg_response"], "utilization": s["utilization"]}[reward]
    assert total == pytest.approx(want, rel=1e-9, abs=1e-12)


@needs_traces
def test_relative_reward_is_zero_for_the_baseline_itself():
    env = _gym().BatchEnv(SMALL, episode_jobs=100, reward_mode="relative")
    rewards = []
    env.reset(seed=4)
    done = False
    while not done:
        _, r, done, _, _ = env.step(0)
        rewards.append(r)
    assert rewards[-1] == 0.0 and all(r == 0.0 for r in rewards)
    # waiting whenever possible is worse than EASY
    env.reset(seed=4)
    done = False
    while not done:
        mask = env.action_masks()
        _, r, done, _, _ = env.step(len(mask) - 1 if mask[-1] else 0)
    assert r < 0


@needs_traces
def test_masked_actions_are_slot_zero_or_an_error():
    env = _gym().BatchEnv(SMALL, episode_jobs=50, window=8)
    env.reset(seed=0)
    empty = int(np.flatnonzero(~env.action_masks()[:-1])[0])
    _, _, _, _, info = env.step(empty)
    assert info == {"invalid_action": True}
    strict = _gym().BatchEnv(SMALL, episode_jobs=50, window=8, invalid_action="error")
    strict.reset(seed=0)
    empty = int(np.flatnonzero(~strict.action_masks()[:-1])[0])
    with pytest.raises(PolicyError, match=f"action {empty} names an empty window slot"):
        strict.step(empty)
    with pytest.raises(PolicyError, match="out of range"):
        strict.step(99)


@needs_traces
def test_vector_env_matches_single_envs_and_autoresets():
    pgym = _gym()
    venv = pgym.BatchVectorEnv(3, SMALL, episode_jobs=40, window=8)
    obs, _ = venv.reset(seed=9)
    assert obs["jobs"].shape == (3, 8, len(pgym.JOB_FEATURES))
    assert venv.observation_space.contains(obs)
    ended = np.zeros(3, dtype=bool)
    totals = np.zeros(3)
    for _ in range(400):
        obs, r, term, _, _ = venv.step(np.zeros(3, dtype=np.int64))
        totals += np.where(ended, 0.0, r)
        ended |= term
        if ended.all():
            break
    assert ended.all()
    # each environment's first episode is EASY on its jobs: the same rewards
    # as a single environment run from the same start
    starts = pgym.BatchVectorEnv(3, SMALL, episode_jobs=40, window=8)
    starts.reset(seed=9)
    single = pgym.BatchEnv(SMALL, episode_jobs=40, window=8)
    n = single._core.n_jobs
    # (VectorEnv.reset(seed=9) seeds its np_random as gymnasium's seeding does)
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(9)))
    for i, s in enumerate(rng.integers(0, n - 40 + 1, 3)):
        single.reset(options={"start": int(s)})
        total, done = 0.0, False
        while not done:
            _, rr, done, _, _ = single.step(0)
            total += rr
        assert total == pytest.approx(totals[i], rel=1e-12)


@needs_traces
def test_generated_workload_episodes():
    env = _gym().BatchEnv(BatchConfig(workload="lublin", procs=64), episode_jobs=60, window=8)
    a, _ = env.reset(seed=1)
    b, _ = env.reset(seed=1)
    assert (a["jobs"] == b["jobs"]).all()
    total, steps = _first_job_episode(env, seed=2)
    assert steps > 0 and total < 0


@needs_traces
def test_bad_input_is_one_clear_error():
    pgym = _gym()
    for kwargs, field in [({"window": 0}, "window"), ({"reward": "speed"}, "reward"),
                          ({"reward_mode": "often"}, "reward_mode"), ({"order": "lifo"}, "order"),
                          ({"episode_jobs": 0}, "episode_jobs"),
                          ({"invalid_action": "ignore"}, "invalid_action"),
                          ({"time_scale_s": -1.0}, "time_scale_s")]:
        with pytest.raises(ConfigError) as e:
            pgym.BatchEnv(SMALL, **kwargs)
        assert e.value.field == field, kwargs
        assert "\n" not in str(e.value)
    with pytest.raises(parsched.TraceError):
        pgym.BatchEnv("/nonexistent.swf")


def test_an_episode_without_a_decision_is_one_clear_error(tmp_path):
    p = tmp_path / "one.swf"
    p.write_text("; MaxProcs: 4\n1 0 -1 10 2 -1 -1 2 10 -1 1 1 1 -1 -1 -1 -1 -1\n")
    env = _gym().BatchEnv(str(p), episode_jobs=None)
    with pytest.raises(PolicyError, match="needs no decision") as e:
        env.reset(seed=0)
    assert "\n" not in str(e.value)
