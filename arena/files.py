"""Writing files whole or not at all, and saying in one line why a write failed."""

from __future__ import annotations

import contextlib
import errno
import os
import re
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
    fsync of each flushes it once a file.  False, having done nothing, where
    ``syncfs`` cannot be trusted with that: then fsync each file.  Raises OSError
    if the kernel reports a write to that file system failed."""
    syncfs = _syncfs()
    if syncfs is None or not _syncs_to_disk(os.fstat(fd).st_dev):
        return False
    if syncfs(fd) != 0:
        import ctypes

        code = ctypes.get_errno()
        if code in (errno.ENOSYS, errno.EPERM):  # refused (a seccomp filter): fsyncs do
            _SYNCFS[0] = None
            return False
        raise OSError(code, os.strerror(code))
    return True


_SYNCFS: list[Any] = []  # [the libc function or None], looked up once
# The local file systems whose syncfs puts their files on their disk, as an fsync
# of each would.  Not FUSE (its syncfs reaches the disk only for virtiofs), nor
# NFS, overlay (before Linux 5.15 its syncfs hid the upper one's write errors) and
# whatever else: there, an fsync of each file.
_SYNCFS_FILE_SYSTEMS = frozenset({"ext2", "ext3", "ext4", "xfs", "btrfs", "f2fs", "zfs",
                                  "tmpfs", "ramfs"})
_SYNCS_TO_DISK: dict[int, bool] = {}  # st_dev -> _syncs_to_disk


def _syncfs() -> Any:
    if not _SYNCFS:
        function = None
        # Before Linux 5.8, syncfs never reported a failed write (an fsync does).
        if sys.platform.startswith("linux") and _kernel_version() >= (5, 8):
            import ctypes

            try:
                function = ctypes.CDLL(None, use_errno=True).syncfs
                function.argtypes, function.restype = [ctypes.c_int], ctypes.c_int
            except (OSError, AttributeError):
                function = None
        _SYNCFS.append(function)
    return _SYNCFS[0]


def _kernel_version() -> tuple[int, ...]:
    found = re.match(r"(\d+)\.(\d+)", os.uname().release)
    return (0, 0) if found is None else (int(found[1]), int(found[2]))


def _syncs_to_disk(device: int) -> bool:
    found = _SYNCS_TO_DISK.get(device)
    if found is None:
        found = _SYNCS_TO_DISK[device] = file_system_type(device) in _SYNCFS_FILE_SYSTEMS
    return found


def file_system_type(device: int) -> str | None:
    """The type of the file system mounted from ``device`` (an ``st_dev``), as
    /proc/self/mountinfo names it ("ext4", "fuse.sshfs"); None if not found."""
    wanted = f"{os.major(device)}:{os.minor(device)}"
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as mounts:
            for line in mounts:
                fields = line.split()
                if len(fields) > 2 and fields[2] == wanted and "-" in fields[6:]:
                    after = fields.index("-", 6) + 1
                    return fields[after] if after < len(fields) else None
    except OSError:
        pass
    return None


def write_all(fd: int, data: bytes) -> None:
    """os.write until every byte is written (a write may be short)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
