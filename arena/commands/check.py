"""`arena check BOT`: what a bot author runs before submitting.

The bot plays a few games against the example bots (``random`` and
``honest``; ``--against`` others): two-player draft games and tables of 3
and 4 (``--players`` others, up to 8), both variants, in one process as in a
contest (it is restarted only after a fault).  Then
the report, in plain words: every fault with its evidence (the offending
line and the request it answered), the start-up time and the decision times
against the limits, and a verdict.  Exit status 0 only if the bot is
compliant: no fault, and every answer within the decision time (an answer
that needs the time bank is a timeout waiting for a busier machine).
"""

from __future__ import annotations

import argparse
import math
import random
import secrets
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

import attrs

import arena
from arena.commands.options import (
    add_limit_options,
    add_time_options,
    limits_from,
    positive_count,
    prepare_bots,
    process_options,
    resources_from,
    results_root,
    run_trio,
    seed_value,
)
from arena.engine.cards import MAX_PLAYERS, MIN_PLAYERS, VARIANTS
from arena.engine.game import GameConfig
from arena.engine.record import save
from arena.engine.rules import DEFAULT_TURN_LIMIT
from arena.errors import UserError
from arena.protocol import codec
from arena.referee.bots import BotSpec, file_name
from arena.referee.lineup import BotHost, open_lineup, start_all
from arena.referee.logs import stderr_tail
from arena.referee.match import GameReport, play_game
from arena.referee.player import BotPlayer, Fault

DEFAULT_GAMES: Final = 20
# Stop early after this many faults: the first ones are what to fix.
MAX_FAULTS: Final = 3
SIZES: Final = (2, 3, 4)
# The default opponents, from the source checkout's example_bots/.
OPPONENTS: Final = ("random.py", "honest.py")
STDERR_TAIL: Final = 10  # lines of the bot's stderr shown after a crash


def example_bots_dir() -> Path:
    return Path(arena.__file__).resolve().parent.parent / "example_bots"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("check", help="check a bot against the protocol before you submit it",
                       description="Play the bot in a few games against the example bots and "
                                   "report every fault, its start-up time and its decision "
                                   "times against the limits. Exit status 0 only if it "
                                   "complies.")
    p.add_argument("bot", metavar="BOT",
                   help="an executable, a script (.py .js .sh ...) or a bot.toml folder")
    p.add_argument("--against", nargs="+", action="extend", metavar="BOT",
                   help="the opponents, taken in turn for the seats of each table "
                        "(default: the example bots random and honest)")
    p.add_argument("--players", nargs="+", action="extend", type=table_size, metavar="K",
                   help=f"table sizes to play in turn, {MIN_PLAYERS} to {MAX_PLAYERS} "
                        f"(default: {' '.join(map(str, SIZES))}: heads-up with the draft, "
                        "and larger tables)")
    p.add_argument("--games", type=positive_count, default=DEFAULT_GAMES, metavar="N",
                   help="games to play, the table sizes in turn (default: %(default)s)")
    p.add_argument("--seed", type=seed_value,
                   help="the deals (default: drawn at random; the report names it)")
    p.add_argument("--variant", choices=VARIANTS,
                   help="play only this variant (default: both, in turn)")
    p.add_argument("--turn-limit", type=int, default=DEFAULT_TURN_LIMIT, metavar="N",
                   help="turns before a game ends in a tie of the survivors "
                        "(default: %(default)s)")
    add_time_options(p)
    add_limit_options(p)
    p.set_defaults(func=run)


def table_size(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not MIN_PLAYERS <= value <= MAX_PLAYERS:
        raise argparse.ArgumentTypeError(f"{text}: a table seats {MIN_PLAYERS} to "
                                         f"{MAX_PLAYERS}")
    return value


@attrs.frozen
class Table:
    """One game of the check: its options, and where the checked bot sits."""

    number: int  # from 1
    config: GameConfig
    seed: int
    seat: int  # the checked bot's seat
    opponents: tuple[int, ...]  # opponent processes for the other seats, in seat order

    def describe(self) -> str:
        draft = " (draft)" if self.config.uses_draft else ""
        return (f"{self.config.players} players{draft}, {self.config.variant}, "
                f"seat {self.seat}, seed {self.seed}")


def plan_tables(games: int, seed: int, variant: str | None, turn_limit: int,
                sizes: Sequence[int] = SIZES, slots: int | None = None) -> list[Table]:
    """The table sizes in turn, variants in turn, the bot's seat moving round.

    The opponents' seats are filled from ``slots`` processes (at least
    ``max(sizes) - 1``; see ``opponent_slots``), turning round from table to table.
    """
    rng = random.Random(seed)
    slots = max(max(sizes) - 1, slots or 0)
    tables = []
    for i in range(games):
        players = sizes[i % len(sizes)]
        chosen = variant or VARIANTS[i % len(VARIANTS)]
        seat = (i // len(sizes)) % players
        opponents = tuple((i + k) % slots for k in range(players - 1))
        tables.append(Table(i + 1, GameConfig(players, chosen, None, turn_limit),
                            rng.randrange(2**63), seat, opponents))
    return tables


def opponent_slots(against: Sequence[str], sizes: Sequence[int]) -> list[str]:
    """The opponent processes: one per opponent, and enough to fill the largest
    table, the opponents in turn (a table of 4 against random and honest:
    random, honest, random)."""
    return [against[k % len(against)] for k in range(max(max(sizes) - 1, len(against)))]


@attrs.define
class Outcome:
    """What the check saw of the bot, game by game."""

    played: list[tuple[Table, GameReport]] = attrs.field(factory=list)
    startups: list[float] = attrs.field(factory=list)  # seconds, one per successful start
    starts: int = 0
    stopped_early: bool = False

    def bot_faults(self) -> list[tuple[Table, Fault]]:
        return [(table, fault) for table, report in self.played
                if (fault := report.faults[table.seat]) is not None]

    def times(self) -> list[float]:
        return [t for table, report in self.played for t in report.times[table.seat]]


async def check_bot(bot: BotSpec, opponents: Sequence[BotSpec], tables: Sequence[Table],
                    limits: codec.Limits, run_dir: Path,
                    on_game: Callable[[Table, GameReport], None],
                    options: dict[str, Any] | None = None) -> Outcome:
    """Play the tables; the bot keeps one process unless a fault breaks it.
    ``options``: for open_bot_process (resource limits, sandbox), every bot."""

    outcome = Outcome()
    async with open_lineup(limits=limits, process_options=options) as lineup:

        def host(spec: BotSpec) -> BotHost:
            return lineup.host(spec, scratch_dir=run_dir / "scratch" / file_name(spec.name),
                               log_path=run_dir / "logs" / f"{file_name(spec.name)}.log")

        checked = host(bot)
        others = [host(spec) for spec in opponents]
        for table in tables:
            seated = [others[k] for k in table.opponents]
            seated.insert(table.seat, checked)
            starts = checked.starts
            seats = await start_all(seated)
            player = seats[table.seat]
            if checked.starts > starts and isinstance(player, BotPlayer):
                assert player.startup_time is not None
                outcome.startups.append(player.startup_time)
            report = await play_game(seats, table.config, table.seed, limits,
                                     record_name=str(run_dir / f"game-{table.number}.json"))
            outcome.played.append((table, report))
            on_game(table, report)
            if len(outcome.bot_faults()) >= MAX_FAULTS and table is not tables[-1]:
                outcome.stopped_early = True
                break
    outcome.starts = checked.starts
    return outcome


# ------------------------------------------------------------------- the report


def ms(seconds: float) -> str:
    value = seconds * 1000
    return f"{value:.1f} ms" if value < 100 else f"{value:.0f} ms"


def percentile(ordered: Sequence[float], p: float) -> float:
    """Nearest rank: the smallest value with at least p% of the values at or below it."""
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def game_line(table: Table, report: GameReport, total: int) -> str:
    seat = table.seat
    head = f"game {table.number:>{len(str(total))}}/{total}: {table.describe()}: "
    fault = report.faults[seat]
    placements = report.result["placements"]
    place = f"placed {placements[seat]} of {len(placements)}"
    if fault is not None:
        return head + f"FAULT {fault.kind} ({place})"
    answers = len(report.times[seat])
    note = ", stopped at the game time cap" if report.result.get("reason") == "time_cap" else ""
    return head + f"{place}, {answers} answer{'s' if answers != 1 else ''}{note}"


def fault_lines(table: Table, fault: Fault, record: Path | None) -> list[str]:
    evidence = [("what", fault.detail),
                ("line", None if fault.line is None else repr(fault.line)),
                ("request", fault.request),  # the request it answered, or "handshake"
                ("after", None if fault.elapsed is None else ms(fault.elapsed)),
                ("process", fault.exit),
                ("record", None if record is None else f"{record}  (see it with: arena replay "
                                                        f"{record})")]
    return [f"  game {table.number} ({table.describe()}): {fault.kind}",
            *(f"    {label + ':':<9}{value}" for label, value in evidence if value is not None)]


def report_lines(outcome: Outcome, limits: codec.Limits, log: Path,
                 records: dict[int, Path],
                 stderr: Sequence[str] = ()) -> tuple[list[str], bool]:
    """The report after the games, and whether the bot complies (``stderr``: the
    end of the bot's stderr, shown after a crash)."""
    lines: list[str] = []
    problems: list[str] = []
    faults = outcome.bot_faults()
    if faults:
        lines.append(f"Faults ({len(faults)}):")
        for table, fault in faults:
            lines += fault_lines(table, fault, records.get(table.number))
        if stderr and any(fault.kind == codec.CRASH for _, fault in faults):
            lines.append(f"  The end of the bot's stderr ({log}):")
            lines += [f"  | {line}" for line in stderr]
        else:
            lines.append(f"  The bot's stderr is in {log}")
        kinds = sorted({fault.kind for _, fault in faults})
        problems.append(f"{len(faults)} fault{'s' if len(faults) > 1 else ''} "
                        f"({', '.join(kinds)}); see Faults above")
    else:
        lines.append("Faults: none.")
    for table, report in outcome.played:
        for seat, fault in enumerate(report.faults):
            if fault is not None and seat != table.seat:
                lines.append(f"Note: an example bot ({report.names[seat]}, seat {seat}) faulted "
                             f"in game {table.number} ({fault.kind}: {fault.detail}); that "
                             "does not count against your bot (a loaded machine?).")

    if outcome.startups:
        slowest = max(outcome.startups)
        starts = (f"; started {outcome.starts} times, slowest shown"
                  if outcome.starts > 1 else "")
        lines.append(f"Start-up: {ms(slowest)} to hello (limit {limits.startup_ms} ms{starts}).")
        if slowest * 1000 > limits.startup_ms / 2:
            lines.append("  Over half the start-up limit: a busier machine may time it out.")
    else:
        lines.append(f"Start-up: never a valid hello (limit {limits.startup_ms} ms).")

    times = sorted(outcome.times())
    if times:
        answers = f"{len(times)} answer{'s' if len(times) != 1 else ''}"
        lines.append(f"Decisions: {answers}; median {ms(percentile(times, 50))}, "
                     f"99th percentile {ms(percentile(times, 99))}, max {ms(times[-1])} "
                     f"(limit {limits.decision_ms} ms each, then the bank of "
                     f"{limits.bank_ms} ms per game).")
        slow = [t for t in times if round(t * 1000) > limits.decision_ms]
        if slow:
            problems.append(f"{len(slow)} answer{'s' if len(slow) > 1 else ''} took longer than "
                            f"the decision time of {limits.decision_ms} ms (slowest "
                            f"{ms(slow[-1])}) and drew on the time bank; answer within the "
                            "decision time")
    else:
        lines.append("Decisions: no answer was given.")

    played = len(outcome.played)
    if outcome.stopped_early:
        lines.append(f"Stopped after {played} games: {MAX_FAULTS} faults are enough to fix "
                     "first.")
    if problems:
        lines.append("Verdict: FIX: " + "; ".join(problems) + ".")
    else:
        lines.append(f"Verdict: OK: no faults in {played} game{'s' if played != 1 else ''}; "
                     "start-up and every answer within the limits.")
    return lines, not problems


def run(args: argparse.Namespace) -> int:
    limits = limits_from(args)
    resources = resources_from(args)
    options = process_options(resources)
    sizes = tuple(args.players or SIZES)
    against = args.against
    if not against:
        examples = example_bots_dir()
        missing = [name for name in OPPONENTS if not (examples / name).is_file()]
        if missing:
            raise UserError(f"arena check: the example bots are missing ({examples / missing[0]}"
                            " not found); arena check needs the example_bots/ folder of arena's "
                            "source checkout, or opponents given with --against")
        against = [str(examples / name) for name in OPPONENTS]
    specs = prepare_bots([args.bot, *opponent_slots(against, sizes)], options=options,
                         network=args.build_network)
    bot, opponents = specs[0], specs[1:]
    seed = args.seed if args.seed is not None else secrets.randbelow(2**63)
    tables = plan_tables(args.games, seed, args.variant, args.turn_limit, sizes,
                         len(opponents))
    run_dir = _new_folder(results_root() / "check" / f"{time.strftime('%Y%m%d-%H%M%S')}-"
                          f"{codec.wire_name(bot.name)}")

    played = sorted({table.config.players for table in tables})
    variants = [v for v in VARIANTS if any(table.config.variant == v for table in tables)]
    games = f"{len(tables)} game{'s' if len(tables) > 1 else ''}"
    names = list(dict.fromkeys(spec.name for spec in opponents[:len(against)]))
    whom = (f"the example bots {' and '.join(sorted(names))}" if not args.against
            else ", ".join(names))
    print(f"Checking {bot.name} ({bot.path}) in {games} against {whom}: tables of "
          f"{', '.join(map(str, played))} ({' and '.join(variants)}).")
    print(f"Limits: start-up {limits.startup_ms} ms, decision {limits.decision_ms} ms, time bank "
          f"{limits.bank_ms} ms per game, game {limits.game_ms} ms; {_resources(resources)}.")
    print(f"Seed {seed} (repeat with --seed {seed}).")
    records: dict[int, Path] = {}

    def on_game(table: Table, report: GameReport) -> None:
        print(game_line(table, report, len(tables)), flush=True)
        # Every record is kept: the bot's log names each game's.
        path = run_dir / f"game-{table.number}.json"
        try:
            save(report.record, path)
            records[table.number] = path
        except OSError:
            pass  # the report still has the evidence

    outcome = run_trio(check_bot, bot, opponents, tables, limits, run_dir, on_game, options)
    log = run_dir / "logs" / f"{file_name(bot.name)}.log"
    lines, compliant = report_lines(outcome, limits, log, records,
                                    stderr_tail(log, STDERR_TAIL))
    print()
    print("\n".join(lines))
    return 0 if compliant else 1


def _resources(resources: dict[str, Any]) -> str:
    def say(value: object, unit: str) -> str:
        return "no limit" if value is None else f"{value}{unit}"

    return (f"memory {say(resources['memory_mb'], ' MB')}, CPU "
            f"{say(resources['cpu_seconds'], ' s')} per game, files "
            f"{say(resources['file_size_mb'], ' MB')}, open files "
            f"{say(resources['open_files'], '')}, disk "
            f"{say(resources.get('disk_mb'), ' MB')}, processes "
            f"{say(resources.get('processes'), '')}"
            f"{', in the sandbox' if resources['sandbox'] else ''}")


def _new_folder(path: Path) -> Path:
    """A fresh folder (a bot's scratch directory must not hold an earlier run's files)."""
    candidate, n = path, 1
    while True:
        try:
            candidate.mkdir(parents=True)
            return candidate
        except FileExistsError:
            n += 1
            candidate = path.with_name(f"{path.name}-{n}")
        except OSError as exc:
            raise UserError(f"arena check: cannot create {candidate}: {exc.strerror}") from None
