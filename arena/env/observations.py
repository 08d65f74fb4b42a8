"""Every seat's observation vector of one game, kept up to date event by event.

``Observations`` makes, for the training environment, the bytes that
``encoding.observation_bytes`` makes for an SDK bot from its ``State``,
byte for byte (tests/test_env_observations.py compares them at every step
of many games).  Instead of rebuilding each vector from a State, it keeps
its blocks and changes only those an event touches:

- the head (the game, the Court's size, the turn), made again when the
  Court or the turn changes;
- each seat's own cards block (``hand``, ``set_aside``), made again when
  its hand changes;
- the seat slots, in seat order, twice over (``ring``): the slots of the
  seat at ``me`` and those clockwise from it are one slice of it, and an
  event that changes a seat marks its slot, made again (from encoding's
  cache) before the next vector;
- the action on the table, per observing seat, made again when it changes.

What an event tells each seat follows ``state.State``'s handlers and
``observer.view``: the engine's events go in unblanked, and a secret card
only ever reaches the hand of the seat entitled to it (the dealt, drawn or
exchanged cards of that seat; an examined card to its examiner).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from arena.engine import events as ev
from arena.engine.cards import MAX_PLAYERS, STARTING_COINS
from arena.sdk import encoding
from arena.sdk.state import _without

# encoding's blocks and caches, shared so that both make the same bytes.
_SLOT_BYTES: Final = 4 * encoding._SLOT
_SLOTS: Final = encoding._SLOTS
_CARDS_HELD: Final = encoding._CARDS_HELD
_slot: Final = encoding._slot
_remember: Final = encoding._remember
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


def _court(size: int) -> bytes:
    return encoding._COURT[size] if 0 <= size <= 20 else encoding._number(min(size, 20) / 20)


def _turn(turn: int) -> bytes:
    return encoding._TURN[turn] if 0 <= turn <= 100 else encoding._number(min(turn, 100) / 100)


def _cards(hand: tuple[str, ...], set_aside: tuple[str, ...]) -> bytes:
    block = _CARDS_HELD.get((hand, set_aside))
    if block is None:
        block = _remember(_CARDS_HELD, (hand, set_aside), encoding._cards_block(hand, set_aside))
    return block


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
        self.followed = 0  # events taken in
        # What every seat sees alike (a spectator's State's fields).
        self.draft = False
        self.court = 0
        self.turn = 0
        self.current: int | None = None
        self.alive = [True] * n
        self.coins = [STARTING_COINS] * n
        self.influence = [2] * n
        self.face_up: list[tuple[str, ...]] = [()] * n
        self.claims: list[tuple[str, ...]] = [()] * n
        # The action on the table: actor, action's index, target, blocker, block claim.
        self.chain: list[Any] | None = None
        # What each seat alone knows.
        self.hands: list[tuple[str, ...]] = [()] * n
        self.draft_piles: list[tuple[str, ...]] = [()] * n
        self.set_aside: list[tuple[str, ...]] = [()] * n
        self.known: list[dict[int, str]] = [{} for _ in range(n)]  # seen by examining
        self._knowing = 0  # entries in all of known
        self._shown: list[str | None] = [None] * n  # the card each seat last showed
        # The blocks.
        self._game = encoding._game_block(n, variant, False)
        self._head = self._game + _court(0) + _turn(0)
        self._cards = [_cards((), ())] * n
        self._ring = bytearray(2 * n * _SLOT_BYTES)
        ring = memoryview(self._ring)
        self._seats = [ring[seat * _SLOT_BYTES:(seat + n) * _SLOT_BYTES] for seat in range(n)]
        self._dirty: set[int] = set(range(n))  # seats whose slot is to be made again
        self._empty = encoding._EMPTY_SLOTS[MAX_PLAYERS - n]
        self._no_tails = [self._empty + _NO_CHAIN] * n
        self._tails: list[bytes | None] = self._no_tails  # the empty slots and the chain

    def follow(self, events: list[Any]) -> None:
        """Take in ``events[self.followed:]``, the game's new events."""
        route = _HANDLERS.get
        for event in events[self.followed:]:
            handler = route(type(event))
            if handler is not None:
                handler(self, event)
        self.followed = len(events)

    def vector(self, me: int, request: Any) -> bytearray:
        """The observation of seat ``me``, asked ``request`` (None: nothing)."""
        if self._dirty:
            self._refresh()
        known = self.known[me]
        seats = self._seats[me] if not known else self._seats_known(me, known)
        tail = self._tails[me]
        if tail is None:
            tail = self._tail(me)
        if request is None:
            return bytearray().join((self._head, _NOTHING_ASKED, self._cards[me], seats, tail,
                                     _NO_CLAIM))
        asked = _ASKED.get(request.kind, _NOTHING_ASKED)
        claimant = request.claimant
        if claimant is None:
            return bytearray().join((self._head, asked, self._cards[me], seats, tail, _NO_CLAIM))
        character = request.character
        return bytearray().join((self._head, asked, self._cards[me], seats, tail,
                                 _SLOT_HOT[(claimant - me) % self.players],
                                 _CARD_HOT[_CARD[character]] if character in _CARD
                                 else _NO_CARD))

    # -- the blocks ------------------------------------------------------------

    def _refresh(self) -> None:
        """Make the marked seats' slots again, in both places of the ring."""
        ring, n, current = self._ring, self.players, self.current
        alive, coins, influence, face_up, claims = (self.alive, self.coins, self.influence,
                                                    self.face_up, self.claims)
        for seat in self._dirty:
            key = (alive[seat], coins[seat], influence[seat], face_up[seat], claims[seat],
                   seat == current)
            block = _SLOTS.get(key)
            if block is None:
                block = _remember(_SLOTS, key, _slot(*key, None))
            start = seat * _SLOT_BYTES
            ring[start:start + _SLOT_BYTES] = block
            start += n * _SLOT_BYTES
            ring[start:start + _SLOT_BYTES] = block
        self._dirty.clear()

    def _seats_known(self, me: int, known: dict[int, str]) -> bytes:
        """The slots from ``me`` on, for a seat that saw some cards by examining."""
        n, ring = self.players, self._ring
        blocks = []
        for k in range(n):
            seat = (me + k) % n
            card = known.get(seat)
            if card is None:
                blocks.append(ring[seat * _SLOT_BYTES:(seat + 1) * _SLOT_BYTES])
            else:
                blocks.append(_slot(self.alive[seat], self.coins[seat], self.influence[seat],
                                    self.face_up[seat], self.claims[seat],
                                    seat == self.current, card))
        return b"".join(blocks)

    def _tail(self, me: int) -> bytes:
        actor, action, target, blocker, block_claim = self.chain  # type: ignore[misc]
        n = self.players
        tail = self._tails[me] = b"".join((
            self._empty, _ACTION_HOT[action], _SLOT_HOT[(actor - me) % n],
            _NO_SLOT if target is None else _SLOT_HOT[(target - me) % n],
            _NO_SLOT if blocker is None else _SLOT_HOT[(blocker - me) % n],
            _NO_CARD if block_claim is None else _CARD_HOT[_CARD[block_claim]]))
        return tail

    def _hold(self, seat: int, hand: tuple[str, ...]) -> None:
        self.hands[seat] = hand
        self._cards[seat] = _cards(hand, self.set_aside[seat])

    def _court_changed(self, court: int) -> None:
        self.court = court
        self._head = self._game + _court(court) + _turn(self.turn)

    def _forget(self, seat: int, card: str | None = None) -> None:
        """Every seat forgets what it saw of ``seat``'s cards (only ``card``, if given)."""
        for known in self.known:
            if seat in known and (card is None or known[seat] == card):
                del known[seat]
                self._knowing -= 1

    # -- the events (as state.State's handlers) -------------------------------

    def _started(self, e: ev.GameStarted) -> None:
        n = self.players
        self.draft = e.draft
        self.coins = list(e.coins)
        self.influence = [1 if e.draft else 2] * n
        self._game = encoding._GAMES.get((n, self.variant, e.draft)) or encoding._game_block(
            n, self.variant, e.draft)
        self._court_changed(e.court_size)
        self._dirty.update(range(n))

    def _dealt(self, e: ev.CardsDealt) -> None:
        if e.cards is not None:
            self._hold(e.seat, tuple(e.cards))

    def _draft_offered(self, e: ev.DraftOffered) -> None:
        if e.cards is not None:
            self.draft_piles[e.seat] = tuple(e.cards)

    def _draft_chosen(self, e: ev.DraftChosen) -> None:
        s = e.seat
        self.influence[s] += 1
        self._dirty.add(s)
        if e.card is not None:
            self.set_aside[s] = _without(self.draft_piles[s], e.card)
            self._hold(s, self.hands[s] + (e.card,))

    def _turn_started(self, e: ev.TurnStarted) -> None:
        if self.current is not None:
            self._dirty.add(self.current)
        self.current = e.seat
        self._dirty.add(e.seat)
        self.turn = e.turn
        self._head = self._game + _court(self.court) + _turn(e.turn)
        self.chain = None
        self._tails = self._no_tails

    def _action(self, e: ev.ActionDeclared) -> None:
        self.chain = [e.seat, _ACTION[e.action], e.target, None, None]
        self._tails = [None] * self.players
        if e.claim is not None:
            self.claims[e.seat] += (e.claim,)
            self._dirty.add(e.seat)

    def _coins(self, e: ev.CoinsChanged) -> None:
        self.coins[e.seat] = e.coins
        self._dirty.add(e.seat)

    def _proven(self, e: ev.ClaimProven) -> None:
        s = e.seat
        self._court_changed(self.court + 1)  # shuffled into the Court; a "drew" follows
        self._hold(s, _without(self.hands[s], e.character))
        if self._knowing:
            self._forget(s, e.character)

    def _drew(self, e: ev.CardDrawn) -> None:
        s = e.seat
        self._court_changed(self.court - 1)
        self.claims[s] = ()
        self._dirty.add(s)
        if e.card is not None:
            self._hold(s, self.hands[s] + (e.card,))

    def _blocked(self, e: ev.Blocked) -> None:
        chain = self.chain
        if chain is not None:
            chain[3], chain[4] = e.blocker, e.character
            self._tails = [None] * self.players
        self.claims[e.blocker] += (e.character,)
        self._dirty.add(e.blocker)

    def _lost(self, e: ev.InfluenceLost) -> None:
        s = e.seat
        self.face_up[s] += (e.card,)
        self.influence[s] = max(0, self.influence[s] - 1)
        self._dirty.add(s)
        self._hold(s, _without(self.hands[s], e.card))
        if self._knowing:
            self._forget(s, e.card)

    def _out(self, e: ev.PlayerOut) -> None:
        s = e.seat
        self.alive[s] = False
        self.influence[s] = 0
        self._dirty.add(s)

    def _exchange_drawn(self, e: ev.ExchangeDrawn) -> None:
        s = e.seat
        self._court_changed(self.court - e.count)
        self.claims[s] = ()
        self._dirty.add(s)
        if self._knowing:
            self._forget(s)
        if e.cards is not None:
            self._hold(s, self.hands[s] + tuple(e.cards))

    def _exchange_returned(self, e: ev.ExchangeReturned) -> None:
        s = e.seat
        self._court_changed(self.court + e.count)
        if e.cards is not None:
            hand = self.hands[s]
            for card in e.cards:
                hand = _without(hand, card)
            self._hold(s, hand)

    def _examine_shown(self, e: ev.ExamineShown) -> None:
        if e.card is not None:
            known = self.known[e.examiner]
            self._knowing += e.target not in known
            known[e.target] = e.card
        self._shown[e.target] = e.card

    def _examine_decided(self, e: ev.ExamineDecided) -> None:
        if not e.forced:
            return
        target = e.target
        self._court_changed(self.court + 1)  # the shown card goes back; a "drew" follows
        if self._knowing:
            self._forget(target)
        shown = self._shown[target]
        if shown is not None:
            self._hold(target, _without(self.hands[target], shown))


# By event type; the others change nothing a vector reads.
_HANDLERS: Final[dict[type, Callable[[Observations, Any], None]]] = {
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
