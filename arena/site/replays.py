"""A game record as the replay viewer reads it: steps, events and tables per view.

A step is what happens between two moments the game waits for answers: the
events one decision set off (the first step is the deal).  Every view has
the same steps, so ``step=17`` is the same moment in each.  The viewer shows
either every card (the omniscient view, "all cards") or exactly what one
seat saw: each view is the event stream passed through the engine's
observer (``arena.engine.observer.view``), and each view's table is folded
from that stream by ``Table``.  Nothing here or in the browser decides who
may see what.

Kept small, as a site may hold one file per game for 100,000 games: events
are short arrays (a two-letter type, then the event's fields, a card as one
letter); a seat's events are stored only where they differ from the
omniscient ones; a table is a short string, left empty when it did not
change since the step before.
"""

from __future__ import annotations

from typing import Any, Final

import attrs

from arena.engine import events as ev
from arena.engine import observer
from arena.engine.cards import ALL_CARDS
from arena.engine.game import Game
from arena.engine.record import GameRecord, replay
from arena.site.table import Seat, Table

FORMAT_VERSION: Final = 2  # a new version writes every replay again

CARD_LETTERS: Final = {"duke": "D", "assassin": "A", "captain": "C", "contessa": "T",
                       "ambassador": "B", "inquisitor": "I"}
assert set(CARD_LETTERS) == set(ALL_CARDS)
HIDDEN: Final = "?"

EVENT_CODES: Final[dict[type, str]] = {
    ev.GameStarted: "GS", ev.CardsDealt: "DL", ev.DraftOffered: "DO", ev.DraftChosen: "DC",
    ev.TurnStarted: "TS", ev.ActionDeclared: "AD", ev.CoinsChanged: "CC",
    ev.Challenged: "CH", ev.ClaimProven: "CP", ev.ClaimFailed: "CF", ev.CardDrawn: "DR",
    ev.Blocked: "BL", ev.InfluenceLost: "IL", ev.PlayerOut: "PO", ev.Forfeited: "FF",
    ev.ExchangeDrawn: "XD", ev.ExchangeReturned: "XR", ev.ExamineShown: "ES",
    ev.ExamineDecided: "ED", ev.ActionResolved: "AR", ev.ActionFailed: "AF", ev.GameOver: "GO",
}
# Fields that hold a card or a character: written as letters.
_CARD_FIELDS: Final = frozenset({"card", "cards", "character", "claim"})


def encode_event(event: ev.Event) -> list[Any]:
    """``[code, field, ...]`` in the event's field order; cards as letters."""
    out: list[Any] = [EVENT_CODES[type(event)]]
    for name, cards in _fields(type(event)):
        value = getattr(event, name)
        if cards and value is not None:
            value = "".join([_LETTERS[card] for card in
                             ((value,) if isinstance(value, str) else value)])
        elif isinstance(value, tuple):
            value = list(value)
        out.append(value)
    return out


_LETTERS: Final[dict[str | None, str]] = {**CARD_LETTERS, None: HIDDEN}
_FIELDS: dict[type, tuple[tuple[str, bool], ...]] = {}


def _fields(kind: type) -> tuple[tuple[str, bool], ...]:
    # Each event type's field names, and which hold cards: once per type, not
    # once per event (a site encodes every event of every game).
    found = _FIELDS.get(kind)
    if found is None:
        found = _FIELDS[kind] = tuple((field.name, field.name in _CARD_FIELDS)
                                      for field in attrs.fields(kind))
    return found


def encode_seat(seat: Seat) -> str:
    """``coins.hand.revealed.drawn`` and ``.x`` if out: ``5.D?.C.`` ."""
    letter = _LETTERS.__getitem__
    text = (f"{seat.coins}.{''.join(map(letter, seat.hand))}."
            f"{''.join(map(letter, seat.revealed))}.{''.join(map(letter, seat.drawn))}")
    return text + ".x" if seat.out else text


def encode_table(table: Table) -> str:
    """``court;seat0;seat1;...``"""
    return ";".join([str(table.court), *(encode_seat(seat) for seat in table.seats)])


def replay_data(record: GameRecord, game_id: str, line: dict[str, Any] | None = None
                ) -> dict[str, Any]:
    """Everything the viewer shows of one game (see the module docstring)."""
    events, ends, waits = _steps(record)
    players = len(events[0].coins) if events and isinstance(events[0], ev.GameStarted) else 0
    omniscient = [encode_event(e) for e in events]
    seen: list[dict[str, list[Any]]] = []
    for seat in range(players):
        differs = {}
        for index, event in enumerate(events):
            if observer.has_secret(event):
                encoded = encode_event(observer.view(event, seat))
                if encoded != omniscient[index]:
                    differs[str(index)] = encoded
        seen.append(differs)
    tables = [_tables(observer.views(events, who), ends)
              for who in (observer.OMNISCIENT, *range(players))]
    steps = []
    turn, current = 0, -1
    start = 0
    for end, waiting in zip(ends, waits, strict=True):
        for event in events[start:end]:
            if isinstance(event, ev.TurnStarted):
                turn, current = event.turn, event.seat
        steps.append([end, turn, current, waiting])
        start = end
    referee = record.referee
    start_event = events[0] if events else None
    data: dict[str, Any] = {
        "v": FORMAT_VERSION,
        "game": game_id,
        "names": referee.get("names") or [f"seat {s}" for s in range(players)],
        "variant": getattr(start_event, "variant", None),
        "draft": getattr(start_event, "draft", None),
        "seed": record.seed,
        "result": record.result,
        "faults": referee.get("faults") or [None] * players,
        "times": referee.get("decision_ms"),
        "events": omniscient,
        "seen": seen,
        "steps": steps,
        "tables": tables,
    }
    if line is not None:
        data["duration"] = line.get("duration")
    return data


def _steps(record: GameRecord) -> tuple[list[ev.Event], list[int], list[Any]]:
    """The events, where each step ends, and what the game then waits for
    (``[kind, seats]``, or None once over): one step per batch of events a
    decision set off, the deal (everything before the first decision) first."""
    first = record.new_game()
    ends = [len(first.events)]
    waits = [_waiting(first)]

    def after(game: Game) -> None:
        if len(game.events) > ends[-1]:
            ends.append(len(game.events))
            waits.append(_waiting(game))

    game = replay(record, after=after)
    if ends[0] == 0:  # no events before the first decision (never for a dealt game)
        ends.pop(0)
        waits.pop(0)
    return list(game.events), ends, waits


def _waiting(game: Game) -> list[Any] | None:
    # Public: every seat knows whose answer the game waits for.
    request = game.request
    return None if request is None else [request.kind, list(request.seats)]


def _tables(events: Any, ends: list[int]) -> list[str]:
    table = Table()
    out: list[str] = []
    last = None
    start = 0
    stream = list(events)
    for end in ends:
        for event in stream[start:end]:
            table.apply(event)
        start = end
        text = encode_table(table)
        out.append("" if text == last else text)
        last = text
    return out
