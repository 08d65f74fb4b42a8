"""Game.event_fields: the engine's events as it keeps them, unbuilt (what the
training environment follows after every decision)."""

from __future__ import annotations

import random

import attrs

from arena.engine.game import Game


def test_event_fields_are_the_events_unbuilt_read_or_not() -> None:
    """Game.event_fields (what the environment follows): every event so far as its
    class and fields, whether or not the events were read in between."""
    rng = random.Random(6)
    for players in (2, 4, 7):
        game = Game.new(players, rng.getrandbits(32), "inquisitor")
        while not game.over:
            if rng.random() < 0.3:  # the events read now and then, built then
                assert len(game.events) == len(game.event_fields)
            seat = next(s for s in game.request.seats if game.legal(s))  # type: ignore[union-attr]
            game.decide(seat, rng.choice(game.legal(seat)))
        fields = game.event_fields
        assert fields == [(type(e), attrs.astuple(e, recurse=False)) for e in game.events]
        assert game.event_fields is fields and len(fields) > 20
