"""Seed 003's network of workstations (Nagar, Banerjee, Sivasubramaniam and Das,
SPAA 1999): :class:`CoschedConfig`, the keys of ``parsched._core.simulate_cosched``
(Rust ``parsched_sim::cluster::ClusterConfig``, ``cosched_keys()``) with the core's
defaults. Times carry their unit in the key (``_ms``, ``_us``, ``_ns``, ``_s``).
See docs/policies/cosched.md for the model and docs/formats/config-toml.md for
the ``[cosched]`` table."""

from __future__ import annotations

import contextvars
import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from .. import _core
from ..errors import ConfigError, shown
from .base import ConfigBase, _class_doc, _core_error, _doc, core_defaults

__all__ = ["APPLICATIONS", "SCHEMES", "CoschedConfig"]

_D = core_defaults("cosched")

#: The ten schemes of the paper's Table 1 (in Table 3's order), then the two
#: references. Names are case-insensitive; ``_`` and ``-`` are the same.
SCHEMES = ("Local", "SB", "DCS", "DCS-SB", "PB", "PBT", "PB-SB", "SY", "DCS-SY", "PB-SY",
           "gang", "fcfs")

#: The applications a custom ``jobs`` mix can name.
APPLICATIONS = ("LIFE3.5", "LIFE12", "MG", "LU", "EP")

#: ``dispatch_table`` values that mean the stock Solaris TS table.
_STOCK_TABLE = ("solaris",)

#: While :meth:`CoschedConfig.from_toml` reads a file: its directory (relative
#: ``dispatch_table`` paths are relative to it).
_TOML_DIR: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "parsched_cosched_toml_dir", default=None)


@dataclass(frozen=True, slots=True)
class CoschedConfig(ConfigBase):
    """One run of seed 003's cluster: message-passing jobs on workstations whose
    local schedulers (Solaris time-sharing) run independently, guided towards
    coscheduling by one of Table 1's schemes, or gang / fcfs as references.

    Mirrors ``parsched._core.simulate_cosched`` (Rust ``ClusterConfig``) with the
    core's defaults; every field is documented in ``CoschedConfig.field_doc(name)``.
    ``scheme`` and ``jobs`` are stored under the core's spelling (``pb-sb`` becomes
    ``PB-SB``, ``life12`` ``LIFE12``). ``jobs`` (a tuple of application names)
    overrides ``workload`` when not empty. ``dispatch_table`` is a file path (the
    table's text: ``dispadmin -c TS -g`` output, see docs/formats/dispatch-table.md)
    read when the config is checked and when it runs; None (also spelled
    ``solaris`` or ``none``) is the stock Solaris table.
    """

    workload: int = _doc(
        "workload 1-9 of the paper's Table 2, four jobs each (ignored when jobs is given)",
        _D["workload"])
    jobs: tuple[str, ...] = _doc(
        "a custom mix of applications, LIFE3.5, LIFE12, MG, LU, EP (overrides workload; "
        "empty: use workload); `--set jobs=LIFE12,MG,LU,EP`", _D["jobs"])
    scheme: str = _doc(
        "one of the ten schemes of Table 1 (Local, SB, DCS, DCS-SB, PB, PBT, PB-SB, SY, "
        "DCS-SY, PB-SY) or the references gang / fcfs", _D["scheme"])
    nodes: int = _doc("workstations (the paper: 8)", _D["nodes"])
    cpus_per_node: int = _doc(
        "processors per workstation (one shared run queue per node)", _D["cpus_per_node"])
    job_width: int | None = _doc(
        "processes per job; None: one per node", _D["job_width"])
    local: Literal["ts", "rr"] = _doc(
        "every node's local scheduler: ts (priority time-sharing from the dispatch table, "
        "Solaris TS; the seed's) or rr (round robin with rr_quantum_ms)", _D["local"])
    rr_quantum_ms: float = _doc("round robin's quantum, ms", _D["rr_quantum_ms"])
    dispatch_table: str | None = _doc(
        "file holding the time-sharing table (`dispadmin -c TS -g` text, "
        "docs/formats/dispatch-table.md); None or solaris: the stock Solaris TS table",
        _D["dispatch_table"])
    initial_level: int = _doc("the table level new processes start at", _D["initial_level"])
    age_running: bool = _doc(
        "once-a-second ageing also ages the running processes (Solaris ts_update walks "
        "every time-sharing thread); off: only queued ones", _D["age_running"])
    boost_refreshes_quantum: bool = _doc(
        "boosting a running process gives it a fresh quantum of its new level (Solaris "
        "ts_change_priority); off: it keeps the rest of its quantum (on, PBT livelocks on "
        "W4 and PB slows by a third on W5, against the paper)",
        _D["boost_refreshes_quantum"])
    boost_to: str = _doc(
        "where a boost (DCS, PB, PBT, spin-yield) puts its target; the paper does not "
        "say: top (TS 59), sleep_return (the level a wake-up gives, ts_slpret: 50-59 in "
        "the stock table), sleep_return+K (K levels above that, at most 59) or a fixed "
        "level 0-59 (e.g. 57; never lower than the target's own level)", _D["boost_to"])
    boost_cap: int = _doc(
        "the most boosts one process gets per second (between two of its node's "
        "once-a-second ageings; later ones leave it as it is); 0: no cap. The paper's "
        "future work: \"limiting the number of priority boosts for a particular process\"",
        _D["boost_cap"])
    boost_queue: Literal["head", "tail"] = _doc(
        "where a boosted process that is queued goes in its new level's queue: head "
        "(first to run at that level) or tail (behind the processes already there, as "
        "Solaris does for a priority set from outside the dispatcher)", _D["boost_queue"])
    boost_transient: bool = _doc(
        "a boost lasts until the process's quantum ends or it blocks: the table then "
        "moves it from its level before the boost (off: from the boosted level; with the "
        "stock table TS 59 ends at 49, whose lwait is 59 again)", _D["boost_transient"])
    tick_ms: float = _doc(
        "the clock tick, ms: quanta end on one of the node's ticks, each node with its own "
        "phase (0: quanta end exactly)", _D["tick_ms"])
    launch_gap_ms: float = _doc(
        "job j's processes start at j × launch_gap_ms (ms) plus the start skew (the jobs "
        "are launched one after the other)", _D["launch_gap_ms"])
    start_skew_ms: float = _doc(
        "each process starts at a random time in [0, start_skew_ms) ms after its job's "
        "launch (the launcher reaches the nodes one by one)", _D["start_skew_ms"])
    latency_us: float = _doc(
        "one-way user-to-user latency of a small message, µs, send and receive overheads "
        "included (the seed: 32)", _D["latency_us"])
    send_overhead_us: float = _doc("host time to post a send, µs", _D["send_overhead_us"])
    recv_overhead_us: float = _doc(
        "host time to take a message from the endpoint, µs", _D["recv_overhead_us"])
    per_byte_ns: float = _doc("wire time per byte, ns", _D["per_byte_ns"])
    context_switch_us: float = _doc("a context switch, µs", _D["context_switch_us"])
    interrupt_us: float = _doc("an interrupt and its service routine, µs", _D["interrupt_us"])
    syscall_us: float = _doc(
        "the driver call (ioctl) to block or to yield, µs", _D["syscall_us"])
    timer_us: float = _doc("one invocation of the periodic boost function, µs",
                           _D["timer_us"])
    spin_time_us: float | None = _doc(
        "spin time before blocking or yielding, µs; None: each application's own (tuned "
        "alone)", _D["spin_time_us"])
    boost_period_ms: float = _doc(
        "period of the boost function (PB, PBT, PB-SB, PB-SY), ms (the seed: 10)",
        _D["boost_period_ms"])
    spin_cap_at_boost_period: bool = _doc(
        "with a periodic boost, spin at most one boost period before blocking or yielding "
        "(a reading of PB-SB's \"the time wasted in spinning is limited to the period of "
        "the kernel function\")", _D["spin_cap_at_boost_period"])
    pb_sb_wake_interrupts: bool = _doc(
        "PB-SB: the interface also interrupts to wake a blocked receiver (as for SB); off: "
        "only the periodic function wakes blocked processes", _D["pb_sb_wake_interrupts"])
    pending: Literal["unpolled", "unconsumed"] = _doc(
        "what counts as a pending message for PB, PBT and spin-yield: unpolled (arrived "
        "since the process last polled its endpoint) or unconsumed (arrived, not yet "
        "received: the literal reading)", _D["pending"])
    nic_sample_us: float = _doc(
        "how often the interface samples which process runs, µs (0: always current)",
        _D["nic_sample_us"])
    wake_delay_us: float = _doc(
        "a woken process becomes ready this long after its interrupt, µs",
        _D["wake_delay_us"])
    wake_loss: float = _doc(
        "probability that a wake-up interrupt is lost (the process stays blocked until "
        "another message, the PB-SB timer or block_timeout_ms), in [0, 1]", _D["wake_loss"])
    block_timeout_ms: float = _doc(
        "a blocked process wakes by itself after this, ms (0: never; > 0 needed when "
        "wake_loss > 0)", _D["block_timeout_ms"])
    daemon_period_ms: float = _doc(
        "a background daemon on every node: its period, ms (0: none)", _D["daemon_period_ms"])
    daemon_run_us: float = _doc(
        "the background daemon's CPU per activation, µs", _D["daemon_run_us"])
    gang_slot_ms: float = _doc("gang scheduling's time slot, ms", _D["gang_slot_ms"])
    probe_ms: float = _doc(
        "period of the CPU-share probe behind the timeline (Figures 2-3), ms",
        _D["probe_ms"])
    probe_node: int = _doc("the node whose CPU shares are probed (0..nodes-1)",
                           _D["probe_node"])
    scale: float = _doc(
        "multiplies every application's iteration count (1: the calibrated 25 s alone; "
        "smaller for quick runs)", _D["scale"])
    alone_s: float = _doc(
        "one job's alone time for the slowdown's ideal (jobs × alone_s × scale), s (the "
        "seed: 25)", _D["alone_s"])
    max_time_s: float = _doc(
        "the run stops with TimeLimitError past this much simulated time, s (a livelock "
        "or deadlock)", _D["max_time_s"])
    seed: int = _doc("random seed; replication i uses a seed derived from it", _D["seed"])
    reps: int = _doc("replications (different seeds; 90% CI over them)", _D["reps"])

    TOML_TABLE: ClassVar[str] = "cosched"
    MODEL: ClassVar[str] = "cosched"

    def __post_init__(self) -> None:
        if isinstance(self.boost_to, int) and not isinstance(self.boost_to, bool):
            object.__setattr__(self, "boost_to", str(self.boost_to))  # a level, e.g. 57
        self._coerce_fields()
        table = self.dispatch_table
        if table is not None and table.strip().lower() in ("", "none", "null", *_STOCK_TABLE):
            object.__setattr__(self, "dispatch_table", None)
        elif table is not None and table.strip().lower() not in _STOCK_TABLE \
                and _TOML_DIR.get() is not None and not os.path.isabs(table):
            object.__setattr__(self, "dispatch_table", os.path.join(_TOML_DIR.get(), table))
        # the core's spelling of scheme and jobs (and its parse errors)
        try:
            values = _core.config_values(self.MODEL, self._core_dict())
        except _core.ConfigError as e:
            raise _core_error(e) from None
        object.__setattr__(self, "scheme", values["scheme"])
        object.__setattr__(self, "jobs", tuple(values["jobs"]))
        self._validate()

    # ------------------------------------------------------ jobs (special)
    def _special_coerce(self, name: str, v: Any) -> Any:  # jobs
        return _job_names(v)

    def _special_to_dict(self, name: str, v: Any) -> Any:
        return list(v)

    @classmethod
    def _special_parse(cls, key: str, raw: str) -> Any:
        return _job_names(raw.strip().strip("[]"))

    @classmethod
    def _special_from_toml(cls, name: str, value: Any, path: str) -> Any:
        if not isinstance(value, (list, str)):
            raise ConfigError("jobs", f"{path}: not a list of names",
                              'a list of application names, e.g. ["LIFE12", "MG"]')
        return value

    def _special_toml_lines(self, table: bool) -> list[str]:
        if not self.jobs:
            return []
        return ["jobs = [" + ", ".join(f'"{j}"' for j in self.jobs) + "]"]

    # ------------------------------------------------------------ the core
    @classmethod
    def from_toml(cls, path: str | os.PathLike[str]) -> CoschedConfig:
        """Reads a ``[cosched]`` table (or flat keys); a relative ``dispatch_table``
        path is relative to the TOML file."""
        token = _TOML_DIR.set(os.path.dirname(os.path.abspath(os.fspath(path))))
        try:
            return ConfigBase.from_toml.__func__(cls, path)  # slots: no zero-argument super()
        finally:
            _TOML_DIR.reset(token)

    def core_dict(self) -> dict[str, Any]:
        """The keys ``parsched._core.simulate_cosched`` takes: every field, with
        ``dispatch_table`` as the table's text (the file read now; a missing or
        unreadable file raises :class:`ConfigError` naming ``dispatch_table``)."""
        out = self.to_dict()
        out["dispatch_table"] = self.dispatch_table_text()
        return out

    def _core_dict(self) -> dict[str, Any]:
        return self.core_dict()

    def dispatch_table_text(self) -> str | None:
        """The text of :attr:`dispatch_table` (None: the stock Solaris table)."""
        path = self.dispatch_table
        if path is None or path.strip().lower() in _STOCK_TABLE:
            return None
        try:
            with open(path, encoding="utf-8") as fh:
                return fh.read()
        except (OSError, UnicodeDecodeError) as e:
            why = getattr(e, "strerror", None) or str(e)
            raise ConfigError("dispatch_table", f"cannot read {path!r}: {why}",
                              "a readable file with the table's text "
                              "(docs/formats/dispatch-table.md), or solaris") from None

    def core_values(self) -> dict[str, Any]:
        """Every key as the core reads it back (``config_values``): the stock
        table as None, a table file as its ``dispadmin`` text."""
        try:
            return dict(_core.config_values(self.MODEL, self.core_dict()))
        except _core.ConfigError as e:
            raise _core_error(e) from None

    def label(self) -> str:
        """Short description: scheme, the mix, and the other differences from
        the defaults (``key=value``)."""
        mix = ",".join(self.jobs) if self.jobs else f"W{self.workload}"
        skip = {"scheme", "workload"}
        defaults = type(self).defaults()
        diffs = [f"{k}={v}" for k, v in self.scalars().items()
                 if k not in skip and v != defaults[k]]
        return f"{self.scheme} on {mix}" + (f" ({', '.join(diffs)})" if diffs else "")


def _job_names(v: Any) -> tuple[str, ...]:
    if v is None:
        return ()
    if isinstance(v, str):
        items: Iterable[Any] = v.split(",")
    elif isinstance(v, bytes) or not hasattr(v, "__iter__"):
        raise ConfigError("jobs", f"{type(v).__name__} given",
                          "a sequence of application names (LIFE3.5, LIFE12, MG, LU, EP)")
    else:
        items = v
    out = []
    for x in items:
        if not isinstance(x, str):
            raise ConfigError("jobs", f"{shown(x)} is not a name", "LIFE3.5, LIFE12, MG, LU, EP")
        x = x.strip().strip("'\"")
        if x:
            out.append(x)
    return tuple(out)


CoschedConfig.__doc__ = _class_doc(CoschedConfig)
