"""The Coup rules engine: a pure, deterministic state machine.

A ``Game`` holds the whole state.  It asks for one kind of decision at a
time (``request``), lists every legal answer (``legal``), and takes
decisions (``decide``); in between it runs the rules on its own and records
events (``events``, built when first read).  It does no I/O and reads no
clock: its only randomness is its own ``random.Random`` seeded from the
game's seed, so the same seed and the same decisions give the same game on
any machine.

The flow of one turn is a chain of small step functions (``_step_*``):
each either sets the next request and returns None, or returns the next
step to run.  A lost influence interrupts the chain and resumes it with the
step saved in ``_then``.  Legality that depends on the action comes from
the table in rules.py.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from arena.engine import events as ev
from arena.engine.cards import (
    DEFAULT_VARIANT,
    MAX_PLAYERS,
    MIN_PLAYERS,
    STARTING_COINS,
    VARIANTS,
    characters,
    copies,
    deck,
)
from arena.engine.decisions import (
    ACTION,
    BLOCK,
    CHALLENGE,
    CHALLENGE_DECISION,
    DRAFT,
    FORCE,
    KEEP,
    LOSE,
    OPPORTUNITIES,
    PASS,
    PASS_DECISION,
    SHOW,
    Decision,
    Request,
)
from arena.engine.errors import GameOverError, IllegalDecision, SetupError
from arena.engine.rules import (
    ACTIONS,
    ANYONE,
    COUP,
    DEFAULT_TURN_LIMIT,
    EXAMINE,
    EXCHANGE,
    EXCHANGE_DRAW,
    FORCED_COUP_COINS,
    FOREIGN_AID,
    INCOME,
    NOBODY,
    STEAL,
    TAX,
    ActionRule,
)

Step = Callable[["Game"], "Step | None"]

STOP = "stop:"  # a history entry: the referee stopped the game (see Game.stop)

# Decisions are frozen values: build each one once and share it.
_ACTION_DECISIONS = {
    (name, target): Decision(name, target=target)
    for name in ACTIONS[VARIANTS[1]]
    for target in range(MAX_PLAYERS)
}
_UNTARGETED = {name: Decision(name) for name in (INCOME, FOREIGN_AID, TAX, EXCHANGE)}
_CARD_DECISIONS = {
    (kind, card): Decision(kind, card=card)
    for kind in (LOSE, SHOW, DRAFT, BLOCK)
    for card in (*characters(VARIANTS[0]), VARIANTS[1])
}
_FORCE_CHOICES = (Decision(FORCE, force=True), Decision(FORCE, force=False))
_CHALLENGE_CHOICES = (PASS_DECISION, CHALLENGE_DECISION)
# Keyed by the claims a block may make: hashing a tuple of strings is cheaper
# than hashing an ActionRule (attrs' __hash__ is Python code).
_BLOCK_CHOICES = {
    rule.block_claims: (PASS_DECISION,
                        *(_CARD_DECISIONS[BLOCK, card] for card in rule.block_claims))
    for table in ACTIONS.values()
    for rule in table.values()
}

_DRAFT_CHOICES = {
    variant: tuple(_CARD_DECISIONS[DRAFT, card] for card in characters(variant))
    for variant in VARIANTS
}
# The requests for one seat's decision without context, by seat.
_ACTION_REQUESTS = tuple(Request(ACTION, (seat,)) for seat in range(MAX_PLAYERS))
_LOSE_REQUESTS = tuple(Request(LOSE, (seat,)) for seat in range(MAX_PLAYERS))

_GAINS = {INCOME: 1, FOREIGN_AID: 2, TAX: 3}

# Memo tables shared by all games: what is legal depends only on these keys.
# They stay small (bounded by seats x coin brackets x who is still in).
# By player count, then by seat and who is in.
_OTHERS: dict[int, dict[tuple[int, int], tuple[int, ...]]] = {}
# By variant and player count, then by seat, coins (10 and more alike) and who is in.
_ACTION_LISTS: dict[tuple[str, int], dict[tuple[int, int, int], tuple[Decision, ...]]] = {}
_CARD_LISTS: dict[tuple[str, ...], tuple[Decision, ...]] = {}
_KEEP_LISTS: dict[tuple[int | str, ...], tuple[Decision, ...]] = {}
_DECKS: dict[tuple[str, int], tuple[str, ...]] = {}
# The other requests with context (keep, show, force, the draft): keyed by all
# their fields, so bounded by who acts and on whom.
_REQUESTS: dict[tuple[Any, ...], Request] = {}
# Challenges and blocks, by player count, then keyed by what they depend on
# (who is asked follows from who is in; some 30,000 at 8 players): hashing flat
# ints and strings, and listing the seats asked only once, is cheaper than
# _request's keys.
_OPPORTUNITY_REQUESTS: dict[int, dict[tuple[Any, ...], Request]] = {}


@attrs.frozen
class GameConfig:
    """The options of a dealt game: together with the seed they fix the deal."""

    players: int
    variant: str = DEFAULT_VARIANT
    draft: bool | None = None  # None: the default, a draft for 2 players
    turn_limit: int = DEFAULT_TURN_LIMIT

    @property
    def uses_draft(self) -> bool:
        return _uses_draft(self.players, self.draft)


@attrs.frozen
class Setup:
    """A rigged starting position (conformance scenarios): nothing is shuffled."""

    hands: tuple[tuple[str, ...], ...]
    court: tuple[str, ...]
    revealed: tuple[tuple[str, ...], ...] | None = None
    coins: tuple[int, ...] | None = None
    first: int = 0
    variant: str = DEFAULT_VARIANT
    turn_limit: int = DEFAULT_TURN_LIMIT


@attrs.frozen
class Result:
    reason: str  # events.LAST_PLAYER or events.TURN_LIMIT
    turns: int
    placements: tuple[int, ...]
    winner: int | None


class Game:
    """One game of Coup.  See the module docstring."""

    # Every attribute in a slot: a game is built per seed, and slots make it and
    # every attribute read and write of the steps cheaper (some 5% of a random game).
    __slots__ = (
        "players", "variant", "turn_limit", "_rules", "_action_lists", "_others",
        "_opportunity_requests", "_getrandbits", "hands", "revealed", "coins", "alive", "court",
        "out_of_game", "_event_fields", "_events", "history", "turn", "current", "request",
        "result", "over", "_answers", "_waiting", "_offered", "_out_order", "_alive_mask", "_rule",
        "_target", "_blocker", "_block_claim", "_on_answers", "_then", "_drawn", "_piles",
        "_shown"
    )

    # -- construction -------------------------------------------------------

    def __init__(self, players: int, variant: str, turn_limit: int, rng: random.Random | None):
        self.players = players
        self.variant = variant
        self.turn_limit = turn_limit
        self._rules: dict[str, ActionRule] = ACTIONS[variant]
        self._action_lists = _ACTION_LISTS.setdefault((variant, players), {})
        self._others = _OTHERS.setdefault(players, {})
        self._opportunity_requests = _OPPORTUNITY_REQUESTS.setdefault(players, {})
        # The game's randomness (shuffle); None: a rigged game, whose Court is never shuffled.
        self._getrandbits = rng.getrandbits if rng is not None else None
        self.hands: list[list[str]] = [[] for _ in range(players)]
        self.revealed: list[list[str]] = [[] for _ in range(players)]
        self.coins: list[int] = [STARTING_COINS] * players
        self.alive: list[bool] = [True] * players
        self.court: list[str] = []  # top first
        self.out_of_game: list[str] = []
        # The events as (event class, (fields...)), built when first read (see
        # events): a game emits some 70, and building one costs more than the
        # rules step that emits it.  Steps append directly: a helper method
        # around append cost 3% of a random game.
        self._event_fields: list[tuple[type, tuple[Any, ...]]] = []
        self._events: list[ev.Event] = []
        self.history: list[tuple[int, Decision | str]] = []  # decisions; str = a forfeit
        self.turn = 0  # turns started
        self.current = 0  # the seat whose turn it is
        self.request: Request | None = None
        self.result: Result | None = None
        # True once the game has ended (result is set): a plain attribute, as
        # drivers read it before every request.
        self.over = False
        self._answers: dict[int, Decision] = {}  # to the open opportunity
        # The seats the request still waits for (request.seats for a mandatory
        # decision, a list emptied as they answer for an opportunity), and the
        # legal answers, the same for each of them.
        self._waiting: Sequence[int] = ()
        self._offered: tuple[Decision, ...] = ()
        self._out_order: list[int] = []
        self._alive_mask = (1 << players) - 1  # bit s set: seat s is in the game
        # The action on the table.
        self._rule: ActionRule | None = None
        self._target: int | None = None
        self._blocker: int | None = None
        self._block_claim: str | None = None
        self._on_answers: Step | None = None  # resolves the open opportunity
        self._then: Step | None = None  # resumes the turn after a lost influence
        self._drawn: list[str] = []  # Exchange draws
        self._piles: list[list[str]] = []  # the two draft piles, while drafting
        self._shown: str | None = None  # the examined card

    @classmethod
    def new(
        cls,
        players: int,
        seed: int,
        variant: str = DEFAULT_VARIANT,
        draft: bool | None = None,
        turn_limit: int = DEFAULT_TURN_LIMIT,
    ) -> Game:
        """A dealt game.  ``draft`` defaults to the draft setup for 2 players."""
        # As from_config(GameConfig(...)), without building a config nobody reads.
        return cls._dealt(players, seed, variant, draft, turn_limit)

    @classmethod
    def from_config(cls, config: GameConfig, seed: int) -> Game:
        return cls._dealt(config.players, seed, config.variant, config.draft, config.turn_limit)

    @classmethod
    def _dealt(cls, players: int, seed: int, variant: str, draft: bool | None,
               turn_limit: int) -> Game:
        _check_options(players, variant, turn_limit)
        if draft and players != 2:
            raise SetupError("the draft setup is for 2 players only")
        rng = random.Random(seed)
        game = cls(players, variant, turn_limit, rng)
        game.current = rng.randrange(players)
        if _uses_draft(players, draft):
            game._deal_draft()
        else:
            game._deal_plain()
        return game

    @classmethod
    def from_setup(cls, setup: Setup) -> Game:
        """A rigged game, as conformance scenarios give it.  Raises SetupError."""
        players = len(setup.hands)
        _check_options(players, setup.variant, setup.turn_limit)
        revealed = setup.revealed if setup.revealed is not None else ((),) * players
        coins = setup.coins if setup.coins is not None else (STARTING_COINS,) * players
        if len(revealed) != players or len(coins) != players:
            raise SetupError(f"hands, revealed and coins must each have {players} entries")
        in_play = characters(setup.variant)
        counts = dict.fromkeys(in_play, 0)
        for card in itertools.chain(*setup.hands, *revealed, setup.court):
            if card not in counts:
                raise SetupError(f"{card!r} is not a card of the {setup.variant} variant")
            counts[card] += 1
        for card, n in counts.items():
            if n > copies(players):
                raise SetupError(f"{n} copies of {card}, the deck holds {copies(players)}")
        for seat in range(players):
            if len(setup.hands[seat]) + len(revealed[seat]) > 2:
                raise SetupError(f"seat {seat} holds more than 2 cards")
            if coins[seat] < 0:
                raise SetupError(f"seat {seat} has negative coins")
        game = cls(players, setup.variant, setup.turn_limit, None)
        game.hands = [list(hand) for hand in setup.hands]
        game.revealed = [list(cards) for cards in revealed]
        game.alive = [bool(hand) for hand in setup.hands]
        game._alive_mask = sum(1 << seat for seat in range(players) if game.alive[seat])
        game.coins = [c if alive else 0 for c, alive in zip(coins, game.alive, strict=True)]
        game.court = list(setup.court)
        game.out_of_game = _minus(deck(setup.variant, players), [*game.court, *_flat(game.hands),
                                                                 *_flat(game.revealed)])
        if not 0 <= setup.first < players or not game.alive[setup.first]:
            raise SetupError(f"first seat {setup.first} is not a seat still in the game")
        game.current = setup.first
        game._event_fields.append((ev.GameStarted, (players, setup.variant, False, setup.first,
                                               tuple(game.coins), len(game.court))))
        if sum(game.alive) == 1:
            game._finish(ev.LAST_PLAYER)  # already won: only one seat holds a card
        else:
            game._run(_step_start_turn)
        return game

    def _deal_plain(self) -> None:
        players = self.players
        cards = list(_deck(self.variant, players))
        self._shuffle(cards)
        fields = self._event_fields
        fields.append((ev.GameStarted, (players, self.variant, False, self.current,
                                        tuple(self.coins), len(cards) - 2 * players)))
        for seat in range(players):  # two cards each from the top (the list's end)
            hand = [cards.pop(), cards.pop()]
            self.hands[seat] = hand
            fields.append((ev.CardsDealt, (seat, tuple(hand))))
        self.court = cards
        self._run(_step_start_turn)

    def _deal_draft(self) -> None:
        # Three piles of one of each character; one is dealt, the others drafted.
        pile = list(characters(self.variant))
        self._shuffle(pile)
        self.hands = [[pile.pop()], [pile.pop()]]
        self.court = pile
        self._event_fields.append((ev.GameStarted, (2, self.variant, True, self.current,
                                               tuple(self.coins), len(self.court))))
        self._piles = [list(characters(self.variant)) for _ in (0, 1)]
        for seat in (0, 1):
            self._event_fields.append((ev.CardsDealt, (seat, tuple(self.hands[seat]))))
            self._event_fields.append((ev.DraftOffered, (seat, tuple(self._piles[seat]))))
        self._ask(_request(DRAFT, (0, 1)), _DRAFT_CHOICES[self.variant], _resolve_draft)

    # -- the public interface ------------------------------------------------

    @property
    def events(self) -> list[ev.Event]:
        """Every event so far, oldest first: one list that grows as the game goes.

        The events are built on first read, so a game nobody watches (a random
        rollout, a benchmark) does not pay for them.
        """
        fields = self._event_fields
        built = self._events
        if len(fields) > len(built):
            # A plain loop: a reader after each decision finds one or two events.
            for event_class, values in fields[len(built):]:
                built.append(event_class(*values))
        return built

    @property
    def event_fields(self) -> list[tuple[type, tuple[Any, ...]]]:
        """Every event so far as ``(event class, field values)``, oldest first: what
        ``events`` builds each event from (``event_class(*values)``), for a reader
        of every event that needs few of them built (the results site's replays,
        the training environment).  The engine's own list: read it, never change it."""
        return self._event_fields

    def legal(self, seat: int) -> tuple[Decision, ...]:
        """Every legal answer of ``seat`` to the current request (empty if not asked)."""
        return self._offered if seat in self._waiting else ()

    def decide(self, seat: int, decision: Decision) -> None:
        """Take one seat's decision.  Raises IllegalDecision, leaving the state unchanged."""
        waiting = self._waiting
        offered = self._offered
        if seat not in waiting:
            if self.request is None:
                raise GameOverError("the game is over")
            raise IllegalDecision(seat, decision, self._why_illegal(seat, decision))
        for option in offered:
            # Players mostly answer with a listed decision itself: identity is far
            # cheaper than attrs' __eq__, which a decision built elsewhere needs.
            if option is decision:
                break
        else:
            if decision not in offered:
                raise IllegalDecision(seat, decision, self._why_illegal(seat, decision))
        self.history.append((seat, decision))
        on_answers = self._on_answers
        if on_answers is None:  # a mandatory decision
            assert self.request is not None
            step = _MANDATORY[self.request.kind](self, seat, decision)
        else:
            self._answers[seat] = decision
            waiting.remove(seat)  # type: ignore[attr-defined]  # an opportunity's list
            if waiting:
                return
            step = on_answers
        while step is not None and self.result is None:  # as _run, one call less
            step = step(self)

    def forfeit(self, seat: int, reason: str) -> None:
        """Remove ``seat`` from the game at once, as if it had lost all its influence.

        The referee calls this when a bot faults.  Its cards are turned face up,
        and the game goes on for the others from wherever it was.
        """
        if self.over:
            raise GameOverError("the game is over")
        if not 0 <= seat < self.players or not self.alive[seat]:
            raise IllegalDecision(seat, "forfeit", "not a seat still in the game")
        self.history.append((seat, f"forfeit:{reason}"))
        self._event_fields.append((ev.Forfeited, (seat, reason)))
        hand = self.hands[seat]
        while hand:
            card = hand.pop()
            self.revealed[seat].append(card)
            self._event_fields.append((ev.InfluenceLost, (seat, card)))
        self._eliminate(seat, reason)
        if self.over:
            return
        request = self.request
        assert request is not None
        if seat not in request.seats:
            # The steps that follow check who is still in the game; an action's
            # targets are listed again.
            self._offered = self._list_choices(request.kind, request.seats[0])
            return
        if request.kind in OPPORTUNITIES or request.kind == DRAFT:
            seats = tuple(s for s in request.seats if s != seat)
            self._answers.pop(seat, None)
            self.request = attrs.evolve(request, seats=seats)
            if seat in self._waiting:
                self._waiting.remove(seat)  # type: ignore[attr-defined]
            if not self._waiting:
                self._run(self._on_answers)
        elif request.kind == LOSE:
            then, self._then = self._then, None
            self._run(then)
        else:  # the actor's action, keep or force, or the examined target's show
            if self._drawn:
                self._return_to_court(self._drawn)
                self._drawn = []
            self._run(_step_end_turn)

    def stop(self, reason: str) -> None:
        """End the game now, the players still in sharing first place.

        The referee calls this when a game outlives its wall-clock cap; it
        scores like the turn limit, and no seat is at fault.
        """
        if self.over:
            raise GameOverError("the game is over")
        self.history.append((-1, f"{STOP}{reason}"))
        if self._drawn:  # an Exchange cut short: the draws go back
            self._return_to_court(self._drawn)
            self._drawn = []
        self._finish(reason)

    # -- reading the state ---------------------------------------------------

    @property
    def winner(self) -> int | None:
        return self.result.winner if self.result else None

    def seats_in_game(self) -> list[int]:
        return [seat for seat in range(self.players) if self.alive[seat]]

    # -- internals -----------------------------------------------------------

    def _shuffle(self, cards: list[str]) -> None:
        if self._getrandbits is not None:
            shuffle(cards, self._getrandbits)

    def _run(self, step: Step | None) -> None:
        while step is not None and self.result is None:
            step = step(self)

    def _ask(self, request: Request, offered: tuple[Decision, ...],
             on_answers: Step | None = None) -> None:
        """Wait for ``request``, whose every seat may answer one of ``offered``
        (opportunities and the draft offer all their seats the same choices;
        other requests ask one seat).  The caller lists them, as it knows the kind.
        ``on_answers`` is None for a mandatory decision, else it resolves the
        opportunity once every seat has answered."""
        self.request = request
        self._on_answers = on_answers
        self._offered = offered
        seats = request.seats
        if on_answers is None:
            self._waiting = seats
        else:
            self._waiting = list(seats)
            self._answers = {}

    def _others_in_game(self, seat: int) -> tuple[int, ...]:
        """Every other seat still in the game, clockwise from ``seat``."""
        key = (seat, self._alive_mask)
        found = self._others.get(key)
        if found is None:
            n = self.players
            alive = self.alive
            found = tuple(s % n for s in range(seat + 1, seat + n) if alive[s % n])
            self._others[key] = found
        return found

    def _challenge_request(self, claimant: int, claim: str) -> Request:
        """The chance to challenge ``claimant``'s ``claim`` about the action on the
        table: every other seat still in the game is asked, clockwise."""
        rule = self._rule
        assert rule is not None
        key = (CHALLENGE, claimant, claim, self.current, rule.name, self._target, self._alive_mask)
        found = self._opportunity_requests.get(key)
        if found is None:
            found = self._opportunity_requests[key] = Request(
                CHALLENGE, self._others_in_game(claimant), self.current, rule.name, self._target,
                claimant, claim)
        return found

    def _block_request(self) -> Request:
        """The chance to block the action on the table: its target, or every other
        seat still in the game, clockwise."""
        rule = self._rule
        assert rule is not None
        actor, target = self.current, self._target
        key = (BLOCK, actor, rule.name, target, self._alive_mask)
        found = self._opportunity_requests.get(key)
        if found is None:
            seats = self._others_in_game(actor) if rule.blocked_by == ANYONE else (target,)
            found = self._opportunity_requests[key] = Request(BLOCK, seats, actor, rule.name,
                                                              target)
        return found

    def _first_answer(self, kind: str) -> int | None:
        """The first seat clockwise from the claimant or actor that answered ``kind``.

        An opportunity asks its seats in clockwise order from the seat whose
        claim or action is open, so the first in ``request.seats`` is the first
        clockwise.
        """
        answers = self._answers
        assert self.request is not None
        for seat in self.request.seats:
            answer = answers[seat]
            if answer is not PASS_DECISION and answer.kind == kind:  # mostly passes
                return seat
        return None

    def _draw(self) -> str:
        return self.court.pop(0)

    def _return_to_court(self, cards: Sequence[str]) -> None:
        # To the bottom, then shuffled: nobody may know where a returned card lies.
        self.court.extend(cards)
        self._shuffle(self.court)

    def _replace(self, seat: int, card: str) -> None:
        """Shuffle ``card`` from ``seat``'s hand into the Court and draw a replacement."""
        hand = self.hands[seat]
        i = hand.index(card)
        self._return_to_court((card,))
        hand[i] = new = self._draw()
        self._event_fields.append((ev.CardDrawn, (seat, new)))

    def _set_coins(self, seat: int, delta: int, why: str) -> None:
        self.coins[seat] += delta
        self._event_fields.append((ev.CoinsChanged, (seat, delta, self.coins[seat], why)))

    def _lose_influence(self, seat: int, then: Step) -> Step | None:
        if not self.alive[seat]:
            return then
        self._then = then
        self._ask(_LOSE_REQUESTS[seat], self._card_choices(LOSE, seat))
        return None

    def _eliminate(self, seat: int, reason: str) -> None:
        self.alive[seat] = False
        self._alive_mask &= ~(1 << seat)
        self._out_order.append(seat)
        if self.coins[seat]:
            self._set_coins(seat, -self.coins[seat], "out")
        self._event_fields.append((ev.PlayerOut, (seat, reason)))
        mask = self._alive_mask
        if mask and not mask & (mask - 1):  # one seat left (one bit set)
            self._finish(ev.LAST_PLAYER)

    def _finish(self, reason: str) -> None:
        for pile in self._piles:  # a forfeit during the draft
            self.out_of_game.extend(pile)
        self._piles = []
        alive = self.alive
        places = [1 if seat_alive else 0 for seat_alive in alive]  # survivors share 1st
        survivors = sum(places)
        place = survivors + 1
        for seat in reversed(self._out_order):  # the last out is placed first
            places[seat] = place
            place += 1
        if place <= self.players:
            # Seats a rigged setup starts out of the game share the last place.
            never = [s for s in range(self.players) if not places[s]]
            for seat in never:
                places[seat] = self.players - len(never) + 1
        placements = tuple(places)
        winner = alive.index(True) if survivors == 1 else None
        self.result = Result(reason, self.turn, placements, winner)
        self.over = True
        self.request = None
        self._waiting = self._offered = ()
        self._event_fields.append((ev.GameOver, (reason, self.turn, placements, winner)))

    def _fail(self, why: str) -> Step:
        rule = self._rule
        assert rule is not None
        self._event_fields.append((ev.ActionFailed, (self.current, rule.name, why)))
        return _step_end_turn

    # -- legality ------------------------------------------------------------

    def _list_choices(self, kind: str, seat: int) -> tuple[Decision, ...]:
        """The legal answers of ``seat``, asked a ``kind`` decision now (the steps
        that ask call the helper for their kind directly)."""
        if kind == CHALLENGE:
            return _CHALLENGE_CHOICES
        if kind == ACTION:
            return self._legal_actions(seat)
        if kind == BLOCK:
            rule = self._rule
            assert rule is not None
            return _BLOCK_CHOICES[rule.block_claims]
        if kind in (LOSE, SHOW):
            return self._card_choices(kind, seat)
        if kind == KEEP:
            return self._keep_choices(seat)
        if kind == FORCE:
            return _FORCE_CHOICES
        if kind == DRAFT:
            return _DRAFT_CHOICES[self.variant]
        raise AssertionError(kind)

    def _card_choices(self, kind: str, seat: int) -> tuple[Decision, ...]:
        """Lose or show: one of the seat's face-down cards."""
        hand = self.hands[seat]
        key = (kind, *hand)
        found = _CARD_LISTS.get(key)
        if found is None:
            found = _CARD_LISTS[key] = tuple(_CARD_DECISIONS[kind, c] for c in dict.fromkeys(hand))
        return found

    def _keep_choices(self, seat: int) -> tuple[Decision, ...]:
        """Exchange: as many of hand and draws as the hand holds."""
        hand = self.hands[seat]
        key = (len(hand), *sorted(hand + self._drawn))
        found = _KEEP_LISTS.get(key)
        if found is None:
            keeps = dict.fromkeys(itertools.combinations(key[1:], len(hand)))
            found = _KEEP_LISTS[key] = tuple(Decision(KEEP, cards=cards) for cards in keeps)
        return found

    def _legal_actions(self, seat: int) -> tuple[Decision, ...]:
        coins = self.coins[seat]
        key = (seat, coins if coins < FORCED_COUP_COINS else FORCED_COUP_COINS, self._alive_mask)
        found = self._action_lists.get(key)
        if found is not None:
            return found
        others = self._others_in_game(seat)
        if coins >= FORCED_COUP_COINS:
            found = tuple(_ACTION_DECISIONS[COUP, t] for t in others)
        else:
            listed = [_UNTARGETED[INCOME], _UNTARGETED[FOREIGN_AID], _UNTARGETED[TAX],
                      _UNTARGETED[EXCHANGE]]
            for rule in self._rules.values():
                if rule.targeted and coins >= rule.cost:
                    listed.extend(_ACTION_DECISIONS[rule.name, t] for t in others)
            found = tuple(listed)
        self._action_lists[key] = found
        return found

    def _why_illegal(self, seat: int, decision: Decision) -> str:
        """A plain-words reason, for a decision already known to be illegal."""
        request = self.request
        assert request is not None
        if seat not in request.seats:
            return f"seat {seat} is not asked now (waiting for a {request.kind} decision " \
                   f"of seat{'s' if len(request.seats) > 1 else ''} " \
                   f"{', '.join(map(str, request.seats))})"
        if seat not in self._waiting:
            return f"seat {seat} has already answered this {request.kind} opportunity"
        kind = request.kind
        if kind == ACTION:
            rule = self._rules.get(decision.kind)
            if rule is None:
                return f"not an action of the {self.variant} variant, or not an action"
            if self.coins[seat] >= FORCED_COUP_COINS and rule.name != COUP:
                return f"a player with {FORCED_COUP_COINS} or more coins must Coup"
            if self.coins[seat] < rule.cost:
                return f"{rule.name} costs {rule.cost} coins, seat {seat} has {self.coins[seat]}"
            if rule.targeted and decision.target not in self._others_in_game(seat):
                return f"{decision.target} is not another seat still in the game"
        elif kind == BLOCK and decision.kind == BLOCK:
            rule = self._rule
            assert rule is not None
            return f"{rule.name} can only be blocked claiming {' or '.join(rule.block_claims)}"
        elif kind in (LOSE, SHOW, KEEP) and decision.kind == kind:
            return f"seat {seat} does not hold those cards face down"
        options = " ".join(d.token for d in self.legal(seat))
        return f"a {kind} decision is asked; legal answers are: {options}"


# -- the steps of a turn -------------------------------------------------------


def _step_start_turn(game: Game) -> Step | None:
    if game.turn >= game.turn_limit:
        game._finish(ev.TURN_LIMIT)
        return None
    game.turn += 1
    game._rule = game._target = game._blocker = game._block_claim = None
    game._event_fields.append((ev.TurnStarted, (game.turn, game.current)))
    game._ask(_ACTION_REQUESTS[game.current], game._legal_actions(game.current))
    return None


def _step_end_turn(game: Game) -> Step | None:
    others = game._others_in_game(game.current)
    if others:  # else the game is over
        game.current = others[0]  # the next seat clockwise still in the game
    return _step_start_turn(game)  # at once: nothing ends a game between turns


def _declare(game: Game, seat: int, decision: Decision) -> Step | None:
    rule = game._rules[decision.kind]
    game._rule = rule
    game._target = decision.target
    game._event_fields.append((ev.ActionDeclared, (seat, rule.name, decision.target, rule.claim)))
    if rule.cost:
        game._set_coins(seat, -rule.cost, "cost")
    if rule.claim is None:
        return _step_block
    game._ask(game._challenge_request(seat, rule.claim), _CHALLENGE_CHOICES,
              _resolve_action_challenge)
    return None


def _resolve_action_challenge(game: Game) -> Step | None:
    actor = game.current
    rule = game._rule
    assert rule is not None and rule.claim is not None
    if not game.alive[actor]:
        return game._fail("actor_out")
    challenger = game._first_answer(CHALLENGE)
    if challenger is None:
        return _step_block
    game._event_fields.append((ev.Challenged, (challenger, actor, rule.claim)))
    if rule.claim in game.hands[actor]:
        game._event_fields.append((ev.ClaimProven, (actor, rule.claim)))
        game._replace(actor, rule.claim)
        return game._lose_influence(challenger, _step_block)
    game._event_fields.append((ev.ClaimFailed, (actor, rule.claim)))
    if rule.cost:
        game._set_coins(actor, rule.cost, "refund")
    game._event_fields.append((ev.ActionFailed, (actor, rule.name, "challenged")))
    return game._lose_influence(actor, _step_end_turn)


def _step_block(game: Game) -> Step | None:
    actor = game.current
    rule = game._rule
    assert rule is not None
    if not game.alive[actor]:
        return game._fail("actor_out")
    target = game._target
    if target is not None and not game.alive[target]:
        return game._fail("target_out")
    if rule.blocked_by == NOBODY:
        return _step_resolve
    game._ask(game._block_request(), _BLOCK_CHOICES[rule.block_claims], _resolve_block)
    return None


def _resolve_block(game: Game) -> Step | None:
    actor = game.current
    rule = game._rule
    assert rule is not None
    blocker = game._first_answer(BLOCK)
    if blocker is None:
        return _step_resolve
    claim = game._answers[blocker].card
    assert claim is not None
    game._blocker, game._block_claim = blocker, claim
    game._event_fields.append((ev.Blocked, (blocker, claim, actor)))
    game._ask(game._challenge_request(blocker, claim), _CHALLENGE_CHOICES,
              _resolve_block_challenge)
    return None


def _block_stands(game: Game) -> Step | None:
    return game._fail("blocked")


def _resolve_block_challenge(game: Game) -> Step | None:
    blocker, claim = game._blocker, game._block_claim
    assert blocker is not None and claim is not None
    if not game.alive[blocker]:
        return _step_resolve  # a forfeited blocker's block is void
    challenger = game._first_answer(CHALLENGE)
    if challenger is None:
        return _block_stands
    game._event_fields.append((ev.Challenged, (challenger, blocker, claim)))
    if claim in game.hands[blocker]:
        game._event_fields.append((ev.ClaimProven, (blocker, claim)))
        game._replace(blocker, claim)
        return game._lose_influence(challenger, _block_stands)
    game._event_fields.append((ev.ClaimFailed, (blocker, claim)))
    return game._lose_influence(blocker, _step_resolve)


def _step_resolve(game: Game) -> Step | None:
    actor = game.current
    rule = game._rule
    assert rule is not None
    target = game._target
    if not game.alive[actor]:
        return game._fail("actor_out")
    if target is not None and not game.alive[target]:
        return game._fail("target_out")
    name = rule.name
    game._event_fields.append((ev.ActionResolved, (actor, name, target)))
    gain = _GAINS.get(name)
    if gain is not None:
        game._set_coins(actor, gain, name)
        return _step_end_turn
    if name == STEAL:
        assert target is not None
        taken = min(2, game.coins[target])
        if taken:
            game._set_coins(target, -taken, STEAL)
            game._set_coins(actor, taken, STEAL)
        return _step_end_turn
    if name == EXCHANGE:
        n = min(EXCHANGE_DRAW[game.variant], len(game.court))
        game._drawn = [game._draw() for _ in range(n)]
        game._event_fields.append((ev.ExchangeDrawn, (actor, n, tuple(game._drawn))))
        game._ask(_request(KEEP, (actor,), actor, name), game._keep_choices(actor))
        return None
    if name == EXAMINE:
        assert target is not None
        game._ask(_request(SHOW, (target,), actor, name, target), game._card_choices(SHOW, target))
        return None
    assert target is not None  # Coup, Assassinate
    return game._lose_influence(target, _step_end_turn)


# -- mandatory decisions ----------------------------------------------------------


def _on_lose(game: Game, seat: int, decision: Decision) -> Step | None:
    card = decision.card
    assert card is not None
    game.hands[seat].remove(card)
    game.revealed[seat].append(card)
    game._event_fields.append((ev.InfluenceLost, (seat, card)))
    if not game.hands[seat]:
        game._eliminate(seat, "influence")
    then, game._then = game._then, None
    return then


def _on_keep(game: Game, seat: int, decision: Decision) -> Step | None:
    assert decision.cards is not None
    # Kept cards come from the hand first and stay in place; a drawn card takes
    # the place of the hand card it replaces.  The rest go back hand cards
    # first, in hand order, then drawn cards in draw order (conformance/scenarios/README.md).
    wanted = list(decision.cards)
    hand = game.hands[seat]
    returned: list[str] = []
    free: list[int] = []
    for i, card in enumerate(hand):
        if card in wanted:
            wanted.remove(card)
        else:
            returned.append(card)
            free.append(i)
    for card in game._drawn:
        if card in wanted:
            wanted.remove(card)
            hand[free.pop(0)] = card
        else:
            returned.append(card)
    game._drawn = []
    game._event_fields.append((ev.ExchangeReturned, (seat, len(returned), tuple(returned))))
    game._return_to_court(returned)
    return _step_end_turn


def _on_show(game: Game, seat: int, decision: Decision) -> Step | None:
    card = decision.card
    assert card is not None
    actor = game.current
    if not game.alive[actor]:
        return game._fail("actor_out")
    game._shown = card
    game._event_fields.append((ev.ExamineShown, (actor, seat, card)))
    game._ask(_request(FORCE, (actor,), actor, EXAMINE, seat), _FORCE_CHOICES)
    return None


def _on_force(game: Game, seat: int, decision: Decision) -> Step | None:
    target = game._target
    card = game._shown
    assert target is not None and card is not None
    forced = bool(decision.force) and game.alive[target]
    game._event_fields.append((ev.ExamineDecided, (seat, target, forced)))
    if forced:
        game._replace(target, card)
    game._shown = None
    return _step_end_turn


def _resolve_draft(game: Game) -> Step | None:
    for seat, pile in enumerate(game._piles):
        decision = game._answers.get(seat)
        if decision is not None:  # None: forfeited
            card = decision.card
            assert card is not None
            pile.remove(card)
            game.hands[seat].append(card)
            game._event_fields.append((ev.DraftChosen, (seat, card)))
        game.out_of_game.extend(pile)
    game._piles = []
    return _step_start_turn


_MANDATORY: dict[str, Callable[[Game, int, Decision], Step | None]] = {
    ACTION: _declare,
    LOSE: _on_lose,
    KEEP: _on_keep,
    SHOW: _on_show,
    FORCE: _on_force,
}


# -- helpers ----------------------------------------------------------------------


def _uses_draft(players: int, draft: bool | None) -> bool:
    """Whether a dealt game starts with the draft: by default, for 2 players."""
    return players == 2 if draft is None else draft


def _check_options(players: int, variant: str, turn_limit: int) -> None:
    if not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise SetupError(f"{players} players: Coup is for {MIN_PLAYERS} to {MAX_PLAYERS}")
    if variant not in VARIANTS:
        raise SetupError(f"unknown variant {variant!r}: use {' or '.join(VARIANTS)}")
    if turn_limit < 1:
        raise SetupError("the turn limit must be at least 1")


def _request(*fields: Any) -> Request:
    """``Request(*fields)``, built once and shared: requests are frozen values,
    and games ask the same ones again and again."""
    found = _REQUESTS.get(fields)
    if found is None:
        found = _REQUESTS[fields] = Request(*fields)
    return found


# For each list length, the (index, bound, bits) of each swap random.shuffle makes.
_SWAPS = tuple(tuple((i, i + 1, (i + 1).bit_length()) for i in reversed(range(1, n)))
               for n in range(len(deck(VARIANTS[0], MAX_PLAYERS)) + 1))


def shuffle(cards: list[str], getrandbits: Callable[[int], int]) -> None:
    """``random.Random.shuffle(cards)``, with the same draws and the same result.

    The Court is shuffled every time a card goes back, some four times a game,
    and random.shuffle calls a Python method per card.  This is its algorithm
    (a Fisher-Yates shuffle taking ``randbelow(i + 1)`` by rejection sampling on
    ``getrandbits``) with the bounds precomputed; the same seed must keep giving
    the same game (tests/test_engine_golden.py, test_engine_properties.py).
    """
    for i, bound, bits in _SWAPS[len(cards)]:
        j = getrandbits(bits)
        while j >= bound:
            j = getrandbits(bits)
        cards[i], cards[j] = cards[j], cards[i]


def _deck(variant: str, players: int) -> tuple[str, ...]:
    """cards.deck(), built once per variant and deck size."""
    key = (variant, players)
    found = _DECKS.get(key)
    if found is None:
        found = _DECKS[key] = tuple(deck(variant, players))
    return found


def _flat(lists: Sequence[Sequence[str]]) -> list[str]:
    return [card for cards in lists for card in cards]


def _minus(cards: Sequence[str], taken: Sequence[str]) -> list[str]:
    """``cards`` less one copy of each of ``taken`` (a multiset difference)."""
    rest = list(cards)
    for card in taken:
        if card in rest:
            rest.remove(card)
    return rest


__all__ = ["Game", "GameConfig", "Result", "Setup", "PASS"]
