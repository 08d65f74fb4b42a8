"""Plays a tournament's games with bot processes, several at a time (trio).

Workers take deal groups from a channel and play their games one after the
other; each worker keeps its own processes of the bots it met last (an LRU
of ``keep`` bots), so processes are reused from game to game and restarted
only after a fault.  Process starts are throttled across workers.  Every
finished game goes straight to the store; results never wait in memory.
"""

from __future__ import annotations

import math
import sys
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TextIO

import attrs
import trio

from arena.engine.game import GameConfig
from arena.protocol import codec
from arena.referee.bots import BotSpec, file_name
from arena.referee.lineup import BotHost, open_lineup, start_all
from arena.referee.match import GameReport, play_game
from arena.tournament.schedule import DealGroup, ScheduledGame
from arena.tournament.store import LOGS, Store


@attrs.frozen
class RunPlan:
    specs: tuple[BotSpec, ...]
    config: GameConfig  # players, variant, draft, turn limit
    limits: codec.Limits
    concurrency: int
    keep: int = 8  # bot processes a worker keeps alive between games
    process_options: dict[str, Any] = attrs.field(factory=dict)
    # --affinity: worker w runs its bots on CPU cpus[w % len(cpus)]; () leaves them free.
    cpus: tuple[int, ...] = ()

    def worker_options(self, wid: int) -> dict[str, Any]:
        """The ``open_bot_process`` options of worker ``wid``'s bots."""
        if not self.cpus:
            return self.process_options
        return {**self.process_options, "cpus": frozenset({self.cpus[wid % len(self.cpus)]})}


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


class Progress:
    """Games done of total, rate, time left and the leader: a live line on a
    terminal, a plain line every ``every`` seconds on a pipe."""

    def __init__(self, total: int, done: int, out: TextIO | None = None, every: float = 10.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.total = total
        self.done_before = done
        self.done = done
        # sys.stderr as it is now, not as it was when this module was imported.
        self.out = sys.stderr if out is None else out
        self.every = every
        self.clock = clock
        self.started = clock()
        self.last = self.started
        self.tty = self.out.isatty()
        self.points: dict[str, float] = {}
        self.played: dict[str, int] = {}

    def add(self, line: dict[str, Any]) -> None:
        self.done += 1
        seats, places = line["seats"], line["placements"]
        n = len(seats)
        for seat, name in enumerate(seats):
            # The share of the table this seat beat, ties counting half.
            beaten = sum(1 for p in places if p > places[seat])
            tied = sum(1 for p in places if p == places[seat]) - 1
            self.points[name] = self.points.get(name, 0.0) + (beaten + tied / 2) / (n - 1)
            self.played[name] = self.played.get(name, 0) + 1
        now = self.clock()
        if self.tty or now - self.last >= self.every or self.done == self.total:
            self.last = now
            self.show(now)

    def line(self, now: float) -> str:
        played_now = self.done - self.done_before
        elapsed = max(now - self.started, 1e-9)
        rate = played_now / elapsed
        left = (self.total - self.done) / rate if rate > 0 else math.inf
        eta = "?" if math.isinf(left) else _duration(left)
        leader = ""
        if self.points:
            best = max(self.points, key=lambda b: self.points[b] / self.played[b])
            leader = f", leader {best} {100 * self.points[best] / self.played[best]:.0f}%"
        return (f"{self.done}/{self.total} games, {rate:.1f} games/s, "
                f"{eta} left{leader}")

    def show(self, now: float) -> None:
        text = self.line(now)
        if self.tty:
            self.out.write("\r\x1b[K" + text)
            if self.done == self.total:
                self.out.write("\n")
        else:
            self.out.write(text + "\n")
        self.out.flush()


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    if seconds >= 60:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds}s"


async def run_games(plan: RunPlan, groups: Sequence[DealGroup], done: Iterable[tuple[str, int]],
                    store: Store, progress: Progress | None) -> int:
    """Play every game of ``groups`` not in ``done``; the number played."""
    finished = set(done)
    todo = [[g for g in group.games if (g.group_key, g.index) not in finished]
            for group in groups]
    todo = [games for games in todo if games]
    specs = {spec.name: spec for spec in plan.specs}
    limiter = trio.CapacityLimiter(max(1, plan.concurrency))
    played = 0
    send, receive = trio.open_memory_channel[list[ScheduledGame]](0)
    results_send, results_receive = trio.open_memory_channel[
        tuple[ScheduledGame, GameReport, str]](plan.concurrency)

    async def feed() -> None:
        async with send:
            for games in todo:
                await send.send(games)

    async def worker(wid: int, receive: trio.MemoryReceiveChannel[list[ScheduledGame]],
                     results: trio.MemorySendChannel[tuple[ScheduledGame, GameReport, str]],
                     ) -> None:
        hosts: OrderedDict[str, BotHost] = OrderedDict()
        async with open_lineup(limits=plan.limits, start_limiter=limiter,
                               process_options=plan.worker_options(wid)) as lineup:

            def host(name: str) -> BotHost:
                found = hosts.pop(name, None)
                if found is None:
                    found = lineup.host(
                        specs[name],
                        scratch_dir=store.folder / "scratch" / f"{file_name(name)}.w{wid}",
                        log_path=store.folder / LOGS / f"{file_name(name)}.w{wid}.log")
                hosts[name] = found  # most recently used last
                return found

            async with receive, results:
                async for games in receive:
                    for game in games:
                        table = [host(name) for name in game.seats]
                        while len(hosts) > max(plan.keep, len(table)):
                            await lineup.release(hosts.popitem(last=False)[1])
                        seats = await start_all(table)
                        record = store.reserve()
                        report = await play_game(seats, plan.config, game.seed, plan.limits,
                                                 record_name=record)
                        await results.send((game, report, record))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(feed)
        async with results_send:
            for wid in range(max(1, min(plan.concurrency, len(todo)))):
                nursery.start_soon(worker, wid, receive.clone(), results_send.clone())
        await receive.aclose()
        async with results_receive:
            async for game, report, record in results_receive:
                line = game_line(game, report)
                store.append(line, report.record, record)
                played += 1
                if progress is not None:
                    progress.add(line)
    return played
