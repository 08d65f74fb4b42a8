"""Options shared by the commands that run bots (play, check, run)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from arena.engine.cards import VARIANTS
from arena.engine.rules import DEFAULT_TURN_LIMIT
from arena.errors import UserError
from arena.protocol import codec
from arena.referee.bots import BotSpec, BotSpecError, build_bot, resolve_bots

_DEFAULTS = codec.Limits()


def positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text!r}: give a number of seconds above 0")
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
    return codec.Limits(
        startup_ms=round(args.startup_time * 1000),
        decision_ms=round(args.decision_time * 1000),
        bank_ms=round(args.time_bank * 1000),
        game_ms=round(args.game_time * 1000),
    )


def prepare_bots(args: Sequence[str], *, build: bool = True) -> list[BotSpec]:
    """Resolve bot arguments and run their build steps, before any game starts."""
    try:
        specs = resolve_bots(args)
        if build:
            for spec in specs:
                build_bot(spec)
    except BotSpecError as exc:
        raise UserError(str(exc)) from None
    return specs


def results_root() -> Path:
    return Path("results")
