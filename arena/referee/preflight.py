"""Every bot checked before a tournament's first game: built, then started once.

A bot that cannot start would otherwise forfeit every one of its games, and
the host would learn it from the standings hours later.  So before the first
game every bot is built (``build_all``) and started for one handshake
(``handshake_all``), in parallel, at most ``concurrency`` at a time; each
failure becomes one line that names the bot, says why and what to do.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any, Final

import attrs
import trio

from arena.protocol import codec
from arena.referee.bots import MANIFEST, BotSpec, BotSpecError, build_bot, file_name
from arena.referee.lineup import open_lineup
from arena.referee.logs import stderr_tail
from arena.referee.player import Fault
from arena.referee.sandbox import Sandbox

_ELF: Final = b"\x7fELF"
PREFLIGHT: Final = ".preflight"  # after the bot's name: its log and scratch directory


@attrs.frozen
class Refusal:
    """A bot that cannot play: ``problem`` is its line (a build adds its output below)."""

    bot: str
    problem: str


async def build_all(
    specs: Sequence[BotSpec],
    *,
    concurrency: int,
    say: Callable[[str], None] = lambda line: None,
    sandbox: Sandbox | None = None,
    network: bool = False,
) -> tuple[list[BotSpec], list[Refusal]]:
    """Run every bot's build, at most ``concurrency`` at once, saying ``building X…``;
    in ``sandbox`` if given, with the network if ``network`` (see ``build_bot``).

    Returns the specs as built (``run`` resolved after the build), in the order
    given (a bot whose build failed keeps its spec), and the failed builds.
    """
    limiter = trio.CapacityLimiter(max(1, concurrency))
    built: list[BotSpec] = list(specs)
    refusals: dict[int, Refusal] = {}

    async def build(i: int) -> None:
        async with limiter:
            say(f"building {specs[i].name}…")
            try:
                built[i] = await trio.to_thread.run_sync(
                    partial(build_bot, specs[i], sandbox=sandbox, network=network))
            except BotSpecError as exc:
                refusals[i] = Refusal(specs[i].name, str(exc))

    async with trio.open_nursery() as nursery:
        for i, spec in enumerate(specs):
            if spec.build is not None:
                nursery.start_soon(build, i)
    return built, [refusals[i] for i in sorted(refusals)]


async def handshake_all(
    specs: Sequence[BotSpec],
    *,
    limits: codec.Limits,
    concurrency: int,
    logs: Path,
    scratch: Path,
    process_options: dict[str, Any] | None = None,
) -> list[Refusal]:
    """Start every bot once for its handshake, at most ``concurrency`` at once;
    the bots that failed, in the order given.

    Each bot's stderr goes to ``logs/NAME.preflight.log`` and it runs in
    ``scratch/NAME.preflight``: a scratch directory of its own, so that a file
    it leaves there is not found in its games.
    """
    limiter = trio.CapacityLimiter(max(1, concurrency))
    refusals: dict[int, Refusal] = {}
    async with open_lineup(limits=limits, start_limiter=limiter,
                           process_options=process_options) as lineup:

        async def start(i: int) -> None:
            spec = specs[i]
            log = logs / f"{file_name(spec.name)}{PREFLIGHT}.log"
            host = lineup.host(spec, scratch_dir=scratch / f"{file_name(spec.name)}{PREFLIGHT}",
                               log_path=log)
            started = await host.player()
            if isinstance(started, Fault):
                refusals[i] = Refusal(spec.name, start_problem(spec, started, log))
            await host.close()

        async with trio.open_nursery() as nursery:
            for i in range(len(specs)):
                nursery.start_soon(start, i)
    return [refusals[i] for i in sorted(refusals)]


def start_problem(spec: BotSpec, fault: Fault, log: Path | None = None) -> str:
    """One line: why the bot did not answer its handshake, and what to do."""
    head = f"bot {spec.name!r}"
    if fault.kind == codec.CRASH and _lacks_shebang(spec):
        program = spec.argv[0]
        fix = ("add a `#!` line or a bot.toml" if Path(program) == spec.path
               else f"add a `#!` line to it or name its interpreter in `run` of {MANIFEST}")
        return (f"{head}: {program} is executable but is not a program the system can start "
                f"(no `#!` line); {fix}")
    if fault.kind == codec.TIMEOUT:
        return (f"{head}: {fault.detail}; did it flush after `hello`? protocol.md section 2; "
                f"try it with: arena check {spec.path}")
    said = stderr_tail(log, 1) if log is not None else []
    stderr = f"; its stderr ({log}) ends: {said[-1]!r}" if said else ""
    line = f" (it wrote {fault.line!r})" if fault.line is not None else ""
    return (f"{head}: {fault.kind} at start-up: {fault.detail}{line}{stderr}; "
            f"see what is wrong with: arena check {spec.path}")


def _lacks_shebang(spec: BotSpec) -> bool:
    # An executable the kernel refuses (ENOEXEC): neither a script with `#!` nor a binary.
    try:
        with open(spec.argv[0], "rb") as f:
            start = f.read(4)
    except OSError:
        return False
    return not start.startswith(b"#!") and start != _ELF
