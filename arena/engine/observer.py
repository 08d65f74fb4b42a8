"""What each seat may see: the single place where visibility is decided.

Events carry face-down cards in *secret* fields.  This table names, for each
event type, the secret field and the seats entitled to it (RULES.md,
"What each player knows"); everyone else gets the field blanked to None.  Nothing
reaches a seat except through ``view``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence

import attrs

from arena.engine import events as ev

# event type -> (secret field, the seats that may read it)
_SECRETS: dict[type, tuple[str, Callable[[ev.Event], tuple[int, ...]]]] = {
    ev.CardsDealt: ("cards", lambda e: (e.seat,)),
    ev.DraftOffered: ("cards", lambda e: (e.seat,)),
    ev.DraftChosen: ("card", lambda e: (e.seat,)),
    ev.CardDrawn: ("card", lambda e: (e.seat,)),
    ev.ExchangeDrawn: ("cards", lambda e: (e.seat,)),
    ev.ExchangeReturned: ("cards", lambda e: (e.seat,)),
    ev.ExamineShown: ("card", lambda e: (e.examiner, e.target)),
}

# The event types with a secret field: every other event looks the same to all.
SECRET_EVENT_TYPES = frozenset(_SECRETS)

# Who is looking: a seat number, SPECTATOR (public only) or OMNISCIENT.
SPECTATOR = -1
OMNISCIENT = -2


def view(event: ev.Event, seat: int) -> ev.Event:
    """The event as ``seat`` may see it."""
    secret = _SECRETS.get(type(event))
    if secret is None or seat == OMNISCIENT:
        return event
    field, readers = secret
    if seat in readers(event):
        return event
    return attrs.evolve(event, **{field: None})


def seat_views(event: ev.Event, seats: Sequence[int]) -> list[ev.Event]:
    """``view(event, seat)`` for each of ``seats``, made at once: the seats not
    entitled to the secret share one blanked copy."""
    secret = _SECRETS.get(type(event))
    if secret is None:
        return [event] * len(seats)
    field, readers = secret
    entitled = readers(event)
    blanked = attrs.evolve(event, **{field: None})
    return [event if seat in entitled or seat == OMNISCIENT else blanked for seat in seats]


def views(events: Iterable[ev.Event], seat: int) -> Iterator[ev.Event]:
    """Every event of a stream as ``seat`` may see it."""
    for event in events:
        yield view(event, seat)


def has_secret(event: ev.Event) -> bool:
    """True if some seat may not see all of ``event`` (its views differ)."""
    return type(event) in _SECRETS
