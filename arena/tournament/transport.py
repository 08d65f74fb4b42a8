"""How units reach the function that plays them: in this process, in local
worker processes, or on a Dask cluster (arena.tournament.cluster).

Every transport offers game *slots* (a slot plays one game at a time, and
keeps its bot processes between units) and one call, ``play(slot, unit,
job)``, that returns the unit's ``UnitResult`` or raises ``WorkerLost``
when the process playing it died; the coordinator then gives the unit to
another slot.  Only ``worker.GameSlot.play`` plays games, wherever it runs.

Local worker processes are ``python -m arena.tournament.transport``: they
read pickled frames on stdin (the run's context once, then units) and write
results on stdout.  A worker whose stdin ends (the coordinator died, even
by kill -9) stops at once and ends its bots.
"""

from __future__ import annotations

import os
import pickle
import struct
import subprocess
import sys
from collections.abc import Collection, Sequence
from contextlib import AsyncExitStack
from types import TracebackType
from typing import Any, Final, Protocol

import attrs
import trio

from arena.errors import UserError
from arena.tournament.worker import (
    Assignment,
    GameSlot,
    RunContext,
    UnitResult,
    open_slots,
    refusal,
)

_HEADER: Final = struct.Struct("!I")
# A worker that dies this many times without finishing a unit in between is
# not started again: something is wrong with it, not with one unit.
MAX_WORKER_DEATHS: Final = 3


def worker_cpus(workers: int, available: Collection[int]) -> list[int] | None:
    """The CPU each local worker process is pinned to: one each while there are
    enough of them (the bots stay free).  A bot woken on its worker's CPU has
    mostly answered by the time the worker's write returns; woken on another,
    it answers later and costs the worker a wait (about 12 us of CPU more).
    None, every worker free, when there are more workers than CPUs."""
    cpus = sorted(available)
    if not cpus or workers > len(cpus):
        return None
    return cpus[:workers]


def pin_worker(context: RunContext, cpu: int) -> RunContext:
    """Pin this worker process to ``cpu``; the context its bots start with, which
    keeps them on every CPU it had (or on their own, with --affinity)."""
    everywhere = os.sched_getaffinity(0)
    try:
        os.sched_setaffinity(0, {cpu})
    except OSError:
        return context  # best effort: the CPU may be gone
    if context.cpus:
        return context
    return attrs.evolve(context, process_options={**context.process_options,
                                                  "cpus": frozenset(everywhere)})


class WorkerLost(Exception):
    """The process playing a unit died before it sent the unit's results."""


class Transport(Protocol):
    slots: Sequence[int]

    async def __aenter__(self) -> Transport: ...

    async def __aexit__(self, *exc: object) -> None: ...

    async def play(self, slot: int, job: Assignment) -> UnitResult: ...


class InProcess:
    """Slots in the coordinator's own trio loop (``--workers 0``)."""

    def __init__(self, context: RunContext, concurrency: int) -> None:
        self.context = context
        self.slots = list(range(concurrency))
        self._stack = AsyncExitStack()
        self._slots: dict[int, GameSlot] = {}

    async def __aenter__(self) -> InProcess:
        self._slots = await self._stack.enter_async_context(open_slots(self.context,
                                                                       self.slots))
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._stack.aclose()

    async def play(self, slot: int, job: Assignment) -> UnitResult:
        return await self._slots[slot].play(job)


# -- local worker processes --------------------------------------------------------


async def _send(stream: trio.abc.SendStream, message: object) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    await stream.send_all(_HEADER.pack(len(data)) + data)


async def _receive_exactly(stream: trio.abc.ReceiveStream, size: int) -> bytes | None:
    chunks, left = [], size
    while left:
        chunk = await stream.receive_some(min(left, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


async def _receive(stream: trio.abc.ReceiveStream) -> Any:
    """The next frame, or None at the end of the stream (a cut frame counts as the end)."""
    header = await _receive_exactly(stream, _HEADER.size)
    if header is None:
        return None
    data = await _receive_exactly(stream, _HEADER.unpack(header)[0])
    return None if data is None else pickle.loads(data)


class _Worker:
    """One worker process and the units it is playing, by slot."""

    def __init__(self, slots: list[int], cpu: int | None = None) -> None:
        self.slots = slots
        self.cpu = cpu  # the CPU it is pinned to (worker_cpus), if any
        self.process: trio.Process | None = None
        self.waiting: dict[int, trio.MemorySendChannel[UnitResult | str | None]] = {}
        self.alive = False
        self.send_lock = trio.Lock()


class LocalWorkers:
    """``workers`` processes on this machine, each with ``concurrency`` slots."""

    def __init__(self, context: RunContext, workers: int, concurrency: int) -> None:
        self.context = context
        cpus = (worker_cpus(workers, os.sched_getaffinity(0))
                if hasattr(os, "sched_setaffinity") else None)
        self._workers = [_Worker(list(range(w * concurrency, (w + 1) * concurrency)),
                                 None if cpus is None else cpus[w]) for w in range(workers)]
        self.slots = [slot for worker in self._workers for slot in worker.slots]
        self._of = {slot: worker for worker in self._workers for slot in worker.slots}
        self._nursery: trio.Nursery | None = None
        self._nursery_cm: Any = None
        self._deaths = 0  # in a row, without a unit finished in between
        self._lock = trio.Lock()

    async def __aenter__(self) -> LocalWorkers:
        self._nursery_cm = trio.open_nursery()
        self._nursery = await self._nursery_cm.__aenter__()
        async with trio.open_nursery() as starting:  # all at once: each imports arena
            for worker in self._workers:
                starting.start_soon(self._start, worker)
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        with trio.CancelScope(shield=True):
            for worker in self._workers:
                if worker.process is not None and worker.process.stdin is not None:
                    try:
                        await worker.process.stdin.aclose()  # the worker ends its bots and exits
                    except trio.BrokenResourceError:
                        pass
            with trio.move_on_after(10):
                for worker in self._workers:
                    if worker.process is not None:
                        await worker.process.wait()
            for worker in self._workers:
                if worker.process is not None and worker.process.returncode is None:
                    worker.process.kill()
                    await worker.process.wait()
        self._nursery.cancel_scope.cancel()  # type: ignore[union-attr]
        await self._nursery_cm.__aexit__(exc_type, exc, tb)

    async def _start(self, worker: _Worker) -> None:
        process = await trio.lowlevel.open_process(
            [sys.executable, "-m", "arena.tournament.transport"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            # Its own session: a Ctrl-C at the terminal reaches the coordinator
            # alone, which then ends the workers in order.
            start_new_session=True)
        worker.process, worker.alive = process, True
        assert process.stdin is not None and process.stdout is not None
        await _send(process.stdin, (self.context, worker.slots, worker.cpu))
        try:
            ready = await _receive(process.stdout)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            ready = None
        if ready != "ready":
            await process.wait()
            raise UserError(f"arena: a worker process could not start (status "
                            f"{process.returncode}); see the messages above")
        assert self._nursery is not None
        self._nursery.start_soon(self._read, worker, process)

    async def _read(self, worker: _Worker, process: trio.Process) -> None:
        assert process.stdout is not None
        while True:
            try:
                message = await _receive(process.stdout)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                message = None
            if message is None:
                break
            slot, result = message
            channel = worker.waiting.pop(slot, None)
            if channel is not None:
                channel.send_nowait(result)
        await process.wait()
        worker.alive = False
        for channel in worker.waiting.values():
            channel.send_nowait(None)
        worker.waiting.clear()

    async def play(self, slot: int, job: Assignment) -> UnitResult:
        worker = self._of[slot]
        async with self._lock:
            if not worker.alive:
                if worker.process is not None:
                    self._deaths += 1
                    if self._deaths > MAX_WORKER_DEATHS:
                        raise UserError(f"arena: worker processes died {self._deaths} times "
                                        f"without finishing a unit (status "
                                        f"{worker.process.returncode}): if a bot of the units "
                                        f"named above kills them, --sandbox stops it")
                await self._start(worker)
        send, receive = trio.open_memory_channel[UnitResult | str | None](1)
        worker.waiting[slot] = send
        process = worker.process
        assert process is not None and process.stdin is not None
        try:
            async with worker.send_lock:
                await _send(process.stdin, (slot, job))
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass  # the reader notices the death and answers None
        result = await receive.receive()
        if result is None:
            raise WorkerLost(f"worker process {process.pid} ended "
                             f"(status {process.returncode})")
        if isinstance(result, str):
            raise UserError(result)
        self._deaths = 0
        return result


async def _serve(stdin: trio.abc.ReceiveStream, stdout: trio.abc.SendStream) -> None:
    """A worker process: the context, then units until stdin ends."""
    context, slots, cpu = await _receive(stdin)
    if cpu is not None:
        context = pin_worker(context, cpu)
    send_lock = trio.Lock()
    async with open_slots(context, slots) as game_slots, trio.open_nursery() as nursery:
        await _send(stdout, "ready")

        async def play(slot: int, job: Assignment) -> None:
            try:
                result: UnitResult | str = await game_slots[slot].play(job)
            except BaseException as exc:
                line = refusal(exc)
                if line is None:
                    raise
                result = line  # the coordinator stops with it, in one line
            async with send_lock:
                await _send(stdout, (slot, result))

        while (message := await _receive(stdin)) is not None:
            nursery.start_soon(play, *message)
        nursery.cancel_scope.cancel()  # the coordinator is gone: stop, end the bots


def main() -> None:
    async def run() -> None:
        stdin = trio.lowlevel.FdStream(os.dup(0))
        stdout = trio.lowlevel.FdStream(os.dup(1))
        # Nothing else may write to the frames' stream.
        os.dup2(2, 1)
        await _serve(stdin, stdout)

    trio.run(run)


if __name__ == "__main__":
    main()
