"""Bot processes kept across games: start, restart after a fault, end.

One ``BotHost`` holds one process of one bot for one worker (a worker plays
one game at a time).  The process is reused from game to game and only
restarted when the previous game left it broken (a fault, a cut-off answer).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AsyncExitStack
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
    def __init__(
        self,
        spec: BotSpec,
        *,
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
        self._limiter = start_limiter
        self._options = process_options or {}
        self._player: BotPlayer | None = None
        self._stack: AsyncExitStack | None = None
        self._failed_starts = 0
        self._last_fault: Fault | None = None

    async def player(self) -> BotPlayer | Fault:
        """A ready player for the next game, or the fault that stopped it starting."""
        player = self._player
        if player is not None and not player.broken and player.process.usable:
            return player
        await self.close()
        if self._failed_starts >= MAX_FAILED_STARTS and self._last_fault is not None:
            return attrs.evolve(self._last_fault, detail=f"{self._last_fault.detail} (not "
                                f"started again after {MAX_FAILED_STARTS} failed starts)")
        stack = AsyncExitStack()
        try:
            if self._limiter is not None:
                async with self._limiter:
                    player = await self._start(stack)
            else:
                player = await self._start(stack)
        except BotFaulted as exc:
            await stack.aclose()
            self._failed_starts += 1
            self._last_fault = exc.fault
            return exc.fault
        except BaseException:
            with trio.CancelScope(shield=True):
                await stack.aclose()
            raise
        self._stack, self._player = stack, player
        self._failed_starts = 0
        return player

    async def _start(self, stack: AsyncExitStack) -> BotPlayer:
        self.starts += 1
        # The process's nursery (its stderr drain, its limits watchdog) outlives
        # the task that starts it (one of start_all's): when start_all's nursery
        # closes, trio cancels every scope still open under it, which killed the
        # drain (the bot then died of EPIPE at its next stderr write) and the
        # watchdog, and made a later close() raise Cancelled (so a restart gave
        # None for a seat).  Shielded once started, the process ends only by close().
        outlive = stack.enter_context(trio.CancelScope())
        try:
            process = await stack.enter_async_context(open_bot_process(
                self.spec, scratch_dir=self.scratch_dir, log_path=self.log_path,
                max_line=codec.MAX_LINE_FROM_BOT, close_grace=QUIT_GRACE, **self._options))
        except BotFault as exc:
            raise BotFaulted(Fault(codec.CRASH, str(exc))) from None
        player = BotPlayer(self.spec.name, process, self.limits)
        await player.handshake()
        outlive.shield = True
        return player

    async def close(self) -> None:
        """Say quit to a healthy bot, then end the process (kill after a grace)."""
        stack, player = self._stack, self._player
        self._stack = self._player = None
        if stack is None:
            return
        with trio.CancelScope(shield=True):
            if player is not None and not player.broken and player.process.usable:
                with trio.move_on_after(QUIT_GRACE):
                    try:
                        await player.process.send_line(codec.QUIT)
                    except BotFault:
                        pass
            elif player is not None:
                await player.process.close(0)  # a faulted bot gets no grace
            await stack.aclose()


async def start_all(hosts: Sequence[BotHost]) -> list[Any]:
    """Ready players (or start-up faults) for a table, started in parallel."""
    seats: list[Any] = [None] * len(hosts)

    async def start(i: int) -> None:
        seats[i] = await hosts[i].player()

    async with trio.open_nursery() as nursery:
        for i in range(len(hosts)):
            nursery.start_soon(start, i)
    return seats
