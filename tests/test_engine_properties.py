"""Property tests over random legal play: invariants that must hold in every game."""

from __future__ import annotations

import random
from collections import Counter

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.engine import events as ev
from arena.engine import observer
from arena.engine.cards import ALL_CARDS, deck
from arena.engine.decisions import Decision, DecisionSyntaxError
from arena.engine.errors import IllegalDecision
from arena.engine.game import Game, GameConfig
from arena.engine.record import GameRecord, replay

games = st.builds(
    lambda players, variant, seed, draft, limit: (GameConfig(players, variant, draft, limit), seed),
    players=st.integers(2, 8),
    variant=st.sampled_from(["ambassador", "inquisitor"]),
    seed=st.integers(0, 2**63 - 1),
    draft=st.sampled_from([None, False]),
    limit=st.sampled_from([1, 5, 40, 1000]),
)


def play_randomly(config: GameConfig, seed: int, check=None) -> Game:
    """Uniformly random legal play; ``check(game)`` after every decision."""
    game = Game.from_config(config, seed)
    rng = random.Random(seed ^ 0x5EED)
    while not game.over:
        request = game.request
        assert request is not None
        for seat in request.seats:
            if game.request is not request:
                break  # a forfeit-free game only changes request when all have answered
            game.decide(seat, rng.choice(game.legal(seat)))
            if check:
                check(game)
    return game


def conserved(game: Game) -> None:
    held = [*game.court, *game.out_of_game, *game._drawn, *sum(game._piles, [])]
    for seat in range(game.players):
        held += game.hands[seat] + game.revealed[seat]
    assert Counter(held) == Counter(deck(game.variant, game.players))
    assert all(c >= 0 for c in game.coins)
    for seat in range(game.players):
        drafting = 1 if game._piles and game.alive[seat] else 0
        held = len(game.hands[seat]) + len(game.revealed[seat]) + drafting
        # Only a forfeit during the draft leaves a seat with one card.
        assert held == 2 or (
            held == 1
            and game.over
            and isinstance(game.events[1], ev.CardsDealt)
            and sum(1 for e in game.events if isinstance(e, ev.DraftChosen)) < 2
        )
        assert game.alive[seat] == bool(game.hands[seat])
        if not game.alive[seat]:
            assert game.coins[seat] == 0


@settings(max_examples=150, deadline=None)
@given(games)
def test_cards_and_coins_are_conserved(case):
    config, seed = case
    play_randomly(config, seed, conserved)


@settings(max_examples=150, deadline=None)
@given(games)
def test_every_game_ends_by_the_turn_limit(case):
    config, seed = case
    game = play_randomly(config, seed)
    result = game.result
    assert result is not None and result.turns <= config.turn_limit
    survivors = [s for s in range(config.players) if game.alive[s]]
    if result.reason == ev.LAST_PLAYER:
        assert len(survivors) == 1 and result.winner == survivors[0]
    else:
        assert result.turns == config.turn_limit and len(survivors) >= 2
    assert all(result.placements[s] == 1 for s in survivors)
    # The first seat out is placed last.
    assert sorted(result.placements)[-1] == config.players or len(survivors) == config.players


# Card-valued event fields anyone may see: cards turned face up, and claims.
PUBLIC_CARD_FIELDS = {
    (ev.InfluenceLost, "card"),
    (ev.ClaimProven, "character"),
    (ev.ClaimFailed, "character"),
    (ev.Challenged, "character"),
    (ev.Blocked, "character"),
    (ev.ActionDeclared, "claim"),
    (ev.GameStarted, "variant"),  # names the fifth character, not a card anyone holds
}
# Private events, and the fields naming who they belong to.
OWNERS = {
    ev.CardsDealt: ("seat",),
    ev.DraftOffered: ("seat",),
    ev.DraftChosen: ("seat",),
    ev.CardDrawn: ("seat",),
    ev.ExchangeDrawn: ("seat",),
    ev.ExchangeReturned: ("seat",),
    ev.ExamineShown: ("examiner", "target"),
}


def _holds_card(value) -> bool:
    if isinstance(value, str):
        return value in ALL_CARDS
    return isinstance(value, tuple) and any(v in ALL_CARDS for v in value)


@settings(max_examples=150, deadline=None)
@given(games)
def test_a_seat_never_sees_another_seats_hidden_card(case):
    """Checked field by field, independently of the observer's own table."""
    config, seed = case
    game = play_randomly(config, seed)
    for seat in range(config.players):
        for event in observer.views(game.events, seat):
            for field in attrs.fields(type(event)):
                value = getattr(event, field.name)
                if not _holds_card(value) or (type(event), field.name) in PUBLIC_CARD_FIELDS:
                    continue
                owners = [getattr(event, name) for name in OWNERS.get(type(event), ())]
                assert seat in owners, f"seat {seat} sees {event}"
        spectator = list(observer.views(game.events, observer.SPECTATOR))
        for event in spectator:
            for field in attrs.fields(type(event)):
                if (type(event), field.name) not in PUBLIC_CARD_FIELDS:
                    assert not _holds_card(getattr(event, field.name)), event


@settings(max_examples=100, deadline=None)
@given(games)
def test_a_record_replays_to_the_same_game(case):
    config, seed = case
    game = play_randomly(config, seed)
    record = GameRecord.from_json(GameRecord.of(game, config, seed).to_json())
    assert game.result is not None  # every field of the result, placements as a list
    assert record.result == {**attrs.asdict(game.result), "placements": [*game.result.placements]}
    again = replay(record)
    assert again.events == game.events
    assert again.result == game.result


@settings(max_examples=100, deadline=None)
@given(games)
def test_event_fields_are_the_events_unbuilt_whenever_read(case):
    config, seed = case
    reader = random.Random(seed)
    read_after = reader.random()  # some games read their events as they go, some never

    def check(game: Game) -> None:
        if reader.random() < read_after:
            assert game.events == [kind(*values) for kind, values in game.event_fields]

    game = play_randomly(config, seed, check)
    fields = list(game.event_fields)
    assert [kind(*values) for kind, values in fields] == game.events
    assert game.event_fields == fields  # reading the events leaves them as they were


ALL_TOKENS = [
    *(f"{a}:{t}" for a in ("coup", "assassinate", "steal", "examine") for t in range(9)),
    "income",
    "foreign_aid",
    "tax",
    "exchange",
    "pass",
    "challenge",
    "force:yes",
    "force:no",
    *(f"{k}:{c}" for k in ("block", "lose", "show", "draft") for c in ALL_CARDS),
    *(f"keep:{a},{b}" for a in ALL_CARDS for b in ALL_CARDS),
    *(f"keep:{c}" for c in ALL_CARDS),
]


def snapshot(game: Game):
    return (
        repr(game.hands),
        repr(game.revealed),
        list(game.coins),
        list(game.court),
        len(game.events),
        game.request,
        len(game.history),
        game.current,
        game.turn,
    )


@settings(max_examples=100, deadline=None)
@given(games, st.data())
def test_an_illegal_decision_changes_nothing(case, data):
    config, seed = case
    game = Game.from_config(config, seed)
    rng = random.Random(seed)
    while not game.over:
        request = game.request
        seat = rng.choice(range(config.players))
        token = data.draw(st.sampled_from(ALL_TOKENS))
        try:
            decision = Decision.parse(token)
        except DecisionSyntaxError:
            continue
        before = snapshot(game)
        if decision in game.legal(seat):
            game.decide(seat, decision)
            continue
        with pytest.raises(IllegalDecision) as err:
            game.decide(seat, decision)
        assert err.value.seat == seat and err.value.reason
        assert snapshot(game) == before
        # Move on with a legal answer from someone asked.
        asker = (
            request.seats[0]
            if game.legal(request.seats[0])
            else next(s for s in request.seats if game.legal(s))
        )
        game.decide(asker, rng.choice(game.legal(asker)))


@settings(max_examples=60, deadline=None)
@given(games, st.data())
def test_forfeits_at_any_moment_keep_the_game_sound(case, data):
    config, seed = case
    game = Game.from_config(config, seed)
    rng = random.Random(seed)
    while not game.over:
        if data.draw(st.integers(0, 30)) == 0:
            game.forfeit(rng.choice(game.seats_in_game()), "crash")
            conserved(game)
            continue
        request = game.request
        seat = next(s for s in request.seats if game.legal(s))
        game.decide(seat, rng.choice(game.legal(seat)))
        conserved(game)
    out = [e.seat for e in game.events if isinstance(e, ev.PlayerOut)]
    assert len(out) == len(set(out))
    record = GameRecord.of(game, config, seed)
    assert replay(record).events == game.events


def test_the_same_seed_gives_the_same_deal_and_different_seeds_differ():
    deals = {}
    for seed in range(20):
        a, b = Game.new(4, seed), Game.new(4, seed)
        assert a.hands == b.hands and a.court == b.court and a.current == b.current
        deals[seed] = (repr(a.hands), a.current)
    assert len(set(deals.values())) > 15


def test_events_stay_frozen_values():
    """events.py gives events a faster __init__; they must stay immutable values."""
    event = ev.CardDrawn(1, "duke")
    for change in (lambda: setattr(event, "card", "captain"), lambda: delattr(event, "card")):
        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            change()
    same = ev.CardDrawn(seat=1, card="duke")
    assert event == same and hash(event) == hash(same)
    assert attrs.evolve(event, card=None) == ev.CardDrawn(1, None)
    with pytest.raises(TypeError):
        ev.CardDrawn(1)  # every field is required
