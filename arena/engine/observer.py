"""What each seat may see: the single place where visibility is decided.

Events carry face-down cards in *secret* fields.  This table names, for each
event type, the secret field and the seats entitled to it (RULES.md,
"What each player knows"); everyone else gets the field blanked to None.  Nothing
reaches a seat except through ``view``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from operator import attrgetter
from typing import Any

import attrs

from arena.engine import events as ev


class _Secret:
    """An event type's secret field, who may read it, and how to blank it."""

    __slots__ = ("field", "readers", "blank")

    def __init__(self, kind: type, field: str, *readers: str) -> None:
        self.field = field
        who = attrgetter(*readers)
        # The seats that may read the field, as a tuple.
        self.readers: Callable[[Any], tuple[int, ...]] = (
            who if len(readers) > 1 else lambda event: (who(event),))
        names = [f.name for f in attrs.fields(kind)]
        index = names.index(field)
        values = attrgetter(*names)  # every field in order, in one C call

        def blank(event: Any) -> Any:
            # attrs.evolve(event, field=None), without its keyword handling.
            fields = list(values(event))
            fields[index] = None
            return kind(*fields)

        self.blank: Callable[[Any], ev.Event] = blank


# event type -> its secret field and the seats that may read it
_SECRETS: dict[type, _Secret] = {
    ev.CardsDealt: _Secret(ev.CardsDealt, "cards", "seat"),
    ev.DraftOffered: _Secret(ev.DraftOffered, "cards", "seat"),
    ev.DraftChosen: _Secret(ev.DraftChosen, "card", "seat"),
    ev.CardDrawn: _Secret(ev.CardDrawn, "card", "seat"),
    ev.ExchangeDrawn: _Secret(ev.ExchangeDrawn, "cards", "seat"),
    ev.ExchangeReturned: _Secret(ev.ExchangeReturned, "cards", "seat"),
    ev.ExamineShown: _Secret(ev.ExamineShown, "card", "examiner", "target"),
}

# The event types with a secret field: every other event looks the same to all.
SECRET_EVENT_TYPES = frozenset(_SECRETS)

# Who is looking: a seat number, SPECTATOR (public only) or OMNISCIENT.
SPECTATOR = -1
OMNISCIENT = -2


def view(event: ev.Event, seat: int) -> ev.Event:
    """The event as ``seat`` may see it."""
    secret = _SECRETS.get(type(event))
    if secret is None or seat == OMNISCIENT or seat in secret.readers(event):
        return event
    return secret.blank(event)


def seat_views(event: ev.Event, seats: Sequence[int]) -> list[ev.Event]:
    """``view(event, seat)`` for each of ``seats``, made at once: the seats not
    entitled to the secret share one blanked copy."""
    secret = _SECRETS.get(type(event))
    if secret is None:
        return [event] * len(seats)
    entitled = secret.readers(event)
    blanked = secret.blank(event)
    return [event if seat in entitled or seat == OMNISCIENT else blanked for seat in seats]


def views(events: Iterable[ev.Event], seat: int) -> Iterator[ev.Event]:
    """Every event of a stream as ``seat`` may see it."""
    for event in events:
        yield view(event, seat)


def has_secret(event: ev.Event) -> bool:
    """True if some seat may not see all of ``event`` (its views differ)."""
    return type(event) in _SECRETS
