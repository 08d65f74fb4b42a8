"""`arena play`: one game between bots, with a live transcript and a record."""

from __future__ import annotations

import argparse
import secrets
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from arena.commands.options import (
    add_game_options,
    add_limit_options,
    add_time_options,
    limits_from,
    prepare_bots,
    process_options,
    resources_from,
    results_root,
    run_trio,
    seed_value,
)
from arena.engine import events as ev
from arena.engine.cards import MAX_PLAYERS, MIN_PLAYERS
from arena.engine.game import GameConfig
from arena.engine.record import save
from arena.errors import UserError
from arena.protocol import codec
from arena.referee.bots import BotSpec, file_name
from arena.referee.lineup import open_lineup, start_all
from arena.referee.logs import stderr_tail
from arena.referee.match import GameReport, play_game
from arena.transcript import Transcript

STDERR_TAIL = 10  # lines of a faulted bot's stderr shown


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("play", help="play one game between bots and show it",
                       description="Play one game between bots, with a live transcript, and "
                                   "write its record. Exit status: 0 if every bot played "
                                   "cleanly, 1 if a bot faulted (it forfeited; its fault and "
                                   "the end of its stderr are shown), 2 for bad input.")
    p.add_argument("bots", nargs="+", metavar="BOT",
                   help="2 to 8 bots: executables, scripts (.py .js .sh ...) or bot.toml folders")
    p.add_argument("--seed", type=seed_value, help="the deal (default: drawn at random)")
    p.add_argument("--record", type=Path, metavar="FILE",
                   help="write the game record here (default: under results/)")
    p.add_argument("--quiet", action="store_true", help="print only the result")
    add_game_options(p)
    add_time_options(p)
    add_limit_options(p)
    p.set_defaults(func=run)


async def play_once(specs: list[BotSpec], config: GameConfig, seed: int, limits: codec.Limits,
                    run_dir: Path, on_event: Callable[[ev.Event], None] | None,
                    options: dict[str, Any] | None = None,
                    record_name: str | None = None) -> GameReport:
    async with open_lineup(limits=limits, process_options=options) as lineup:
        hosts = [lineup.host(spec, scratch_dir=run_dir / "scratch" / file_name(spec.name),
                             log_path=run_dir / "logs" / f"{file_name(spec.name)}.log")
                 for spec in specs]
        seats = await start_all(hosts)
        return await play_game(seats, config, seed, limits, on_event=on_event,
                               record_name=record_name)


def run(args: argparse.Namespace) -> int:
    if not MIN_PLAYERS <= len(args.bots) <= MAX_PLAYERS:
        given = f"{len(args.bots)} bot{'s' if len(args.bots) != 1 else ''}"
        raise UserError(f"arena play: {given} given; a game takes {MIN_PLAYERS} to "
                        f"{MAX_PLAYERS}")
    limits = limits_from(args)
    options = process_options(resources_from(args))
    specs = prepare_bots(args.bots, options=options, network=args.build_network)
    seed = args.seed if args.seed is not None else secrets.randbelow(2**63)
    config = GameConfig(len(specs), args.variant, False if args.plain_deal else None,
                        args.turn_limit)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    run_dir = results_root() / "play" / f"{stamp}-seed{seed}"
    record_path = args.record or run_dir / "game.json"
    transcript = Transcript([spec.name for spec in specs])

    def show(event: ev.Event) -> None:
        print(transcript.line(event), flush=True)

    print(f"seed {seed}; bots: " + ", ".join(f"{s.name} [{i}]" for i, s in enumerate(specs)))
    report = run_trio(play_once, specs, config, seed, limits, run_dir,
                      None if args.quiet else show, options, str(record_path))
    result = report.result
    placements = result["placements"]
    order = sorted(range(len(specs)), key=lambda s: placements[s])
    print("result: " + ", ".join(f"{placements[s]}. {transcript.who(s)}" for s in order))
    for seat, fault in enumerate(report.faults):
        if fault is not None:
            print(f"fault: {transcript.who(seat)} {fault.kind}: {fault.detail}", file=sys.stderr)
            log = run_dir / "logs" / f"{file_name(specs[seat].name)}.log"
            tail = stderr_tail(log, STDERR_TAIL)
            if tail:
                print(f"  the end of its stderr ({log}):", file=sys.stderr)
                for line in tail:
                    print(f"  | {line}", file=sys.stderr)
            else:
                print(f"  it wrote nothing to stderr ({log})", file=sys.stderr)
    try:
        record_path.parent.mkdir(parents=True, exist_ok=True)
        save(report.record, record_path)
    except OSError as exc:
        raise UserError(f"cannot write the record to {record_path}: {exc.strerror}") from None
    print(f"record: {record_path}  (replay with: arena replay {record_path})")
    print(f"logs: {run_dir / 'logs'}")
    return 0 if all(fault is None for fault in report.faults) else 1
