"""Bot processes kept across games: start, restart after a fault, end.

One ``BotHost`` holds one process of one bot for one worker (a worker plays
one game at a time).  The process is reused from game to game and only
restarted when the previous game left it broken (a fault, a cut-off answer).
"""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Final

import attrs
import trio

from arena.protocol import codec
from arena.referee.bots import BotSpec
from arena.referee.player import BotFaulted, BotPlayer, Fault
from arena.referee.process import BotFault, open_bot_process

QUIT_GRACE: Final = 1.0  # seconds a bot has to exit after "quit"
# A bot that fails to start this many times in a row is not started again in
# this run: each of its later games is forfeited at once with the last fault,
# instead of costing every table a start-up timeout.
MAX_FAILED_STARTS: Final = 3


class BotHost:
    """One bot's process for one worker, kept from game to game.

    The process lives in a task of its own, started in ``nursery`` (with
    ``nursery.start``): trio wants a nursery left by the task that entered it,
    and a process outlives the game, and the task, that first needed it.
    """

    def __init__(
        self,
        spec: BotSpec,
        *,
        nursery: trio.Nursery,
        scratch_dir: Path,
        log_path: Path,
        limits: codec.Limits,
        start_limiter: trio.CapacityLimiter | None = None,
        process_options: dict[str, Any] | None = None,
    ) -> None:
        self.spec = spec
        self.scratch_dir = scratch_dir
        self.log_path = log_path
        self.limits = limits
        self.starts = 0  # processes started so far
        self._nursery = nursery
        self._limiter = start_limiter
        self._options = process_options or {}
        self._player: BotPlayer | None = None
        self._stop: trio.Event | None = None  # set: the process's task ends it
        self._stopped: trio.Event | None = None  # set by that task once it has
        self._failed_starts = 0
        self._last_fault: Fault | None = None

    def ready_player(self) -> BotPlayer | None:
        """The player of the process that played the last game, if it may play
        the next (then ``player`` would return it at once); else None."""
        player = self._player
        if player is not None and not player.broken and player.process.usable:
            return player
        return None

    async def player(self) -> BotPlayer | Fault:
        """A ready player for the next game, or the fault that stopped it starting."""
        player = self.ready_player()
        if player is not None:
            return player
        player = self._player
        await self.close()
        if player is not None and not player.broken and player.process.limit_hit is not None:
            # Killed between games (CPU burnt, memory held after its last answer):
            # charged to this game, and its next game gets a new process.
            return Fault(codec.LIMIT, f"over its limit: {player.process.limit_hit} "
                         f"(between games)", exit=player.process.describe_exit())
        if self._failed_starts >= MAX_FAILED_STARTS and self._last_fault is not None:
            return attrs.evolve(self._last_fault, detail=f"{self._last_fault.detail} (not "
                                f"started again after {MAX_FAILED_STARTS} failed starts)")
        if self._limiter is not None:
            async with self._limiter:
                started = await self._nursery.start(self._serve)
        else:
            started = await self._nursery.start(self._serve)
        if isinstance(started, Fault):
            self._failed_starts += 1
            self._last_fault = started
            return started
        self._player = started
        self._failed_starts = 0
        return started

    async def _serve(self, *, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        """The process's whole life: start, handshake, wait for close(), end."""
        self.starts += 1
        stop, stopped = trio.Event(), trio.Event()
        announced = False
        try:
            async with open_bot_process(
                    self.spec, scratch_dir=self.scratch_dir, log_path=self.log_path,
                    max_line=codec.MAX_LINE_FROM_BOT, close_grace=QUIT_GRACE,
                    **self._options) as process:
                player = BotPlayer(self.spec.name, process, self.limits)
                try:
                    await player.handshake()
                except BotFaulted as exc:
                    await process.close(0)
                    announced = True
                    task_status.started(exc.fault)
                    return
                self._stop, self._stopped = stop, stopped
                # A bot that breaks mid-game is ended then, not when next needed: one
                # that timed out may be spinning, taking CPU from the others.
                player.on_broken = stop.set
                announced = True
                task_status.started(player)
                await stop.wait()
                with trio.CancelScope(shield=True):
                    await self._end(player)
        except BotFault as exc:
            if announced:
                raise
            task_status.started(Fault(codec.CRASH, str(exc)))  # could not be started
        finally:
            stopped.set()

    @staticmethod
    async def _end(player: BotPlayer) -> None:
        if not player.broken and player.process.usable:
            with trio.move_on_after(QUIT_GRACE):
                try:
                    await player.process.send_line(codec.QUIT)
                except BotFault:
                    pass
            await player.process.close(QUIT_GRACE)
        else:
            await player.process.close(0)  # a faulted bot gets no grace

    async def close(self) -> None:
        """Say quit to a healthy bot, then end the process (kill after a grace)."""
        stop, stopped = self._stop, self._stopped
        self._stop = self._stopped = self._player = None
        if stop is None or stopped is None:
            return
        stop.set()
        with trio.CancelScope(shield=True):
            await stopped.wait()


async def start_all(hosts: Sequence[BotHost]) -> list[Any]:
    """Ready players (or start-up faults) for a table, started in parallel."""
    seats: list[Any] = [host.ready_player() for host in hosts]
    if None not in seats:  # the usual case between games: no tasks to start
        await trio.lowlevel.checkpoint()
        return seats

    async def start(i: int) -> None:
        seats[i] = await hosts[i].player()

    async with trio.open_nursery() as nursery:
        for i in range(len(hosts)):
            nursery.start_soon(start, i)
    return seats


class Lineup:
    """The bot hosts of one referee task, and the nursery their processes live in."""

    def __init__(self, nursery: trio.Nursery, *, limits: codec.Limits,
                 start_limiter: trio.CapacityLimiter | None = None,
                 process_options: dict[str, Any] | None = None) -> None:
        self._nursery = nursery
        self._limits = limits
        self._limiter = start_limiter
        self._options = process_options
        self.hosts: list[BotHost] = []
        self.scratch_dirs: set[Path] = set()

    def host(self, spec: BotSpec, *, scratch_dir: Path, log_path: Path) -> BotHost:
        host = BotHost(spec, nursery=self._nursery, scratch_dir=scratch_dir, log_path=log_path,
                       limits=self._limits, start_limiter=self._limiter,
                       process_options=self._options)
        self.hosts.append(host)
        self.scratch_dirs.add(scratch_dir)
        return host

    def remove_scratch(self) -> None:
        """Remove the bots' scratch directories (once their processes have ended)."""
        for folder in self.scratch_dirs:
            if folder.name in ("", ".", ".."):
                continue  # never a bot's own folder (bots.file_name), never a parent
            shutil.rmtree(folder, ignore_errors=True)
            try:
                folder.parent.rmdir()  # the run's scratch/ folder, once empty
            except OSError:
                pass

    async def release(self, host: BotHost) -> None:
        """End a host's process and forget the host (an LRU eviction)."""
        self.hosts.remove(host)
        await host.close()

    async def close_all(self) -> None:
        with trio.CancelScope(shield=True):
            async with trio.open_nursery() as nursery:
                for host in self.hosts:
                    nursery.start_soon(host.close)


@asynccontextmanager
async def open_lineup(*, limits: codec.Limits, start_limiter: trio.CapacityLimiter | None = None,
                      process_options: dict[str, Any] | None = None) -> AsyncIterator[Lineup]:
    """A ``Lineup`` whose bots are all ended on the way out, whatever happens, and
    their scratch directories removed.

    An error of the body comes out as it is, never wrapped in an exception group.
    """
    body_error: BaseException | None = None
    async with trio.open_nursery() as nursery:
        lineup = Lineup(nursery, limits=limits, start_limiter=start_limiter,
                        process_options=process_options)
        try:
            yield lineup
        except BaseException as exc:
            body_error = exc  # held until the nursery is gone: not wrapped in a group
        await lineup.close_all()
    lineup.remove_scratch()  # what bots wrote is theirs for a run, not kept after it
    if body_error is not None:
        raise body_error
