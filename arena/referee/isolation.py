"""Isolation, in one place: the command line that runs a bot's program, or its
build, under the keeper (launch.py: limits, CPUs, nothing left behind) and, with
``--sandbox``, inside bubblewrap (sandbox.py). The watchdog (watchdog.py) then
measures what it uses; ``process.open_bot_process`` and ``bots.build_bot`` are
the two users.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Final

from arena.referee.limits import BotLimits, launcher_argv
from arena.referee.sandbox import Sandbox, sandbox_argv

NO_LIMITS: Final = BotLimits(memory_mb=None, cpu_seconds=None, file_size_mb=None,
                             open_files=None, disk_mb=None)


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
