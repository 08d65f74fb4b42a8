"""Options shared by the commands that run bots (play, check, run)."""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from arena.engine.cards import VARIANTS
from arena.engine.rules import DEFAULT_TURN_LIMIT
from arena.errors import UserError
from arena.files import DISK_ERRORS, disk_error, exception_leaves, user_error_in
from arena.protocol import codec
from arena.referee.bots import BotSpec, BotSpecError, build_bot, resolve_bots

_DEFAULTS = codec.Limits()
T = TypeVar("T")


def positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text!r}: give a number of seconds above 0")
    return value


def positive_count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give at least 1")
    return value


def seed_value(text: str) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 0 <= value < 2**63:
        raise argparse.ArgumentTypeError(f"{text!r}: a seed is from 0 to 2**63-1")
    return value


def add_game_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--variant", choices=VARIANTS, default=VARIANTS[0],
                        help="the fifth character (default: %(default)s)")
    parser.add_argument("--turn-limit", type=int, default=DEFAULT_TURN_LIMIT, metavar="N",
                        help="turns before a game ends in a tie of the survivors "
                             "(default: %(default)s)")
    parser.add_argument("--plain-deal", action="store_true",
                        help="deal 2 cards each in 2-player games instead of the draft")


def add_time_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("time limits (seconds, on the referee's clock)")
    group.add_argument("--startup-time", type=positive_seconds, metavar="S",
                       default=_DEFAULTS.startup_ms / 1000,
                       help="from process start to the bot's hello (default: %(default)s)")
    group.add_argument("--decision-time", type=positive_seconds, metavar="S",
                       default=_DEFAULTS.decision_ms / 1000,
                       help="free time for each answer (default: %(default)s)")
    group.add_argument("--time-bank", type=float, metavar="S",
                       default=_DEFAULTS.bank_ms / 1000,
                       help="per game, pays for answers over the decision time "
                            "(default: %(default)s)")
    group.add_argument("--game-time", type=positive_seconds, metavar="S",
                       default=_DEFAULTS.game_ms / 1000,
                       help="wall-clock cap on one game (default: %(default)s)")


def limits_from(args: argparse.Namespace) -> codec.Limits:
    if args.time_bank < 0:
        raise UserError(f"--time-bank {args.time_bank}: give 0 or more seconds")
    if args.turn_limit < 1:
        raise UserError(f"--turn-limit {args.turn_limit}: give at least 1 turn")
    try:
        return codec.Limits(
            startup_ms=round(args.startup_time * 1000),
            decision_ms=round(args.decision_time * 1000),
            bank_ms=round(args.time_bank * 1000),
            game_ms=round(args.game_time * 1000),
        )
    except ValueError as exc:  # e.g. --decision-time 0.0001: under a millisecond
        raise UserError(f"time limits: {exc} ms; give at least 0.001 s") from None


def prepare_bots(args: Sequence[str], *, build: bool = True,
                 options: dict[str, Any] | None = None, network: bool = False) -> list[BotSpec]:
    """Resolve bot arguments and run their build steps, before any game starts.

    ``options`` (from ``process_options``): with a sandbox, builds run in one too;
    ``network``: a sandboxed build keeps the network (``--build-network``).
    """
    sandbox = None if options is None else options.get("sandbox")
    try:
        specs = resolve_bots(args)
        if build:
            specs = [build_bot(spec, sandbox=sandbox, network=network) for spec in specs]
    except BotSpecError as exc:
        raise UserError(str(exc)) from None
    return specs


def results_root() -> Path:
    return Path("results")


def _zero_is_none(kind: type) -> object:
    def parse(text: str) -> float | int | None:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if value < 0:
            raise argparse.ArgumentTypeError(f"{text!r}: give 0 (no limit) or more")
        return value or None

    return parse


def add_limit_options(parser: argparse.ArgumentParser) -> None:
    from arena.referee import limits

    group = parser.add_argument_group("resource limits per bot (0: no limit)")
    group.add_argument("--memory-mb", type=_zero_is_none(int), default=limits.DEFAULT_MEMORY_MB,
                       metavar="MB", help="resident memory of all its processes "
                                          "(default: %(default)s)")
    group.add_argument("--cpu-seconds", type=_zero_is_none(float),
                       default=limits.DEFAULT_CPU_SECONDS, metavar="S",
                       help="CPU time per game (default: %(default)s)")
    group.add_argument("--file-size-mb", type=_zero_is_none(int),
                       default=limits.DEFAULT_FILE_SIZE_MB, metavar="MB",
                       help="largest file it may write (default: %(default)s)")
    group.add_argument("--open-files", type=_zero_is_none(int),
                       default=limits.DEFAULT_OPEN_FILES, metavar="N",
                       help="open files per process (default: %(default)s)")
    group.add_argument("--disk-mb", type=_zero_is_none(int), default=limits.DEFAULT_DISK_MB,
                       metavar="MB", help="its scratch folder and, sandboxed, its /tmp "
                                          "(default: %(default)s)")
    group.add_argument("--processes", type=_zero_is_none(int),
                       default=limits.DEFAULT_PROCESSES, metavar="N",
                       help="processes and threads of all its processes together "
                            "(default: %(default)s)")
    group.add_argument("--sandbox", action="store_true",
                       help="run each bot in bubblewrap: no network, its own processes only, "
                            "read-only system, writable scratch directory only")
    group.add_argument("--sandbox-ro", action="append", default=[], metavar="DIR",
                       help="another folder a sandboxed bot may read (repeatable)")
    group.add_argument("--build-network", action="store_true",
                       help="let sandboxed builds use the network (to download dependencies)")


def resources_from(args: argparse.Namespace) -> dict[str, Any]:
    """The resource options as JSON (tournament.json keeps them to resume)."""
    return {"memory_mb": args.memory_mb, "cpu_seconds": args.cpu_seconds,
            "file_size_mb": args.file_size_mb, "open_files": args.open_files,
            "disk_mb": args.disk_mb, "processes": args.processes,
            "sandbox": args.sandbox, "sandbox_ro": list(args.sandbox_ro)}


def complete_resources(resources: dict[str, Any]) -> dict[str, Any]:
    """Stored resource options with the limits added since given their defaults,
    so that a folder made before a limit existed resumes, and is not "other options"."""
    from arena.referee.limits import DEFAULT_DISK_MB, DEFAULT_PROCESSES

    return {"disk_mb": DEFAULT_DISK_MB, "processes": DEFAULT_PROCESSES, **resources}


def process_options(resources: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments for open_bot_process: limits, the sandbox if asked, and
    the stderr budget of each bot for the run.

    ``--sandbox`` is checked here, once: it stops the command with one line
    when bubblewrap cannot isolate a bot, and never runs a bot without it.
    """
    from arena.referee.limits import BotLimits
    from arena.referee.process import LogBudget
    from arena.referee.sandbox import Sandbox, SandboxUnavailable, check_sandbox

    resources = complete_resources(resources)
    limits = BotLimits(memory_mb=resources["memory_mb"], cpu_seconds=resources["cpu_seconds"],
                       file_size_mb=resources["file_size_mb"],
                       open_files=resources["open_files"], disk_mb=resources["disk_mb"],
                       processes=resources["processes"])
    sandbox = None
    if resources["sandbox"]:
        sandbox = Sandbox(ro_binds=tuple(resources["sandbox_ro"]))
        try:
            check_sandbox(sandbox)
        except SandboxUnavailable as exc:
            raise UserError(f"--sandbox: {exc}") from None
    # One stderr budget per bot for the whole command, whatever its processes and logs.
    return {"limits": limits, "sandbox": sandbox, "log_budget": LogBudget()}


def run_trio(fn: Callable[..., Awaitable[T]], *args: Any) -> T:
    """``trio.run``, with Ctrl-C and user errors as themselves.

    Newer trio wraps what escapes a nursery in an exception group; a
    KeyboardInterrupt or a UserError inside one would otherwise end the
    command with a traceback instead of its one line.  So would a full,
    read-only or foreign disk under a bot's log or scratch folder.
    """
    import trio

    try:
        return trio.run(fn, *args)
    except OSError as exc:
        if exc.errno in DISK_ERRORS and exc.filename:
            raise disk_error(exc) from None
        raise
    except BaseExceptionGroup as group:
        leaves = list(exception_leaves(group))
        if leaves and all(isinstance(e, KeyboardInterrupt) for e in leaves):
            raise KeyboardInterrupt from None
        # A UserError, or a bot's log or scratch folder on a full, read-only or foreign disk.
        found = user_error_in(group)
        if found is not None:
            raise found from None
        raise
