"""The watchdog: what a bot's processes use, from ``/proc``, looked at every tick.

One look (``Watchdog.sample``) measures, for one bot:

* **memory**: the resident set size (RSS) of all its processes (not its keeper),
  plus the files it keeps in memory rather than on disk: every ``memfd`` and
  every file on a tmpfs (``/dev/shm``, ...) that one of its processes holds
  open, each file once (by device and inode), at its allocated size; and under
  ``--sandbox`` all that is in its private ``/tmp`` and ``/dev/shm`` (both
  tmpfs, measured with ``statvfs`` through ``/proc/<pid>/root``); without
  it, the System V shared memory segments made by one of its processes (from
  ``/proc/sysvipc/shm``, which shows only the reader's IPC namespace: inside
  the sandbox's own they are not seen), at their resident + swapped size;
* **CPU**: user + system time of all its processes, reaped children included;
* **processes**: the tasks (threads) of all its processes together (the
  ``num_threads`` of each one's ``stat``);
* **disk**, every ``DISK_EVERY`` looks: the blocks of every file under its
  scratch directory (each inode once; at most ``FOLDER_CAP`` entries, more is
  over any quota), plus under ``--sandbox`` its private ``/tmp``; and, with
  the files held open, every deleted file one of its processes holds open
  (in no folder, yet on disk until closed), each once, on any file system but
  the tmpfs counted as memory.

What counts as the bot: its process, its process group, and every descendant of
either (so also a child that started its own session, an orphan the keeper
adopted, and everything inside ``--sandbox``, where all processes descend from
bwrap). Under the keeper (a child subreaper, so every descendant stays in its
tree) a look reads only the keeper's tree, walking down
``/proc/<pid>/task/<tid>/children``; without it, or on a kernel without those
files, one scan of all of ``/proc`` per tick serves all the bots of a referee.

Not covered, stated rather than hidden: a bot can overshoot a limit by what it
takes between two looks (50 ms; 100 ms for files held open, 0.5 s for disk);
RSS counts pages shared between the bot's processes once per process, and a
tmpfs file or memfd that a process both maps and holds open counts twice, and
so does a System V segment while attached;
without ``--sandbox``, a file on the host's ``/dev/shm`` (or another shared
tmpfs) that the bot was seen to hold, written since it started, is removed
when it ends; one it wrote and closed between two looks (or wrote to the
host's ``/tmp``) cannot be told from anyone else's: it is neither counted nor
removed. ``--sandbox`` gives each bot its own ``/dev/shm`` and ``/tmp``, which
end with it; they are held open from the watchdog's first look after the
sandbox is up (within 50 ms), so a bot that fills its ``/tmp`` and dies sooner
is not seen to have. Without ``--sandbox``, the segments a bot made are removed
when it ends; one made by a process that lived less than a look is not seen
(its creator was never one of the bot's), and a pid of the bot reused by
another process that makes a segment while the bot runs would be taken for
the bot's.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from stat import S_ISDIR, S_ISREG
from typing import Final

import attrs
import trio

from arena.referee.limits import MB, BotLimits, _num

_PAGE: Final = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_TICKS: Final = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
DISK_EVERY: Final = 10  # looks between two measures of the scratch directory
# Looks between two looks at the bot's open files (/proc/PID/fd: ~0.1 ms a process).
FILES_EVERY: Final = 2
FOLDER_CAP: Final = 20_000  # entries of a scratch directory measured, at most
SANDBOX_TMPFS: Final = ("tmp", "dev/shm")  # a sandbox's private tmpfs mounts


# ------------------------------------------------------------------ /proc


@attrs.frozen
class ProcInfo:
    """What the watchdog needs of one process, from ``/proc/<pid>/stat``."""

    ppid: int
    pgrp: int
    state: str
    cpu_ticks: int  # utime + stime + cutime + cstime, in clock ticks
    rss_pages: int
    threads: int = 1


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
            threads=int(fields[17]),
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


def _children_of(pid: int, threads: int) -> list[int]:
    # A child is listed under the thread that forked it; most bots have one thread,
    # whose id is the pid, so the task folder need not be listed.
    if threads == 1:
        tids = [str(pid)]
    else:
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            return []  # gone
    found = []
    for tid in tids:
        try:
            fd = os.open(f"/proc/{pid}/task/{tid}/children", os.O_RDONLY)
        except OSError:
            continue  # the thread or the process is gone
        try:
            data = chunk = os.read(fd, 65536)
            while len(chunk) == 65536:  # thousands of children: read on to the end
                chunk = os.read(fd, 65536)
                data += chunk
        except OSError:
            continue
        finally:
            os.close(fd)
        found.extend(int(child) for child in data.split())
    return found


# Does this kernel list a thread's children (CONFIG_PROC_CHILDREN)?
TREE_WALK: Final = os.path.exists(f"/proc/{os.getpid()}/task/{os.getpid()}/children")


def read_tree(root: int) -> ProcessTable:
    """A table of ``root`` and its descendants only: a few files per process
    instead of every process of the machine. Needs ``TREE_WALK``."""
    stats: dict[int, bytes] = {}
    todo = [root]
    while todo:
        pid = todo.pop()
        if pid in stats or (stat := _read_raw(pid)) is None:
            continue
        stats[pid] = stat
        info = parse_stat(stat)
        todo.extend(_children_of(pid, 1 if info is None else info.threads))
    # A pid listed as a child but reused by another process before its stat was
    # read is in stats, but not under root by its parent pid: members() skips it.
    return ProcessTable(stats)


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


# ------------------------------------------------------ files held in memory


def _host_tmpfs() -> tuple[str, ...]:
    """Mount points of the host's tmpfs (and other memory-backed) filesystems."""
    points = []
    try:
        with open("/proc/self/mounts", encoding="utf-8", errors="replace") as mounts:
            for line in mounts:
                fields = line.split()
                if len(fields) > 2 and fields[2] in ("tmpfs", "ramfs", "hugetlbfs"):
                    points.append(fields[1].replace("\\040", " ").rstrip("/") + "/")
    except OSError:
        pass
    return tuple(points)


HOST_TMPFS: Final = _host_tmpfs()


@attrs.frozen
class HeldFiles:
    """What a bot's open files hold that no folder shows, in bytes."""

    memory: int  # memfds and files on a tmpfs
    deleted: int  # deleted files elsewhere (on disk): space freed only when closed


def held_files(pids: Iterable[int], *, sandboxed: bool = False,
               in_memory: Iterable[int] = (),
               shared: dict[str, tuple[int, int]] | None = None,
               since: float = 0.0) -> HeldFiles:
    """The distinct memfds and tmpfs files these processes hold open, and the
    regular files they hold open that are deleted (each file once, by device and
    inode), at their allocated size.

    Inside a sandbox only memfds count as memory: its tmpfs mounts (devices
    ``in_memory``) are measured whole instead, deleted files in them too.
    ``shared`` collects the host's tmpfs files (path: device and inode) among
    them changed since ``since`` (a time): the bot's own, to remove when it ends.
    """
    skip = set(in_memory)
    seen: set[tuple[int, int]] = set()
    memory = deleted = 0
    for pid in pids:
        base = f"/proc/{pid}/fd"
        try:
            fds = os.listdir(base)
        except OSError:
            continue  # gone, or not ours to look at
        for fd in fds:
            path = f"{base}/{fd}"
            try:
                target = os.readlink(path)
            except OSError:
                continue
            on_host = not sandboxed and target.startswith(HOST_TMPFS)
            in_memfd = target.startswith("/memfd:")
            gone = target.endswith(" (deleted)")
            if not (in_memfd or on_host or gone):
                continue
            try:
                info = os.stat(path)
            except OSError:
                continue
            key = (info.st_dev, info.st_ino)
            if not S_ISREG(info.st_mode) or key in seen:
                continue
            if in_memfd or on_host:
                seen.add(key)
                memory += info.st_blocks * 512
                if on_host and shared is not None and info.st_ctime >= since:
                    shared[target] = key
            elif info.st_nlink == 0 and info.st_dev not in skip:
                seen.add(key)
                deleted += info.st_blocks * 512
    return HeldFiles(memory=memory, deleted=deleted)


def remove_left(files: dict[str, tuple[int, int]]) -> None:
    """Remove the host tmpfs files a bot held (``held_in_memory``'s ``shared``) that
    are still there: the same file (device and inode) at the same path."""
    for path, key in files.items():
        try:
            info = os.stat(path, follow_symlinks=False)
            if (info.st_dev, info.st_ino) == key:
                os.unlink(path)
        except OSError:
            continue


# ------------------------------------------------ System V shared memory

SYSV_SHM: Final = "/proc/sysvipc/shm"  # the segments of the reader's IPC namespace
IPC_RMID: Final = 0


@attrs.frozen
class Segment:
    """One System V shared memory segment, from a line of ``/proc/sysvipc/shm``."""

    shmid: int
    cpid: int  # the process that created it
    ctime: int  # when it was created (or its owner last changed), in seconds
    size: int  # bytes it holds: resident + swapped (its nominal size on old kernels)


def read_segments(path: str = SYSV_SHM) -> list[Segment]:
    """The segments listed in ``path``; none if it cannot be read."""
    try:
        with open(path, "rb") as listing:
            lines = listing.read().splitlines()[1:]  # the first is the header
    except OSError:
        return []
    found = []
    for line in lines:
        # key shmid perms size cpid lpid nattch uid gid cuid cgid atime dtime ctime rss swap
        fields = line.split()
        try:
            size = int(fields[14]) + int(fields[15]) if len(fields) >= 16 else int(fields[3])
            found.append(Segment(shmid=int(fields[1]), cpid=int(fields[4]),
                                 ctime=int(fields[13]), size=size))
        except (IndexError, ValueError):
            continue
    return found


# Like the process table: one read serves every watchdog that looks within half an
# interval of it.
_shared_segments: tuple[float, list[Segment]] | None = None


def _all_segments(max_age: float) -> list[Segment]:
    global _shared_segments
    now = time.monotonic()
    if _shared_segments is not None and now - _shared_segments[0] <= max_age:
        return _shared_segments[1]
    found = read_segments()
    _shared_segments = (now, found)
    return found


def remove_segments(shmids: Iterable[int]) -> None:
    """Mark these segments for removal (``shmctl IPC_RMID``): gone once the last
    process attached to one detaches."""
    import ctypes  # only a bot that made segments needs it

    libc = ctypes.CDLL(None, use_errno=True)
    for shmid in shmids:
        libc.shmctl(ctypes.c_int(shmid), ctypes.c_int(IPC_RMID), None)


def folder_usage(folder: Path, cap: int = FOLDER_CAP) -> int | None:
    """Bytes of disk the files under ``folder`` take (each inode once); None past
    ``cap`` entries. Follows no symlink."""
    seen: set[tuple[int, int]] = set()
    todo, entries, total = [str(folder)], 0, 0
    while todo:
        try:
            with os.scandir(todo.pop()) as found:
                for entry in found:
                    entries += 1
                    if entries > cap:
                        return None
                    try:
                        info = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    if S_ISDIR(info.st_mode):
                        todo.append(entry.path)
                    key = (info.st_dev, info.st_ino)
                    if key not in seen:
                        seen.add(key)
                        total += info.st_blocks * 512
        except OSError:
            continue
    return total


def _used(fd: int) -> int:
    try:
        info = os.statvfs(fd)
    except OSError:
        return 0
    return (info.f_blocks - info.f_bfree) * info.f_frsize


# ---------------------------------------------------------------- watchdog


class Watchdog:
    """Watches the memory, CPU, disk and processes of one bot (its process tree) and says when
    it is over a limit.

    ``sample`` takes one look; ``run`` looks every ``limits.watch_interval`` until
    a limit is exceeded, then calls ``on_hit`` once and returns. ``close`` lets go
    of the sandbox's tmpfs mounts (held open so they can be measured to the end).
    """

    def __init__(self, leader: int, limits: BotLimits, *, keeper: bool = False,
                 sandboxed: bool = False, scratch_dir: Path | None = None) -> None:
        self.leader = leader
        self.limits = limits
        self.keeper = keeper  # the leader is the keeper (launch.py): its memory is not the bot's
        self.sandboxed = sandboxed
        self.scratch_dir = scratch_dir
        self.members: frozenset[int] = frozenset({leader})
        self.memory = 0  # bytes, at the last look
        self.memory_peak = 0
        self.tasks = 0  # threads of all its processes, at the last look
        self._folders: int | None = 0  # disk bytes, at the last measure; None: too many files
        self._deleted = 0  # bytes of deleted files it holds open, at the last look at fds
        self._cpu_total = 0.0  # seconds; never decreases (see sample)
        self._cpu_base = 0.0
        self._looks = 0
        self._tree: tuple[float, ProcessTable] | None = None  # the last table of the keeper's tree
        self._held = 0  # bytes in memfds and tmpfs files held open, at the last look at fds
        self._shm = 0  # bytes in its System V shared memory segments, at the last look
        # Every process of the bot ever seen (not its keeper): whose segments are its own.
        self._pids: set[int] = set()
        self._started = time.time()
        # Files of the host's /dev/shm (and other tmpfs) seen held by the bot, written
        # since it started: removed when it ends (see close).
        self.shared_files: dict[str, tuple[int, int]] = {}
        self._tmpfs: dict[str, int] = {}  # the sandbox's tmpfs mounts, by name: directory fds
        self._tmpfs_devices: set[int] = set()  # and their devices

    @property
    def disk(self) -> int | None:
        """Bytes of disk used (as of the last looks); None: too many files to tell."""
        return None if self._folders is None else self._folders + self._deleted

    @property
    def cpu_used(self) -> float:
        """CPU seconds used since the last ``reset_cpu`` (as of the last look)."""
        return self._cpu_total - self._cpu_base

    def reset_cpu(self) -> None:
        """Start a new CPU budget: from now on the bot may use ``cpu_seconds`` more."""
        # The watchdog's last look is recent enough (the bot idles between games);
        # a fresh one for every seat of every game costs a scan of /proc (~0.3 ms)
        # without the keeper, a walk of its tree (tens of us) with it.  With the
        # keeper, a look at the same table of its tree gives the same CPU total:
        # no look then (it would also look at files and disk once a game, not
        # once every few intervals).
        tree, interval = self._tree, self.limits.watch_interval
        if not (self.keeper and TREE_WALK and tree is not None
                and time.monotonic() - tree[0] <= interval):
            self.sample(max_age=interval)
        self._cpu_base = self._cpu_total

    def sample(self, max_age: float = 0.0) -> str | None:
        """Look at the bot's processes; return the limit exceeded (e.g. "memory 256 MB").

        ``max_age``: a table of the processes read that recently will do.
        """
        table = self._read(max_age)
        members = table.members(self.leader)
        self.members = frozenset(members)
        infos = [info for pid in members if (info := table.info(pid)) is not None]
        rss = sum(info.rss_pages for info in infos)
        if self.keeper and (leader := table.info(self.leader)) is not None:
            rss -= leader.rss_pages
        bot = members - {self.leader} if self.keeper else members
        self.tasks = sum(info.threads for pid in bot if (info := table.info(pid)) is not None)
        if self.sandboxed and len(self._tmpfs) < len(SANDBOX_TMPFS):
            self._hold_tmpfs(table)
        tmpfs = {name: _used(fd) for name, fd in self._tmpfs.items()}
        if not self.sandboxed:
            self._pids |= bot
        watch_files = self.limits.memory_mb is not None or self.limits.disk_mb is not None
        if watch_files and self._looks % FILES_EVERY == 0:
            held = held_files(bot, sandboxed=self.sandboxed, in_memory=self._tmpfs_devices,
                              shared=self.shared_files, since=self._started)
            self._held, self._deleted = held.memory, held.deleted
            if not self.sandboxed and self.limits.memory_mb is not None:
                self._shm = sum(segment.size for segment in self._segments(max_age))
        if self.limits.memory_mb is not None:
            rss += (self._held + self._shm + sum(tmpfs.values())) // _PAGE
        self.memory = rss * _PAGE
        self.memory_peak = max(self.memory_peak, self.memory)
        # A process that dies moves its time into its parent's cutime/cstime once
        # reaped; one reaped by an outsider takes its time with it. Keeping the
        # highest total seen means a bot can never get CPU time back.
        cpu = sum(info.cpu_ticks for info in infos) / _TICKS
        self._cpu_total = max(self._cpu_total, cpu)
        if self.limits.disk_mb is not None and self._looks % DISK_EVERY == 0:
            self.measure_disk()
        self._looks += 1
        return self.exceeded()

    def _read(self, max_age: float) -> ProcessTable:
        if not (self.keeper and TREE_WALK):
            return _table(max_age)  # the process group may reach outside any one tree
        now = time.monotonic()
        if self._tree is not None and now - self._tree[0] <= max_age:
            return self._tree[1]
        table = read_tree(self.leader)
        self._tree = (now, table)
        return table

    def measure_disk(self) -> None:
        """The scratch directory and (sandboxed) the private ``/tmp``, into ``disk``."""
        scratch = 0 if self.scratch_dir is None else folder_usage(self.scratch_dir)
        tmp = self._tmpfs.get("tmp")
        self._folders = None if scratch is None else scratch + (0 if tmp is None else _used(tmp))

    def _segments(self, max_age: float = 0.0) -> list[Segment]:
        # Made by one of its processes since it started (a pid seen, then reused
        # by another process that made a segment, would be taken for the bot).
        since = int(self._started)
        return [segment for segment in _all_segments(max_age)
                if segment.cpid in self._pids and segment.ctime >= since]

    def exceeded(self) -> str | None:
        limits = self.limits
        if limits.memory_mb is not None and self.memory > limits.memory_mb * MB:
            return f"memory {_num(limits.memory_mb)} MB"
        if limits.cpu_seconds is not None and self.cpu_used > limits.cpu_seconds:
            return f"cpu {_num(limits.cpu_seconds)} s"
        if limits.disk_mb is not None and (self.disk is None or self.disk > limits.disk_mb * MB):
            return f"disk {_num(limits.disk_mb)} MB"
        if limits.processes is not None and self.tasks > limits.processes:
            return f"processes {limits.processes}"
        return None

    def _hold_tmpfs(self, table: ProcessTable) -> None:
        # keeper -> bwrap -> the namespace's init, whose root is the sandbox's once
        # it has started the bot (its child): mounts are set up by then.
        outer = table.children(self.leader) if self.keeper else [self.leader]
        for init in (pid for o in outer for pid in table.children(o)):
            if not table.children(init):
                continue
            for name in SANDBOX_TMPFS:
                if name not in self._tmpfs:
                    try:
                        fd = os.open(f"/proc/{init}/root/{name}",
                                     os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
                    except OSError:
                        continue
                    self._tmpfs[name] = fd
                    self._tmpfs_devices.add(os.fstat(fd).st_dev)

    def tmpfs_folders(self) -> list[int]:
        """The sandbox's private ``/tmp`` and ``/dev/shm``, as open directory fds (so
        they can be looked into after the bot ended, until ``close``)."""
        return list(self._tmpfs.values())

    def close(self) -> None:
        """Once the bot has ended: let go of the sandbox's tmpfs mounts (their memory
        is freed then), and remove what it was seen to keep in the host's tmpfs and
        the System V shared memory segments its processes made (without the
        sandbox; inside it they end with its IPC namespace)."""
        for fd in self._tmpfs.values():
            os.close(fd)
        self._tmpfs.clear()
        remove_left(self.shared_files)
        self.shared_files.clear()
        if self._pids and (made := [segment.shmid for segment in self._segments()]):
            remove_segments(made)
        self._pids.clear()

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
