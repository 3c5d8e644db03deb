"""Your own batch policy: the protocol :func:`parsched.simulate_batch` checks
(docs/policies/batch-python.md).

A policy is any object with some of these methods (every one optional, but
it needs ``priority`` or ``select``):

* ``priority(queue) -> scores``: one call per scheduling pass (with at least
  two jobs waiting) over the whole queue — a read-only mapping of ``now``,
  ``free`` and numpy columns ``submit``, ``wait``, ``requested``, ``procs``,
  ``user``, ``group``, ``queue``, ``partition``, ``fits_now`` in arrival
  order — returning one number per job, lowest first. The configuration's
  ``policy`` (fcfs, easy, conservative) then starts, reserves and backfills
  in that order.
* ``select(view) -> Decision``: full control. ``view`` adds ``total``,
  ``id``, ``reserved_at`` (−1: none) and the running jobs' ``running_id``,
  ``running_procs``, ``running_start``, ``running_requested_end``. The
  machine checks every start and reservation, keeps the reservations
  (starting a reserved job at its time), wakes the policy at ``wake_at``,
  and — under ``policy="easy"`` or ``"conservative"`` — backfills every
  other job that fits now and delays no reservation.
* ``on_submit(ids)`` / ``on_complete(ids)``: the jobs submitted / completed
  since the last pass (numpy arrays of trace ids), batched per timestamp,
  before the pass.

At each event time the machine applies completions, then submissions, then
calls the policy once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from parsched.errors import ConfigError

HOOKS = ("priority", "select", "on_submit", "on_complete")


@dataclass
class Decision:
    """What ``select`` returns: jobs to start now (trace ids, in order),
    reservations to make (``{id: time}``) or cancel (``{id: None}``), and a
    time to be called again even if nothing happens."""

    start: Sequence[int] = ()
    reserve: Mapping[int, int | None] = field(default_factory=dict)
    wake_at: int | None = None


def hooks(policy: Any) -> dict[str, Any]:
    """The policy's hooks by name (bound methods), checked: it needs
    ``priority`` or ``select``, not both; a hook must be callable."""
    found = {}
    for name in HOOKS:
        h = getattr(policy, name, None)
        if h is None:
            continue
        if not callable(h):
            raise ConfigError("policy", f"{type(policy).__name__}.{name} is not callable",
                              "methods " + ", ".join(HOOKS))
        found[name] = h
    if "priority" not in found and "select" not in found:
        raise ConfigError(
            "policy",
            f"{type(policy).__name__} has neither priority nor select",
            "a built-in name (fcfs, easy, conservative, gang) or an object with "
            "priority(queue) -> scores or select(view) -> Decision, and optionally "
            "on_submit(ids), on_complete(ids)")
    if "priority" in found and "select" in found:
        raise ConfigError(
            "policy", f"{type(policy).__name__} has both priority and select",
            "one of them: select has full control (the machine's backfilling still "
            "applies), priority only orders the queue")
    return found
