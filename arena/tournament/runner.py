"""The coordinator: hands work units to game slots and stores what comes back.

It is the only writer of the results folder.  Each slot asks for its next
unit (see units.Dispatcher: the lane it is in, for locality); the transport
plays it (in-process, in local worker processes, or on a Dask cluster) and
returns its games, which are stored as they arrive.  A unit's results are
accepted once, and a game already in games.jsonl is never stored again, so
a unit played twice (its worker died after finishing, Dask ran it twice) is
counted once.  A unit whose worker died is played again by another slot.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

import trio

from arena.tournament.store import SYNC_SECONDS, Store
from arena.tournament.transport import Transport, WorkerLost
from arena.tournament.units import Dispatcher, UnitPlan, WorkUnit
from arena.tournament.worker import Assignment, UnitResult, game_line, merge_starts

__all__ = ["Coordinator", "Progress", "game_line", "run_games"]


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

    def restart(self) -> None:
        """Start the clock (again) now."""
        self.started = self.last = self.clock()

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


class Coordinator:
    """Which units are left, and the results accepted so far."""

    def __init__(self, plan: UnitPlan, done: set[tuple[str, int]], store: Store,
                 progress: Progress | None) -> None:
        self.dispatcher = Dispatcher(plan.units)
        self.done = done  # (group, index) of every game stored
        self.store = store
        self.progress = progress
        self.accepted: set[int] = set()
        self.starts: dict[str, dict[str, int]] = {}
        self.played = 0
        self.lost = 0  # units given back after their worker died
        self.in_flight = 0
        self._changed = trio.Event()

    def notify(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    async def wait_for_change(self) -> None:
        """Until a unit comes back or is given back."""
        await self._changed.wait()

    def next_unit(self, slot: object) -> Assignment | None:
        """The next unit for ``slot`` (without its games already played, with the
        names of their records), or None."""
        while (unit := self.dispatcher.take(slot)) is not None:
            if unit.id in self.accepted:
                continue
            skip: frozenset[tuple[str, int]] = frozenset()
            if self.done:
                skip = frozenset(key for key in unit.game_keys() if key in self.done)
            if len(skip) < unit.games:
                # A number reserved for a game that is not stored (its worker died,
                # or another run of the unit came first) is skipped, never reused.
                records = tuple(self.store.reserve() for _ in range(unit.games - len(skip)))
                return Assignment(unit, skip, records)
        return None

    def accept(self, result: UnitResult) -> None:
        """Store a unit's games, once: a unit or game seen before adds nothing."""
        if result.unit in self.accepted:
            return
        self.accepted.add(result.unit)
        merge_starts(self.starts, result.starts)
        for line, record in result.games:
            key = (line["group"], line["index"])
            if key in self.done:
                continue
            self.store.append(line, record, line.get("record"))
            self.done.add(key)
            self.played += 1
            if self.progress is not None:
                self.progress.add(line)

    def give_back(self, slot: object, unit: WorkUnit) -> None:
        self.lost += 1
        self.dispatcher.give_back(unit)
        self.dispatcher.leave(slot)


async def run_games(coordinator: Coordinator, transport: Transport) -> int:
    """Play every unit left through ``transport``; the number of games stored."""
    # Results are stored by one task of their own, so a slot asks for its next
    # unit at once instead of waiting while the last one's games are written.
    send, receive = trio.open_memory_channel[UnitResult](math.inf)

    async def drive(slot: int, results: trio.MemorySendChannel[UnitResult]) -> None:
        async with results:
            while True:
                job = coordinator.next_unit(slot)
                if job is None:
                    if coordinator.in_flight == 0:
                        return
                    await coordinator.wait_for_change()  # a lost unit may come back
                    continue
                coordinator.in_flight += 1
                try:
                    result = await transport.play(slot, job)
                except WorkerLost as exc:
                    # Its bots are named: without --sandbox, one of them may have killed it.
                    print(f"arena: {exc} in a unit of {', '.join(sorted(job.unit.bots))}; "
                          f"the unit is played again", file=sys.stderr)
                    coordinator.give_back(slot, job.unit)
                else:
                    results.send_nowait(result)
                finally:
                    coordinator.in_flight -= 1
                    coordinator.notify()

    async def store() -> None:
        # In a thread: fsyncs must not hold up the slots (nor, with --workers 0,
        # the games).  One call at a time, so the folder keeps one writer; a sync
        # when games stored a while ago are not yet on the disk (Store.sync_due).
        async with receive:
            while True:
                result = None
                with trio.move_on_after(SYNC_SECONDS):
                    try:
                        result = await receive.receive()
                    except trio.EndOfChannel:
                        return
                if result is not None:
                    await trio.to_thread.run_sync(coordinator.accept, result)
                if coordinator.store.sync_due():
                    await trio.to_thread.run_sync(coordinator.store.sync)

    async with transport, trio.open_nursery() as nursery:
        if coordinator.progress is not None:
            coordinator.progress.restart()  # the rate counts play, not starting workers
        nursery.start_soon(store)
        async with send:
            for slot in transport.slots:
                nursery.start_soon(drive, slot, send.clone())
    return coordinator.played
