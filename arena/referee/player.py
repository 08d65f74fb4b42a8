"""One bot, speaking protocol v1 over its process, on the referee's clock.

A ``BotPlayer`` wraps a running ``BotProcess``: it does the handshake, queues
the event lines of the game, sends them together with each request in one
write, and reads the answer under the per-decision limit plus the time bank.
Everything a bot can do wrong becomes a ``Fault`` (raised as ``BotFaulted``)
with its evidence; nothing else escapes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Final

import attrs
import trio

from arena.engine.decisions import Decision, Request
from arena.protocol import codec
from arena.referee import process as proc

# How long an unsolicited line may take to arrive in full before the request.
_UNSOLICITED_WAIT: Final = 0.05
_QUOTE: Final = 200
# Answers a bot may give with no scheduler pass in between (see ask).
_PASS_EVERY: Final = 16


def _quote(line: str | None) -> str | None:
    if line is None or len(line) <= _QUOTE:
        return line
    return line[:_QUOTE] + f"... ({len(line)} chars)"


@attrs.frozen
class Fault:
    """What a bot did wrong, with the evidence a bot author needs to fix it."""

    kind: str  # one of codec.FAULTS
    detail: str  # plain words
    line: str | None = None  # the offending line (cut to 200 characters)
    request: str | None = None  # the request it answered
    elapsed: float | None = None  # seconds from the request to the fault
    exit: str | None = None  # how the process ended, if it did

    def to_json(self) -> dict[str, object]:
        return {k: v for k, v in attrs.asdict(self).items() if v is not None}


class BotFaulted(Exception):
    def __init__(self, fault: Fault) -> None:
        self.fault = fault
        super().__init__(f"{fault.kind}: {fault.detail}")


class Asked:
    """A request sent whose answer ``BotPlayer.answer`` is to take."""

    __slots__ = ("request_id", "request_line", "legal", "bank_ms", "start", "limit")

    def __init__(self, request_id: int, request_line: str, legal: Sequence[Decision],
                 bank_ms: int, start: float, limit: float) -> None:
        self.request_id = request_id
        self.request_line = request_line
        self.legal = legal
        self.bank_ms = bank_ms
        self.start = start  # when it was sent, on trio's clock
        self.limit = limit  # seconds it may take: the decision limit and the bank


class BotPlayer:
    """A bot process that has answered the handshake; reused across games."""

    def __init__(self, name: str, process: proc.BotProcess, limits: codec.Limits) -> None:
        self.name = name
        self.process = process
        self.limits = limits
        self.hello: str | None = None  # the name the bot gave
        self.startup_time: float | None = None
        self.broken = False  # must be restarted before its next game: see mark_broken
        # Called once when it breaks; its host ends the process then, not at its next use.
        self.on_broken: Callable[[], None] | None = None
        self.games = 0  # games started in this process: the protocol's game number
        self._next_id = 1
        # The lines to send with the next request (or at the end of the game), in
        # order: one list for the player's life, so a game may keep it at hand.
        self.outbox: list[str] = []
        self._unpassed = 0  # answers taken since the last scheduler pass

    # -- faults ----------------------------------------------------------------

    def mark_broken(self) -> None:
        """Unfit for another game (a fault, an answer cut off): it gets a new process."""
        if not self.broken:
            self.broken = True
            if self.on_broken is not None:
                self.on_broken()

    def _fault(self, kind: str, detail: str, *, line: str | None = None,
               request: str | None = None, elapsed: float | None = None) -> BotFaulted:
        self.mark_broken()
        # A bot killed for a resource limit shows as a crash or a timeout: say why.
        limit = getattr(self.process, "limit_hit", None)
        if limit is not None:
            kind, detail = codec.LIMIT, f"over its limit: {limit} ({kind}: {detail})"
        exit_text = None
        if self.process.returncode is not None:
            exit_text = self.process.describe_exit()
        return BotFaulted(Fault(kind, detail, _quote(line), _quote(request),
                                None if elapsed is None else round(elapsed, 4), exit_text))

    def _output_fault(self, exc: proc.BotFault, request: str | None,
                      elapsed: float | None) -> BotFaulted:
        if isinstance(exc, proc.LineTooLong):
            start = exc.start.decode("utf-8", "replace")
            shown = f" (its first {len(exc.start)} bytes are quoted)" if start else ""
            return self._fault(codec.MALFORMED, f"a line longer than {codec.MAX_LINE_FROM_BOT} "
                               f"bytes{shown}", line=start or None,
                               request=request, elapsed=elapsed)
        if isinstance(exc, proc.InvalidUtf8):
            return self._fault(codec.MALFORMED, "a line that is not UTF-8",
                               line=exc.raw.decode("utf-8", "replace"), request=request,
                               elapsed=elapsed)
        return self._fault(codec.CRASH, str(exc), request=request, elapsed=elapsed)

    # -- the protocol ------------------------------------------------------------

    async def handshake(self) -> None:
        """Send the handshake and read ``hello`` within the start-up limit."""
        start = trio.current_time()
        line = None
        try:
            with trio.move_on_after(self.limits.startup_ms / 1000):
                await self.process.send_line(codec.encode_handshake(self.limits))
                line = await self.process.read_line()
        except proc.BotFault as exc:
            raise self._output_fault(exc, "handshake", trio.current_time() - start) from None
        elapsed = trio.current_time() - start
        if line is None:
            raise self._fault(codec.TIMEOUT, f"no hello within the start-up limit of "
                              f"{self.limits.startup_ms} ms", request="handshake", elapsed=elapsed)
        try:
            self.hello = codec.decode_hello(line)
        except codec.CodecError as exc:
            raise self._fault(exc.fault, str(exc), line=line, request="handshake",
                              elapsed=elapsed) from None
        self.startup_time = elapsed

    @property
    def next_request_id(self) -> int:
        """The id of the next request (ids run on across the games of a process)."""
        return self._next_id

    def queue(self, line: str) -> None:
        """A line to send with the next request (or at the end of the game)."""
        self.outbox.append(line)

    def queue_lines(self, lines: Iterable[str]) -> None:
        """Lines to send with the next request, in order."""
        self.outbox.extend(lines)

    async def ask(self, request: Request, legal: Sequence[Decision],
                  bank_ms: int) -> tuple[Decision, float]:
        """Send the queued lines and the request; the answer and its time in seconds."""
        # Answers taken at once need no scheduler pass (ask_at_once): one every
        # _PASS_EVERY asks, so that a game of fast bots cannot starve other
        # tasks and its own deadlines.  The pass comes after the request is
        # sent and before its answer is read: a game's time cap delivered there
        # cuts off a request the bot has (as seat_lines rebuilds it), never one
        # unsent.
        self._unpassed += 1
        if self._unpassed < _PASS_EVERY:
            asked = self.ask_at_once(request, legal, bank_ms)
        else:
            self._unpassed = 0
            asked = self.ask_at_once(request, legal, bank_ms, take=False)
            if asked is not None:
                await trio.lowlevel.checkpoint()
                asked = self._take_now(asked)  # type: ignore[arg-type]
        if asked is None:
            return await self._ask_waiting(request, legal, bank_ms)
        if type(asked) is Asked:
            return await self.answer(asked)
        return asked  # type: ignore[return-value]

    def ask_at_once(self, request: Request, legal: Sequence[Decision], bank_ms: int,
                    take: bool = True) -> tuple[Decision, float] | Asked | None:
        """``ask`` without waiting: the request sent if the pipe takes it at once,
        and the answer if the bot has written it by the time the write returns
        (a fast bot woken on this CPU runs at once, and mostly has).

        Returns the answer and its time, or an ``Asked`` if it is not there yet
        (``answer`` waits for it), or None, with nothing sent, if the request
        cannot go at once (output came unasked, the pipe is full): then ``ask``.
        Raises ``BotFaulted`` as ``ask`` does.  ``take=False``: the request
        only (an ``Asked`` if sent), its answer not looked for."""
        process = self.process
        if process.output_waiting():
            return None
        request_id = self._next_id
        request_line = codec.encode_request(request_id, request, legal, bank_ms)
        outbox = self.outbox
        outbox.append(request_line)
        start = trio.current_time()
        if not process.send_lines_nowait(outbox):
            outbox.pop()
            return None
        self._next_id += 1
        outbox.clear()
        asked = Asked(request_id, request_line, legal, bank_ms, start,
                      (self.limits.decision_ms + max(bank_ms, 0)) / 1000)
        return self._take_now(asked) if take else asked

    def _take_now(self, asked: Asked) -> tuple[Decision, float] | Asked:
        """The answer to a request sent, if the bot has written it, else ``asked``
        (as ``ask_at_once`` takes it)."""
        try:
            line = self.process.read_line_nowait()
        except proc.BotFault as exc:
            raise self._output_fault(exc, asked.request_line,
                                     trio.current_time() - asked.start) from None
        if line is None:
            return asked
        end = trio.current_time()
        if end >= asked.start + asked.limit:
            line = None  # in time as under answer's deadline
        return self._decision(asked, line, end)

    async def answer(self, asked: Asked) -> tuple[Decision, float]:
        """Wait for the answer to a request ``ask_at_once`` sent, within its deadline."""
        line = None
        try:
            with trio.move_on_at(asked.start + asked.limit):
                line = await self.process.read_line()
        except proc.BotFault as exc:
            raise self._output_fault(exc, asked.request_line,
                                     trio.current_time() - asked.start) from None
        return self._decision(asked, line, trio.current_time())

    async def _ask_waiting(self, request: Request, legal: Sequence[Decision],
                           bank_ms: int) -> tuple[Decision, float]:
        """``ask`` when the request cannot go at once: output sent unasked is
        refused, and the lines are written under the answer's deadline."""
        request_id = self._next_id
        self._next_id += 1
        request_line = codec.encode_request(request_id, request, legal, bank_ms)
        if self.process.output_waiting():
            await self._refuse_unsolicited(request_line)
        lines = [*self.outbox, request_line]
        self.outbox.clear()
        asked = Asked(request_id, request_line, legal, bank_ms, trio.current_time(),
                      (self.limits.decision_ms + max(bank_ms, 0)) / 1000)
        line = None
        try:
            with trio.move_on_at(asked.start + asked.limit):
                await self.process.send_lines(lines)
                line = await self.process.read_line()
        except proc.BotFault as exc:
            raise self._output_fault(exc, request_line,
                                     trio.current_time() - asked.start) from None
        return self._decision(asked, line, trio.current_time())

    def _decision(self, asked: Asked, line: str | None, end: float) -> tuple[Decision, float]:
        """The decision an answer line gives (None: none in time), and its time."""
        elapsed = end - asked.start
        if line is None:
            raise self._fault(codec.TIMEOUT, f"no answer within {asked.limit * 1000:.0f} ms "
                              f"({self.limits.decision_ms} ms + bank {max(asked.bank_ms, 0)} "
                              f"ms)", request=asked.request_line, elapsed=elapsed)
        try:
            decision = codec.decode_answer(line, asked.request_id, asked.legal)
        except codec.CodecError as exc:
            raise self._fault(exc.fault, str(exc), line=line, request=asked.request_line,
                              elapsed=elapsed) from None
        return decision, elapsed

    async def _refuse_unsolicited(self, request_line: str) -> None:
        # A line written (or begun) before its request was sent is a protocol
        # fault, even if it happens to carry the right id.
        if not self.process.output_waiting():
            return
        line = None
        try:
            with trio.move_on_after(_UNSOLICITED_WAIT):
                line = await self.process.read_line()
        except proc.BotFault as exc:
            raise self._output_fault(exc, request_line, None) from None
        if line is not None:
            err = codec.unsolicited(line)
            raise self._fault(err.fault, str(err), line=line, request=request_line)
        # Part of a line and no LF: an answer begun before its request. Taking
        # the rest after the request would let a bot answer before being asked
        # (and cost the referee this wait at every request).
        start = self.process.pending_output().decode("utf-8", "replace")
        err = codec.begun_early(start)
        raise self._fault(err.fault, str(err), line=start, request=request_line)

    async def end_game(self, game_over_line: str) -> None:
        """Send the rest of the game's events and the game-over line.

        The game is decided: a bot that cannot take these lines is not charged a
        fault, only restarted before its next game.
        """
        lines = self.outbox[:]
        self.outbox.clear()
        if self.broken:
            return  # it is being ended, and its next game gets a fresh process
        lines.append(game_over_line)
        try:
            with trio.move_on_after(self.limits.decision_ms / 1000) as scope:
                await self.process.send_lines(lines)
        except proc.BotFault:
            self.mark_broken()
            return
        if scope.cancelled_caught:
            self.mark_broken()
            return
        self.process.reset_cpu()  # the next game's CPU budget starts now

    def end_game_nowait(self, game_over_line: str) -> bool:
        """``end_game`` without waiting, if the pipe takes the lines whole at once
        (it mostly does: the bot has read everything up to its last answer); False,
        with nothing sent, if not: then ``end_game`` sends them."""
        if self.broken:
            self.outbox.clear()
            return True
        if not self.process.send_lines_nowait([*self.outbox, game_over_line]):
            return False
        self.outbox.clear()
        self.process.reset_cpu()  # the next game's CPU budget starts now
        return True

    def discard_queue(self) -> None:
        self.outbox.clear()
