"""Exceptions raised by the Python front end.

Both mirror the exceptions of the Rust extension (``parsched._core``): a
:class:`ConfigError` message is always one line of the form
``FIELD: problem; allowed: ...`` so that the command line can print it as
``parsched: error: FIELD: ...``.
"""

from __future__ import annotations

__all__ = [
    "ConfigError",
    "PolicyError",
    "RuntimeFailure",
    "RuntimeUnavailable",
    "SimulationError",
    "Terminated",
    "TimeLimitError",
    "TraceError",
    "clip",
    "shown",
]

#: Longest value echoed in an error message (characters), as in the core.
ECHO_MAX = 60


def clip(text: object, limit: int = ECHO_MAX) -> str:
    """``text`` for an error message: cut to ``limit`` characters with an
    ellipsis when longer (a 5,000-character bad value does not fill the line)."""
    s = str(text)
    return s if len(s) <= limit else s[:limit] + "…"


def shown(value: object) -> str:
    """A value as an error message quotes it: ``repr``, a string cut to
    :data:`ECHO_MAX` characters first."""
    if isinstance(value, str):
        return repr(clip(value))
    return clip(repr(value))


class ConfigError(ValueError):
    """A configuration value, override, or input file is invalid.

    ``field`` names the user-facing key (a paper symbol such as ``L``, or
    ``pool_size``, or a file-level name such as ``arrivals``).
    """

    def __init__(self, field: str, message: str, allowed: str | None = None) -> None:
        # (a field may be a user's unknown key: one line, cut like any value;
        # a field qualified by a file, "FILE: key", keeps the file's path)
        *where, key = " ".join(str(field).split()).split(": ")
        path_like = "/" in key or "\\" in key
        self.field = ": ".join([*(clip(w, 4096) for w in where),
                                clip(key, 4096 if path_like else ECHO_MAX)])
        self.message = " ".join(str(message).split())
        self.allowed = None if allowed is None else " ".join(str(allowed).split())
        text = f"{self.field}: {self.message}"
        if self.allowed:
            text += f"; allowed: {self.allowed}"
        super().__init__(text)

    @classmethod
    def from_message(cls, text: str) -> ConfigError:
        """Wraps a ``FIELD: problem; allowed: ...`` message (e.g. from Rust)."""
        line = " ".join(str(text).split())
        field, sep, rest = line.partition(": ")
        if not sep:
            return cls("config", line)
        message, sep, allowed = rest.partition("; allowed: ")
        return cls(field, message, allowed if sep else None)

    def __reduce__(self):  # keeps the three parts across process boundaries
        return (type(self), (self.field, self.message, self.allowed))


class PolicyError(RuntimeError):
    """A Python placement policy raised, or returned a decision the machine cannot apply."""


class RuntimeUnavailable(RuntimeError):
    """The Linux runtime cannot run here: no cgroup freezer or cpuset, or no
    permission to use them (run as root or from a delegated cgroup)."""


class RuntimeFailure(RuntimeError):
    """The Linux runtime failed while running jobs (a job could not be started,
    a cgroup operation failed, a timeout)."""


class SimulationError(RuntimeError):
    """The simulation itself failed (an internal invariant or program error)."""


class TimeLimitError(SimulationError):
    """A run passed its ``max_time_s`` of simulated time with jobs unfinished:
    the configuration livelocks or deadlocks (or the run is longer than the
    limit). The message names ``max_time_s`` and the unfinished jobs."""


class TraceError(ValueError):
    """A workload trace cannot be read or run: a missing file, a truncated or
    corrupt gzip stream, a malformed SWF line (``line N: ...``), a negative run
    time, a job wider than the machine under ``too_wide=error``.

    ``path`` is the trace file, ``line`` the SWF line number when known (None
    otherwise); ``str(e)`` is one line: ``trace PATH: line N: problem``.
    """

    def __init__(self, path: str, message: str) -> None:
        import re

        self.path = str(path)
        self.message = " ".join(str(message).split())
        m = re.match(r"line (\d+):", self.message)
        self.line = int(m.group(1)) if m else None
        super().__init__(f"trace {self.path}: {self.message}")

    def __reduce__(self):
        return (type(self), (self.path, self.message))


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised by the handler the command line installs
    (:func:`parsched.cli.main`): handled as Ctrl-C (runs stopped, temporary
    files removed), exit status 143."""
