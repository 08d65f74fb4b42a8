"""Events: frozen values the engine emits as the game happens.

A field documented as *secret* holds a face-down card: the observer
(observer.py) decides who may see it and blanks it (None) for everybody
else.  Every other field is public.
"""

from __future__ import annotations

import typing

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


def _set_slots_directly(cls: type) -> None:
    """Give the frozen event class ``cls`` a quicker ``__init__``.

    attrs' ``__init__`` of a frozen class sets every field through
    ``object.__setattr__``, which finds the field's slot by name each time.
    A game has some 70 events, built when ``Game.events`` is read (the referee
    and the environment read them after every decision), and calling each
    slot's own descriptor instead makes building one about a quarter cheaper
    (some 7% of a whole game, when it was built eagerly).  Only ``__init__``
    changes: the class, its fields and their order stay the same, and
    ``__setattr__`` still refuses any change.  The code is generated, as attrs
    generates its own, so that each field is one plain call.
    """
    fields = attrs.fields(cls)
    for field in fields:  # what the generated __init__ would skip
        if (field.default is not attrs.NOTHING or field.validator or field.converter
                or field.alias != field.name or not field.init):
            raise TypeError(f"{cls.__name__}.{field.name}: only plain fields are supported")
    if hasattr(cls, "__attrs_post_init__") or hasattr(cls, "__attrs_pre_init__"):
        raise TypeError(f"{cls.__name__}: init hooks are not supported")
    names = [field.name for field in fields]
    setters = {f"_set_{name}": getattr(cls, name).__set__ for name in names}
    body = "".join(f"    _set_{name}(self, {name})\n" for name in names)
    scope: dict[str, typing.Any] = {}
    exec(f"def __init__(self, {', '.join(names)}):\n{body}", setters, scope)
    init = scope["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    cls.__init__ = init  # type: ignore[misc]


for _event in typing.get_args(Event):
    _set_slots_directly(_event)
