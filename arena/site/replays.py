"""A game record as the replay viewer reads it: steps, events and tables per view.

A step is what happens between two moments the game waits for answers: the
events one decision set off (the first step is the deal).  Every view has
the same steps, so ``step=17`` is the same moment in each.  The viewer shows
either every card (the omniscient view, "all cards") or exactly what one
seat saw: each view is the event stream passed through the engine's
observer (``arena.engine.observer.seat_views``: every seat's copy of an
event at once), and each view's table is folded from that stream by
``Table`` (but for the coins: CoinsChanged has no secret, so every view's
stream holds the same ones, kept once for all).  Nothing here or in the
browser decides who may see what.

Kept small, as a site may hold the replays of 100,000 games: events
are short arrays (a two-letter type, then the event's fields, a card as one
letter); a seat's events are stored only where they differ from the
omniscient ones; a table is a short string, left empty when it did not
change since the step before.
"""

from __future__ import annotations

import json
from typing import Any, Final

import attrs

from arena.engine import events as ev
from arena.engine import observer
from arena.engine.cards import ALL_CARDS
from arena.engine.decisions import Request
from arena.engine.game import Game
from arena.engine.record import GameRecord, replay
from arena.site.table import FOLDS, Seat, Table

FORMAT_VERSION: Final = 3  # a new version writes every replay again (3: several games a file)

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
# The events replay_json reads more of than their text: the coins, whose
# turn it is, the events with a secret, and those that change the tables.
_COINS_CHANGED: Final = ev.CoinsChanged
_TURN_STARTED: Final = ev.TurnStarted
_READ: Final = frozenset({_COINS_CHANGED, _TURN_STARTED, *observer.SECRET_EVENT_TYPES, *FOLDS})
# One list of coins serves every view (_ShownTables) because the observer
# gives every seat the same CoinsChanged.
assert _COINS_CHANGED not in observer.SECRET_EVENT_TYPES
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
    return f"{seat.coins}.{_encode_cards(seat)}"


def _encode_cards(seat: Seat) -> str:
    # encode_seat after the coins, kept by the seat's cards (the same hands
    # come again and again; bounded): a replay encodes a seat again each time
    # an event touches it, in every view.
    key = (*seat.hand, 0, *seat.revealed, 0, *seat.drawn, seat.out)  # 0: no card is a number
    text = _CARDS_TEXTS.get(key)
    if text is None:
        if len(_CARDS_TEXTS) >= _TEXTS_KEPT:
            _CARDS_TEXTS.clear()
        letter = _LETTERS.__getitem__
        text = (f"{''.join(map(letter, seat.hand))}."
                f"{''.join(map(letter, seat.revealed)) if seat.revealed else ''}."
                f"{''.join(map(letter, seat.drawn)) if seat.drawn else ''}")
        text = _CARDS_TEXTS[key] = text + ".x" if seat.out else text
    return text


_CARDS_TEXTS: dict[tuple[str | int | bool | None, ...], str] = {}


def replay_data(record: GameRecord, game_id: str, line: dict[str, Any] | None = None
                ) -> dict[str, Any]:
    """Everything the viewer shows of one game (see the module docstring)."""
    value: dict[str, Any] = json.loads(replay_json(record, game_id, line))
    return value


def replay_json(record: GameRecord, game_id: str, line: dict[str, Any] | None = None) -> str:
    """``replay_data`` as the ASCII JSON text a replay file holds.

    Made in one pass over the replayed events, the text put together from
    pieces: each event's text is made once (and kept for the next games, where
    most events come again), every view's table is folded from the same pass
    (the observer's ``seat_views`` gives each seat its copy of an event with a
    secret, kept for the next games as the texts are), and a table's text is
    made again only where an event changed it (``_ShownTables``).  The
    engine's events are read unbuilt (``Game.event_fields``); only those a
    table or the observer reads are built."""
    events, ends, requests = _steps(record)
    started = events[0][1] if events and events[0][0] is ev.GameStarted else None
    players = started[0] if started else 0
    coins = list(map(str, started[4])) if started else []  # every seat's: see _ShownTables
    seats = list(range(players))
    shown = _ShownTables(1 + players)  # omniscient, then each seat
    omniscient_table, *seat_tables = shown.tables
    seen: list[list[str]] = [[] for _ in seats]  # '"index":event' where a seat's view differs
    step_texts: list[str] = []  # each step's JSON text
    turn, current = 0, -1
    start = 0
    for end, request in zip(ends, requests, strict=True):
        folded = False  # an event of the step into the tables
        after = start  # where to look for the next secret event's index
        for unbuilt in events[start:end]:
            kind = unbuilt[0]
            if kind not in _READ:  # most events: their text is all
                continue
            if kind is _COINS_CHANGED:  # the most common event: coins, for every view
                values = unbuilt[1]
                coins[values[0]] = str(values[2])
            elif kind is _TURN_STARTED:
                turn, current = unbuilt[1]
            else:  # an event with a secret, or one that changes the tables
                event, views, differs = _SEAT_VIEWS.get((unbuilt, players)) or _seat_views(
                    unbuilt, players)
                fold = FOLDS.get(kind)
                if fold is not None:
                    fold(omniscient_table, event)
                    for table, view in zip(seat_tables, views, strict=True):
                        fold(table, view)
                    folded = True
                if differs is not None:
                    index = after = events.index(unbuilt, after, end)
                    after += 1
                    for seat, text in enumerate(differs):
                        if text is not None:
                            seen[seat].append(f'"{index}":{text}')
        # Public: every seat knows whose answer the game waits for.
        waiting = "null" if request is None else (
            _WAITING.get((request.kind, request.seats)) or _waiting(request))
        step_texts.append(f"[{end},{turn},{current},{waiting}]")
        shown.step(tuple(coins), folded)
        start = end
    texts = list(map(_TEXTS.get, events))
    if None in texts:  # events never seen before
        texts = [_TEXTS.get(unbuilt) or _unbuilt_text(unbuilt) for unbuilt in events]
    referee = record.referee
    head = {
        "v": FORMAT_VERSION,
        "game": game_id,
        "names": referee.get("names") or [f"seat {s}" for s in seats],
        "variant": started[1] if started else None,
        "draft": started[2] if started else None,
        "seed": record.seed,
        "result": record.result,
        "faults": referee.get("faults") or [None] * players,
        "times": referee.get("decision_ms"),
    }
    parts = [_json(head)[:-1],
             ',"events":[', ",".join(texts),
             '],"seen":[', ",".join(["{" + ",".join(differs) + "}" for differs in seen]),
             '],"steps":[', ",".join(step_texts),
             '],"tables":[', ",".join(shown.texts()), "]"]
    if line is not None:
        parts += [',"duration":', _json(line.get("duration"))]
    parts.append("}")
    return "".join(parts)


def _json(value: Any) -> str:
    # ASCII only: bot names and fault lines are hostile text, set only as text.
    return _ENCODER.encode(value)


# json.dumps(value, separators=(",", ":"), ensure_ascii=True), its encoder made once.
_ENCODER: Final = json.JSONEncoder(separators=(",", ":"), ensure_ascii=True)


class _ShownTables:
    """Every view's table (the omniscient one, then each seat's) and each
    view's text after each step, "" when it did not change.

    A view's text is kept as a template of all but the coins, made again
    only after an event touched a seat's cards or the Court's size, and
    filled with the coins.  CoinsChanged, the event most steps bring, is not
    folded into the tables: it has no secret (every view sees it alike), so
    one list of coins, kept by ``replay_json``, serves every view, and a step
    that changed the coins changed every view's text.  The texts of a run of
    steps between two changes of the templates are made at the run's end, a
    view's at once: one ``%`` of its template repeated over every coin the
    run's steps showed."""

    __slots__ = ("tables", "_parts", "_courts", "_templates", "_coins", "_marks", "_run_coins",
                 "_columns")

    def __init__(self, views: int) -> None:
        self.tables = [Table() for _ in range(views)]
        self._parts: list[list[str]] = [[] for _ in range(views)]  # "%s." + a seat's cards
        self._courts = [-1] * views  # the Court's size in a view's template
        self._templates = [""] * views  # the Court's size; then each seat's part
        self._coins: tuple[str, ...] | None = None  # shown after the step before
        # The run: a step's mark (_MARK: the coins changed, "": nothing did),
        # and the coins shown after each step whose coins changed, one after another.
        self._marks: list[str] = []
        self._run_coins: list[str] = []
        self._columns: list[list[str]] = [[] for _ in range(views)]  # texts, a run's as one

    def step(self, coins: tuple[str, ...], folded: bool) -> None:
        """After a step: every seat's ``coins``; ``folded``: whether an event of
        the step was folded into the tables."""
        if folded:
            self._end_run()  # with the templates before
            changed = self._retemplate()
            if changed:
                # A text changed where its template or the coins did (a text
                # shows each of them whole, in its place).
                same = coins == self._coins
                for view, column in enumerate(self._columns):
                    column.append("" if same and view not in changed
                                  else self._templates[view] % coins)
                self._coins = coins
                return
        if coins != self._coins:  # every view shows every seat's coins
            self._marks.append(_MARK)
            self._run_coins.extend(coins)
            self._coins = coins
        else:
            self._marks.append("")

    def texts(self) -> list[str]:
        """Each view's texts, after each step, as a JSON list."""
        self._end_run()
        return [_strings(column) for column in self._columns]

    def _end_run(self) -> None:
        if not self._marks:
            return
        marks = '","'.join(self._marks)  # as _strings puts the texts together
        coins = tuple(self._run_coins)
        for column, template in zip(self._columns, self._templates, strict=True):
            column.append(marks.replace(_MARK, template) % coins)
        self._marks.clear()
        self._run_coins.clear()

    def _retemplate(self) -> list[int]:
        """Make again the template of each view whose table an event touched;
        the views whose template changed."""
        changed = []
        for view, table in enumerate(self.tables):
            touched = table.touched
            if touched or table.court != self._courts[view]:
                seats, parts = table.seats, self._parts[view]
                if len(parts) != len(seats):
                    parts[:] = [""] * len(seats)
                for seat in touched:
                    # "%s" for the coins: the cards are letters, "?", "." and "x",
                    # nothing % reads.
                    parts[seat] = "%s." + _encode_cards(seats[seat])
                touched.clear()
                self._courts[view] = table.court
                template = ";".join([str(table.court), *parts])
                if template != self._templates[view]:
                    self._templates[view] = template
                    changed.append(view)
        return changed


_MARK: Final = "\0"  # a step whose coins changed, in a run's marks


# An event's text by its class and field values, kept across games (the same
# events come again and again: TurnStarted(5, 0), CoinsChanged(1, 1, 3,
# "income"), ...); bounded.  A tuple of the class and plain values hashes in C,
# an event through attrs' __hash__, in Python.
_TEXTS: dict[tuple[type, tuple[Any, ...]], str] = {}
_TEXTS_KEPT: Final = 10_000  # about 300 bytes each; 130 for 1,000 heads-up games


def _unbuilt_text(unbuilt: tuple[type, tuple[Any, ...]]) -> str:
    text = _TEXTS.get(unbuilt)
    if text is None:
        if len(_TEXTS) >= _TEXTS_KEPT:
            _TEXTS.clear()
        kind, values = unbuilt
        text = _TEXTS[unbuilt] = _json(encode_event(kind(*values)))
    return text


def _event_text(kind: type, event: ev.Event) -> str:
    """The text of ``event``, of class ``kind``, as ``_unbuilt_text`` gives it."""
    return _unbuilt_text((kind, tuple([getattr(event, name) for name, _ in _fields(kind)])))


# An event's views, by the event unbuilt and the number of seats: the event
# built, each seat's copy (observer.seat_views: a blanked one where the event
# has a secret the seat may not see), and each seat's text where it differs
# from the event's (None where none does).  Kept across games, as the texts:
# a deal, a draw, a lost card come again and again; bounded.
_SEAT_VIEWS: dict[tuple[tuple[type, tuple[Any, ...]], int],
                  tuple[ev.Event, list[ev.Event], list[str | None] | None]] = {}


def _seat_views(unbuilt: tuple[type, tuple[Any, ...]], players: int
                ) -> tuple[ev.Event, list[ev.Event], list[str | None] | None]:
    if len(_SEAT_VIEWS) >= _TEXTS_KEPT:
        _SEAT_VIEWS.clear()
    kind, values = unbuilt
    event = kind(*values)
    views = observer.seat_views(event, range(players))
    text = _unbuilt_text(unbuilt)
    differs: list[str | None] = []
    for view in views:
        view_text = None if view is event else _event_text(kind, view)
        differs.append(view_text if view_text != text else None)
    found = _SEAT_VIEWS[(unbuilt, players)] = (
        event, views, differs if any(differs) else None)
    return found


def _steps(record: GameRecord) -> tuple[list[tuple[type, tuple[Any, ...]]], list[int],
                                        list[Request | None]]:
    """The events unbuilt (``Game.event_fields``), where each step ends, and
    what the game then waits for (its request, None once over): one step per
    batch of events a decision set off, the deal (everything before the first
    decision) first."""
    ends: list[int] = []
    requests: list[Request | None] = []

    def after(game: Game) -> None:  # called once dealt, then after each decision
        count = len(game.event_fields)
        if not ends or count > ends[-1]:
            ends.append(count)
            requests.append(game.request)

    game = replay(record, after=after)
    if ends[0] == 0:  # no events before the first decision (never for a dealt game)
        ends.pop(0)
        requests.pop(0)
    return game.event_fields, ends, requests


def _waiting(request: Request) -> str:
    """``[kind, seats]`` of ``request`` as JSON text, kept in _WAITING."""
    # A request's kind is a plain word, its seats numbers: the text is put together.
    key = (request.kind, request.seats)
    text = _WAITING[key] = f'["{key[0]}",[{",".join(map(str, key[1]))}]]'
    return text


# (request kind, seats) -> that text: bounded by kinds x clockwise seat lists.
_WAITING: dict[tuple[str, tuple[int, ...]], str] = {}


def _strings(texts: list[str]) -> str:
    # A JSON list of table texts: letters, digits and ".;?" only, nothing to escape.
    return '["' + '","'.join(texts) + '"]' if texts else "[]"
