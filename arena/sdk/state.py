"""One seat's view of a game, kept up to date from the events that seat receives.

``State`` is what an SDK bot reads when it decides.  The SDK builds it from
the ``event`` lines of the protocol (or, in the training environment, from
the engine's events passed through ``observer.view`` for that seat), so it
holds exactly what the seat may know: its own cards, what is public, what
it saw by examining.  Never another seat's face-down card.

Every public attribute holds an immutable value (an int, a tuple, a frozen
object) that ``apply`` replaces as events come: a bot may keep a reference
to ``state.coins`` and it will not change under it.  Bots must not assign
to them.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any, NamedTuple

from arena.engine import events as ev
from arena.engine.cards import STARTING_COINS, characters, copies


class Chain(NamedTuple):
    """The action on the table this turn, and what has happened to it so far.

    ``claim`` is the character the action claims (None for Income, Foreign
    Aid, Coup).  A challenge of the action's claim is ``challenger`` with
    ``challenge_won`` (True: the claim was a bluff, the challenger won; None:
    not decided yet).  A block is ``blocker`` claiming ``block_claim``, and a
    challenge of the block is ``block_challenger`` / ``block_challenge_won``.
    ``outcome`` is ``"resolved"`` once the action took effect, or the reason
    it failed (``"challenged"``, ``"blocked"``, ``"target_out"``,
    ``"actor_out"``); None while it is still open.  A named tuple: frozen, and
    cheap to replace as the turn goes on.
    """

    actor: int
    action: str
    target: int | None
    claim: str | None
    challenger: int | None = None
    challenge_won: bool | None = None
    blocker: int | None = None
    block_claim: str | None = None
    block_challenger: int | None = None
    block_challenge_won: bool | None = None
    outcome: str | None = None


def _replace(values: tuple[Any, ...], index: int, value: Any) -> tuple[Any, ...]:
    return values[:index] + (value,) + values[index + 1:]


_new_tuple = tuple.__new__
_CHALLENGER, _CHALLENGE_WON, _BLOCKER, _BLOCK_CHALLENGER, _BLOCK_CHALLENGE_WON, _OUTCOME = (
    Chain._fields.index(name) for name in ("challenger", "challenge_won", "blocker",
                                           "block_challenger", "block_challenge_won", "outcome"))


def _chain_with(chain: Chain, index: int, *values: Any) -> Chain:
    """``chain`` with its fields from ``index`` on replaced by ``values``: as
    ``_replace``, a few times faster (it runs at most events)."""
    return _new_tuple(Chain, chain[:index] + values + chain[index + len(values):])


def _without(cards: tuple[str, ...], card: str) -> tuple[str, ...]:
    """``cards`` less its first ``card`` (unchanged if it holds none)."""
    if card not in cards:
        return cards
    i = cards.index(card)
    return cards[:i] + cards[i + 1:]


class State:
    """A seat's knowledge of one game.  See the module docstring.

    Attributes (all read-only for bots):

    - ``game``: the game's number in this bot process, from 1.
    - ``seat``: your seat; ``players``: the number of seats; ``names``: each
      seat's bot name, in seat order.
    - ``variant``: ``"ambassador"`` or ``"inquisitor"``; ``draft``: True for
      the two-player draft setup; ``first``: the seat that played first.
    - ``seed``: the game's ``seed <n>`` line (None if the referee sent none);
      ``rng``: a ``random.Random`` seeded from it, for the bot's own choices.
    - ``hand``: your face-down cards.  During an Exchange the drawn cards are
      in it until you return some.
    - ``coins``, ``influence`` (face-down cards), ``face_up`` (cards turned
      up), ``alive``: one entry per seat.
    - ``court_size``: cards in the Court deck.
    - ``draft_pile``: the pile you draft from (two-player draft); after you
      chose, ``set_aside`` holds its other cards, out of the game.
    - ``known``: per seat, the face-down card you know it holds because it
      showed it to you (Examine), or None.  Cleared when that card may have
      gone (the seat drew, exchanged, was forced to swap, or lost that card).
    - ``claims``: per seat, the characters it claimed (actions and blocks)
      since it last took a new card; a claim made before says nothing of the
      cards it holds now.
    - ``turn``: the turn number (0 before the first); ``current``: the seat
      whose turn it is; ``chain``: the action on the table (``Chain``), or
      None between turns.
    - ``history``: every event of this game so far, as you saw it (the
      engine's frozen event values; a hidden card is None).
    - ``placements``: each seat's place once the game is over (1 = first),
      else None; ``winner``: the winning seat, or None.
    """

    def __init__(self, seat: int, names: tuple[str, ...] | list[str], variant: str,
                 game: int = 1, seed: int | None = None) -> None:
        self.game = game
        self.seat = seat
        self.names = tuple(names)
        self.players = n = len(self.names)
        self.variant = variant
        self.seed = seed
        self._rng: random.Random | None = None  # made when first used: seeding costs
        self.draft = False
        self.first = 0
        self.copies = copies(n)  # copies of each character in the deck
        self.characters = characters(variant)
        self.hand: tuple[str, ...] = ()
        self.coins: tuple[int, ...] = (STARTING_COINS,) * n
        self.influence: tuple[int, ...] = (2,) * n
        self.face_up: tuple[tuple[str, ...], ...] = ((),) * n
        self.alive: tuple[bool, ...] = (True,) * n
        self.court_size = 0
        self.draft_pile: tuple[str, ...] = ()
        self.set_aside: tuple[str, ...] = ()
        self.known: tuple[str | None, ...] = (None,) * n
        self.claims: tuple[tuple[str, ...], ...] = ((),) * n
        self.turn = 0
        self.current: int | None = None
        self.chain: Chain | None = None
        self._shown_by_me: str | None = None  # the card I showed when examined
        self.placements: tuple[int, ...] | None = None
        self.winner: int | None = None
        self._history: list[ev.Event] = []
        self._history_view: tuple[ev.Event, ...] = ()

    def set_seed(self, seed: int | None) -> None:
        """Set the game's seed; ``rng`` starts again from it (None: an unseeded rng)."""
        self.seed = seed
        self._rng = None

    @property
    def rng(self) -> random.Random:
        if self._rng is None:
            self._rng = random.Random(self.seed) if self.seed is not None else random.Random()
        return self._rng

    # -- derived views ------------------------------------------------------

    @property
    def history(self) -> tuple[ev.Event, ...]:
        if len(self._history_view) != len(self._history):
            self._history_view = tuple(self._history)
        return self._history_view

    @property
    def over(self) -> bool:
        return self.placements is not None

    def opponents(self) -> tuple[int, ...]:
        """The other seats still in the game, clockwise from yours."""
        n = self.players
        return tuple(s % n for s in range(self.seat + 1, self.seat + n) if self.alive[s % n])

    def seen(self, card: str) -> int:
        """Copies of ``card`` whose place you know: your hand, face up, set aside."""
        return (self.hand.count(card) + self.set_aside.count(card)
                + sum(cards.count(card) for cards in self.face_up))

    def unseen(self, card: str) -> int:
        """Copies of ``card`` you cannot see (in other hands or the Court)."""
        return self.copies - self.seen(card)

    # -- following the events -------------------------------------------------

    def apply(self, event: ev.Event) -> None:
        """Take one event, as this seat sees it, into the state."""
        self._history.append(event)
        handler = _HANDLERS.get(type(event))
        if handler is not None:
            handler(self, event)

    def _started(self, e: ev.GameStarted) -> None:
        self.draft = e.draft
        self.first = e.first
        self.coins = tuple(e.coins)
        self.court_size = e.court_size
        self.influence = ((1 if e.draft else 2),) * self.players

    # Handlers of the events that touch what this seat alone knows come in two
    # parts: what every seat sees alike, then ``_mine_*`` for the rest.

    def _mine_dealt(self, e: ev.CardsDealt) -> None:
        if e.seat == self.seat and e.cards is not None:
            self.hand = tuple(e.cards)

    def _mine_draft_offered(self, e: ev.DraftOffered) -> None:
        if e.seat == self.seat and e.cards is not None:
            self.draft_pile = tuple(e.cards)

    def _draft_chosen(self, e: ev.DraftChosen) -> None:
        s = e.seat
        self.influence = _replace(self.influence, s, self.influence[s] + 1)
        self._mine_draft_chosen(e)

    def _mine_draft_chosen(self, e: ev.DraftChosen) -> None:
        if e.seat == self.seat and e.card is not None:
            self.hand += (e.card,)
            self.set_aside = _without(self.draft_pile, e.card)

    def _turn(self, e: ev.TurnStarted) -> None:
        self.turn = e.turn
        self.current = e.seat
        self.chain = None

    def _action(self, e: ev.ActionDeclared) -> None:
        self.chain = Chain(e.seat, e.action, e.target, e.claim)
        if e.claim is not None:
            self.claims = _replace(self.claims, e.seat, self.claims[e.seat] + (e.claim,))

    def _coins(self, e: ev.CoinsChanged) -> None:
        self.coins = _replace(self.coins, e.seat, e.coins)

    def _challenged(self, e: ev.Challenged) -> None:
        chain = self.chain
        if chain is None:
            return
        if chain.blocker is not None and e.claimant == chain.blocker:
            self.chain = _chain_with(chain, _BLOCK_CHALLENGER, e.challenger)
        else:
            self.chain = _chain_with(chain, _CHALLENGER, e.challenger)

    def _settle_challenge(self, seat: int, bluff: bool) -> None:
        chain = self.chain
        if chain is None:
            return
        if chain.block_challenger is not None and seat == chain.blocker:
            self.chain = _chain_with(chain, _BLOCK_CHALLENGE_WON, bluff)
        elif chain.challenger is not None and seat == chain.actor:
            self.chain = _chain_with(chain, _CHALLENGE_WON, bluff)

    def _proven(self, e: ev.ClaimProven) -> None:
        self.court_size += 1  # shuffled into the Court; a "drew" follows
        self._mine_proven(e)
        self._settle_challenge(e.seat, False)

    def _mine_proven(self, e: ev.ClaimProven) -> None:
        s = e.seat
        if s == self.seat:
            self.hand = _without(self.hand, e.character)
        if self.known[s] == e.character:
            self.known = _replace(self.known, s, None)

    def _bluff(self, e: ev.ClaimFailed) -> None:
        self._settle_challenge(e.seat, True)

    def _drew(self, e: ev.CardDrawn) -> None:
        self.court_size -= 1
        self.claims = _replace(self.claims, e.seat, ())
        self._mine_drew(e)

    def _mine_drew(self, e: ev.CardDrawn) -> None:
        if e.seat == self.seat and e.card is not None:
            self.hand += (e.card,)

    def _blocked(self, e: ev.Blocked) -> None:
        if self.chain is not None:
            self.chain = _chain_with(self.chain, _BLOCKER, e.blocker, e.character)
        self.claims = _replace(self.claims, e.blocker, self.claims[e.blocker] + (e.character,))

    def _lost(self, e: ev.InfluenceLost) -> None:
        s = e.seat
        self.face_up = _replace(self.face_up, s, self.face_up[s] + (e.card,))
        self.influence = _replace(self.influence, s, max(0, self.influence[s] - 1))
        self._mine_lost(e)

    def _mine_lost(self, e: ev.InfluenceLost) -> None:
        s = e.seat
        if s == self.seat:
            self.hand = _without(self.hand, e.card)
        if self.known[s] == e.card:
            self.known = _replace(self.known, s, None)

    def _out(self, e: ev.PlayerOut) -> None:
        s = e.seat
        self.alive = _replace(self.alive, s, False)
        self.influence = _replace(self.influence, s, 0)

    def _exchange_drawn(self, e: ev.ExchangeDrawn) -> None:
        s = e.seat
        self.court_size -= e.count
        self.claims = _replace(self.claims, s, ())
        self._mine_exchange_drawn(e)

    def _mine_exchange_drawn(self, e: ev.ExchangeDrawn) -> None:
        s = e.seat
        if self.known[s] is not None:
            self.known = _replace(self.known, s, None)
        if s == self.seat and e.cards is not None:
            self.hand += tuple(e.cards)

    def _exchange_returned(self, e: ev.ExchangeReturned) -> None:
        self.court_size += e.count
        self._mine_exchange_returned(e)

    def _mine_exchange_returned(self, e: ev.ExchangeReturned) -> None:
        if e.seat == self.seat and e.cards is not None:
            for card in e.cards:
                self.hand = _without(self.hand, card)

    def _mine_examine_shown(self, e: ev.ExamineShown) -> None:
        if e.examiner == self.seat and e.card is not None:
            self.known = _replace(self.known, e.target, e.card)
        if e.target == self.seat:
            self._shown_by_me = e.card

    def _examine_decided(self, e: ev.ExamineDecided) -> None:
        if not e.forced:
            return
        self.court_size += 1  # the shown card goes back; a "drew" follows
        self._mine_examine_decided(e)

    def _mine_examine_decided(self, e: ev.ExamineDecided) -> None:
        if not e.forced:
            return
        if self.known[e.target] is not None:
            self.known = _replace(self.known, e.target, None)
        if e.target == self.seat:
            if self._shown_by_me is not None:
                self.hand = _without(self.hand, self._shown_by_me)

    def _resolved(self, e: ev.ActionResolved) -> None:
        if self.chain is not None:
            self.chain = _chain_with(self.chain, _OUTCOME, "resolved")

    def _failed(self, e: ev.ActionFailed) -> None:
        if self.chain is not None:
            self.chain = _chain_with(self.chain, _OUTCOME, e.reason)

    def _game_over(self, e: ev.GameOver) -> None:
        self.placements = tuple(e.placements)
        self.winner = e.winner


_HANDLERS: dict[type, Callable[[State, Any], None]] = {
    ev.GameStarted: State._started,
    ev.CardsDealt: State._mine_dealt,
    ev.DraftOffered: State._mine_draft_offered,
    ev.DraftChosen: State._draft_chosen,
    ev.TurnStarted: State._turn,
    ev.ActionDeclared: State._action,
    ev.CoinsChanged: State._coins,
    ev.Challenged: State._challenged,
    ev.ClaimProven: State._proven,
    ev.ClaimFailed: State._bluff,
    ev.CardDrawn: State._drew,
    ev.Blocked: State._blocked,
    ev.InfluenceLost: State._lost,
    ev.PlayerOut: State._out,
    ev.ExchangeDrawn: State._exchange_drawn,
    ev.ExchangeReturned: State._exchange_returned,
    ev.ExamineShown: State._mine_examine_shown,
    ev.ExamineDecided: State._examine_decided,
    ev.ActionResolved: State._resolved,
    ev.ActionFailed: State._failed,
    ev.GameOver: State._game_over,
}
