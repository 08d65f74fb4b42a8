"""Events: frozen values the engine emits as the game happens.

A field documented as *secret* holds a face-down card: the observer
(observer.py) decides who may see it and blanks it (None) for everybody
else.  Every other field is public.
"""

from __future__ import annotations

import attrs

# Why a game ended.
LAST_PLAYER = "last_player"
TURN_LIMIT = "turn_limit"


@attrs.frozen
class GameStarted:
    players: int
    variant: str
    draft: bool
    first: int
    coins: tuple[int, ...]
    court_size: int


@attrs.frozen
class CardsDealt:
    seat: int
    cards: tuple[str, ...] | None  # secret: seat


@attrs.frozen
class DraftOffered:
    seat: int
    cards: tuple[str, ...] | None  # secret: seat (the pile the seat picks from)


@attrs.frozen
class DraftChosen:
    seat: int
    card: str | None  # secret: seat


@attrs.frozen
class TurnStarted:
    turn: int  # 1-based
    seat: int


@attrs.frozen
class ActionDeclared:
    seat: int
    action: str
    target: int | None
    claim: str | None  # character claimed, None for general actions


@attrs.frozen
class CoinsChanged:
    seat: int
    delta: int
    coins: int  # the seat's coins afterwards
    why: str  # "cost", "refund", "income", "foreign_aid", "tax", "steal", "out"


@attrs.frozen
class Challenged:
    challenger: int
    claimant: int
    character: str


@attrs.frozen
class ClaimProven:
    """The claimant showed the card and shuffled it into the Court."""

    seat: int
    character: str


@attrs.frozen
class ClaimFailed:
    """The claim was a bluff."""

    seat: int
    character: str


@attrs.frozen
class CardDrawn:
    """A replacement card drawn from the Court (after a proof or a forced Examine)."""

    seat: int
    card: str | None  # secret: seat


@attrs.frozen
class Blocked:
    blocker: int
    character: str
    actor: int


@attrs.frozen
class InfluenceLost:
    seat: int
    card: str  # now face up: public


@attrs.frozen
class PlayerOut:
    seat: int
    reason: str  # "influence" or the referee's fault kind for a forfeit


@attrs.frozen
class Forfeited:
    """The referee removed the seat (a fault); its cards are turned face up."""

    seat: int
    reason: str


@attrs.frozen
class ExchangeDrawn:
    seat: int
    count: int
    cards: tuple[str, ...] | None  # secret: seat


@attrs.frozen
class ExchangeReturned:
    seat: int
    count: int
    cards: tuple[str, ...] | None  # secret: seat


@attrs.frozen
class ExamineShown:
    examiner: int
    target: int
    card: str | None  # secret: examiner and target


@attrs.frozen
class ExamineDecided:
    examiner: int
    target: int
    forced: bool


@attrs.frozen
class ActionResolved:
    """The action took effect."""

    seat: int
    action: str
    target: int | None


@attrs.frozen
class ActionFailed:
    seat: int
    action: str
    reason: str  # "challenged", "blocked", "target_out", "actor_out"


@attrs.frozen
class GameOver:
    reason: str  # LAST_PLAYER or TURN_LIMIT
    turns: int
    placements: tuple[int, ...]  # place of each seat, 1 = first; ties share a place
    winner: int | None  # None when several survivors tie at the turn limit


Event = (
    GameStarted
    | CardsDealt
    | DraftOffered
    | DraftChosen
    | TurnStarted
    | ActionDeclared
    | CoinsChanged
    | Challenged
    | ClaimProven
    | ClaimFailed
    | CardDrawn
    | Blocked
    | InfluenceLost
    | PlayerOut
    | Forfeited
    | ExchangeDrawn
    | ExchangeReturned
    | ExamineShown
    | ExamineDecided
    | ActionResolved
    | ActionFailed
    | GameOver
)
