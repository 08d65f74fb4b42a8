"""Writing files whole or not at all, and saying in one line why a write failed."""

from __future__ import annotations

import contextlib
import errno
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from arena.errors import UserError

# What to do about the errors a full, read-only or foreign folder gives.
_ADVICE = {
    errno.ENOSPC: "the disk is full; free some space, then run the same command again",
    errno.EDQUOT: "the disk quota is used up; free some space, then run the same command again",
    errno.EROFS: "the file system is read-only; make it writable, or write somewhere else",
    errno.EACCES: "permission denied; give this user write access, or write somewhere else",
    errno.EPERM: "not permitted; give this user write access, or write somewhere else",
}
DISK_ERRORS = frozenset(_ADVICE)


def user_error_in(exc: BaseException) -> UserError | None:
    """The one line a failure is told in, looking inside exception groups: a
    UserError raised in it, else a full, read-only or foreign disk under a file
    arena wrote; None for a failure that is a bug and keeps its traceback."""
    leaves = list(exception_leaves(exc))
    for leaf in leaves:
        if isinstance(leaf, UserError):
            return leaf
    for leaf in leaves:
        if isinstance(leaf, OSError) and leaf.errno in DISK_ERRORS and leaf.filename:
            return disk_error(leaf)
    return None


def exception_leaves(exc: BaseException) -> Iterator[BaseException]:
    """The exceptions in ``exc``, through any nesting of exception groups."""
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            yield from exception_leaves(inner)
    else:
        yield exc


def disk_error(exc: OSError, path: Path | str | None = None) -> UserError:
    """One line for an OSError on a file arena writes: the file, the cause, what to do."""
    where = path if path is not None else exc.filename
    advice = _ADVICE.get(exc.errno or 0)
    if advice is None:
        advice = f"{exc.strerror or exc}; fix that, then run the same command again"
    return UserError(f"cannot write {where}: {advice} (what was written before is kept)")


def write_whole(path: Path, data: bytes) -> None:
    """Write ``path`` whole or not at all: a temporary name beside it, fsync, rename.

    A full disk or a crash leaves the old file (or none), never a short one.
    """
    # Hidden, no record's name, and one per process (arena rate --out may write
    # the standings a run writes too).
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o666)
        try:
            write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        # Name the file meant, not its temporary name.
        raise OSError(exc.errno, exc.strerror, str(path)) from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def sync_file_system(fd: int) -> bool:
    """Put everything written on the file system of ``fd`` on the disk, in one call
    (Linux's ``syncfs``): one flush of the disk for a group of new files, where an
    fsync of each flushes it once a file.  False, having done nothing, where there
    is no ``syncfs``: then fsync each file.  Raises OSError if the kernel reports
    a write to that file system failed."""
    syncfs = _syncfs()
    if syncfs is None:
        return False
    if syncfs(fd) != 0:
        import ctypes

        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))
    return True


_SYNCFS: list[Any] = []  # [the libc function or None], looked up once


def _syncfs() -> Any:
    if not _SYNCFS:
        function = None
        if sys.platform.startswith("linux"):
            import ctypes

            try:
                function = ctypes.CDLL(None, use_errno=True).syncfs
                function.argtypes, function.restype = [ctypes.c_int], ctypes.c_int
            except (OSError, AttributeError):
                function = None
        _SYNCFS.append(function)
    return _SYNCFS[0]


def write_all(fd: int, data: bytes) -> None:
    """os.write until every byte is written (a write may be short)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
