"""Runs an SDK bot as a protocol bot: the lines in, the answers out.

``Session`` is the protocol without I/O: it takes the referee's lines one by
one and returns what to write back (``hello`` or an answer).  ``run`` is the
loop over stdin and stdout around it.  The lines are read with the codec
(arena.protocol.codec), as the referee writes them; what a line decodes to
is remembered, because games repeat the same lines again and again.
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Callable, Iterable
from typing import IO, Final

import attrs

from arena.engine.decisions import Decision
from arena.engine.events import Event
from arena.protocol import codec
from arena.sdk.bot import Bot, Request
from arena.sdk.state import State

_CACHE_MAX: Final = 50_000  # decoded lines remembered (events and request shapes)
_INT_KEYS: Final = ("actor", "target", "claimant")


def log(text: str) -> None:
    """Write one line to stderr, the bot's log (stdout is the protocol's)."""
    try:
        sys.stderr.write(text.rstrip("\n") + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


class Session:
    """One bot process's side of the protocol, without I/O.

    ``feed(line)`` returns the line to write back, or None.  ``done`` is set
    by ``quit``.  ``log`` receives what goes to stderr.
    """

    def __init__(self, bot: Bot, log: Callable[[str], None] = log) -> None:
        name = getattr(bot, "name", None)
        if not isinstance(name, str) or not codec.valid_name(name):
            raise ValueError(f"bot name {name!r}: use 1-64 of A-Z a-z 0-9 _ . + -")
        self.bot = bot
        self.log = log
        self.limits: codec.Limits | None = None
        self.state: State | None = None
        self.done = False
        self._started = False  # on_game_start called for the current game
        self._events: dict[str, tuple[Event | None, int]] = {}
        # on_event runs for every event: not at all when the bot has none.
        self._on_event = None if type(bot).on_event is Bot.on_event else bot.on_event
        self._requests: dict[tuple[str, ...], Request] = {}

    def feed(self, line: str) -> str | None:
        if line.startswith("event "):  # most lines: no need to split the head off
            self._event(line)
            return None
        head = line.split(None, 1)[0] if line.strip() else ""
        if head == "event":
            self._event(line)
        elif head == "request":
            return self._request(line)
        elif head == "seed":
            self._seed(line)
        elif head == "game":
            self._game(line)
        elif head == "gameover":
            self._game_over(line)
        elif head == "arena":
            try:
                self.limits = codec.decode_handshake(line)[1]
            except codec.CodecError as error:
                self.log(f"sdk: odd handshake ({error}); answering it anyway")
            return f"hello {self.bot.name}"
        elif head == "quit":
            self.done = True
        return None  # any other line: ignored, as the protocol asks

    # -- the game frame -------------------------------------------------------

    def _game(self, line: str) -> None:
        self._begin()  # a game that never started still gets its hooks in order
        try:
            start = codec.decode_game_start(line)
        except codec.CodecError as error:
            self.log(f"sdk: ignored a bad game line: {error}")
            self.state = None
            return
        self.state = State(start.seat, start.names, start.variant, game=start.game)
        self._started = False

    def _seed(self, line: str) -> None:
        if self.state is None or self._started:
            return
        try:
            self.state.set_seed(codec.decode_seed(line))
        except codec.CodecError as error:
            self.log(f"sdk: ignored a bad seed line: {error}")

    def _begin(self) -> State | None:
        """The current game's state, calling on_game_start first if not done yet."""
        state = self.state
        if state is not None and not self._started:
            self._started = True
            self._hook(self.bot.on_game_start, state)
        return state

    def _game_over(self, line: str) -> None:
        state = self._begin()
        if state is None:
            return
        if state.placements is None:
            try:
                winner, placements = codec.decode_game_over(line)
            except codec.CodecError:
                winner, placements = None, ()
            state.placements, state.winner = placements, winner
        self._hook(self.bot.on_game_over, state)
        self.state = None

    # -- events and requests ----------------------------------------------------

    def _event(self, line: str) -> None:
        state = self.state if self._started else self._begin()
        if state is None:
            return
        # A line decodes to the same frozen event every time: decode it once.
        found = self._events.get(line)
        if found is None:
            found = self._decode_event(line)
        event, highest_seat = found
        if event is None:
            return
        if highest_seat >= state.players:
            self.log(f"sdk: ignored {line.strip()!r}: no such seat")
            return
        try:
            state.apply(event)
        except (IndexError, KeyError, ValueError, TypeError) as error:
            self.log(f"sdk: could not follow {line.strip()!r}: {error!r}")
            return
        if self._on_event is not None:
            try:
                self._on_event(state, event)
            except Exception:  # noqa: BLE001 - a bot's bug must not end the process
                self.log(f"sdk: on_event failed:\n{traceback.format_exc().rstrip()}")

    def _decode_event(self, line: str) -> tuple[Event | None, int]:
        try:
            event: Event | None = codec.decode_event(line.strip())
        except codec.CodecError:
            event = None  # an event this SDK does not know: ignored
        found = (event, _highest_seat(event) if event is not None else -1)
        if len(self._events) >= _CACHE_MAX:
            self._events.clear()
        self._events[line] = found
        return found

    def _request(self, line: str) -> str | None:
        fields = line.split()
        try:
            request = self._decode_request(fields, line)
        except (codec.CodecError, ValueError, IndexError) as error:
            self.log(f"sdk: cannot read {line.strip()!r}: {error}")
            return self._answer_anyway(fields)
        state = self._begin()
        if state is None:
            self.log(f"sdk: request {request.id} outside a game; answering {request.safe()}")
            return codec.encode_answer(request.id, request.safe())
        answer: object
        try:
            answer = self.bot.decide(state, request)
        except Exception:  # noqa: BLE001 - a bot's bug must not cost it the game
            self.log(f"sdk: decide failed on request {request.id}, answering "
                     f"{request.safe()}:\n{traceback.format_exc().rstrip()}")
            return codec.encode_answer(request.id, request.safe())
        return codec.encode_answer(request.id, self._legal_answer(request, answer))

    def _legal_answer(self, request: Request, answer: object) -> Decision:
        for decision in request.legal:
            if decision is answer:
                return decision
        if isinstance(answer, Decision) and answer in request.legal:
            return answer
        self.log(f"sdk: decide returned {answer!r}, not one of request {request.id}'s legal "
                 f"answers; answering {request.safe()}")
        return request.safe()

    def _decode_request(self, fields: list[str], line: str) -> Request:
        # The shape of a request (kind, context, answers) recurs: only the id and
        # the bank change.  Decode each shape once with the codec.
        bank = next((i for i, f in enumerate(fields) if f.startswith("bank_ms=")), None)
        if bank is None or len(fields) < 2:
            raise ValueError("no bank_ms")
        key = (*fields[2:bank], *fields[bank + 1:])
        shape = self._requests.get(key)
        if shape is None:
            decoded = codec.decode_request(line)
            context = dict(decoded.context)
            ints = {k: int(v) for k in _INT_KEYS if (v := context.get(k, "")).isdigit()}
            shape = Request(0, decoded.kind, decoded.legal, 0, ints.get("actor"),
                            context.get("action"), ints.get("target"), ints.get("claimant"),
                            context.get("character"), context)
            if len(self._requests) >= _CACHE_MAX:
                self._requests.clear()
            self._requests[key] = shape
        bank_text = fields[bank][8:]
        if not fields[1].isdigit() or not bank_text.isdigit():
            raise ValueError("a bad request id or bank")
        return Request(int(fields[1]), shape.kind, shape.legal, int(bank_text), shape.actor,
                       shape.action, shape.target, shape.claimant, shape.character,
                       shape.context)

    def _answer_anyway(self, fields: list[str]) -> str | None:
        """An unreadable request still gets an answer if it lists any."""
        if len(fields) > 2 and ":" in fields and fields[-1] != ":" and fields[1].isdigit():
            return f"{fields[1]} {fields[-1]}"
        return None

    def _hook(self, hook: Callable[..., None], *args: object) -> None:
        try:
            hook(*args)
        except Exception:  # noqa: BLE001 - a bot's bug must not end the process
            self.log(f"sdk: {hook.__name__} failed:\n{traceback.format_exc().rstrip()}")


_SEAT_FIELDS: Final = frozenset({"seat", "target", "actor", "blocker", "claimant",
                                   "challenger", "examiner", "first"})
_FIELDS_OF: dict[type, tuple[str, ...]] = {}


def _highest_seat(event: Event) -> int:
    """The highest seat an event names (a referee's events name only seats of
    the game; a hand-written one may not), or -1."""
    names = _FIELDS_OF.get(type(event))
    if names is None:
        names = _FIELDS_OF[type(event)] = tuple(
            field.name for field in attrs.fields(type(event)) if field.name in _SEAT_FIELDS)
    return max((seat for name in names if (seat := getattr(event, name)) is not None),
               default=-1)


def run(bot: type[Bot] | Bot, lines: Iterable[str] | None = None,
        out: IO[str] | None = None) -> None:
    """Play ``bot`` (a Bot subclass, or an instance) as a protocol bot.

    Reads the referee's lines from stdin (or ``lines``) and writes the hello
    and the answers to stdout (or ``out``), flushing each.  Returns on
    ``quit`` or at the end of the input.
    """
    instance = bot() if isinstance(bot, type) else bot
    session = Session(instance)
    source = sys.stdin if lines is None else lines
    sink = sys.stdout if out is None else out
    try:
        for line in source:
            reply = session.feed(line)
            if reply is not None:
                sink.write(reply + "\n")
                sink.flush()
            if session.done:
                break
    except (BrokenPipeError, KeyboardInterrupt):
        pass
