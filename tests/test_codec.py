"""The protocol codec: every line the referee writes or reads (protocol.md)."""

from __future__ import annotations

import random
import re
import typing
from pathlib import Path

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.engine import events as ev
from arena.engine.cards import ALL_CARDS
from arena.engine.decisions import REQUEST_KINDS, Decision, Request
from arena.engine.game import Game, GameConfig
from arena.engine.observer import OMNISCIENT, SPECTATOR, view
from arena.protocol import codec
from arena.protocol.codec import (
    MAX_LINE_FROM_BOT,
    MAX_LINE_TO_BOT,
    CodecError,
    IllegalAnswer,
    Limits,
    MalformedLine,
    ProtocolViolation,
    decode_answer,
    decode_event,
    decode_game_over,
    decode_game_start,
    decode_handshake,
    decode_hello,
    decode_request,
    decode_utf8,
    encode_answer,
    encode_event,
    encode_game_over,
    encode_game_start,
    encode_handshake,
    encode_hello,
    encode_request,
    unsolicited,
    valid_name,
    wire_name,
)

PROTOCOL_MD = Path(__file__).resolve().parents[1] / "protocol.md"
PILE = ("ambassador", "assassin", "captain", "contessa", "duke")

# Every event type, with the exact line the omniscient view gives.
EXACT = [
    (
        ev.GameStarted(3, "ambassador", False, 1, (2, 2, 2), 9),
        "event start 3 ambassador no 1 2,2,2 9",
    ),
    (ev.GameStarted(2, "inquisitor", True, 0, (2, 1), 3), "event start 2 inquisitor yes 0 2,1 3"),
    (ev.CardsDealt(0, ("contessa", "duke")), "event dealt 0 contessa,duke"),
    (ev.CardsDealt(1, ("duke",)), "event dealt 1 duke"),
    (ev.DraftOffered(0, PILE), "event draft_offered 0 " + ",".join(PILE)),
    (ev.DraftChosen(1, "captain"), "event draft_chosen 1 captain"),
    (ev.TurnStarted(5, 2), "event turn 5 2"),
    (ev.ActionDeclared(2, "steal", 0, "captain"), "event action 2 steal 0 captain"),
    (ev.ActionDeclared(1, "income", None, None), "event action 1 income - -"),
    (ev.ActionDeclared(0, "coup", 2, None), "event action 0 coup 2 -"),
    (ev.ActionDeclared(0, "tax", None, "duke"), "event action 0 tax - duke"),
    (ev.CoinsChanged(2, 2, 4, "steal"), "event coins 2 +2 4 steal"),
    (ev.CoinsChanged(0, -7, 1, "cost"), "event coins 0 -7 1 cost"),
    (ev.CoinsChanged(1, 0, 0, "steal"), "event coins 1 +0 0 steal"),
    (ev.Challenged(1, 2, "captain"), "event challenge 1 2 captain"),
    (ev.ClaimProven(2, "captain"), "event proven 2 captain"),
    (ev.ClaimFailed(1, "duke"), "event bluff 1 duke"),
    (ev.CardDrawn(2, "duke"), "event drew 2 duke"),
    (ev.Blocked(0, "contessa", 1), "event block 0 contessa 1"),
    (ev.InfluenceLost(1, "contessa"), "event lost 1 contessa"),
    (ev.PlayerOut(1, "influence"), "event out 1 influence"),
    (ev.PlayerOut(2, "timeout"), "event out 2 timeout"),
    (ev.Forfeited(2, "malformed"), "event forfeit 2 malformed"),
    (ev.ExchangeDrawn(0, 2, ("captain", "duke")), "event exchange_drawn 0 2 captain,duke"),
    (ev.ExchangeDrawn(0, 1, ("inquisitor",)), "event exchange_drawn 0 1 inquisitor"),
    (
        ev.ExchangeReturned(0, 2, ("captain", "contessa")),
        "event exchange_returned 0 2 captain,contessa",
    ),
    (ev.ExamineShown(2, 0, "duke"), "event examine_shown 2 0 duke"),
    (ev.ExamineDecided(2, 0, True), "event examine_decided 2 0 yes"),
    (ev.ExamineDecided(2, 0, False), "event examine_decided 2 0 no"),
    (ev.ActionResolved(0, "tax", None), "event resolved 0 tax -"),
    (ev.ActionResolved(1, "steal", 0), "event resolved 1 steal 0"),
    (ev.ActionFailed(1, "assassinate", "blocked"), "event failed 1 assassinate blocked"),
    (ev.GameOver("last_player", 12, (1, 3, 2), 0), "event end last_player 12 1,3,2 0"),
    (ev.GameOver("turn_limit", 1000, (1, 1, 3), None), "event end turn_limit 1000 1,1,3 -"),
]
SAMPLES = [event for event, _ in EXACT]
VIEWERS = (OMNISCIENT, SPECTATOR, 0, 1, 2)


def legal_of(*tokens: str) -> tuple[Decision, ...]:
    return tuple(Decision.parse(token) for token in tokens)


# ------------------------------------------------------------------ events


def test_every_event_type_has_a_format_and_a_sample() -> None:
    engine_types = set(typing.get_args(ev.Event))
    assert set(codec.EVENT_FORMATS) == engine_types
    assert {type(event) for event in SAMPLES} == engine_types


@pytest.mark.parametrize("cls", typing.get_args(ev.Event), ids=lambda cls: cls.__name__)
def test_event_fields_follow_events_py_order(cls: type) -> None:
    # A field added to events.py must be added to the wire format too.
    _, fields = codec.EVENT_FORMATS[cls]
    assert [name for name, _ in fields] == [field.name for field in attrs.fields(cls)]


def test_event_keywords_are_distinct() -> None:
    keywords = [keyword for keyword, _ in codec.EVENT_FORMATS.values()]
    assert len(keywords) == len(set(keywords))


@pytest.mark.parametrize(("event", "line"), EXACT, ids=lambda x: getattr(x, "__name__", None))
def test_event_line_is_exact(event: ev.Event, line: str) -> None:
    assert encode_event(event) == line


def test_event_lines_are_each_fields_show_in_turn() -> None:
    # encode_event compiles one f-string per event type from the kinds' inline
    # forms; it must write exactly what show() gives, field by field.
    events = []
    for seed in range(40):
        game = Game.from_config(GameConfig(2 + seed % 5, ("ambassador", "inquisitor")[seed % 2]),
                                seed)
        rng = random.Random(seed)
        while not game.over:
            for seat in game.request.seats:
                game.decide(seat, rng.choice(game.legal(seat)))
        events += [view(event, viewer) for event in game.events for viewer in VIEWERS]
    events += [view(event, viewer) for event in SAMPLES for viewer in VIEWERS]
    assert {type(event) for event in events} == set(typing.get_args(ev.Event))
    for event in events:
        keyword, fields = codec.EVENT_FORMATS[type(event)]
        shown = [kind.show(getattr(event, name)) for name, kind in fields]
        assert encode_event(event) == " ".join(["event", keyword, *shown])


@pytest.mark.parametrize("event", SAMPLES, ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("viewer", VIEWERS)
def test_event_round_trips_for_every_viewer(event: ev.Event, viewer: int) -> None:
    seen = view(event, viewer)
    line = encode_event(seen)
    assert decode_event(line) == seen
    # Hiding a secret never moves a field: the count is fixed per keyword.
    assert len(line.split()) == len(encode_event(event).split())
    assert line.isascii() and len(line) <= MAX_LINE_TO_BOT


@pytest.mark.parametrize(
    ("event", "viewer", "line"),
    [
        (ev.CardDrawn(2, "duke"), 0, "event drew 2 ?"),
        (ev.CardDrawn(2, "duke"), 2, "event drew 2 duke"),
        (ev.CardsDealt(1, ("assassin", "captain")), 0, "event dealt 1 ?"),
        (ev.CardsDealt(1, ("duke",)), SPECTATOR, "event dealt 1 ?"),
        (ev.DraftOffered(1, PILE), 0, "event draft_offered 1 ?"),
        (ev.DraftChosen(1, "duke"), 0, "event draft_chosen 1 ?"),
        (ev.ExchangeDrawn(0, 2, ("captain", "duke")), 1, "event exchange_drawn 0 2 ?"),
        (ev.ExchangeReturned(0, 2, ("captain", "duke")), 1, "event exchange_returned 0 2 ?"),
        (ev.ExamineShown(2, 0, "duke"), 0, "event examine_shown 2 0 duke"),
        (ev.ExamineShown(2, 0, "duke"), 2, "event examine_shown 2 0 duke"),
        (ev.ExamineShown(2, 0, "duke"), 1, "event examine_shown 2 0 ?"),
        # Public cards are never hidden.
        (ev.InfluenceLost(1, "duke"), 0, "event lost 1 duke"),
        (ev.ClaimProven(2, "duke"), 0, "event proven 2 duke"),
    ],
)
def test_secret_is_a_question_mark_only_for_seats_that_may_not_see_it(
    event: ev.Event, viewer: int, line: str
) -> None:
    assert encode_event(view(event, viewer)) == line


def test_hidden_and_absent_decode_to_none() -> None:
    assert decode_event("event drew 2 ?") == ev.CardDrawn(2, None)
    assert decode_event("event dealt 1 ?") == ev.CardsDealt(1, None)
    assert decode_event("event action 1 income - -") == ev.ActionDeclared(1, "income", None, None)


def test_encode_event_rejects_a_non_event() -> None:
    with pytest.raises(TypeError):
        encode_event(Decision("income"))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "line",
    [
        "",
        "event",
        "events turn 1 2",
        "event frobnicate 1 2",
        "event turn 1",
        "event turn 1 2 3",
        "event turn one 2",
        "event turn -1 2",
        "event coins 1 2 4 steal",  # delta needs its sign
        "event lost 1 joker",
        "event dealt 1 duke,joker",
        "event examine_decided 2 0 maybe",
        "event drew 2 -",  # a secret is hidden (?), never absent
    ],
)
def test_decode_event_rejects_bad_lines(line: str) -> None:
    with pytest.raises(MalformedLine):
        decode_event(line)


# --------------------------------------------------------- handshake, hello


def test_handshake_line() -> None:
    limits = Limits(startup_ms=5000, decision_ms=200, bank_ms=3000, game_ms=60000)
    line = encode_handshake(limits)
    assert line == "arena 1 startup_ms=5000 decision_ms=200 bank_ms=3000 game_ms=60000"
    assert decode_handshake(line) == (1, limits)


def test_handshake_decoding_ignores_unknown_keys() -> None:
    line = "arena 1 colour=blue startup_ms=1 decision_ms=2 bank_ms=3 game_ms=4 x=y"
    assert decode_handshake(line) == (1, Limits(1, 2, 3, 4))


@pytest.mark.parametrize(
    "line", ["arena", "arena one", "hello 1", "arena 1 startup_ms=1", "arena 1 bank_ms",
             "arena 1 startup_ms=1 decision_ms=0 bank_ms=3 game_ms=4",
             "arena 1 startup_ms=1 decision_ms=2 bank_ms=-3 game_ms=4"]
)
def test_bad_handshake(line: str) -> None:
    with pytest.raises(MalformedLine):
        decode_handshake(line)


@pytest.mark.parametrize(("data", "problem"), [
    ({"startup_ms": 1, "decision_ms": 2, "bank_ms": 3}, "limits need game_ms"),
    ({"startup_ms": 0, "decision_ms": 2, "bank_ms": 3, "game_ms": 4}, "startup_ms must be"),
    ({"startup_ms": 1, "decision_ms": 2.5, "bank_ms": 3, "game_ms": 4}, "decision_ms must be"),
    ({"startup_ms": 1, "decision_ms": 2, "bank_ms": -1, "game_ms": 4}, "bank_ms must be"),
    ({"startup_ms": 1, "decision_ms": 2, "bank_ms": 3, "game_ms": True}, "game_ms must be"),
])
def test_limits_that_make_no_sense_cannot_be_made(data: dict, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        Limits.from_json(data)


def test_limits_from_json_reads_what_asdict_wrote() -> None:
    limits = Limits(startup_ms=5, decision_ms=6, bank_ms=0, game_ms=8)
    assert Limits.from_json(attrs.asdict(limits)) == limits


@pytest.mark.parametrize(
    ("line", "name"),
    [
        ("hello honest", "honest"),
        ("hello random-py", "random-py"),
        ("  hello\tc_bot.v2+  \r", "c_bot.v2+"),
        ("hello " + "x" * 64, "x" * 64),
    ],
)
def test_hello(line: str, name: str) -> None:
    assert decode_hello(line) == name


@pytest.mark.parametrize(
    "line",
    ["", "hello", "helo bot", "hello two names", "hello " + "x" * 65, "hello bad/name", "1 hello"],
)
def test_bad_hello(line: str) -> None:
    with pytest.raises(MalformedLine) as caught:
        decode_hello(line)
    assert caught.value.fault == "malformed"
    assert "hello <name>" in str(caught.value) or "A-Z" in str(caught.value)


def test_encode_hello_round_trips_and_checks_the_name() -> None:
    assert decode_hello(encode_hello("mybot")) == "mybot"
    with pytest.raises(ValueError):
        encode_hello("my bot")


# ------------------------------------------------------ game start and over


@pytest.mark.parametrize(
    ("name", "wire"),
    [("greedy", "greedy"), ("my bot", "my_bot"), ("caf\u00e9/2", "caf__2"), ("", "_")],
)
def test_wire_name_makes_any_name_valid(name: str, wire: str) -> None:
    assert wire_name(name) == wire
    assert valid_name(wire_name(name))
    assert len(wire_name("x" * 100)) == codec.MAX_NAME


def test_game_start_line() -> None:
    line = encode_game_start(4, 2, ["alpha", "beta", "mybot"], "inquisitor")
    assert line == "game 4 seat 2 players 3 variant inquisitor names alpha beta mybot"
    start = decode_game_start(line)
    assert start == codec.GameStart(4, 2, ("alpha", "beta", "mybot"), "inquisitor")


@pytest.mark.parametrize("names", [["a b", "c"], ["", "c"], ["a", "x" * 65]])
def test_game_start_refuses_names_that_would_break_the_line(names: list[str]) -> None:
    with pytest.raises(ValueError):
        encode_game_start(1, 0, names, "ambassador")


@pytest.mark.parametrize(
    "line",
    [
        "game 1 seat 0 players 3 variant ambassador names a b",
        "game 1 seat 0 players x variant ambassador names a b",
        "game 1 place 0 players 2 variant ambassador names a b",
    ],
)
def test_bad_game_start(line: str) -> None:
    with pytest.raises(MalformedLine):
        decode_game_start(line)


def test_seed_line() -> None:
    assert codec.encode_seed(0) == "seed 0"
    assert codec.encode_seed(2**64 - 1) == f"seed {2**64 - 1}"
    assert codec.decode_seed("seed 18446744073709551615") == 2**64 - 1
    assert codec.decode_seed("seed  7 \r") == 7


@pytest.mark.parametrize("seed", [-1, 2**64, True, 1.0])
def test_a_seed_outside_64_bits_is_not_sent(seed: object) -> None:
    with pytest.raises(ValueError):
        codec.encode_seed(seed)  # type: ignore[arg-type]


@pytest.mark.parametrize("line", ["seed", "seed -1", "seed 1 2", "seed x", "seeds 1",
                                  f"seed {2**64}"])
def test_bad_seed_line(line: str) -> None:
    with pytest.raises(MalformedLine):
        codec.decode_seed(line)


def test_seat_seeds_are_pinned_and_differ_per_seat_and_game() -> None:
    # Pinned: a bot seeded from them replays the same games with any later arena.
    assert [codec.seat_seed(2, seat) for seat in range(3)] == [
        16303593969368362123, 7779554594473887867, 5556216575700151111]
    seeds = {codec.seat_seed(game, seat) for game in range(50) for seat in range(8)}
    assert len(seeds) == 400
    assert all(0 <= seed < 2**64 for seed in seeds)
    assert codec.seat_seed(2**63 - 1, 7) == codec.seat_seed(2**63 - 1, 7)


def test_a_seat_seed_is_a_keyed_hash_not_a_function_of_the_seat_alone() -> None:
    # Seeds of the same seat in consecutive games share no visible structure:
    # about half of their 64 bits differ.
    flips = [bin(codec.seat_seed(game, 0) ^ codec.seat_seed(game + 1, 0)).count("1")
             for game in range(200)]
    assert 28 < sum(flips) / len(flips) < 36


@pytest.mark.parametrize(
    ("placements", "line", "winner"),
    [
        ((1, 3, 2), "gameover 0 1 3 2", 0),
        ((2, 1), "gameover 1 2 1", 1),
        ((1, 1, 3), "gameover - 1 1 3", None),
    ],
)
def test_game_over(placements: tuple[int, ...], line: str, winner: int | None) -> None:
    assert encode_game_over(placements) == line
    assert decode_game_over(line) == (winner, placements)


# ---------------------------------------------------------------- requests

REQUESTS = [
    (Request("draft", (0, 1)), legal_of(*(f"draft:{card}" for card in PILE))),
    (
        Request("action", (0,), actor=0),
        legal_of("income", "foreign_aid", "coup:1", "tax", "assassinate:1", "steal:1", "exchange"),
    ),
    (
        Request(
            "challenge", (0, 2), actor=1, action="steal", target=0, claimant=1, character="captain"
        ),
        legal_of("pass", "challenge"),
    ),
    (
        Request("block", (0,), actor=1, action="steal", target=0),
        legal_of("pass", "block:ambassador", "block:captain"),
    ),
    (
        Request("lose", (0,), actor=2, action="coup", target=0),
        legal_of("lose:captain", "lose:duke"),
    ),
    (
        Request("keep", (0,), actor=0, action="exchange"),
        legal_of("keep:captain,contessa", "keep:captain,duke", "keep:contessa,duke"),
    ),
    (
        Request("show", (0,), actor=2, action="examine", target=0),
        legal_of("show:captain", "show:duke"),
    ),
    (
        Request("force", (2,), actor=2, action="examine", target=0),
        legal_of("force:yes", "force:no"),
    ),
]


def test_every_request_kind_is_covered() -> None:
    assert {request.kind for request, _ in REQUESTS} == set(REQUEST_KINDS)


@pytest.mark.parametrize(("request_", "legal"), REQUESTS, ids=lambda x: getattr(x, "kind", None))
def test_request_line(request_: Request, legal: tuple[Decision, ...]) -> None:
    line = encode_request(17, request_, legal, 9640)
    fields = line.split(" ")
    assert fields[:4] == ["request", "17", request_.kind, "bank_ms=9640"]
    colon = fields.index(":")
    # The legal answers are the last fields, so awk's $NF is one of them.
    assert fields[colon + 1 :] == [decision.token for decision in legal]
    context = {key: str(getattr(request_, key)) for key in ("actor", "action", "target")}
    context |= {key: str(getattr(request_, key)) for key in ("claimant", "character")}
    expected = {key: value for key, value in context.items() if value != "None"}
    assert dict(field.split("=") for field in fields[4:colon]) == expected

    decoded = decode_request(line)
    assert (decoded.request_id, decoded.kind, decoded.bank_ms) == (17, request_.kind, 9640)
    assert decoded.context == expected
    assert decoded.legal == legal


def test_request_example_from_the_spec() -> None:
    request = Request("challenge", (0,), 1, "steal", 0, 1, "captain")
    line = encode_request(1, request, legal_of("pass", "challenge"), 10000)
    expected = "request 1 challenge bank_ms=10000 actor=1 action=steal target=0 claimant=1"
    assert line == expected + " character=captain : pass challenge"


def test_request_bank_never_negative_and_legal_never_empty() -> None:
    request = Request("action", (0,), actor=0)
    assert " bank_ms=0 " in encode_request(3, request, legal_of("income"), -250)
    with pytest.raises(ValueError):
        encode_request(3, request, (), 100)


def test_largest_request_fits_the_line_cap() -> None:
    others = range(1, 8)
    tokens = ["income", "foreign_aid", "tax", "exchange"]
    for action in ("coup", "assassinate", "steal", "examine"):
        tokens += [f"{action}:{seat}" for seat in others]
    line = encode_request(10**12, Request("action", (0,), actor=0), legal_of(*tokens), 10**9)
    assert len(line.encode()) <= MAX_LINE_TO_BOT


@pytest.mark.parametrize(
    "line",
    [
        "request 1 action bank_ms=5 :",
        "request 1 action bank_ms=5 income tax",
        "request 1 action : income",
        "request x action bank_ms=5 : income",
        "request 1 action bank_ms=5 : income joker",
    ],
)
def test_bad_request_lines(line: str) -> None:
    with pytest.raises(MalformedLine):
        decode_request(line)


# ----------------------------------------------------------------- answers

ACTION_LEGAL = legal_of("income", "foreign_aid", "coup:2", "tax", "steal:2", "exchange")
KEEP_LEGAL = legal_of("keep:captain,duke", "keep:captain,contessa", "keep:contessa,duke")


@pytest.mark.parametrize(
    "line",
    ["7 income", "  7   income  ", "7\tincome", "7 income\r", "07 income"],
)
def test_good_answer_with_any_spacing(line: str) -> None:
    decision = decode_answer(line, 7, ACTION_LEGAL)
    assert decision is ACTION_LEGAL[0]


def test_answer_returns_the_listed_decision() -> None:
    assert decode_answer("7 coup:2", 7, ACTION_LEGAL) is ACTION_LEGAL[2]
    assert decode_answer("7 steal:2", 7, ACTION_LEGAL) == Decision("steal", target=2)


def test_keep_cards_in_any_order() -> None:
    assert decode_answer("3 keep:duke,captain", 3, KEEP_LEGAL) is KEEP_LEGAL[0]


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("6 income", "stale answer to request 6"),
        ("1 income", "stale answer to request 1"),
        ("8 income", "never sent"),
        ("6 blah", "stale"),  # a stale line is a protocol fault, whatever it says
        ("income", "without its request id"),
        ("coup:2", "without its request id"),
    ],
)
def test_wrong_stale_or_missing_id_is_a_protocol_violation(line: str, problem: str) -> None:
    with pytest.raises(ProtocolViolation) as caught:
        decode_answer(line, 7, ACTION_LEGAL)
    assert caught.value.fault == "protocol"
    assert problem in str(caught.value)
    assert repr(line) in str(caught.value)
    assert "'7 " in caught.value.expected


@pytest.mark.parametrize(
    "line",
    [
        "",
        "   ",
        "7",
        "hello bot",
        "seven income",
        "-7 income",
        "7 income now",
        "7 INCOME",
        "7 coup",
        "7 coup:x",
        "7 coup:\u00b2",  # a digit for str.isdigit, not for int()
        "7 pass:duke",
        "7 keep:duke,joker",
        "income 7",
    ],
)
def test_garbage_is_malformed(line: str) -> None:
    with pytest.raises(MalformedLine) as caught:
        decode_answer(line, 7, ACTION_LEGAL)
    assert caught.value.fault == "malformed"
    assert repr(line) in str(caught.value)


@pytest.mark.parametrize("line", ["7 assassinate:2", "7 coup:5", "7 pass", "7 block:duke"])
def test_well_formed_but_unlisted_answer_is_illegal(line: str) -> None:
    with pytest.raises(IllegalAnswer) as caught:
        decode_answer(line, 7, ACTION_LEGAL)
    assert caught.value.fault == "illegal"
    assert "one of: income foreign_aid coup:2 tax steal:2 exchange" in str(caught.value)


def test_over_long_answer_is_malformed_and_quoted_truncated() -> None:
    line = "7 " + "x" * MAX_LINE_FROM_BOT
    with pytest.raises(MalformedLine) as caught:
        decode_answer(line, 7, ACTION_LEGAL)
    message = str(caught.value)
    assert "over-long" in message
    assert f"({len(line)} chars)" in message
    assert len(message) < 300


def test_unsolicited_line_is_a_protocol_violation() -> None:
    error = unsolicited("3 income")
    assert isinstance(error, ProtocolViolation)
    assert "no request is open" in str(error) and "'3 income'" in str(error)


def test_non_utf8_bytes_are_malformed() -> None:
    assert decode_utf8("hello caf\u00e9".encode()) == "hello caf\u00e9"
    with pytest.raises(MalformedLine):
        decode_utf8(b"7 \xff\xfe")


def test_error_classes_map_to_fault_kinds() -> None:
    faults = {cls: cls.fault for cls in (MalformedLine, ProtocolViolation, IllegalAnswer)}
    assert faults == {
        MalformedLine: "malformed",
        ProtocolViolation: "protocol",
        IllegalAnswer: "illegal",
    }
    assert all(issubclass(cls, CodecError) for cls in faults)
    assert set(faults.values()) <= set(codec.FAULTS)


# -------------------------------------------------------------- properties

seats = st.integers(min_value=0, max_value=7)
cards = st.sampled_from(ALL_CARDS)
decisions = st.one_of(
    st.sampled_from(["income", "foreign_aid", "tax", "exchange", "pass", "challenge"]).map(
        Decision
    ),
    st.builds(Decision, st.sampled_from(["coup", "assassinate", "steal", "examine"]), target=seats),
    st.builds(Decision, st.sampled_from(["block", "lose", "show", "draft"]), card=cards),
    st.lists(cards, min_size=1, max_size=2).map(
        lambda kept: Decision("keep", cards=tuple(sorted(kept)))
    ),
    st.booleans().map(lambda force: Decision("force", force=force)),
)
legal_lists = st.lists(decisions, min_size=1, max_size=30, unique_by=lambda d: d.token)
request_ids = st.integers(min_value=1, max_value=10**9)


@given(legal_lists, request_ids, st.sampled_from(REQUEST_KINDS), st.data())
def test_every_listed_answer_round_trips(
    legal: list[Decision], request_id: int, kind: str, data: st.DataObject
) -> None:
    line = encode_request(request_id, Request(kind, (0,)), legal, 500)
    decoded = decode_request(line)
    assert decoded.legal == tuple(legal)
    assert line.split()[-1] == legal[-1].token
    chosen = data.draw(st.sampled_from(decoded.legal))
    answer = encode_answer(decoded.request_id, chosen)
    assert decode_answer(answer, request_id, legal) is legal[legal.index(chosen)]


@given(st.text(max_size=80), legal_lists)
def test_any_text_is_an_answer_or_a_codec_error(line: str, legal: list[Decision]) -> None:
    try:
        decision = decode_answer(line, 5, legal)
    except CodecError:
        return
    assert decision in legal


# ------------------------------------------------------ with the real engine


@pytest.mark.parametrize(
    ("players", "variant"),
    [(2, "ambassador"), (2, "inquisitor"), (3, "ambassador"), (5, "inquisitor"), (8, "ambassador")],
)
@pytest.mark.parametrize("seed", range(4))
def test_real_games_encode_and_decode(players: int, variant: str, seed: int) -> None:
    """Every event (for every viewer), request and legal answer of engine games."""
    from arena.engine.game import Game

    game = Game.new(players=players, seed=seed, variant=variant)
    chooser = random.Random(seed)
    request_id = 0
    while not game.over:
        request = game.request
        assert request is not None
        for seat in request.seats:
            legal = game.legal(seat)
            request_id += 1
            line = encode_request(request_id, request, legal, 1000)
            assert len(line.encode()) <= MAX_LINE_TO_BOT
            assert decode_request(line).legal == legal
            pick = chooser.choice(legal)
            game.decide(seat, decode_answer(encode_answer(request_id, pick), request_id, legal))
    for event in game.events:
        for viewer in (OMNISCIENT, SPECTATOR, *range(players)):
            seen = view(event, viewer)
            assert decode_event(encode_event(seen)) == seen


def test_a_forfeit_from_the_engine_encodes() -> None:
    from arena.engine.game import Game

    game = Game.new(players=3, seed=5)
    before = len(game.events)
    game.forfeit(2, "timeout")
    lines = [encode_event(view(event, 0)) for event in game.events[before:]]
    assert lines[0] == "event forfeit 2 timeout"
    assert [line.split()[1] for line in lines[1:3]] == ["lost", "lost"]
    assert "event out 2 timeout" in lines
    assert all(
        decode_event(line) == view(e, 0)
        for line, e in zip(lines, game.events[before:], strict=True)
    )


# ------------------------------------------------- protocol.md stays in sync


def spec_code_lines() -> list[str]:
    text = PROTOCOL_MD.read_text()
    blocks = re.findall(r"^```[^\n]*\n(.*?)^```", text, flags=re.S | re.M)
    return [line for block in blocks for line in block.splitlines()]


def test_every_event_keyword_is_documented_with_its_fields() -> None:
    text = PROTOCOL_MD.read_text()
    for keyword, fields in codec.EVENT_FORMATS.values():
        placeholders = " ".join(f"<{name}>" for name, _ in fields)
        # The table names fields by role (e.g. <seat>), so compare counts.
        rows = re.findall(rf"^\| `event {keyword}((?: <[a-z_]+>)*)`", text, flags=re.M)
        assert rows, f"event {keyword} is not documented"
        assert len(rows[0].split()) == len(placeholders.split()), keyword


def test_spec_example_lines_decode() -> None:
    count = 0
    for raw in spec_code_lines():
        line = raw.split("#")[0].strip()
        if line.startswith("< "):
            line = line[2:]
        if "<" in line:  # a template such as request <id> ...
            continue
        if line.startswith("event "):
            decode_event(line)
        elif line.startswith("request "):
            decode_request(line)
        elif line.startswith("gameover "):
            decode_game_over(line)
        elif line.startswith("game "):
            decode_game_start(line)
        elif line.startswith("seed "):
            codec.decode_seed(line)
        elif line.startswith("arena "):
            decode_handshake(line)
        else:
            continue
        count += 1
    assert count > 100  # the transcript and the examples were all read


def test_spec_transcript_answers_are_valid() -> None:
    lines = [line for line in spec_code_lines() if line.startswith(("< ", "> "))]
    assert lines[0].startswith("< arena 1 ") and lines[1] == "> hello honest"
    assert lines[-1] == "< quit"
    open_request = None
    for line in lines[2:]:
        text = line[2:]
        if line.startswith("> "):
            assert open_request is not None, f"answer with no request open: {line}"
            decode_answer(text, open_request.request_id, open_request.legal)
            open_request = None
        elif text.startswith("request "):
            assert open_request is None
            open_request = decode_request(text)
