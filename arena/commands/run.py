"""`arena run`: a round-robin (or gauntlet) tournament with Elo ratings.

Running the same command again into the same --out goes on where it stopped
(or: arena run --resume DIR).  Adding bots plays only their games.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import secrets
import shutil
import sys
import time
from collections.abc import Collection, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import attrs

from arena import __version__
from arena.commands.options import (
    add_game_options,
    add_limit_options,
    add_time_options,
    complete_resources,
    limits_from,
    prepare_bots,
    process_options,
    resources_from,
    results_root,
    run_trio,
    seed_value,
)
from arena.engine.cards import MAX_PLAYERS, MIN_PLAYERS
from arena.engine.game import GameConfig
from arena.errors import UserError
from arena.files import disk_error
from arena.protocol import codec
from arena.referee.bots import MANIFEST, BotSpecError, bot_hash
from arena.referee.preflight import build_all, handshake_all
from arena.referee.process import relative_to_cwd
from arena.site.build import SITE, build_site, refreshing
from arena.tournament import report as reports
from arena.tournament.ratings import GameResult, fit_ratings
from arena.tournament.runner import Coordinator, Progress, run_games
from arena.tournament.store import (
    FORMAT,
    GAMES,
    IDENTITY,
    LOGS,
    TOURNAMENT,
    VERSION,
    Store,
    differences,
    is_results_folder,
    read_games,
    read_meta,
    write_meta,
)
from arena.tournament.transport import InProcess, LocalWorkers, Transport
from arena.tournament.units import DEFAULT_KEEP, make_units
from arena.tournament.worker import RunContext, merge_starts, starts_summary

DEFAULT_GAMES = 100
CLUSTER_SLOTS = 16  # how many slots a cluster's units are cut for


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="play a tournament and rate the bots")
    p.add_argument("bots", nargs="*", metavar="BOT", help="the bots (at least 2)")
    p.add_argument("--games", type=int, default=None, metavar="N",
                   help=f"games per table, rounded up to whole seat rotations "
                        f"(default: {DEFAULT_GAMES})")
    p.add_argument("--players", type=int, default=2, metavar="K",
                   help="seats per table, 2 to 8 (default: %(default)s)")
    p.add_argument("--gauntlet", metavar="BOT", help="play only this bot against each other bot")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1, metavar="N",
                   help="referee processes playing games (default: the number of CPUs, "
                        "%(default)s); 0 plays in this process")
    p.add_argument("--cluster", metavar="ADDRESS",
                   help="play on a Dask cluster, e.g. tcp://scheduler-host:8786, instead of "
                        "local workers (pip install 'arena[dask]'; see the README)")
    p.add_argument("--concurrency", type=int, default=1, metavar="C",
                   help="games at once in each worker (default: %(default)s); raise it for "
                        "bots that think slowly")
    p.add_argument("--affinity", action="store_true",
                   help="pin the bots of each of the N x C game slots to a CPU of their "
                        "own (game slot w on the w-th CPU arena may use, wrapping around), so "
                        "that busy bots of games played at once do not share a CPU; "
                        "multi-threaded bots (JVM, Go, ...) lose their other CPUs. Linux only")
    p.add_argument("--seed", type=seed_value, help="the schedule and every deal (default: drawn)")
    p.add_argument("--out", type=Path, metavar="DIR",
                   help="results folder (default: a new folder under results/)")
    p.add_argument("--resume", type=Path, metavar="DIR",
                   help="go on with the tournament in DIR, with its own bots and options")
    p.add_argument("--replay-changed", action="store_true",
                   help="play again the games of bots whose files changed since")
    p.add_argument("--anchor", metavar="BOT=ELO", help="fix one bot's rating (default: mean 1500)")
    p.add_argument("--allow-broken", action="store_true",
                   help="play even if a bot fails its build or its start-up check before "
                        "the first game (its games are forfeits)")
    add_game_options(p)
    add_time_options(p)
    add_limit_options(p)
    p.set_defaults(func=run)


# Far beyond any real rating, and short enough for the tables' columns.
MAX_ANCHOR = 100_000.0


def _anchor(text: str | None) -> tuple[str, float] | None:
    if text is None:
        return None
    name, sep, value = text.partition("=")
    try:
        elo = float(value)
    except ValueError:
        elo = math.nan
    if sep and name and not math.isnan(elo):
        if not abs(elo) <= MAX_ANCHOR:
            raise UserError(f"--anchor {text}: give a rating between {-MAX_ANCHOR:g} and "
                            f"{MAX_ANCHOR:g}, e.g. --anchor {name}=1000")
        return name, elo
    raise UserError(f"--anchor {text!r}: write it as BOT=ELO, e.g. --anchor random=1000")


def _options(args: argparse.Namespace) -> dict[str, Any]:
    limits = limits_from(args)
    if not MIN_PLAYERS <= args.players <= MAX_PLAYERS:
        raise UserError(f"--players {args.players}: a table seats {MIN_PLAYERS} to {MAX_PLAYERS}")
    games = DEFAULT_GAMES if args.games is None else args.games
    if games < 1:
        raise UserError(f"--games {games}: give at least 1")
    if args.concurrency < 1:
        raise UserError(f"--concurrency {args.concurrency}: give at least 1")
    if args.workers < 0:
        raise UserError(f"--workers {args.workers}: give 0 (this process) or more")
    return {"seed": args.seed, "players": args.players, "games": games,
            "gauntlet": args.gauntlet, "variant": args.variant, "turn_limit": args.turn_limit,
            "plain_deal": args.plain_deal, "limits": attrs.asdict(limits),
            "resources": resources_from(args)}


def _worker_cpus(affinity: bool) -> tuple[int, ...]:
    """The CPUs --affinity spreads the workers over: those arena may run on."""
    if not affinity:
        return ()
    if not (hasattr(os, "sched_setaffinity") and hasattr(os, "sched_getaffinity")):
        raise UserError("--affinity: this system cannot pin processes to CPUs "
                        "(no sched_setaffinity); run without --affinity")
    return tuple(sorted(os.sched_getaffinity(0)))


def _read_meta_if_any(folder: Path) -> dict[str, Any] | None:
    return read_meta(folder) if (folder / TOURNAMENT).exists() else None


def _now() -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())


def _has_games(folder: Path) -> bool:
    try:
        return (folder / GAMES).stat().st_size > 0
    except OSError:
        return False


def run(args: argparse.Namespace) -> int:
    # Like --concurrency, a way to run, not part of the tournament: not stored in
    # tournament.json, and a resumed run pins only if asked again.
    cpus = _worker_cpus(getattr(args, "affinity", False))
    if args.resume is not None:
        if args.bots or args.out:
            raise UserError("--resume DIR takes the bots and options from DIR: give no bots "
                            "and no --out")
        folder = args.resume
        meta = read_meta(folder)
        bot_args = meta["bot_args"]
        lost = [arg for arg in bot_args if not os.path.exists(arg)]
        if lost:
            raise UserError(f"{folder}: bot {lost[0]} not found from here; bot paths are "
                            "stored as given, so resume from the folder the tournament was "
                            "started in")
        options = {key: meta[key] for key in IDENTITY}
    else:
        options = _options(args)
        # As given (relative to where the command ran): a results folder names no
        # path of the machine that made it.
        bot_args = list(args.bots)
        folder = args.out or results_root() / time.strftime("%Y%m%d-%H%M%S")
        meta = _read_meta_if_any(folder)
        if meta is None and _has_games(folder):
            raise UserError(f"{folder} has a {GAMES} but no {TOURNAMENT}, so its games cannot "
                            f"be told apart from new ones; restore {TOURNAMENT}, or use "
                            "another --out")
        if meta is not None and options["seed"] is None:
            options["seed"] = meta["seed"]  # resuming: the recorded seed
        if meta is not None:
            stored = {**meta, "resources": complete_resources(meta["resources"])}
            found = differences(stored, options)
            if found:
                raise UserError(f"{folder} holds a tournament with other options ("
                                + "; ".join(found) + "); use another --out, or the same options")
    if options["seed"] is None:
        options["seed"] = secrets.randbelow(2**63)
    if len(bot_args) < max(2, options["players"]):
        raise UserError(f"arena run: {_bots(len(bot_args))} given; a tournament needs at least "
                        f"{max(2, options['players'])}")
    store = Store(folder)
    if folder.is_dir():
        store.lock()  # before the builds: a run going on there is refused before they start
    try:
        proc_options = process_options(options["resources"])  # --sandbox checked before builds
        workers = getattr(args, "workers", 0)
        concurrency = getattr(args, "concurrency", 1)
        cluster = getattr(args, "cluster", None)
        if cluster and cpus:
            raise UserError("--affinity pins local workers' bots; with --cluster, give it up")
        slots = max(1, workers) * concurrency  # games at once (here)
        allow_broken = getattr(args, "allow_broken", False)
        specs, refusals = run_trio(partial(build_all, prepare_bots(bot_args, build=False),
                                           concurrency=slots, say=_say,
                                           sandbox=proc_options["sandbox"],
                                           network=args.build_network))
        names = [spec.name for spec in specs]
        if options["gauntlet"] is not None and options["gauntlet"] not in names:
            raise UserError(f"--gauntlet {options['gauntlet']}: no such bot; the bots are "
                            + ", ".join(names))
        anchor = _anchor(args.anchor)
        if anchor is not None and anchor[0] not in names:
            raise UserError(f"--anchor {anchor[0]}: no such bot; the bots are "
                            + ", ".join(names))
        results = Path(os.path.abspath(folder))

        def not_the_bot(path: Path) -> bool:
            # Results do not count in a bot's hash: this run's, any other run's, and
            # those of play and check under the bot's own results/ (run from inside it).
            return (path == results or is_results_folder(path)
                    or (path.name == results_root().name
                        and (path.parent / MANIFEST).is_file()))

        try:
            bots = [{"name": s.name, "command": _portable(s.argv),
                     "hash": bot_hash(s, skip=not_the_bot)} for s in specs]
        except BotSpecError as exc:
            raise UserError(str(exc)) from None

        # One run writes a folder: a second one, or a --resume, is refused here. Read
        # again under the lock what was read before it, in case a run ended meanwhile.
        store.lock()
        if _read_meta_if_any(folder) != meta:
            raise UserError(f"{folder} changed while this run started (another run?); "
                            "run the command again")
        store.recover()  # games a power cut left without their records: played again
        replay: list[str] = []
        if meta is not None:
            old = {bot["name"]: bot for bot in meta["bots"]}
            missing = [name for name in old if name not in names]
            if missing:
                raise UserError(f"{folder}: {_named(missing)} played in this tournament but "
                                f"{'is' if len(missing) == 1 else 'are'} not given now; give "
                                "every bot again, or use another --out")
            changed = [b["name"] for b in bots if b["name"] in old and old[b["name"]]["hash"]
                       != b["hash"]]
            if changed and not args.replay_changed:
                its = "its" if len(changed) == 1 else "their"
                raise UserError(f"{_named(changed)} changed since {its} games in {folder} were "
                                f"played; pass --replay-changed to play {its} games again")
            replay = changed
        # The command that made the folder stays: a resume or a late entry only adds games.
        typed = getattr(args, "argv", sys.argv[1:])
        command = meta["command"] if meta is not None else ["arena", *typed]
        meta_out = {"format": FORMAT, "version": VERSION, "arena": __version__,
                    "command": command, "bot_args": bot_args, **options, "bots": bots,
                    # finished: set when this run ends; until then the last run's
                    "started": (meta or {}).get("started") or _now(),
                    "finished": (meta or {}).get("finished")}
        if meta is not None and "process_starts" in meta:  # counted over every session
            meta_out["process_starts"] = meta["process_starts"]

        limits = codec.Limits.from_json(options["limits"])  # checked: by argparse or read_meta
        config = GameConfig(options["players"], options["variant"],
                            False if options["plain_deal"] else None, options["turn_limit"])
        try:
            # On a cluster the slots are known once connected: a guess cuts the units.
            plan = make_units(names, players=options["players"], games=options["games"],
                              seed=options["seed"], gauntlet=options["gauntlet"],
                              keep=DEFAULT_KEEP, slots=CLUSTER_SLOTS if cluster else slots)
        except ValueError as exc:
            raise UserError(f"arena run: {exc}") from None
        total = plan.total
        # Only the keys are kept: a resumed run must not hold every old game in memory.
        done_keys = {(g["group"], g["index"]) for g in read_games(store.games_path, bots=names)
                     if not set(replay) & set(g["seats"])}
        already = plan.count_scheduled(done_keys)
        if not refusals and meta == meta_out and already == total:
            # Nothing to play: print the standings, write nothing.
            print(f"{folder}: {total} games ({total} already played), seed {options['seed']}, "
                  f"{len(names)} bots: nothing to play", file=sys.stderr)
            _report(folder, names, anchor, write=not (folder / "standings.md").exists())
            if (folder / SITE / "index.html").exists():
                print(folder / SITE / "index.html")  # as after a run, written then
            return 0
        if already < total:
            unbuilt = {refusal.bot for refusal in refusals}
            refusals += run_trio(partial(
                handshake_all, [s for s in specs if s.name not in unbuilt], limits=limits,
                logs=folder / LOGS, scratch=folder / "scratch", concurrency=slots,
                process_options=proc_options))
        if refusals:
            lines = [refusal.problem for refusal in refusals]
            them, their = ("it", "its") if len(refusals) == 1 else ("them", "their")
            logs = (f"; {their} start-up logs are in {folder / LOGS}" if already < total
                    else "")
            if not allow_broken:
                raise UserError("\n".join([*lines, f"arena run: {_bots(len(refusals))} of "
                                             f"{len(specs)} cannot play, so no game was played; "
                                             f"fix {them}, or pass --allow-broken to play anyway "
                                             f"({their} games are forfeits){logs}"]))
            for line in lines:
                print(f"arena: warning: {line}", file=sys.stderr)
        context = RunContext(tuple(specs), config, limits, options["seed"],
                             process_options=proc_options, cpus=cpus,
                             logs=folder / LOGS, scratch=folder / "scratch",
                             build_network=getattr(args, "build_network", False))
        transport: Transport
        if cluster:
            from arena.tournament.cluster import DaskCluster, run_id

            hashes = {bot["name"]: bot["hash"] for bot in bots}
            transport = DaskCluster(cluster, context, specs, hashes,
                                    run_id(folder, options["seed"], hashes))
            transport.connect()  # before anything is written: an unreachable one is one line
        elif workers == 0:
            transport = InProcess(context, concurrency)
        else:
            transport = LocalWorkers(context, workers, concurrency)
        try:
            if replay:
                print(f"playing again the games of {', '.join(replay)}: "
                      f"{store.rewrite_without(replay)} games dropped", file=sys.stderr)
            store.open(meta_out)
        except BaseException:
            if cluster:
                transport.close()  # type: ignore[attr-defined]
            raise
        progress = Progress(total, already)
        print(f"{folder}: {total} games ({progress.done} already played), "
              f"seed {options['seed']}, {len(names)} bots", file=sys.stderr)
        coordinator = Coordinator(plan, done_keys, store, progress)

        def count_starts(finished: bool) -> None:
            """The bot processes started, added to those of earlier sessions."""
            starts = dict(meta_out.get("process_starts", {}).get("bots", {}))
            merge_starts(starts, coordinator.starts)
            final = {**meta_out, "process_starts": {**starts_summary(starts), "bots": starts}}
            if finished:
                final["finished"] = _now()
            try:
                write_meta(folder, final)
            except OSError as exc:
                raise disk_error(exc) from None

        interrupted = False
        try:
            with refreshing(folder, anchor=anchor):  # the site, live while games are played
                run_trio(run_games, coordinator, transport)
        except KeyboardInterrupt:
            interrupted = True
        except BaseException:
            with contextlib.suppress(UserError):  # the first failure is the one to tell
                count_starts(finished=False)
            raise
        count_starts(finished=not interrupted)
        summary = starts_summary(coordinator.starts)
        print(f"bot processes started: {summary['total']} ({summary['new']} new, "
              f"{summary['again']} again after making room, {summary['fault']} after a fault)",
              file=sys.stderr)
        _report(folder, names, anchor)  # under the lock: the standings of these games
        print(build_site(folder, anchor=anchor))  # the last line: the site's index page
        if interrupted:
            print(f"\narena: interrupted; the games played are kept in {folder / GAMES}. "
                  f"Run the same command again, or arena run --resume {folder}, to go on.",
                  file=sys.stderr)
            return 130
        return 0
    finally:
        _remove_scratch(folder / "scratch")
        store.close()



def _remove_scratch(scratch: Path) -> None:
    """Every bot's scratch directory, and the folder once empty: what bots wrote is
    theirs for a run, and a worker that died could not remove its bots'.  A file
    beside them (a bot without --sandbox wrote it there) stays, for the host to see."""
    try:
        entries = list(os.scandir(scratch))
    except OSError:
        return
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)
    with contextlib.suppress(OSError):
        scratch.rmdir()

def _report(folder: Path, names: list[str], anchor: tuple[str, float] | None,
            out: Path | None = None, *, write: bool = True) -> None:
    times = reports.DecisionTimes()
    rate_and_print(read_results(folder / GAMES, times, bots=names), names, anchor,
                   (out or folder) if write else None, title=f"Standings: {folder.name}",
                   runs=[read_meta(folder)], times=times)


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _bots(n: int) -> str:
    return f"{n} bot{'s' if n != 1 else ''}"


def _named(bots: list[str]) -> str:
    return f"bot{'s' if len(bots) != 1 else ''} {', '.join(bots)}"


def _portable(argv: tuple[str, ...]) -> list[str]:
    """A bot's command without the paths of this machine: files under the
    working directory relative to it, the program found on PATH by its name."""
    out = [relative_to_cwd(arg) for arg in argv]
    if out and os.path.isabs(out[0]):
        out[0] = os.path.basename(out[0])
    return out


def read_results(path: Path, times: reports.DecisionTimes | None = None,
                 run: str | None = None,
                 bots: Collection[str] | None = None) -> list[GameResult]:
    """The games of a games.jsonl as the small values ratings and reports use
    (a game line as a dict takes ten times the memory), their decision times
    added to ``times``.  With ``run``, deal groups are told apart from the
    same-named groups of other runs; with ``bots``, a seat naming none of them
    is refused."""
    def convert(line: dict[str, Any]) -> GameResult:
        if times is not None:
            times.add(line)
        game = GameResult.from_json(line)
        if run is not None and game.cluster is not None:
            game = attrs.evolve(game, cluster=f"{run}/{game.cluster}")
        return game

    return read_games(path, convert=convert, bots=bots)


def rate_and_print(games: list[GameResult], names: list[str],
                   anchor: tuple[str, float] | None, out: Path | None, *, title: str,
                   runs: Sequence[Mapping[str, Any]] = (),
                   times: reports.DecisionTimes | None = None) -> None:
    try:
        ratings = fit_ratings(games, anchor=anchor, bots=names)
    except ValueError as exc:
        raise UserError(f"cannot rate: {exc}") from None
    print(reports.standings_text(ratings, games))
    order = [r.bot for r in ratings.ratings]
    print(reports.render_text(reports.head_to_head_table(games, order)))
    faults = reports.fault_table(games, order)
    if faults.rows:
        print()
        print(reports.render_text(faults))
    if out is not None:
        try:
            md, csv = reports.write_reports(out, games, ratings, title=title, runs=runs,
                                            times=times)
        except OSError as exc:
            raise disk_error(exc) from None
        print(f"\nwritten: {md}, {csv}")
