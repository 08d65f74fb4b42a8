"""Per-bot resource limits: what is limited, how it is enforced, how the referee learns of it.

Every bot process runs under ``BotLimits`` (contest defaults below; the CLI can
change each, and ``None`` lifts one):

* **Memory**, 1024 MB: the resident set size (RSS) of all the bot's processes
  together, plus the memfds and tmpfs files they hold and (``--sandbox``) their
  private ``/tmp`` and ``/dev/shm``, measured every 50 ms by a watchdog task in
  the referee (``watchdog.py``). Over it, all of them are killed (SIGKILL) and
  ``limit_hit`` says ``memory 1024 MB``. The kill is the keeper's (``SIGUSR1``,
  see launch.py): it kills and reaps every descendant, those born meanwhile
  included, until none is left, then dies of SIGKILL; the referee's reader
  learns of it at once.
* **CPU time**, 60 s per game: user + system time of all the bot's processes
  (children it has reaped included), counted by the same watchdog from the
  last ``BotProcess.reset_cpu()``, which the referee calls as each game ends
  (and before a new process's first game): what a bot burns between two games
  counts against the next one. Over it: killed, ``cpu 60 s``; killed between
  games, the bot forfeits its next game with that fault.
* **File size**, 64 MB: ``RLIMIT_FSIZE``. A larger write fails (EFBIG), and a
  program that does not ignore SIGXFSZ (the default) is killed by it:
  ``file size 64 MB``; one that ignores it (Python) and then ends with an error,
  leaving a file at the limit in its scratch directory, hit it too.
* **Disk**, 256 MB: the files in its scratch directory and (``--sandbox``) its
  ``/tmp``, a tmpfs one megabyte bigger than the quota; measured by the
  watchdog every 0.5 s and when the bot ends with an error: ``disk 256 MB``.
* **Processes**, 256: the tasks (threads) of all the bot's processes together,
  counted by the same watchdog at each look; under ``--sandbox`` bubblewrap's
  two processes are the bot's too. Over it: all killed, ``processes 256``. A
  thread or fork bomb grows for one look (50 ms) at most before the kill.
  ``RLIMIT_NPROC`` would not do: it counts every process of the user.
* **Open files**, 256 per process: ``RLIMIT_NOFILE``. One more ``open`` fails
  (EMFILE); what the bot does then is up to it.
* **Core dumps**: always off, ``RLIMIT_CORE`` = 0.

The ``RLIMIT_*`` values are set by a tiny keeper (``launch.py``): the bot
process starts as ``python -I -S launch.py ...``, which sets them (soft = hard),
then forks and execs the bot (SIGPIPE and SIGXFSZ back at their defaults), so
nothing runs between fork and exec in the referee (no ``preexec_fn``). The
keeper stays as the bot's parent: a child subreaper, it adopts every orphan of
the bot, and it kills everything left of the bot when the bot ends, when the
referee SIGTERMs it and when the referee dies (see launch.py). It costs 10-40 ms
per start, and a bot process serves many games. When arena runs as root, the
keeper also removes ``CAP_SYS_RESOURCE`` from the bounding set, so a bot
cannot raise its hard limits again.

Why not the obvious kernel limits: ``RLIMIT_AS`` caps address space, not memory,
and Go, the JVM and node reserve gigabytes they never touch, so they fail to
start under it. ``RLIMIT_CPU`` counts a process's whole life, and a bot process
plays many games. A cgroup (``memory.max``) would be exact, but needs a writable
cgroup v2 hierarchy with the memory controller delegated to arena, which CI
containers and many hosts do not give; the watchdog works wherever ``/proc``
does.

What counts as the bot, and what the watchdog does not see: ``watchdog.py``.
Without ``--sandbox``, the bot runs as the same user as its keeper and may kill
it; then a process that left the bot's group and is orphaned (a daemon: double
fork and ``setsid``) escapes the accounting, as it escapes ``BotProcess.close``.
Contests with untrusted code should use ``--sandbox``, where the bot cannot see
its keeper and nothing escapes.

The referee turns ``BotProcess.limit_hit`` (e.g. ``"memory 256 MB"``) into a
fault of kind ``limit``.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Final

import attrs

DEFAULT_MEMORY_MB: Final = 1024
DEFAULT_CPU_SECONDS: Final = 60.0
DEFAULT_FILE_SIZE_MB: Final = 64
DEFAULT_OPEN_FILES: Final = 256
DEFAULT_DISK_MB: Final = 256
DEFAULT_PROCESSES: Final = 256
WATCH_INTERVAL: Final = 0.05
_SCAN_CAP: Final = 10_000  # directory entries looked at in a bot's folder, at most

LAUNCHER: Final = Path(__file__).with_name("launch.py")
MB: Final = 1 << 20


def _positive_or_none(_instance: object, attribute: attrs.Attribute, value: object) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ValueError(f"{attribute.name} must be a positive number or None, not {value!r}")


def _positive(_instance: object, attribute: attrs.Attribute, value: float) -> None:
    if not value > 0:
        raise ValueError(f"{attribute.name} must be positive, not {value!r}")


@attrs.frozen
class BotLimits:
    """The limits of one bot process; ``None`` lifts a limit. Core dumps are always off.

    ``memory_mb``: RSS of all its processes together, and the files it keeps in
    memory (see watchdog.py). ``disk_mb``: its scratch directory (and sandboxed,
    its ``/tmp``). ``processes``: tasks (threads) of all its processes together.
    ``cpu_seconds``: CPU time of
    all its processes since ``BotProcess.reset_cpu()`` (per game: the referee
    calls it as each game ends). ``file_size_mb``: the largest file it
    may write. ``open_files``: file descriptors per process. ``watch_interval``:
    seconds between two looks of the watchdog.
    """

    memory_mb: int | None = attrs.field(default=DEFAULT_MEMORY_MB, validator=_positive_or_none)
    cpu_seconds: float | None = attrs.field(
        default=DEFAULT_CPU_SECONDS, validator=_positive_or_none
    )
    file_size_mb: int | None = attrs.field(
        default=DEFAULT_FILE_SIZE_MB, validator=_positive_or_none
    )
    open_files: int | None = attrs.field(default=DEFAULT_OPEN_FILES, validator=_positive_or_none)
    disk_mb: int | None = attrs.field(default=DEFAULT_DISK_MB, validator=_positive_or_none)
    processes: int | None = attrs.field(default=DEFAULT_PROCESSES, validator=_positive_or_none)
    watch_interval: float = attrs.field(default=WATCH_INTERVAL, validator=_positive)

    @property
    def watched(self) -> bool:
        """Whether a watchdog is needed (a memory, CPU, disk or processes limit is set)."""
        return (self.memory_mb is not None or self.cpu_seconds is not None
                or self.disk_mb is not None or self.processes is not None)

    def rlimits(self) -> dict[str, int]:
        """The launcher's ``RLIMIT_*`` settings, by its option names."""
        values = {"core": 0}
        if self.file_size_mb is not None:
            values["fsize"] = int(self.file_size_mb * MB)
        if self.open_files is not None:
            values["nofile"] = int(self.open_files)
        return values

    def describe(self) -> str:
        """One line for logs: ``memory 1024 MB, cpu 60 s, file size 64 MB, open files 256, ...``."""
        parts = [
            f"memory {_num(self.memory_mb)} MB" if self.memory_mb is not None else None,
            f"cpu {_num(self.cpu_seconds)} s" if self.cpu_seconds is not None else None,
            f"file size {_num(self.file_size_mb)} MB" if self.file_size_mb is not None else None,
            f"open files {self.open_files}" if self.open_files is not None else None,
            f"disk {_num(self.disk_mb)} MB" if self.disk_mb is not None else None,
            f"processes {self.processes}" if self.processes is not None else None,
            "no core dumps",
        ]
        return ", ".join(p for p in parts if p is not None)


def _num(value: float) -> str:
    return f"{value:g}"


def launcher_argv(limits: BotLimits, *, status_fd: int | None = None,
                  cpus: Iterable[int] | None = None, handoff: bool = False) -> list[str]:
    """The command line that applies ``limits`` and then runs what follows it.

    Append the program and its arguments. ``status_fd`` (inherited by the child,
    e.g. through ``pass_fds``) receives the error if the exec fails; see launch.py.
    ``cpus``: the keeper pins itself to these CPUs before it starts the bot, so the
    bot and everything it starts run on them only. ``handoff``: the program gets
    the bot's stdin and stdout as fds 3 and 4 (for bwrap; see launch.py).
    """
    options = [f"{name}={value}" for name, value in limits.rlimits().items()]
    options.append("dropcap=1")
    if status_fd is not None:
        options.append(f"status={status_fd}")
    if cpus is not None:
        options.append("cpus=" + ",".join(str(cpu) for cpu in sorted(cpus)))
    if handoff:
        options.append("handoff=1")
    return [sys.executable or "python3", "-I", "-S", str(LAUNCHER), *options, "--"]


def exit_limit(limits: BotLimits, returncode: int | None, *, sandboxed: bool = False) -> str | None:
    """The limit a bot's exit status shows it hit, if any: a death by SIGXFSZ.

    Inside ``--sandbox`` the status comes from bwrap, which reports a death by
    signal N as status 128 + N.
    """
    if limits.file_size_mb is None or returncode is None:
        return None
    if returncode == -signal.SIGXFSZ or (sandboxed and returncode == 128 + signal.SIGXFSZ):
        return f"file size {_num(limits.file_size_mb)} MB"
    return None


def full_file_limit(limits: BotLimits, folders: Iterable[Path | int],
                    since: float) -> str | None:
    """``file size N MB`` if a file in ``folders`` written since ``since`` (a time) is
    at the limit.

    For a bot that ended with an error: Python (and other runtimes) ignore SIGXFSZ,
    so a write past the limit fails (EFBIG) instead of killing the bot, and the bot
    exits through its error. The file left at exactly the limit says why. A folder
    given as an open directory fd (a sandbox's ``/tmp``) is looked at, not the
    folders inside it. Looks at ``_SCAN_CAP`` entries at most, follows no symlink.
    """
    if limits.file_size_mb is None:
        return None
    size = int(limits.file_size_mb * MB)
    todo: list[str | int] = [f if isinstance(f, int) else str(f) for f in folders]
    seen = 0
    while todo and seen < _SCAN_CAP:
        try:
            with os.scandir(todo.pop()) as entries:
                for entry in entries:
                    seen += 1
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            if os.path.isabs(entry.path):  # not under a directory fd
                                todo.append(entry.path)
                        elif entry.is_file(follow_symlinks=False):
                            info = entry.stat(follow_symlinks=False)
                            if info.st_size >= size and info.st_mtime >= since:
                                return f"file size {_num(limits.file_size_mb)} MB"
                    except OSError:
                        continue
        except OSError:
            continue
    return None
