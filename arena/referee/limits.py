"""Per-bot resource limits: what is limited, how it is enforced, how the referee learns of it.

Every bot process runs under ``BotLimits`` (contest defaults below; the CLI can
change each, and ``None`` lifts one):

* **Memory**, 1024 MB: the resident set size (RSS) of all the bot's processes
  together, read from ``/proc`` every 50 ms by a watchdog task in the referee.
  Over it, all of them are killed (SIGKILL) and ``limit_hit`` says
  ``memory 1024 MB``. The kill is the keeper's (``SIGUSR1``, see launch.py): it
  kills and reaps every descendant, those born meanwhile included, until none
  is left, then dies of SIGKILL; the referee's reader learns of it at once.
* **CPU time**, 60 s per game: user + system time of all the bot's processes
  (children it has reaped included), counted by the same watchdog from the
  last ``BotProcess.reset_cpu()``, which the referee calls as each game ends
  (and before a new process's first game): what a bot burns between two games
  counts against the next one. Over it: killed, ``cpu 60 s``; killed between
  games, the bot forfeits its next game with that fault.
* **File size**, 64 MB: ``RLIMIT_FSIZE``. A larger write fails (EFBIG), and a
  program that does not ignore SIGXFSZ (the default) is killed by it:
  ``file size 64 MB``.
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

What counts as the bot: its process, its process group, and every descendant of
either (so also a child that started its own session, an orphan the keeper
adopted, and everything inside ``--sandbox``, where all processes descend from
bwrap). The leader of the group is the keeper, whose memory (about 10 MB) is not
counted. One scan of ``/proc`` per tick serves all the bots of a referee.

The watchdog's limits, stated rather than hidden: a bot can overshoot the
memory limit by what it allocates within one tick (50 ms) before it dies; RSS
counts pages shared between the bot's processes once per process, so a bot that
forks workers pays for shared pages more than once; files in a tmpfs
(``--sandbox``'s ``/tmp``, capped by its own size) are not RSS. Without
``--sandbox``, the bot runs as the same user as its keeper and may kill it;
then a process that left the bot's group and is orphaned (a daemon: double fork
and ``setsid``) escapes the accounting, as it escapes ``BotProcess.close``.
Contests with untrusted code should use ``--sandbox``, where the bot cannot see
its keeper and nothing escapes.

The referee turns ``BotProcess.limit_hit`` (e.g. ``"memory 256 MB"``) into a
fault of kind ``limit``.
"""

from __future__ import annotations

import math
import os
import signal
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Final

import attrs
import trio

DEFAULT_MEMORY_MB: Final = 1024
DEFAULT_CPU_SECONDS: Final = 60.0
DEFAULT_FILE_SIZE_MB: Final = 64
DEFAULT_OPEN_FILES: Final = 256
WATCH_INTERVAL: Final = 0.05
_SCAN_CAP: Final = 10_000  # directory entries looked at in a bot's folder, at most

LAUNCHER: Final = Path(__file__).with_name("launch.py")
MB: Final = 1 << 20
_PAGE: Final = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_TICKS: Final = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


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

    ``memory_mb``: RSS of all its processes together. ``cpu_seconds``: CPU time of
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
    watch_interval: float = attrs.field(default=WATCH_INTERVAL, validator=_positive)

    @property
    def watched(self) -> bool:
        """Whether a watchdog is needed (a memory or CPU limit is set)."""
        return self.memory_mb is not None or self.cpu_seconds is not None

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


def full_file_limit(limits: BotLimits, folder: Path, since: float) -> str | None:
    """``file size N MB`` if a file in ``folder`` written since ``since`` (a time) is at the limit.

    For a bot that ended with an error: Python (and other runtimes) ignore SIGXFSZ,
    so a write past the limit fails (EFBIG) instead of killing the bot, and the bot
    exits through its error. The file left at exactly the limit says why. Looks at
    ``_SCAN_CAP`` entries at most, and follows no symlink.
    """
    if limits.file_size_mb is None:
        return None
    size = int(limits.file_size_mb * MB)
    todo, seen = [str(folder)], 0
    while todo and seen < _SCAN_CAP:
        try:
            with os.scandir(todo.pop()) as entries:
                for entry in entries:
                    seen += 1
                    try:
                        if entry.is_dir(follow_symlinks=False):
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


# ------------------------------------------------------------------ /proc


@attrs.frozen
class ProcInfo:
    """What the watchdog needs of one process, from ``/proc/<pid>/stat``."""

    ppid: int
    pgrp: int
    state: str
    cpu_ticks: int  # utime + stime + cutime + cstime, in clock ticks
    rss_pages: int


def parse_stat(stat: bytes) -> ProcInfo | None:
    """Parse the text of ``/proc/<pid>/stat``; None if it is not what it should be."""
    # The command (field 2) is in parentheses and may hold anything, so split
    # after its last ")": state, ppid, pgrp, ... (man 5 proc).
    fields = stat[stat.rfind(b")") + 2 :].split(b" ", 23)
    try:
        return ProcInfo(
            ppid=int(fields[1]),
            pgrp=int(fields[2]),
            state=fields[0].decode("ascii", "replace"),
            cpu_ticks=int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14]),
            rss_pages=max(0, int(fields[21])),
        )
    except (IndexError, ValueError):
        return None


def read_stat(pid: int) -> ProcInfo | None:
    """``/proc/<pid>/stat`` parsed; None if the process is gone."""
    stat = _read_raw(pid)
    return None if stat is None else parse_stat(stat)


def _read_raw(pid: int | str) -> bytes | None:
    try:
        fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY)
    except OSError:
        return None
    try:
        return os.read(fd, 4096)
    except OSError:
        return None
    finally:
        os.close(fd)


class ProcessTable:
    """A snapshot of every process's ``/proc/<pid>/stat``: who is whose child, and
    the details of the few processes asked about (parsed only then, as that is
    most of the cost of a look)."""

    def __init__(self, stats: dict[int, bytes]) -> None:
        self._stats = stats
        self._children: dict[int, list[int]] = {}
        self._groups: dict[int, list[int]] = {}
        for pid, stat in stats.items():
            # Only state, ppid and pgrp: a split that stops there is cheap.
            fields = stat[stat.rfind(b")") + 2 :].split(b" ", 3)
            try:
                ppid, pgrp = int(fields[1]), int(fields[2])
            except (IndexError, ValueError):
                continue
            self._children.setdefault(ppid, []).append(pid)
            self._groups.setdefault(pgrp, []).append(pid)

    @classmethod
    def read(cls) -> ProcessTable:
        try:
            names = os.listdir("/proc")
        except OSError:
            names = []
        stats = {}
        for name in names:
            if name.isdigit() and (stat := _read_raw(name)) is not None:
                stats[int(name)] = stat
        return cls(stats)

    def info(self, pid: int) -> ProcInfo | None:
        stat = self._stats.get(pid)
        return None if stat is None else parse_stat(stat)

    def children(self, pid: int) -> list[int]:
        return list(self._children.get(pid, ()))

    def members(self, leader: int) -> set[int]:
        """``leader``, the members of its process group, and all their descendants."""
        roots = list(self._groups.get(leader, ()))
        if leader in self._stats:
            roots.append(leader)
        found: set[int] = set()
        while roots:
            pid = roots.pop()
            if pid not in found:
                found.add(pid)
                roots.extend(self._children.get(pid, ()))
        return found


# One scan serves every watchdog that looks within half an interval of it: the
# watchdogs wake on the same tick boundaries, so N bots cost one scan per tick.
_shared: tuple[float, ProcessTable] | None = None


def _table(max_age: float) -> ProcessTable:
    global _shared
    now = time.monotonic()
    if _shared is not None and now - _shared[0] <= max_age:
        return _shared[1]
    table = ProcessTable.read()
    _shared = (now, table)
    return table


# ---------------------------------------------------------------- watchdog


class Watchdog:
    """Watches the memory and CPU of one bot (its process tree) and says when it is over.

    ``sample`` takes one look; ``run`` looks every ``limits.watch_interval`` until
    a limit is exceeded, then calls ``on_hit`` once and returns.
    """

    def __init__(self, leader: int, limits: BotLimits, *, keeper: bool = False) -> None:
        self.leader = leader
        self.limits = limits
        self.keeper = keeper  # the leader is the keeper (launch.py): its memory is not the bot's
        self.members: frozenset[int] = frozenset({leader})
        self.memory = 0  # bytes, at the last look
        self.memory_peak = 0
        self._cpu_total = 0.0  # seconds; never decreases (see sample)
        self._cpu_base = 0.0

    @property
    def cpu_used(self) -> float:
        """CPU seconds used since the last ``reset_cpu`` (as of the last look)."""
        return self._cpu_total - self._cpu_base

    def reset_cpu(self) -> None:
        """Start a new CPU budget: from now on the bot may use ``cpu_seconds`` more."""
        # The watchdog's last scan is recent enough (the bot idles between games);
        # a fresh scan of /proc for every seat of every game cost ~0.3 ms each.
        self.sample(max_age=self.limits.watch_interval)
        self._cpu_base = self._cpu_total

    def sample(self, max_age: float = 0.0) -> str | None:
        """Look at the bot's processes; return the limit exceeded (e.g. "memory 256 MB")."""
        table = _table(max_age)
        members = table.members(self.leader)
        self.members = frozenset(members)
        infos = [info for pid in members if (info := table.info(pid)) is not None]
        rss = sum(info.rss_pages for info in infos)
        if self.keeper and (leader := table.info(self.leader)) is not None:
            rss -= leader.rss_pages
        self.memory = rss * _PAGE
        self.memory_peak = max(self.memory_peak, self.memory)
        # A process that dies moves its time into its parent's cutime/cstime once
        # reaped; one reaped by an outsider takes its time with it. Keeping the
        # highest total seen means a bot can never get CPU time back.
        cpu = sum(info.cpu_ticks for info in infos) / _TICKS
        self._cpu_total = max(self._cpu_total, cpu)
        return self.exceeded()

    def exceeded(self) -> str | None:
        limits = self.limits
        if limits.memory_mb is not None and self.memory > limits.memory_mb * MB:
            return f"memory {_num(limits.memory_mb)} MB"
        if limits.cpu_seconds is not None and self.cpu_used > limits.cpu_seconds:
            return f"cpu {_num(limits.cpu_seconds)} s"
        return None

    async def run(
        self,
        running: Callable[[], bool],
        on_hit: Callable[[str, Iterable[int]], None],
    ) -> None:
        """Look every interval while ``running()``; on a hit call ``on_hit(what, pids)``.

        ``running`` must turn false once the leader is reaped: its pid may be
        reused then. ``pids`` are the bot's processes at the last look.
        """
        interval = self.limits.watch_interval
        while True:
            # Wake on multiples of the interval, as every other watchdog does,
            # so that they share one scan of /proc.
            await trio.sleep_until((math.floor(trio.current_time() / interval) + 1) * interval)
            if not running():
                return
            what = self.sample(max_age=interval / 2)
            if what is not None:
                on_hit(what, self.members)
                return
