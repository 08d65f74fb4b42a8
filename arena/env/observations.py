"""Every seat's observation vector of one game, kept up to date event by event.

``Observations`` makes, for the training environment, the bytes that
``encoding.observation_bytes`` makes for an SDK bot from its ``State``,
byte for byte (tests/test_env_observations.py compares them for every seat
at every step of many games).  Instead of rebuilding each vector from a
State, it keeps its blocks and changes only what an event touches:

- the head (the game, the Court's size, the turn), made again when the
  Court or the turn changes;
- each seat's own cards block (``hand``, ``set_aside``), made again when
  its hand changes;
- the seat slots, in seat order, in one buffer (the slots of seat ``me``
  and those clockwise from it are two slices of it): an event sets the
  numbers it changes (a seat's coins, a face-up card, whose turn it is)
  in place, one float32 at a time;
- the action on the table as each seat sees it, looked up (all seats at
  once, from a cache shared by all games) when it changes.

A vector joins those into a new bytearray: later events leave it alone.

Each event comes in as its fields, in order: ``follow`` reads them from
the engine's event objects, ``follow_records`` takes them from records,
``(event class, fields)`` pairs, as an engine that builds its events only
when read may keep them.  What
an event tells each seat follows ``state.State``'s handlers and
``observer.view``: the events come in unblanked, and a secret card only
ever reaches the seat entitled to it (a seat's own dealt, drawn and
exchanged cards; an examined card its examiner and its holder).
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter
from typing import Any, Final

import attrs

from arena.engine import events as ev
from arena.engine.cards import MAX_PLAYERS
from arena.sdk import encoding
from arena.sdk.state import _without

# encoding's blocks and caches, shared so that both make the same bytes.
_SLOT_BYTES: Final = 4 * encoding._SLOT
_CARDS_HELD: Final = encoding._CARDS_HELD
_SLOTS: Final = encoding._SLOTS
_remember: Final = encoding._remember
_number: Final = encoding._number
_ACTION: Final = encoding._ACTION
_ACTION_HOT: Final = encoding._ACTION_HOT
_SLOT_HOT: Final = encoding._SLOT_HOT
_CARD: Final = encoding._CARD
_CARD_HOT: Final = encoding._CARD_HOT
_NO_SLOT: Final = encoding._NO_SLOT
_NO_CARD: Final = encoding._NO_CARD
_NO_CHAIN: Final = encoding._NO_CHAIN
_NO_CLAIM: Final = encoding._NO_CLAIM
_NOTHING_ASKED: Final = encoding._REQUEST[-1]
_ASKED: Final = {kind: encoding._REQUEST[i] for kind, i in encoding._KIND.items()}

# Where a slot's numbers are (encoding.SLOT_FIELDS), and their values as
# encoding._slot computes them (counts summed as its _add_counts sums them);
# they become float32 as its array does, by item assignment.
_SLOT: Final = encoding._SLOT
_ALIVE, _COINS, _INFLUENCE, _FACE_UP, _CURRENT, _CLAIMS, _KNOWN = (
    encoding.SLOT_FIELDS[name][0]
    for name in ("alive", "coins", "influence", "face_up", "current", "claims", "known"))
_COIN_VALUES: Final = [min(coins, 12) / 12 for coins in range(13)]  # index: min(coins, 12)


def _count_values(step: float, most: int) -> list[float]:
    """The value of 0, 1, ... ``most`` copies of a card, each worth ``step``."""
    values, numbers = [], {}
    for _ in range(most + 1):
        values.append(numbers.get(0, 0.0))
        encoding._add_counts(numbers, 0, (encoding.CARDS[0],), step)
    return values


_FACE_UP_VALUES: Final = _count_values(0.5, 2)  # index: min(count, 2)
_CLAIM_VALUES: Final = _count_values(1 / 3, 3)  # index: min(count, 3)


_TURN: Final = encoding._TURN
_COURT: Final = encoding._COURT


def _court(size: int) -> bytes:
    return encoding._COURT[size] if 0 <= size <= 20 else _number(min(size, 20) / 20)


def _turn(turn: int) -> bytes:
    return _TURN[turn] if 0 <= turn <= 100 else _number(min(turn, 100) / 100)


def _game(players: int, variant: str, draft: bool) -> bytes:
    block = encoding._GAMES.get((players, variant, draft))
    if block is None:
        block = encoding._GAMES[players, variant, draft] = encoding._game_block(
            players, variant, draft)
    return block


def _cards(hand: tuple[str, ...], set_aside: tuple[str, ...]) -> bytes:
    block = _CARDS_HELD.get((hand, set_aside))
    if block is None:
        block = _remember(_CARDS_HELD, (hand, set_aside), encoding._cards_block(hand, set_aside))
    return block


def _slot_at_start(coins: int, influence: int) -> bytes:
    key = (True, coins, influence, (), (), False)
    block = _SLOTS.get(key)
    if block is None:
        block = _remember(_SLOTS, key, encoding._slot(*key, None))
    return block


# Every seat's slot at the start of a game, by (coins, influence).
_FIRST_SLOTS: dict[tuple[Any, ...], bytes] = {}


def _first_slots(coins: tuple[int, ...], influence: int) -> bytes:
    slots = b"".join(_slot_at_start(seat_coins, influence) for seat_coins in coins)
    if len(_FIRST_SLOTS) >= 20_000:
        _FIRST_SLOTS.clear()
    _FIRST_SLOTS[coins, influence] = slots
    return slots


_ACTION_TAILS: dict[int, dict[tuple[Any, ...], tuple[bytes, ...]]] = {}


# A hand less a card, or plus cards, with its cards block: (hand, set aside,
# card or cards) -> (new hand, block), for all games.
_LESS: dict[tuple[Any, ...], tuple[tuple[str, ...], bytes]] = {}
_MORE: dict[tuple[Any, ...], tuple[tuple[str, ...], bytes]] = {}


def _less(key: tuple[Any, ...]) -> tuple[tuple[str, ...], bytes]:
    hand, set_aside, card = key
    hand = _without(hand, card)
    if len(_LESS) >= 20_000:  # some hundreds in practice
        _LESS.clear()
    found = _LESS[key] = (hand, _cards(hand, set_aside))
    return found


def _more(key: tuple[Any, ...]) -> tuple[tuple[str, ...], bytes]:
    hand, set_aside, cards = key
    hand += cards
    if len(_MORE) >= 20_000:
        _MORE.clear()
    found = _MORE[key] = (hand, _cards(hand, set_aside))
    return found


# The tail of each observing seat's vector (the empty slots past the last
# seat, then the action on the table as that seat sees it), by chain.
_TAILS: dict[tuple[Any, ...], tuple[bytes, ...]] = {}


def _tails_of(chain: tuple[Any, ...]) -> tuple[bytes, ...]:
    n, actor, action, target, blocker, block_claim = chain
    empty, action_hot = encoding._EMPTY_SLOTS[MAX_PLAYERS - n], _ACTION_HOT[action]
    claim_hot = _NO_CARD if block_claim is None else _CARD_HOT[_CARD[block_claim]]
    tails = tuple(b"".join((
        empty, action_hot, _SLOT_HOT[(actor - me) % n],
        _NO_SLOT if target is None else _SLOT_HOT[(target - me) % n],
        _NO_SLOT if blocker is None else _SLOT_HOT[(blocker - me) % n], claim_hot))
        for me in range(n))
    if len(_TAILS) >= 20_000:  # some hundreds in practice
        _TAILS.clear()
    _TAILS[chain] = tails
    return tails


class Observations:
    """The observation vectors of every seat of one game (see the module docstring).

    ``follow(events)`` takes in the game's new events (the engine's own list:
    it remembers how far it got); ``vector(seat, request)`` is that seat's
    observation, asked ``request`` (the engine's, or None), as a new
    bytearray of float32 values.
    """

    def __init__(self, players: int, variant: str) -> None:
        n = self.players = players
        self.variant = variant
        # The slots' buffer, and views of it made once for all games.
        self._slots = bytearray(n * _SLOT_BYTES)
        self._view_slots()
        self._empty = encoding._EMPTY_SLOTS[MAX_PLAYERS - n]
        self._no_tails = (self._empty + _NO_CHAIN,) * n
        game = _game(n, variant, False)
        self._start_head = (game, game + _court(0), game + _court(0) + _turn(0))
        self._no_cards = _cards((), ())
        self._no_slots = bytes(len(self._slots))
        self._no_counts = [[0] * len(_CARD) for _ in range(n)]
        # The tails by an action's record fields, for all games of n players.
        self._action_tails = _ACTION_TAILS.setdefault(n, {})
        self.restart()

    def _view_slots(self) -> None:
        slots = memoryview(self._slots)
        self._values = slots.cast("f")  # the slots' numbers: seat s's are at 23 * s
        n = self.players
        self._from = [slots[seat * _SLOT_BYTES:] for seat in range(n)]  # seat me on
        self._to = [slots[:seat * _SLOT_BYTES] for seat in range(n)]  # then the seats before

    # Copied and pickled without the views (memoryviews are neither), made again.
    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        for name in ("_values", "_from", "_to"):
            del state[name]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._view_slots()

    def restart(self) -> None:
        """Back to before a game's first event, for the next game."""
        n = self.players
        self.followed = 0  # events taken in
        # What every seat sees alike, as far as the slots do not hold it.
        self.court = 0
        self.turn = 0
        self.current: int | None = None
        self.influence = [2] * n
        self.face_up = list(map(list.copy, self._no_counts))  # count of each card
        self.claims = list(map(list.copy, self._no_counts))  # count since the last new card
        # The action on the table: its record's fields (actor, action, target, claim).
        self.chain: tuple[Any, ...] | None = None
        # What each seat alone knows.
        self.hands: list[tuple[str, ...]] = [()] * n
        self.draft_piles: list[tuple[str, ...]] = [()] * n
        self.set_aside: list[tuple[str, ...]] = [()] * n
        self.known: list[dict[int, str]] = [{} for _ in range(n)]  # seen by examining
        self._knowing = 0  # entries in all of known
        self._shown: list[str | None] = [None] * n  # the card each seat last showed
        # The blocks (GameStarted sets the head and the slots again).
        self._game, self._game_court, self._head = self._start_head
        self._cards = [self._no_cards] * n
        self._slots[:] = self._no_slots
        self._tails = self._no_tails  # per observing seat, the empty slots and the chain

    def follow(self, events: list[Any]) -> None:
        """Take in ``events[self.followed:]``, the game's new events."""
        route = _EVENT_HANDLERS.get
        for event in events[self.followed:]:
            found = route(type(event))
            if found is not None:
                found[0](self, found[1](event))
        self.followed = len(events)

    def follow_records(self, records: list[tuple[type, tuple[Any, ...]]]) -> None:
        """As ``follow``, from the events as records: (event class, its fields)."""
        route = _HANDLERS.get
        for kind, fields in records[self.followed:]:
            handler = route(kind)
            if handler is not None:
                handler(self, fields)
        self.followed = len(records)

    def vector(self, me: int, request: Any) -> bytearray:
        """The observation of seat ``me``, asked ``request`` (None: nothing)."""
        tail = self._tails[me]
        if self._knowing and self.known[me]:
            seats, before = self._seats_known(me), b""
        else:
            seats, before = self._from[me], self._to[me]
        if request is None:
            return bytearray().join((self._head, _NOTHING_ASKED, self._cards[me], seats, before,
                                     tail, _NO_CLAIM))
        asked = _ASKED.get(request.kind, _NOTHING_ASKED)
        claimant = request.claimant
        if claimant is None:
            return bytearray().join((self._head, asked, self._cards[me], seats, before, tail,
                                     _NO_CLAIM))
        character = request.character
        return bytearray().join((self._head, asked, self._cards[me], seats, before, tail,
                                 _SLOT_HOT[(claimant - me) % self.players],
                                 _CARD_HOT[_CARD[character]] if character in _CARD
                                 else _NO_CARD))

    # -- the blocks ------------------------------------------------------------

    def _seats_known(self, me: int) -> bytes:
        """The slots from ``me`` on, for a seat that saw some cards by examining."""
        n, slots, known = self.players, self._slots, self.known[me]
        blocks = []
        for k in range(n):
            seat = (me + k) % n
            block = slots[seat * _SLOT_BYTES:(seat + 1) * _SLOT_BYTES]
            card = known.get(seat)
            if card is not None:
                memoryview(block).cast("f")[_KNOWN + _CARD[card]] = 1.0
            blocks.append(block)
        return b"".join(blocks)

    def _hold(self, seat: int, hand: tuple[str, ...]) -> None:
        self.hands[seat] = hand
        self._cards[seat] = _cards(hand, self.set_aside[seat])

    def _court_changed(self, court: int) -> None:
        self.court = court
        game_court = self._game_court = self._game + (
            _COURT[court] if 0 <= court <= 20 else _court(court))
        turn = self.turn
        self._head = game_court + (_TURN[turn] if turn <= 100 else _TURN[100])

    def _lose(self, seat: int, card: str) -> None:
        """``seat``'s hand less ``card`` (unchanged if it has none)."""
        key = (self.hands[seat], self.set_aside[seat], card)
        self.hands[seat], self._cards[seat] = _LESS.get(key) or _less(key)

    def _gain(self, seat: int, cards: tuple[str, ...]) -> None:
        key = (self.hands[seat], self.set_aside[seat], cards)
        self.hands[seat], self._cards[seat] = _MORE.get(key) or _more(key)

    def _claimed(self, seat: int, card: str) -> None:
        i = _CARD[card]
        counts = self.claims[seat]
        count = counts[i] = counts[i] + 1
        self._values[_SLOT * seat + _CLAIMS + i] = _CLAIM_VALUES[count if count < 3 else 3]

    def _new_card(self, seat: int) -> None:
        """A seat took a new card: its claims say nothing of its hand any more."""
        counts = self.claims[seat]
        if any(counts):
            self.claims[seat] = [0] * len(_CARD)
            start = _SLOT_BYTES * seat + 4 * _CLAIMS
            self._slots[start:start + len(_NO_CARD)] = _NO_CARD

    def _forget(self, seat: int, card: str | None = None) -> None:
        """Every seat forgets what it saw of ``seat``'s cards (only ``card``, if given)."""
        for known in self.known:
            if seat in known and (card is None or known[seat] == card):
                del known[seat]
                self._knowing -= 1

    # -- the events (as state.State's handlers), each as its fields ----------------

    def _started(self, fields: tuple[Any, ...]) -> None:
        n, variant, draft, _, coins, court = fields
        influence = 1 if draft else 2
        self.influence = [influence] * n
        self._game = _game(n, variant, draft)
        self._court_changed(court)
        slots = _FIRST_SLOTS.get((coins, influence)) or _first_slots(coins, influence)
        self._slots[:len(slots)] = slots

    def _dealt(self, fields: tuple[Any, ...]) -> None:
        seat, cards = fields
        if cards is not None:
            hand = self.hands[seat] = tuple(cards)
            self._cards[seat] = _CARDS_HELD.get((hand, self.set_aside[seat])) or _cards(
                hand, self.set_aside[seat])

    def _draft_offered(self, fields: tuple[Any, ...]) -> None:
        seat, cards = fields
        if cards is not None:
            self.draft_piles[seat] = tuple(cards)

    def _draft_chosen(self, fields: tuple[Any, ...]) -> None:
        seat, card = fields
        influence = self.influence[seat] = self.influence[seat] + 1
        self._values[_SLOT * seat + _INFLUENCE] = influence / 2
        if card is not None:
            self.set_aside[seat] = _without(self.draft_piles[seat], card)
            self._gain(seat, (card,))

    def _turn_started(self, fields: tuple[Any, ...]) -> None:
        turn, seat = fields
        values, current = self._values, self.current
        if current is not None:
            values[_SLOT * current + _CURRENT] = 0.0
        self.current = seat
        values[_SLOT * seat + _CURRENT] = 1.0
        self.turn = turn
        self._head = self._game_court + (_TURN[turn] if turn <= 100 else _TURN[100])
        self.chain = None
        self._tails = self._no_tails

    def _action(self, fields: tuple[Any, ...]) -> None:
        self.chain = fields
        self._tails = self._action_tails.get(fields) or self._tails_of_action(fields)
        seat, _, _, claim = fields
        if claim is not None:  # self._claimed(seat, claim), inline
            i = _CARD[claim]
            counts = self.claims[seat]
            count = counts[i] = counts[i] + 1
            self._values[_SLOT * seat + _CLAIMS + i] = _CLAIM_VALUES[count if count < 3 else 3]

    def _tails_of_action(self, fields: tuple[Any, ...]) -> tuple[bytes, ...]:
        seat, action, target, _ = fields
        chain = (self.players, seat, _ACTION[action], target, None, None)
        if len(self._action_tails) >= 20_000:  # some hundreds in practice
            self._action_tails.clear()
        tails = self._action_tails[fields] = _TAILS.get(chain) or _tails_of(chain)
        return tails

    def _coins(self, fields: tuple[Any, ...]) -> None:
        seat, _, coins, _ = fields
        self._values[_SLOT * seat + _COINS] = _COIN_VALUES[coins if coins < 12 else 12]

    def _proven(self, fields: tuple[Any, ...]) -> None:
        seat, character = fields
        self._court_changed(self.court + 1)  # shuffled into the Court; a "drew" follows
        self._lose(seat, character)
        if self._knowing:
            self._forget(seat, character)

    def _drew(self, fields: tuple[Any, ...]) -> None:
        seat, card = fields
        self._court_changed(self.court - 1)
        self._new_card(seat)
        if card is not None:
            self._gain(seat, (card,))

    def _blocked(self, fields: tuple[Any, ...]) -> None:
        blocker, character, _ = fields
        if self.chain is not None:
            seat, action, target, _ = self.chain
            chain = (self.players, seat, _ACTION[action], target, blocker, character)
            self._tails = _TAILS.get(chain) or _tails_of(chain)
        self._claimed(blocker, character)

    def _lost(self, fields: tuple[Any, ...]) -> None:
        seat, card = fields
        i = _CARD[card]
        counts = self.face_up[seat]
        count = counts[i] = counts[i] + 1
        values, start = self._values, _SLOT * seat
        values[start + _FACE_UP + i] = _FACE_UP_VALUES[count if count < 2 else 2]
        influence = self.influence[seat]
        influence = self.influence[seat] = influence - 1 if influence > 0 else 0
        values[start + _INFLUENCE] = influence / 2
        key = (self.hands[seat], self.set_aside[seat], card)  # self._lose(seat, card), inline
        self.hands[seat], self._cards[seat] = _LESS.get(key) or _less(key)
        if self._knowing:
            self._forget(seat, card)

    def _out(self, fields: tuple[Any, ...]) -> None:
        seat = fields[0]
        self.influence[seat] = 0
        values, start = self._values, _SLOT * seat
        values[start + _ALIVE] = 0.0
        values[start + _INFLUENCE] = 0.0

    def _exchange_drawn(self, fields: tuple[Any, ...]) -> None:
        seat, count, cards = fields
        self._court_changed(self.court - count)
        self._new_card(seat)
        if self._knowing:
            self._forget(seat)
        if cards is not None:
            self._gain(seat, tuple(cards))

    def _exchange_returned(self, fields: tuple[Any, ...]) -> None:
        seat, count, cards = fields
        self._court_changed(self.court + count)
        if cards is not None:
            hand = self.hands[seat]
            for card in cards:
                hand = _without(hand, card)
            self._hold(seat, hand)

    def _examine_shown(self, fields: tuple[Any, ...]) -> None:
        examiner, target, card = fields
        if card is not None:
            known = self.known[examiner]
            self._knowing += target not in known
            known[target] = card
        self._shown[target] = card

    def _examine_decided(self, fields: tuple[Any, ...]) -> None:
        _, target, forced = fields
        if not forced:
            return
        self._court_changed(self.court + 1)  # the shown card goes back; a "drew" follows
        if self._knowing:
            self._forget(target)
        shown = self._shown[target]
        if shown is not None:
            self._lose(target, shown)


# By event type, taking an event's fields in order (as a record holds them);
# the other types change nothing a vector reads.
_HANDLERS: Final[dict[type, Callable[[Observations, tuple[Any, ...]], None]]] = {
    ev.GameStarted: Observations._started,
    ev.CardsDealt: Observations._dealt,
    ev.DraftOffered: Observations._draft_offered,
    ev.DraftChosen: Observations._draft_chosen,
    ev.TurnStarted: Observations._turn_started,
    ev.ActionDeclared: Observations._action,
    ev.CoinsChanged: Observations._coins,
    ev.ClaimProven: Observations._proven,
    ev.CardDrawn: Observations._drew,
    ev.Blocked: Observations._blocked,
    ev.InfluenceLost: Observations._lost,
    ev.PlayerOut: Observations._out,
    ev.ExchangeDrawn: Observations._exchange_drawn,
    ev.ExchangeReturned: Observations._exchange_returned,
    ev.ExamineShown: Observations._examine_shown,
    ev.ExamineDecided: Observations._examine_decided,
}
# The same, with what turns an event into its record.
_EVENT_HANDLERS: Final = {
    kind: (handler, attrgetter(*(field.name for field in attrs.fields(kind))))
    for kind, handler in _HANDLERS.items()}
