"""The `arena` command line.

Every error a user can cause (a bad flag, a missing file, a broken bot)
ends in one line on stderr naming the thing and what to do, and exit
status 2; never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from arena import __version__
from arena.errors import UserError


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        # One line instead of argparse's usage dump.
        raise UserError(f"{self.prog}: {message} (see '{self.prog} --help')")


def _cmd_conformance(args: argparse.Namespace) -> int:
    from arena.conformance.runner import SHIPPED, run_paths

    if not args.paths:
        args.paths = [str(SHIPPED)]
    for path in args.paths:
        if not Path(path).exists():
            raise UserError(f"{path}: no such file or folder (give scenario files or folders)")
    outcomes, problems = run_paths(args.paths)
    for outcome in outcomes:
        print(outcome.line())
    for problem in problems:
        print(f"ERROR {problem}")
    passed = sum(o.passed for o in outcomes)
    failed = len(outcomes) - passed + len(problems)
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 and outcomes else 1


def _cmd_replay(args: argparse.Namespace) -> int:
    from arena.engine import observer
    from arena.engine.events import Forfeited
    from arena.engine.record import RecordError, load, replay
    from arena.transcript import Transcript, fault_evidence

    try:
        record = load(Path(args.record))
        game = replay(record)
    except RecordError as exc:
        raise UserError(f"{args.record}: {exc}" if str(args.record) not in str(exc)
                        else str(exc)) from None
    seat = observer.OMNISCIENT if args.as_seat is None else args.as_seat
    if args.as_seat is not None and not 0 <= args.as_seat < game.players:
        raise UserError(f"--as {args.as_seat}: the game has seats 0 to {game.players - 1}")
    if args.raw:
        from arena.protocol.seat_lines import seat_lines

        if args.as_seat is None:
            raise UserError("--raw shows one seat's protocol lines: give --as SEAT too")
        try:
            lines = seat_lines(record, args.as_seat)
        except RecordError as exc:
            raise UserError(f"{args.record}: {exc}") from None
        for line in lines:
            print(line.show())
        return 0
    names = record.referee.get("names")
    faults = record.referee.get("faults") or []
    transcript = Transcript(names)
    for event in game.events:
        print(transcript.line(observer.view(event, seat)))
        if isinstance(event, Forfeited) and event.seat < len(faults) and faults[event.seat]:
            print(f"   {fault_evidence(faults[event.seat])}")
    return 0


def _build_parser() -> _Parser:
    parser = _Parser(prog="arena", description="Referee and tournament runner for Coup bots.")
    parser.add_argument("--version", action="version", version=f"arena {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    p = sub.add_parser("conformance", help="run rule scenarios (JSON) against the engine")
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="scenario files or folders (default: the suite shipped with arena)")
    p.set_defaults(func=_cmd_conformance)

    p = sub.add_parser("replay", help="check a game record and print its transcript")
    p.add_argument("record", metavar="RECORD", help="a game record (.json or .json.gz)")
    p.add_argument("--as", dest="as_seat", type=int, metavar="SEAT",
                   help="show only what this seat saw")
    p.add_argument("--raw", action="store_true",
                   help="with --as: the exact protocol lines the seat received (<) and sent "
                        "(>), each answer with its time, and its fault (!)")
    p.set_defaults(func=_cmd_replay)

    from arena.commands import play, rate, run

    play.register(sub)
    run.register(sub)
    rate.register(sub)
    from arena.commands import check
    check.register(sub)
    from arena.commands import report
    report.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        parser = _build_parser()
        args = parser.parse_args(argv)
        args.argv = list(sys.argv[1:] if argv is None else argv)  # as typed, for the record
        if not getattr(args, "func", None):
            parser.print_help()
            return 2
        return args.func(args)
    except UserError as exc:
        message = str(exc)
        print(message if message.startswith("arena") else f"arena: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("arena: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 1
