"""Isolation, in one place: the command line that runs a bot's program, or its
build, under the keeper (launch.py: limits, CPUs, nothing left behind) and, with
``--sandbox``, inside bubblewrap (sandbox.py) (``isolated_argv``, for
``process.open_bot_process`` and ``bots.build_bot``); and, while a bot runs, its
``Guard``: the watchdog (watchdog.py) that measures what it uses, the limit it
hit, and the kill of all of it by its keeper.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Final

from arena.referee.limits import BotLimits, exit_limit, full_file_limit, launcher_argv
from arena.referee.sandbox import Sandbox, sandbox_argv
from arena.referee.watchdog import Watchdog

NO_LIMITS: Final = BotLimits(memory_mb=None, cpu_seconds=None, file_size_mb=None,
                             open_files=None, disk_mb=None, processes=None)


def isolated_argv(
    argv: Sequence[str],
    *,
    limits: BotLimits | None,
    sandbox: Sandbox | None,
    shown: Path | None,
    workdir: Path,
    status_fd: int | None = None,
    cpus: Iterable[int] | None = None,
    network: bool = False,
    pipes: bool = True,
) -> list[str]:
    """``argv`` run under the keeper with ``limits`` (all lifted if None), inside
    the sandbox if one is given: ``shown`` read-only, ``workdir`` writable.

    ``pipes``: stdin and stdout are the protocol's pipes, which must look closed
    to the referee once the program has closed them, so the keeper hands them to
    bwrap aside (launch.py ``handoff``). ``network``: the sandbox keeps the
    host's network (a build that may download). Raises ``SandboxError`` if the
    program would not be visible inside the sandbox.
    """
    handoff = sandbox is not None and pipes
    if sandbox is not None:
        argv = sandbox_argv(argv, bot_path=shown, scratch_dir=workdir,
                            sandbox=sandbox.sized_for(limits), handoff=handoff,
                            network=network)
    keeper = launcher_argv(limits or NO_LIMITS, status_fd=status_fd, cpus=cpus, handoff=handoff)
    return [*keeper, *argv]


class Guard:
    """Isolation's side of one running bot: its watchdog, the limit it hit, and the
    kill of its whole process tree by its keeper. ``process.BotProcess`` holds one
    and asks it; the protocol over the pipes stays in process.py.
    """

    def __init__(self, pid: int, limits: BotLimits | None, *, kept: bool, sandboxed: bool,
                 scratch_dir: Path | None) -> None:
        self.pid = pid  # the keeper, if kept
        self.limits = limits
        self.kept = kept
        self.sandboxed = sandboxed
        self.scratch_dir = scratch_dir
        self.hit: str | None = None  # the limit the watchdog killed it for
        self.watchdog: Watchdog | None = None
        if limits is not None and limits.watched:
            self.watchdog = Watchdog(pid, limits, keeper=kept, sandboxed=sandboxed,
                                     scratch_dir=scratch_dir)
        self._started = time.time()
        self._at_exit: str | None = None  # looked for once, when it has ended with an error

    def limit_hit(self, returncode: int | None) -> str | None:
        """The limit the bot hit: the watchdog's, SIGXFSZ, or a file or a sandbox's
        ``/tmp`` left full by a bot that ended with an error (see process.limit_hit)."""
        if self.hit is not None or self.limits is None:
            return self.hit
        found = exit_limit(self.limits, returncode, sandboxed=self.sandboxed)
        if found is None and returncode not in (None, 0) and self.scratch_dir is not None:
            if self._at_exit is None:
                self._at_exit = self._limit_at_exit() or ""
            found = self._at_exit or None
        return found

    def _limit_at_exit(self) -> str | None:
        # A bot that ended with an error may have died of a failed write: EFBIG
        # past the file size limit, or ENOSPC in its sandbox's full /tmp.
        assert self.limits is not None and self.scratch_dir is not None
        held = [] if self.watchdog is None else self.watchdog.tmpfs_folders()
        found = full_file_limit(self.limits, [self.scratch_dir, *held], self._started)
        if found is None and self.watchdog is not None and self.limits.disk_mb is not None:
            self.watchdog.measure_disk()
            found = self.watchdog.exceeded()
        return found

    def kill(self, pids: Iterable[int]) -> None:
        """End a bot over its limit: its keeper (a subreaper, so every orphan of the bot
        is its child) kills and reaps the whole tree until nothing is left, then dies
        of SIGKILL. Not a kill of the process group, which would take the keeper
        first and let what it would adopt escape. ``pids`` (the bot at the watchdog's
        last look) die now, so that it stops growing meanwhile."""
        try:
            os.kill(self.pid, signal.SIGUSR1)
        except ProcessLookupError:
            pass
        for pid in pids:
            if pid != self.pid:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass

    def close(self, returncode: int | None) -> None:
        """Once the bot has ended: what limit it hit is settled now (a sandbox's
        ``/tmp`` is still held), then the watchdog lets go (watchdog.close)."""
        self.limit_hit(returncode)
        if self.watchdog is not None:
            self.watchdog.close()
