"""The table as someone watching a game sees it, folded from events.

``Table`` reads an event stream (already passed through the observer, so a
card the watcher may not see is None) and keeps what is on the table: each
seat's coins, its face-down cards (known cards, or None for each card the
watcher cannot see), its face-up cards, who is out, the cards an Exchange
has drawn, and the size of the Court.  It decides nothing about visibility:
the observer did that.  Fed the omniscient stream, it agrees with the
engine's own state after every decision (tests/test_site_data.py).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any, Final

import attrs

from arena.engine import events as ev


@attrs.define
class Seat:
    coins: int = 0
    hand: list[str | None] = attrs.field(factory=list)  # face down; None: not seen
    revealed: list[str] = attrs.field(factory=list)  # face up, in the order lost
    drawn: list[str | None] = attrs.field(factory=list)  # an Exchange's draws, until returned
    out: bool = False


class Table:
    """Fold events into the table; ``seats`` and ``court`` are the state so far.

    ``touched`` collects the seats whose row an event may have changed, for a
    reader that shows the table after every step and encodes again only those
    (it empties the set itself)."""

    def __init__(self) -> None:
        self.seats: list[Seat] = []
        self.court = 0
        self.touched: set[int] = set()
        self._draft = False
        self._replacing: dict[int, int | None] = {}  # seat -> hand slot awaiting a CardDrawn
        self._shown: dict[int, str | None] = {}  # examined target -> the card it showed

    def apply(self, event: ev.Event) -> None:
        fold = FOLDS.get(type(event))
        if fold is not None:  # the other events change nothing on the table
            fold(self, event)

    def _started(self, event: ev.GameStarted) -> None:
        self.seats = [Seat(coins) for coins in event.coins]
        self.court = event.court_size
        self._draft = event.draft
        self.touched.update(range(len(self.seats)))

    def _dealt(self, event: ev.CardsDealt) -> None:
        cards = event.cards
        self.seats[event.seat].hand = (list(cards) if cards is not None
                                       else [None] * (1 if self._draft else 2))
        self.touched.add(event.seat)

    def _draft_chosen(self, event: ev.DraftChosen) -> None:
        self.seats[event.seat].hand.append(event.card)
        self.touched.add(event.seat)

    def _coins(self, event: ev.CoinsChanged) -> None:
        self.seats[event.seat].coins = event.coins
        self.touched.add(event.seat)

    def _proven(self, event: ev.ClaimProven) -> None:
        self._return(event.seat, event.character)

    def _examine_shown(self, event: ev.ExamineShown) -> None:
        self._shown[event.target] = event.card

    def _examine_decided(self, event: ev.ExamineDecided) -> None:
        shown = self._shown.pop(event.target, None)
        if event.forced:
            self._return(event.target, shown)

    def _drawn(self, event: ev.CardDrawn) -> None:
        slot = self._replacing.pop(event.seat, None)
        hand = self.seats[event.seat].hand
        if slot is not None and event.card is not None:
            hand[slot] = event.card
        elif event.card is not None:  # the slot was not known: keep the hand sorted out
            hand[hand.index(None) if None in hand else 0] = event.card
        self.court -= 1
        self.touched.add(event.seat)

    def _lost(self, event: ev.InfluenceLost) -> None:
        seat = self.seats[event.seat]
        seat.hand.remove(event.card if event.card in seat.hand else None)
        seat.revealed.append(event.card)
        self.touched.add(event.seat)

    def _exchange_drawn(self, event: ev.ExchangeDrawn) -> None:
        cards = event.cards
        self.seats[event.seat].drawn = (list(cards) if cards is not None
                                        else [None] * event.count)
        self.court -= event.count
        self.touched.add(event.seat)

    def _exchange_returned(self, event: ev.ExchangeReturned) -> None:
        seat = self.seats[event.seat]
        if event.cards is not None and None not in seat.hand:
            seat.hand = _kept(seat.hand, seat.drawn, event.cards)  # type: ignore[arg-type]
        seat.drawn = []
        self.court += event.count
        self.touched.add(event.seat)

    def _forfeited(self, event: ev.Forfeited) -> None:
        self._put_back_draws(event.seat)

    def _out(self, event: ev.PlayerOut) -> None:
        self.seats[event.seat].out = True
        self.touched.add(event.seat)

    def _over(self, event: ev.GameOver) -> None:
        for seat in range(len(self.seats)):
            self._put_back_draws(seat)

    def _return(self, seat: int, card: str | None) -> None:
        """``card`` goes from ``seat``'s hand into the Court; a CardDrawn follows."""
        hand = self.seats[seat].hand
        self._replacing[seat] = hand.index(card) if card is not None and card in hand else None
        self.court += 1

    def _put_back_draws(self, seat: int) -> None:
        # An Exchange cut short (a forfeit, the time cap): the draws go back unseen.
        drawn = self.seats[seat].drawn
        if drawn:
            self.court += len(drawn)
            self.seats[seat].drawn = []
            self.touched.add(seat)


# Event type -> how it changes the table: one look-up per event, as a site
# folds every event of every game once for each view.
FOLDS: Final[dict[type, Callable[[Table, Any], None]]] = {
    ev.GameStarted: Table._started, ev.CardsDealt: Table._dealt,
    ev.DraftChosen: Table._draft_chosen, ev.CoinsChanged: Table._coins,
    ev.ClaimProven: Table._proven, ev.ExamineShown: Table._examine_shown,
    ev.ExamineDecided: Table._examine_decided, ev.CardDrawn: Table._drawn,
    ev.InfluenceLost: Table._lost, ev.ExchangeDrawn: Table._exchange_drawn,
    ev.ExchangeReturned: Table._exchange_returned, ev.Forfeited: Table._forfeited,
    ev.PlayerOut: Table._out, ev.GameOver: Table._over,
}


def _kept(hand: list[str], drawn: list[str | None], returned: tuple[str, ...]) -> list[str]:
    """The hand after an Exchange, placed as the engine places it: kept hand
    cards stay where they were, a kept drawn card takes a freed slot."""
    kept = Counter(hand) + Counter(card for card in drawn if card is not None)
    kept.subtract(returned)
    result = list(hand)
    free = []
    for i, card in enumerate(hand):
        if kept[card] > 0:
            kept[card] -= 1
        else:
            free.append(i)
    for card in drawn:
        if card is not None and kept[card] > 0 and free:
            kept[card] -= 1
            result[free.pop(0)] = card
    for i in reversed(free):
        del result[i]
    return result
