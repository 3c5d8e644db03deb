"""Batch scheduling as a Gymnasium environment: an agent picks which waiting
job starts (or is reserved) next on a real trace or a generated workload.

The simulator is parsched's batch machine, stepped in Rust
(``machines::batch::stepper``); docs/policies/batch-gym.md has the whole
protocol. In short:

* **Episode**: ``episode_jobs`` consecutive jobs of the trace from a start
  drawn with ``self.np_random`` (the whole trace when ``None``), or
  ``episode_jobs`` jobs of a generated Lublin–Feitelson workload
  (``BatchConfig(workload="lublin")``) with a seed drawn the same way. The
  machine starts empty.
* **Decision points**: an instant at which jobs wait, processors are free
  and no job holds the agent's reservation. A decision point with a single
  allowed action is taken by the core.
* **Action** ``Discrete(window + 1)``: a window slot — that job starts now
  if it fits, else it is *reserved* (it starts as soon as it fits; until
  then the core backfills the others around it as EASY does) — or
  ``window``: wait for the next event (when ``wait_action`` and something
  is still to happen). :meth:`BatchEnv.action_masks` gives the allowed ones
  (for maskable PPO). An agent that always picks slot 0 of the default
  arrival-ordered window *is* EASY: exactly its schedule.
* **Observation** ``Dict(jobs=Box(window, 10), machine=Box(6))``, float32:
  per window slot ``present, wait, requested, procs, fits_now,
  earliest_start, user, group, queue, partition`` (times in
  ``time_scale_s`` units, processors as a fraction of the machine,
  earliest start from the running jobs' requested ends); the machine's
  ``time, free, running, queued, reserved, submitted`` (fraction of the
  episode's jobs).
* A masked action (an empty slot, or wait when not allowed) is taken as
  slot 0 and reported in ``info["invalid_action"]``, or raises
  :class:`PolicyError` with ``invalid_action="error"``.
* **Reward** (``reward``): ``bounded_slowdown`` (τ = ``bsld_tau``, 10 s),
  ``wait``, ``turnaround`` or ``utilization``; ``reward_mode``: ``dense``
  (per step, adding up to the episode's metric: −mean bounded slowdown,
  −mean wait, −mean turnaround, or the utilization), ``sparse`` (that
  metric at the last step) or ``relative`` (``(M − M_base)/|M_base|`` at
  the last step against the configuration's built-in policy — EASY by
  default — on the same jobs, run once per episode start and cached).

``BatchVectorEnv`` steps ``num_envs`` such simulators in one call with the
GIL released (next-step autoreset).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

try:
    import gymnasium as gym
    from gymnasium import spaces
    from gymnasium.vector import AutoresetMode, VectorEnv
    from gymnasium.vector.utils import batch_space
except ImportError as e:  # pragma: no cover - exercised only without gymnasium
    raise ImportError(
        "parsched.gym needs gymnasium: pip install 'parsched[gym]' (or gymnasium>=1.0)"
    ) from e

from parsched.config import BatchConfig
from parsched.errors import ConfigError, PolicyError, TraceError

JOB_FEATURES = ("present", "wait", "requested", "procs", "fits_now", "earliest_start",
                "user", "group", "queue", "partition")
MACHINE_FEATURES = ("time", "free", "running", "queued", "reserved", "submitted")

__all__ = ["JOB_FEATURES", "MACHINE_FEATURES", "BatchEnv", "BatchVectorEnv"]


def _core() -> Any:
    from parsched import _core as c

    return c


def _errors(path: str | None) -> Any:
    """A context translating the extension's errors to parsched's."""
    import contextlib

    c = _core()

    @contextlib.contextmanager
    def ctx() -> Any:
        try:
            yield
        except c.TraceError as e:
            raise TraceError(path or "generated workload", str(e)) from None
        except c.ConfigError as e:
            raise ConfigError.from_message(str(e)) from None
        except c.PolicyError as e:
            raise PolicyError(str(e)) from None

    return ctx()


# (unbounded features: the largest float32, not infinity)
_BIG = float(np.finfo(np.float32).max)


def _spaces(window: int) -> tuple[spaces.Dict, spaces.Discrete]:
    low = np.zeros((window, len(JOB_FEATURES)), dtype=np.float32)
    low[:, 6:] = -1.0  # identifiers: -1 unknown
    obs = spaces.Dict({
        "jobs": spaces.Box(low=low, high=_BIG, dtype=np.float32),
        "machine": spaces.Box(low=0.0, high=_BIG, shape=(len(MACHINE_FEATURES),),
                              dtype=np.float32),
    })
    return obs, spaces.Discrete(window + 1)


def _prepare(trace: Any, config: BatchConfig | None) -> tuple[BatchConfig, str | None]:
    from parsched.sim.batch import _source

    if isinstance(trace, BatchConfig) and config is None:
        trace, config = None, trace
    config = BatchConfig() if config is None else config
    if not isinstance(config, BatchConfig):
        raise TypeError(f"config must be a BatchConfig, not {type(config).__name__}")
    path = _source(config, os.fspath(trace) if trace is not None else None)
    return config, path


def _options(window: int, order: str, backfill: bool, wait_action: bool, reward: str,
             reward_mode: str, time_scale_s: float, invalid_action: str) -> dict[str, Any]:
    """The options as the extension reads them (it checks each, naming it)."""
    return {"window": window, "order": order, "backfill": backfill, "wait_action": wait_action,
            "reward": reward, "reward_mode": reward_mode, "time_scale_s": time_scale_s,
            "invalid_action": invalid_action}


def _draw(n: int, episode_jobs: int | None, rng: Any, k: int
          ) -> tuple[list[int], int, list[int]]:
    """``k`` episodes from ``rng``: their starts, their length and their
    generator seeds. A trace of ``n`` jobs: windows of ``episode_jobs`` (the
    whole trace when None); a generated workload (``n`` = 0): a fresh seed
    each."""
    if n == 0:
        length = episode_jobs or 256
        return [0] * k, length, [int(s) for s in rng.integers(0, 2**63 - 1, k)]
    length = min(episode_jobs or n, n)
    return [int(s) for s in rng.integers(0, n - length + 1, k)], length, [0] * k


def _check_episode_jobs(episode_jobs: int | None) -> None:
    if episode_jobs is not None and (not isinstance(episode_jobs, int) or episode_jobs < 1):
        raise ConfigError("episode_jobs", repr(episode_jobs),
                          "an integer >= 1, or None (the whole trace)")


class BatchEnv(gym.Env):
    """One batch machine as a Gymnasium environment (module documentation).

    ``trace``: an SWF file (or put it in ``config.trace``); ``config``: a
    :class:`BatchConfig` (machine size, ``kill_on_overrun``, ``bsld_tau``, the
    ``relative`` baseline's policy, or ``workload="lublin"``).
    """

    metadata: dict[str, Any] = {"render_modes": []}  # noqa: RUF012

    def __init__(self, trace: Any = None, config: BatchConfig | None = None, *,
                 episode_jobs: int | None = 256, window: int = 128, order: str = "fcfs",
                 backfill: bool = True, wait_action: bool = True,
                 reward: str = "bounded_slowdown", reward_mode: str = "dense",
                 time_scale_s: float = 3600.0, invalid_action: str = "first") -> None:
        _check_episode_jobs(episode_jobs)
        self.config, self._path = _prepare(trace, config)
        with _errors(self._path):
            self._core = _core().BatchEnvCore(
                self.config.core_dict(), self._path,
                _options(window, order, backfill, wait_action, reward, reward_mode,
                         time_scale_s, invalid_action))
        self.window = window
        self.episode_jobs = episode_jobs
        self.observation_space, self.action_space = _spaces(window)

    def _episode(self) -> tuple[int, int, int]:
        """(start, length, seed) of the next episode, from ``np_random``."""
        starts, length, seeds = _draw(self._core.n_jobs, self.episode_jobs, self.np_random, 1)
        return starts[0], length, seeds[0]

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[dict[str, np.ndarray], dict]:
        """A new episode. ``options={"start": k}`` fixes the first trace job
        (``{"seed": s}`` the generated workload's seed)."""
        super().reset(seed=seed)
        options = options or {}
        n = self._core.n_jobs
        # a drawn episode that needs no decision is drawn again; a fixed one
        # (the whole trace, or options) cannot be
        fixed = bool(options) or (n > 0 and (self.episode_jobs or n) >= n)
        for _ in range(1 if fixed else 100):
            start, length, wseed = self._episode()
            start = int(options.get("start", start))
            wseed = int(options.get("seed", wseed))
            with _errors(self._path):
                (jobs, machine), done = self._core.reset(start, length, wseed)
            if not done:
                break
        else:
            raise PolicyError(
                "this episode needs no decision: every job can only start as it does"
                + ("" if fixed else " (100 episodes drawn in a row)")
                + "; use longer episodes or another start")
        return {"jobs": jobs, "machine": machine}, {}

    def step(self, action: Any) -> tuple[dict[str, np.ndarray], float, bool, bool, dict]:
        try:
            jobs, machine, reward, done, invalid = self._core.step(int(action))
        except _core().PolicyError as e:
            raise PolicyError(str(e)) from None
        return ({"jobs": jobs, "machine": machine}, reward, done, False,
                {"invalid_action": True} if invalid else {})

    def action_masks(self) -> np.ndarray:
        """The allowed actions: ``window + 1`` booleans (the slots holding a
        job, then wait)."""
        return self._core.action_masks()

    def job_id(self, slot: int) -> int | None:
        """The trace's id of the job in window slot ``slot`` (None if empty)."""
        return self._core.window_job_id(slot)

    @property
    def now(self) -> int:
        """The simulated time, seconds."""
        return self._core.now

    def result(self) -> Any:
        """The episode's schedule as a :class:`BatchResult` (as
        :func:`parsched.simulate_batch` returns; ends the episode)."""
        from parsched.sim.batch import _result

        with _errors(self._path):
            return _result(self.config, self._core.result())


class BatchVectorEnv(VectorEnv):
    """``num_envs`` batch machines stepped together in Rust, the GIL released
    (next-step autoreset: the step after an episode ends resets that
    environment, ignoring its action, with reward 0). The same options as
    :class:`BatchEnv`."""

    metadata: dict[str, Any] = {"autoreset_mode": AutoresetMode.NEXT_STEP}  # noqa: RUF012

    def __init__(self, num_envs: int, trace: Any = None, config: BatchConfig | None = None, *,
                 episode_jobs: int | None = 256, window: int = 128, order: str = "fcfs",
                 backfill: bool = True, wait_action: bool = True,
                 reward: str = "bounded_slowdown", reward_mode: str = "dense",
                 time_scale_s: float = 3600.0, invalid_action: str = "first") -> None:
        _check_episode_jobs(episode_jobs)
        self.config, self._path = _prepare(trace, config)
        with _errors(self._path):
            self._core = _core().BatchVecEnvCore(
                num_envs, self.config.core_dict(), self._path,
                _options(window, order, backfill, wait_action, reward, reward_mode,
                         time_scale_s, invalid_action))
        self.num_envs = num_envs
        self.window = window
        self.episode_jobs = episode_jobs
        self.single_observation_space, self.single_action_space = _spaces(window)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._autoreset = np.zeros(num_envs, dtype=bool)

    def _draw(self, k: int) -> tuple[list[int], int, list[int]]:
        return _draw(self._core.n_jobs, self.episode_jobs, self.np_random, k)

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[dict[str, np.ndarray], dict]:
        super().reset(seed=seed)
        starts, length, seeds = self._draw(self.num_envs)
        with _errors(self._path):
            jobs, machine, done = self._core.reset(starts, length, seeds)
        # (an episode with no decision at all ends at its first step)
        self._autoreset = np.asarray(done, dtype=bool).copy()
        return {"jobs": jobs, "machine": machine}, {}

    def step(self, actions: Any) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray,
                                          np.ndarray, dict]:
        actions = np.asarray(actions, dtype=np.int64).reshape(self.num_envs)
        starts = [-1] * self.num_envs
        seeds = [0] * self.num_envs
        if self._autoreset.any():
            idx = np.flatnonzero(self._autoreset)
            s, length, sd = self._draw(len(idx))
            for k, i in enumerate(idx):
                starts[i], seeds[i] = s[k], sd[k]
        else:
            length = 0
        length = length or (self.episode_jobs or max(self._core.n_jobs, 1))
        with _errors(self._path):
            jobs, machine, rewards, dones = self._core.step(
                actions.tolist(), starts, min(length, self._core.n_jobs or length), seeds)
        self._autoreset = dones.copy()
        truncated = np.zeros(self.num_envs, dtype=bool)
        invalid = self._core.invalid_actions()
        info = {"invalid_action": invalid} if invalid.any() else {}
        return {"jobs": jobs, "machine": machine}, rewards, dones, truncated, info

    def action_masks(self) -> np.ndarray:
        """``num_envs × (window + 1)`` allowed actions."""
        return self._core.action_masks()


gym.register(id="parsched/Batch-v0", entry_point="parsched.gym:BatchEnv")
