"""Playing work units: the one function every transport runs.

A ``GameSlot`` plays one game at a time with bot processes it keeps from
game to game and from unit to unit (an LRU of ``keep`` bots), so a worker
that plays the units of a lane starts each bot about once.  ``play_unit``
returns plain values (game lines, gzipped records, process starts): the
coordinator, in-process, in a worker process or across a Dask cluster,
writes them.  Nothing here writes the results folder but the bots' own
stderr logs, one file per bot and slot.
"""

from __future__ import annotations

import bisect
import math
from collections import Counter, OrderedDict
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any, Final

import attrs
import trio

from arena.engine.game import GameConfig
from arena.engine.record import gzipped
from arena.files import user_error_in
from arena.protocol import codec
from arena.referee.bots import BotSpec, file_name
from arena.referee.lineup import BotHost, Lineup, open_lineup, start_all
from arena.referee.match import GameReport, play_game
from arena.tournament.schedule import ScheduledGame
from arena.tournament.units import DEFAULT_KEEP, WorkUnit

# Why a bot process was started.
NEW: Final = "new"  # the first time this slot needed the bot
AGAIN: Final = "again"  # needed again after the slot let it go to make room
FAULT: Final = "fault"  # restarted after a fault ended the last one
START_REASONS: Final = (NEW, AGAIN, FAULT)


@attrs.frozen
class RunContext:
    """What every unit of a run needs besides its tables: plain and picklable."""

    specs: tuple[BotSpec, ...]
    config: GameConfig  # players, variant, draft, turn limit
    limits: codec.Limits
    seed: int
    process_options: dict[str, Any] = attrs.field(factory=dict)  # limits, sandbox
    keep: int = DEFAULT_KEEP  # bot processes a slot keeps alive between games
    # --affinity: slot s runs its bots on CPU cpus[s % len(cpus)]; () leaves them free.
    cpus: tuple[int, ...] = ()
    logs: Path | None = None  # the bots' stderr logs (None: under scratch)
    scratch: Path = Path("scratch")  # the bots' working directories
    build_network: bool = False  # a sandboxed build on a cluster worker keeps the network

    def slot_options(self, slot: int) -> dict[str, Any]:
        """The ``open_bot_process`` options of slot ``slot``'s bots."""
        if not self.cpus:
            return self.process_options
        return {**self.process_options, "cpus": frozenset({self.cpus[slot % len(self.cpus)]})}


@attrs.frozen
class Assignment:
    """A unit as a slot is to play it: which of its games, and where their
    records will be (reserved by the coordinator, so each bot's log can name
    the record of each game it plays)."""

    unit: WorkUnit
    skip: frozenset[tuple[str, int]] = frozenset()  # games already stored
    records: tuple[str, ...] | None = None  # the record of each game played, in order


@attrs.frozen
class UnitResult:
    """A played unit: a line and a gzipped record per game, and process starts."""

    unit: int
    games: tuple[tuple[dict[str, Any], bytes], ...]
    starts: dict[str, dict[str, int]]  # bot -> reason -> processes started
    worker: str = ""  # who played it (a Dask worker's address)


def game_line(game: ScheduledGame, report: GameReport) -> dict[str, Any]:
    """The games.jsonl line of a finished game."""
    result = report.result
    return {
        "group": game.group_key,
        "index": game.index,
        "seats": list(game.seats),
        "seed": game.seed,
        "placements": result["placements"],
        "turns": result["turns"],
        "end": result["reason"],
        "faults": [f.to_json() if f else None for f in report.faults],
        "duration": round(report.duration, 4),
        "decision_ms": report.record.referee.get("decision_ms"),
    }


def record_bytes(report: GameReport) -> bytes:
    """The game's record as a records/N.json.gz file holds it."""
    return gzipped(report.record)


class GameSlot:
    """One game at a time, with the bot processes of recent games kept alive."""

    def __init__(self, context: RunContext, lineup: Lineup, slot: int) -> None:
        self.context = context
        self.slot = slot
        self._lineup = lineup
        self._specs = {spec.name: spec for spec in context.specs}
        self._hosts: OrderedDict[str, BotHost] = OrderedDict()  # most recently used last
        self._met: set[str] = set()
        self.closed = trio.Event()  # set: whoever holds the slot open ends its bots

    async def close(self) -> None:
        self.closed.set()

    @property
    def bots(self) -> frozenset[str]:
        """The bots this slot has processes of (or had, before a fault)."""
        return frozenset(self._hosts)

    def _host(self, name: str) -> BotHost:
        found = self._hosts.pop(name, None)
        if found is None:
            ctx, tag = self.context, f"{file_name(name)}.w{self.slot}"
            logs = ctx.logs if ctx.logs is not None else ctx.scratch / "logs"
            found = self._lineup.host(self._specs[name], scratch_dir=ctx.scratch / tag,
                                      log_path=logs / f"{tag}.log")
        self._hosts[name] = found
        return found

    def _evict(self, game: ScheduledGame, position: int, uses: dict[str, list[int]]) -> str:
        """The bot to let go: one the unit needs no more (least recently used first),
        else the one it needs again last.  Plain LRU would throw out a lane's own bots
        while another block of bots goes by, just before they are needed again."""
        best, best_next = "", -1
        for name in self._hosts:  # least recently used first
            if name in game.seats:
                continue
            later = uses.get(name, ())
            i = bisect.bisect_right(later, position)
            upcoming = later[i] if i < len(later) else math.inf
            if upcoming == math.inf:
                return name
            if upcoming > best_next:
                best, best_next = name, upcoming
        return best

    async def play(self, job: Assignment) -> UnitResult:
        """Every game of the unit but those skipped, one after the other."""
        ctx, unit, skip = self.context, job.unit, job.skip
        starts: dict[str, Counter[str]] = {}
        played: list[tuple[dict[str, Any], bytes]] = []
        games = [game for group in unit.groups(ctx.seed) for game in group.games
                 if (game.group_key, game.index) not in skip]
        uses: dict[str, list[int]] = {}  # bot -> the positions of its games in the unit
        for position, game in enumerate(games):
            for name in game.seats:
                uses.setdefault(name, []).append(position)
        for position, game in enumerate(games):
            table = [self._host(name) for name in game.seats]
            while len(self._hosts) > max(ctx.keep, len(table)):
                await self._lineup.release(self._hosts.pop(self._evict(game, position, uses)))
            before = [host.starts for host in table]
            seats = await start_all(table)
            for host, count in zip(table, before, strict=True):
                if host.starts > count:
                    name = host.spec.name
                    reason = FAULT if count else AGAIN if name in self._met else NEW
                    starts.setdefault(name, Counter())[reason] += host.starts - count
                    self._met.add(name)
            record = None if job.records is None else job.records[position]
            report = await play_game(seats, ctx.config, game.seed, ctx.limits,
                                     record_name=record)
            line = game_line(game, report)
            if record is not None:
                line["record"] = record
            played.append((line, record_bytes(report)))
        return UnitResult(unit.id, tuple(played),
                          {name: dict(c) for name, c in starts.items()})


def refusal(exc: BaseException) -> str | None:
    """The one line a unit's failure is told in (a full disk under the bots' logs,
    say), or None for a failure that is a bug and keeps its traceback."""
    found = user_error_in(exc)
    return None if found is None else str(found)


def merge_starts(total: dict[str, dict[str, int]], more: dict[str, dict[str, int]]) -> None:
    """Add one unit's process starts to a running count (in place)."""
    for name, reasons in more.items():
        into = total.setdefault(name, {})
        for reason, count in reasons.items():
            into[reason] = into.get(reason, 0) + count


def starts_summary(starts: dict[str, dict[str, int]]) -> dict[str, int]:
    """Processes started, in all and by reason."""
    totals = {reason: 0 for reason in START_REASONS}
    for reasons in starts.values():
        for reason, count in reasons.items():
            totals[reason] = totals.get(reason, 0) + count
    return {"total": sum(totals.values()), **totals}


@asynccontextmanager
async def open_slots(context: RunContext, slots: Sequence[int]) -> AsyncIterator[
        dict[int, GameSlot]]:
    """Game slots ``slots``, each with its own lineup; every bot ended on the way out."""
    limiter = trio.CapacityLimiter(max(1, len(slots)))  # bot starts at once
    async with AsyncExitStack() as stack:
        found = {}
        for slot in slots:
            lineup = await stack.enter_async_context(open_lineup(
                limits=context.limits, start_limiter=limiter,
                process_options=context.slot_options(slot)))
            found[slot] = GameSlot(context, lineup, slot)
        yield found
