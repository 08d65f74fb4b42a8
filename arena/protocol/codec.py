"""The bot protocol, version 1, as text: pure encoding and decoding, no I/O.

protocol.md at the root of the project is the specification for bot authors;
this module is its executable form.  The referee owns the pipes, the clocks
and the fault handling; it calls:

* ``encode_*`` for every line it writes to a bot;
* ``decode_hello`` and ``decode_answer`` for the lines a bot writes, which
  raise a ``CodecError`` subclass whose ``fault`` names the fault kind
  (``malformed``, ``protocol`` or ``illegal``) to charge to the bot.

The ``decode_*`` functions for referee lines (``decode_event``,
``decode_request``, ...) are the bot's side: tests, tools and Python bots
that may import this package use them.  Every referee line is plain ASCII
made of fields separated by single spaces, so ``line.split()`` reads it.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, Final

import attrs

from arena.engine import events as ev
from arena.engine.cards import ALL_CARDS
from arena.engine.decisions import Decision, Request

PROTOCOL_VERSION: Final = 1
# Line caps in bytes, not counting the LF.  The referee's longest line (an
# action request at 8 players) is under 400 bytes; an answer under 40.
MAX_LINE_TO_BOT: Final = 4096
MAX_LINE_FROM_BOT: Final = 256

QUIT: Final = "quit"
HIDDEN: Final = "?"  # a card that exists but that this seat may not see
ABSENT: Final = "-"  # a field with no value (no target, no claim, no winner)

# Fault kinds (protocol.md, "Faults").  A forfeited seat's PlayerOut.reason
# is one of these.
TIMEOUT: Final = "timeout"
CRASH: Final = "crash"
MALFORMED: Final = "malformed"
ILLEGAL: Final = "illegal"
PROTOCOL: Final = "protocol"
LIMIT: Final = "limit"
FAULTS: Final = (TIMEOUT, CRASH, MALFORMED, ILLEGAL, PROTOCOL, LIMIT)

# A bot name on the wire: one field, safe in any table or file name.
MAX_NAME: Final = 64
NAME_PATTERN: Final = re.compile(rf"[A-Za-z0-9_.+-]{{1,{MAX_NAME}}}")
_NAME_UNSAFE: Final = re.compile(r"[^A-Za-z0-9_.+-]")

_REQUEST_CONTEXT: Final = ("actor", "action", "target", "claimant", "character")
_LIMIT_KEYS: Final = ("startup_ms", "decision_ms", "bank_ms", "game_ms")
_QUOTE_MAX: Final = 80


def _whole_ms(least: int) -> Callable[[Any, attrs.Attribute[int], int], None]:
    def check(_instance: Any, attribute: attrs.Attribute[int], value: int) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise ValueError(f"{attribute.name} must be a whole number >= {least}, "
                             f"not {value!r}")

    return check


@attrs.frozen
class Limits:
    """The time limits announced in the handshake, in milliseconds.

    Invalid limits cannot be made: a handshake, a command line or a
    tournament.json that asks for them gets a ValueError saying which.
    """

    startup_ms: int = attrs.field(default=10_000, validator=_whole_ms(1))  # to ``hello``
    decision_ms: int = attrs.field(default=1_000, validator=_whole_ms(1))  # free, per answer
    # Per game: pays for the time answers take over decision_ms.
    bank_ms: int = attrs.field(default=10_000, validator=_whole_ms(0))
    game_ms: int = attrs.field(default=600_000, validator=_whole_ms(1))  # wall clock, a game

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Limits:
        """Limits from their JSON object (``attrs.asdict``); ValueError if bad."""
        missing = [key for key in _LIMIT_KEYS if key not in data]
        if missing:
            raise ValueError("limits need " + ", ".join(missing))
        return cls(**{key: data[key] for key in _LIMIT_KEYS})


# ---------------------------------------------------------------- errors


def _quote(line: str) -> str:
    if len(line) > _QUOTE_MAX:
        return repr(line[:_QUOTE_MAX]) + f"... ({len(line)} chars)"
    return repr(line)


class CodecError(Exception):
    """A line that does not follow the protocol.

    ``fault`` is the fault kind the referee charges to the bot that wrote it;
    the message quotes the line (truncated) and says what was expected.
    """

    fault: ClassVar[str] = MALFORMED

    def __init__(self, line: str, problem: str, expected: str) -> None:
        self.line = line
        self.problem = problem
        self.expected = expected
        super().__init__(f"{problem} in {_quote(line)}; expected {expected}")


class MalformedLine(CodecError):
    """The line cannot be read: wrong shape, unknown word, bad number."""

    fault = MALFORMED


class ProtocolViolation(CodecError):
    """A readable line at the wrong moment: wrong, stale or missing request id."""

    fault = PROTOCOL


class IllegalAnswer(CodecError):
    """A well-formed answer that is not among the legal answers listed."""

    fault = ILLEGAL


def decode_utf8(raw: bytes) -> str:
    """A line as read from a bot's stdout (without its LF), as text.

    Raises MalformedLine if it is not UTF-8.
    """
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        line = raw.decode("utf-8", errors="replace")
        raise MalformedLine(line, "bytes that are not UTF-8", "a UTF-8 text line") from None


def valid_name(name: str) -> bool:
    """True if ``name`` can be a bot name: 1-64 of ``A-Z a-z 0-9 _ . + -``."""
    return NAME_PATTERN.fullmatch(name) is not None


def wire_name(name: str) -> str:
    """``name`` made valid for the game line: other characters become ``_``.

    For the referee, whose bot names (folder or manifest) may hold spaces.
    Two names may become one: keep them apart before, if it matters.
    """
    return _NAME_UNSAFE.sub("_", name)[:MAX_NAME] or "_"


# ------------------------------------------------------------ handshake


def encode_handshake(limits: Limits) -> str:
    """The first line to a new bot process: ``arena 1 startup_ms=... game_ms=...``."""
    return (
        f"arena {PROTOCOL_VERSION} startup_ms={limits.startup_ms} "
        f"decision_ms={limits.decision_ms} bank_ms={limits.bank_ms} game_ms={limits.game_ms}"
    )


def decode_handshake(line: str) -> tuple[int, Limits]:
    """Bot side: the protocol version and limits; unknown ``key=value`` are ignored."""
    fields = line.split()
    if len(fields) < 2 or fields[0] != "arena" or not _is_uint(fields[1]):
        raise MalformedLine(line, "not a handshake", "'arena <version> key=value ...'")
    values = _key_values(line, fields[2:])
    try:
        limits = Limits(**{key: int(values[key]) for key in _LIMIT_KEYS})
    except (KeyError, ValueError):
        raise MalformedLine(line, "missing or bad limit", " ".join(_LIMIT_KEYS)) from None
    return int(fields[1]), limits


def encode_hello(name: str) -> str:
    """Bot side: the answer to the handshake."""
    if not valid_name(name):
        raise ValueError(f"invalid bot name {name!r}")
    return f"hello {name}"


def decode_hello(line: str) -> str:
    """The bot's name from its ``hello <name>`` line.  Raises MalformedLine."""
    fields = line.split()
    if len(fields) != 2 or fields[0] != "hello":
        raise MalformedLine(line, "not a hello", "'hello <name>'")
    name = fields[1]
    if not valid_name(name):
        raise MalformedLine(line, "an invalid name", "1-64 of A-Z a-z 0-9 _ . + -")
    return name


# ----------------------------------------------------------- game frame


@attrs.frozen
class GameStart:
    """Bot side: a decoded ``game`` line."""

    game: int
    seat: int
    names: tuple[str, ...]
    variant: str


def encode_game_start(game: int, seat: int, names: Sequence[str], variant: str) -> str:
    """``game <n> seat <s> players <k> variant <v> names <name0> ... <name(k-1)>``."""
    for name in names:
        if not valid_name(name):
            raise ValueError(f"invalid bot name {name!r}")
    return f"game {game} seat {seat} players {len(names)} variant {variant} names {' '.join(names)}"


def decode_game_start(line: str) -> GameStart:
    fields = line.split()
    shape = "'game <n> seat <s> players <k> variant <v> names <name>...'"
    if len(fields) < 9 or fields[0::2][:5] != ["game", "seat", "players", "variant", "names"]:
        raise MalformedLine(line, "not a game start", shape)
    game, seat, players = (_field(line, _parse_uint, text) for text in fields[1:6:2])
    names = tuple(fields[9:])
    if len(names) != players:
        raise MalformedLine(line, f"{len(names)} names for {players} players", shape)
    return GameStart(game, seat, names, fields[7])


# A seat's seed: 0 <= n < 2**64.  The label keeps these hashes apart from
# any other use of the game seed.
SEED_BITS: Final = 64
_SEAT_SEED_LABEL: Final = b"arena seat seed v1"


def seat_seed(game_seed: int, seat: int) -> int:
    """The seed sent to ``seat`` for a game dealt from ``game_seed``.

    HMAC-SHA256 keyed by the game seed over a fixed label and the seat: a bot
    that knows its own seed learns nothing of the deal or of another seat's
    seed (unless it can guess the game seed, which the host keeps secret).
    """
    message = _SEAT_SEED_LABEL + b"/" + str(seat).encode()
    digest = hmac.new(str(game_seed).encode(), message, hashlib.sha256).digest()
    return int.from_bytes(digest[: SEED_BITS // 8], "big")


def encode_seed(seed: int) -> str:
    """``seed <n>``: sent right after the ``game`` line (a version 1 addition)."""
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**SEED_BITS:
        raise ValueError(f"a seat seed is a whole number from 0 to 2**64-1, not {seed!r}")
    return f"seed {seed}"


def decode_seed(line: str) -> int:
    """Bot side: the number of a ``seed <n>`` line."""
    fields = line.split()
    if len(fields) != 2 or fields[0] != "seed":
        raise MalformedLine(line, "not a seed line", "'seed <n>'")
    seed = _field(line, _parse_uint, fields[1])
    if seed >= 2**SEED_BITS:
        raise MalformedLine(line, "a seed of more than 64 bits", "'seed <n>', n < 2**64")
    return seed


def encode_game_over(placements: Sequence[int]) -> str:
    """``gameover <winner> <place of seat 0> <place of seat 1> ...``.

    The winner is the one seat placed first, or ``-`` when several share the
    first place (a game stopped at the turn limit).
    """
    firsts = [seat for seat, place in enumerate(placements) if place == 1]
    winner = str(firsts[0]) if len(firsts) == 1 else ABSENT
    return " ".join(["gameover", winner, *map(str, placements)])


def decode_game_over(line: str) -> tuple[int | None, tuple[int, ...]]:
    """Bot side: (winner or None, placements)."""
    fields = line.split()
    if len(fields) < 3 or fields[0] != "gameover":
        raise MalformedLine(line, "not a game over", "'gameover <winner> <place>...'")
    winner = _field(line, _opt(_parse_uint), fields[1])
    return winner, tuple(_field(line, _parse_uint, text) for text in fields[2:])


# --------------------------------------------------------------- events
#
# One line per event: ``event <keyword>`` then the event's fields in the
# order events.py declares them, one field each, so every keyword has a
# fixed number of fields.  Lists are one comma-separated field.  A secret
# the seat may not see is ``?`` (for a list too); no value is ``-``.


def _is_uint(text: str) -> bool:
    return text.isascii() and text.isdigit()


def _parse_uint(text: str) -> int:
    if not _is_uint(text):
        raise ValueError(f"{text!r} is not a number")
    return int(text)


def _parse_signed(text: str) -> int:
    if text[:1] not in ("+", "-") or not _is_uint(text[1:]):
        raise ValueError(f"{text!r} is not a signed number like +2 or -7")
    return int(text)


def _parse_word(text: str) -> str:
    if not (text.isascii() and text.replace("_", "a").isalnum()):
        raise ValueError(f"{text!r} is not a word")
    return text


def _parse_card(text: str) -> str:
    if text not in ALL_CARDS:
        raise ValueError(f"{text!r} is not a card")
    return text


def _parse_bool(text: str) -> bool:
    if text not in ("yes", "no"):
        raise ValueError(f"{text!r} is not yes or no")
    return text == "yes"


def _opt(parse: Callable[[str], Any], none: str = ABSENT) -> Callable[[str], Any]:
    return lambda text: None if text == none else parse(text)


def _list(parse: Callable[[str], Any]) -> Callable[[str], tuple[Any, ...]]:
    return lambda text: () if text == ABSENT else tuple(parse(item) for item in text.split(","))


def _show_opt(none: str) -> Callable[[Any], str]:
    return lambda value: none if value is None else str(value)


def _show_list(value: tuple[Any, ...] | None) -> str:
    if value is None:
        return HIDDEN
    return ",".join(map(str, value)) if value else ABSENT


@attrs.frozen
class _Kind:
    show: Callable[[Any], str]
    parse: Callable[[str], Any]
    # ``show`` as an f-string replacement field, ``@`` standing for the value.
    inline: str | None = None


_INT = _Kind(str, _parse_uint, "{@}")
_SIGNED = _Kind(lambda value: f"{value:+d}", _parse_signed, "{@:+d}")
_WORD = _Kind(str, _parse_word, "{@}")
_CARD = _Kind(str, _parse_card, "{@}")
_BOOL = _Kind(lambda value: "yes" if value else "no", _parse_bool, "{'yes' if @ else 'no'}")
_INTS = _Kind(_show_list, _list(_parse_uint))
_OPT_INT = _Kind(_show_opt(ABSENT), _opt(_parse_uint))
_OPT_CARD = _Kind(_show_opt(ABSENT), _opt(_parse_card))
_SECRET_CARD = _Kind(_show_opt(HIDDEN), _opt(_parse_card, HIDDEN))
_SECRET_CARDS = _Kind(_show_list, _opt(_list(_parse_card), HIDDEN))

# event type -> (keyword, its fields in declaration order with their kinds)
EVENT_FORMATS: Final[dict[type, tuple[str, tuple[tuple[str, _Kind], ...]]]] = {
    ev.GameStarted: (
        "start",
        (
            ("players", _INT),
            ("variant", _WORD),
            ("draft", _BOOL),
            ("first", _INT),
            ("coins", _INTS),
            ("court_size", _INT),
        ),
    ),
    ev.CardsDealt: ("dealt", (("seat", _INT), ("cards", _SECRET_CARDS))),
    ev.DraftOffered: ("draft_offered", (("seat", _INT), ("cards", _SECRET_CARDS))),
    ev.DraftChosen: ("draft_chosen", (("seat", _INT), ("card", _SECRET_CARD))),
    ev.TurnStarted: ("turn", (("turn", _INT), ("seat", _INT))),
    ev.ActionDeclared: (
        "action",
        (("seat", _INT), ("action", _WORD), ("target", _OPT_INT), ("claim", _OPT_CARD)),
    ),
    ev.CoinsChanged: (
        "coins",
        (("seat", _INT), ("delta", _SIGNED), ("coins", _INT), ("why", _WORD)),
    ),
    ev.Challenged: (
        "challenge",
        (("challenger", _INT), ("claimant", _INT), ("character", _CARD)),
    ),
    ev.ClaimProven: ("proven", (("seat", _INT), ("character", _CARD))),
    ev.ClaimFailed: ("bluff", (("seat", _INT), ("character", _CARD))),
    ev.CardDrawn: ("drew", (("seat", _INT), ("card", _SECRET_CARD))),
    ev.Blocked: ("block", (("blocker", _INT), ("character", _CARD), ("actor", _INT))),
    ev.InfluenceLost: ("lost", (("seat", _INT), ("card", _CARD))),
    ev.PlayerOut: ("out", (("seat", _INT), ("reason", _WORD))),
    ev.Forfeited: ("forfeit", (("seat", _INT), ("reason", _WORD))),
    ev.ExchangeDrawn: (
        "exchange_drawn",
        (("seat", _INT), ("count", _INT), ("cards", _SECRET_CARDS)),
    ),
    ev.ExchangeReturned: (
        "exchange_returned",
        (("seat", _INT), ("count", _INT), ("cards", _SECRET_CARDS)),
    ),
    ev.ExamineShown: (
        "examine_shown",
        (("examiner", _INT), ("target", _INT), ("card", _SECRET_CARD)),
    ),
    ev.ExamineDecided: (
        "examine_decided",
        (("examiner", _INT), ("target", _INT), ("forced", _BOOL)),
    ),
    ev.ActionResolved: ("resolved", (("seat", _INT), ("action", _WORD), ("target", _OPT_INT))),
    ev.ActionFailed: ("failed", (("seat", _INT), ("action", _WORD), ("reason", _WORD))),
    ev.GameOver: (
        "end",
        (("reason", _WORD), ("turns", _INT), ("placements", _INTS), ("winner", _OPT_INT)),
    ),
}

_BY_KEYWORD: Final = {keyword: (cls, fields) for cls, (keyword, fields) in EVENT_FORMATS.items()}


def _line_writer(keyword: str, fields: tuple[tuple[str, _Kind], ...]) -> Callable[[Any], str]:
    """The function that writes one event type's line, ``kind.show`` of each field
    in turn, as one f-string compiled once: the referee writes several event
    lines per decision, and calling ``show`` field by field took 3x as long."""
    env: dict[str, Any] = {}
    parts = []
    for i, (name, kind) in enumerate(fields):
        if kind.inline is not None:
            parts.append(kind.inline.replace("@", f"event.{name}"))
        else:
            env[f"show{i}"] = kind.show
            parts.append(f"{{show{i}(event.{name})}}")
    exec(f"def write(event):\n    return f\"event {keyword} {' '.join(parts)}\"\n", env)
    return env["write"]  # type: ignore[no-any-return]


_WRITERS: Final = {cls: _line_writer(keyword, fields)
                   for cls, (keyword, fields) in EVENT_FORMATS.items()}


def encode_event(event: ev.Event) -> str:
    """The line for an event as a seat sees it (already passed through observer.view).

    A secret blanked to None is written ``?``.
    """
    write = _WRITERS.get(type(event))
    if write is None:
        raise TypeError(f"not an engine event: {event!r}")
    return write(event)


def decode_event(line: str) -> ev.Event:
    """Bot side: the event of an ``event`` line (hidden secrets come back as None)."""
    words = line.split()
    if len(words) < 2 or words[0] != "event" or words[1] not in _BY_KEYWORD:
        raise MalformedLine(line, "not a known event", "'event <keyword> <field>...'")
    cls, fields = _BY_KEYWORD[words[1]]
    if len(words) != 2 + len(fields):
        expected = " ".join(["event", words[1], *(f"<{name}>" for name, _ in fields)])
        raise MalformedLine(line, f"{len(words) - 2} fields", repr(expected))
    values = {
        name: _field(line, kind.parse, text)
        for (name, kind), text in zip(fields, words[2:], strict=True)
    }
    return cls(**values)


def _field(line: str, parse: Callable[[str], Any], text: str) -> Any:
    try:
        return parse(text)
    except ValueError as error:
        raise MalformedLine(line, f"a bad field {text!r}", str(error)) from None


def _key_values(line: str, fields: Sequence[str]) -> dict[str, str]:
    values = {}
    for text in fields:
        key, sep, value = text.partition("=")
        if not sep or not key:
            raise MalformedLine(line, f"a bad field {text!r}", "'key=value'")
        values[key] = value
    return values


# ------------------------------------------------------------- requests


@attrs.frozen
class RequestLine:
    """Bot side: a decoded ``request`` line."""

    request_id: int
    kind: str
    bank_ms: int
    context: Mapping[str, str]  # actor, action, target, claimant, character; unknown keys too
    legal: tuple[Decision, ...]


def encode_request(
    request_id: int, request: Request, legal: Sequence[Decision], bank_ms: int
) -> str:
    """``request <id> <kind> bank_ms=<n> [key=value ...] : <token> <token> ...``.

    The context keys are the request's non-None fields among actor, action,
    target, claimant and character.  The legal tokens come last so that a
    bot can answer with the last field.
    """
    # The engine hands out the same request and legal tuple again and again
    # (both are memoised): what follows the bank is made once for each pair.
    key = (id(request), id(legal))
    found = _REQUEST_TAILS.get(key)
    if found is None or found[0] is not request or found[1] is not legal:
        if not legal:
            raise ValueError("a request needs at least one legal answer")
        parts = [""]
        for name in _REQUEST_CONTEXT:
            value = getattr(request, name)
            if value is not None:
                parts.append(f"{name}={value}")
        parts.append(":")
        parts += [decision.token for decision in legal]
        found = (request, legal, " ".join(parts))
        if type(legal) is tuple:  # a list could change under the same id
            if len(_REQUEST_TAILS) >= _REQUEST_TAILS_KEPT:
                _REQUEST_TAILS.clear()
            _REQUEST_TAILS[key] = found
    return f"request {request_id} {request.kind} bank_ms={max(bank_ms, 0)}{found[2]}"


# (id of the request, id of its legal tuple) -> both, and the request line's
# text after the bank; they are kept in it, so an id cannot be reused meanwhile.
_REQUEST_TAILS: dict[tuple[int, int], tuple[Request, Sequence[Decision], str]] = {}
_REQUEST_TAILS_KEPT: Final = 10_000


def decode_request(line: str) -> RequestLine:
    fields = line.split()
    shape = "'request <id> <kind> bank_ms=<n> ... : <token>...'"
    if len(fields) < 6 or fields[0] != "request" or ":" not in fields:
        raise MalformedLine(line, "not a request", shape)
    colon = fields.index(":")
    values = _key_values(line, fields[3:colon])
    if "bank_ms" not in values or colon + 1 == len(fields):
        raise MalformedLine(line, "no bank or no legal answer", shape)
    legal = tuple(_field(line, Decision.parse, token) for token in fields[colon + 1 :])
    return RequestLine(
        request_id=_field(line, _parse_uint, fields[1]),
        kind=fields[2],
        bank_ms=_field(line, _parse_uint, values.pop("bank_ms")),
        context=values,
        legal=legal,
    )


def encode_answer(request_id: int, decision: Decision | str) -> str:
    """Bot side: ``<id> <token>``."""
    token = decision.token if isinstance(decision, Decision) else decision
    return f"{request_id} {token}"


def decode_answer(line: str, request_id: int, legal: Sequence[Decision]) -> Decision:
    """The decision a bot's answer line gives to the open request ``request_id``.

    Returns the matching element of ``legal``.  Fields may be separated by
    several spaces or tabs, and surrounding whitespace (a CR) is ignored.
    Raises MalformedLine, ProtocolViolation or IllegalAnswer.
    """
    expected = f"'{request_id} <answer>'"
    if len(line) > MAX_LINE_FROM_BOT:  # the reader should have caught it first
        limit = f"{expected} of at most {MAX_LINE_FROM_BOT} bytes"
        raise MalformedLine(line, "an over-long line", limit)
    fields = line.split()
    if len(fields) != 2:
        if len(fields) == 1 and _parses(fields[0]):
            problem = "an answer without its request id"
            raise ProtocolViolation(line, problem, f"'{request_id} {fields[0]}'")
        raise MalformedLine(line, f"{len(fields)} fields", f"{expected} (2 fields)")
    id_text, token = fields
    if not _is_uint(id_text):
        raise MalformedLine(line, f"a request id {id_text!r} that is not a number", expected)
    answer_id = int(id_text)
    if answer_id != request_id:
        if answer_id < request_id:
            problem = f"a stale answer to request {answer_id}, which is closed"
        else:
            problem = f"an answer to request {answer_id}, which was never sent"
        raise ProtocolViolation(line, problem, expected)
    # Fast path: the bot echoed a listed token.
    for decision in legal:
        if decision.token == token:
            return decision
    try:
        decision = Decision.parse(token)
    except ValueError as error:  # DecisionSyntaxError, or int() of an odd digit
        raise MalformedLine(line, f"an unreadable answer ({error})", _one_of(legal)) from None
    for candidate in legal:
        if candidate == decision:  # e.g. keep:duke,captain for keep:captain,duke
            return candidate
    raise IllegalAnswer(line, f"the answer {token!r} that is not legal now", _one_of(legal))


def unsolicited(line: str) -> ProtocolViolation:
    """The error for a line a bot wrote while no request was open."""
    return ProtocolViolation(line, "a line while no request is open", "nothing")


def begun_early(start: str) -> ProtocolViolation:
    """The error for a line a bot began writing before its request was sent."""
    return ProtocolViolation(start, "an answer begun before its request",
                             "nothing until the request line")


def _parses(token: str) -> bool:
    try:
        Decision.parse(token)
    except ValueError:
        return False
    return True


def _one_of(legal: Sequence[Decision]) -> str:
    tokens = " ".join(decision.token for decision in legal)
    if len(tokens) > _QUOTE_MAX:
        tokens = tokens[:_QUOTE_MAX] + "..."
    return f"one of: {tokens}"
