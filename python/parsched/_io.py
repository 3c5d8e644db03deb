"""Atomic output: everything is written to temporary paths and renamed on success."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator

from .errors import ConfigError

__all__ = ["atomic_dir", "atomic_file", "check_output_dir", "check_output_file", "source_root"]


def check_output_file(path: str, field: str, suffixes: tuple[str, ...] | None = None) -> str:
    """Validates an output file path before any work is done; returns its suffix."""
    suffix = os.path.splitext(path)[1].lower()
    if suffixes is not None and suffix not in suffixes:
        raise ConfigError(field, f"{path!r} has unsupported extension {suffix or '(none)'!r}",
                          ", ".join(suffixes))
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise ConfigError(field, f"directory {parent!r} does not exist",
                          "a path in an existing directory")
    if os.path.isdir(path):
        raise ConfigError(field, f"{path!r} is a directory", "a file path")
    if not os.access(parent, os.W_OK):
        raise ConfigError(field, f"directory {parent!r} is not writable", "a writable directory")
    return suffix


def check_output_dir(path: str, field: str) -> None:
    """Validates an output directory (it may not exist yet) before any work is done."""
    if os.path.exists(path) and not os.path.isdir(path):
        raise ConfigError(field, f"{path!r} exists and is not a directory", "a directory path")
    probe = os.path.abspath(path)
    while not os.path.exists(probe):
        parent = os.path.dirname(probe)
        if parent == probe:
            break
        probe = parent
    if not os.path.isdir(probe):
        raise ConfigError(field, f"{probe!r} is not a directory", "a directory path")
    if not os.access(probe, os.W_OK):
        raise ConfigError(field, f"{probe!r} is not writable", "a writable directory")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _as_user_path(e: OSError, tmp: str | None, path: str) -> OSError:
    """The error of an operation on the temporary file, naming ``path`` (the
    user's file) instead."""
    text = e.strerror or str(e)
    if tmp:
        text = text.replace(tmp, path)
    if path in text:
        return OSError(e.errno, text)
    return OSError(e.errno, text, path)


@contextlib.contextmanager
def atomic_file(path: str) -> Iterator[str]:
    """Yields a temporary path next to ``path``; renames it over ``path`` on
    success. On failure (an exception, Ctrl-C, SIGTERM) the temporary file is
    removed; an ``OSError`` about it names ``path``."""
    path = os.fspath(path)
    parent = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".parsched-", suffix=os.path.splitext(path)[1],
                                   dir=parent)
    except OSError as e:
        raise _as_user_path(e, None, path) from None
    os.close(fd)
    try:
        # mkstemp makes the file 0600; the output follows the umask as any
        # other file would (0644 under the usual 022)
        os.chmod(tmp, 0o666 & ~_umask())
        yield tmp
        os.replace(tmp, path)
    except BaseException as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(e, OSError) and (e.filename == tmp or tmp in str(e)):
            raise _as_user_path(e, tmp, path) from None
        raise


@contextlib.contextmanager
def atomic_dir(path: str) -> Iterator[str]:
    """Yields a temporary directory; on success moves its files into ``path``
    (created if needed, other files left alone); on failure removes it."""
    target = os.path.abspath(path)
    existing = target
    while not os.path.exists(existing):
        existing = os.path.dirname(existing)
    tmp = tempfile.mkdtemp(prefix=".parsched-", dir=existing)
    try:
        yield tmp
        os.makedirs(target, exist_ok=True)
        for name in sorted(os.listdir(tmp)):
            os.replace(os.path.join(tmp, name), os.path.join(target, name))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def source_root() -> str:
    """The root of the source checkout this package runs from (``python/parsched``
    two levels below it): where ``bench/`` is, and ``../shared/`` beside it."""
    return os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
