"""Rules (RULES.md) checked straight against the engine API.

These cover what a conformance scenario cannot say: that an illegal decision
leaves the game untouched, the exact lists of legal answers, the events,
forfeits, the turn limit, placements, the two-player draft and replays.
"""

from __future__ import annotations

import copy
import random
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from arena.engine import events as ev
from arena.engine.decisions import Decision
from arena.engine.errors import GameOverError, IllegalDecision
from arena.engine.game import Game, GameConfig, Setup
from arena.engine.observer import view
from arena.engine.record import GameRecord, replay

S3_HANDS = (("duke", "captain"), ("assassin", "contessa"), ("ambassador", "duke"))
S3_COURT = (
    "captain",
    "assassin",
    "contessa",
    "ambassador",
    "duke",
    "captain",
    "assassin",
    "contessa",
    "ambassador",
)
IQ_HANDS = (("inquisitor", "duke"), ("captain", "contessa"), ("assassin", "duke"))
IQ_COURT = (
    "assassin",
    "inquisitor",
    "captain",
    "contessa",
    "duke",
    "inquisitor",
    "captain",
    "contessa",
    "assassin",
)
FIVE_AMBASSADOR = {"duke", "assassin", "captain", "contessa", "ambassador"}
FIVE_INQUISITOR = {"duke", "assassin", "captain", "contessa", "inquisitor"}


def rigged(
    hands: Any = S3_HANDS,
    court: Any = S3_COURT,
    coins: Any = None,
    revealed: Any = None,
    first: int = 0,
    variant: str = "ambassador",
    turn_limit: int = 1000,
) -> Game:
    return Game.from_setup(
        Setup(
            hands=tuple(tuple(h) for h in hands),
            court=tuple(court),
            revealed=None if revealed is None else tuple(tuple(r) for r in revealed),
            coins=None if coins is None else tuple(coins),
            first=first,
            variant=variant,
            turn_limit=turn_limit,
        )
    )


def play(game: Game, *moves: tuple[int, str]) -> None:
    for seat, token in moves:
        game.decide(seat, Decision.parse(token))


def pass_rest(game: Game) -> None:
    """Every seat offered the open opportunity that has not answered passes."""
    request = game.request
    assert request is not None and request.optional
    for seat in request.seats:
        if game.request is not request:
            break
        if game.legal(seat):
            game.decide(seat, Decision.parse("pass"))


def tokens(decisions: tuple[Decision, ...]) -> list[str]:
    return [d.token for d in decisions]


def snapshot(game: Game) -> tuple[Any, ...]:
    return copy.deepcopy(
        (
            game.hands,
            game.revealed,
            game.coins,
            game.alive,
            game.court,
            game.out_of_game,
            list(game.events),
            game.request,
            list(game.history),
            game.current,
            game.turn,
            game.result,
            {seat: game.legal(seat) for seat in range(game.players)},
        )
    )


# -- an illegal decision raises and changes nothing ---------------------------------


def _fresh() -> Game:
    return rigged()


def _at_steal_block() -> Game:
    game = rigged()
    play(game, (0, "steal:1"))
    pass_rest(game)
    assert game.request is not None and game.request.kind == "block"
    return game


def _at_coup_lose() -> Game:
    game = rigged(coins=(7, 2, 2))
    play(game, (0, "coup:2"))
    return game


def _at_keep() -> Game:
    game = rigged(first=2)
    play(game, (2, "exchange"))
    pass_rest(game)
    assert game.request is not None and game.request.kind == "keep"
    return game


def _at_tax_challenge_after_pass() -> Game:
    game = rigged()
    play(game, (0, "tax"), (1, "pass"))
    return game


def _at_show() -> Game:
    game = rigged(IQ_HANDS, IQ_COURT, variant="inquisitor")
    play(game, (0, "examine:1"))
    pass_rest(game)
    assert game.request is not None and game.request.kind == "show"
    return game


ILLEGAL: list[tuple[str, Callable[[], Game], int, str]] = [
    ("not_your_turn", _fresh, 1, "income"),
    ("coup_with_six", lambda: rigged(coins=(6, 2, 2)), 0, "coup:1"),
    ("assassinate_with_two", _fresh, 0, "assassinate:2"),
    ("forced_coup_at_ten", lambda: rigged(coins=(10, 2, 2)), 0, "income"),
    ("target_self", lambda: rigged(coins=(7, 2, 2)), 0, "coup:0"),
    (
        "target_out",
        lambda: rigged(
            hands=(S3_HANDS[0], (), S3_HANDS[2]), revealed=((), ("assassin", "contessa"), ())
        ),
        0,
        "steal:1",
    ),
    ("target_no_such_seat", _fresh, 0, "steal:5"),
    ("examine_in_ambassador_variant", _fresh, 0, "examine:1"),
    ("block_wrong_character", _at_steal_block, 1, "block:duke"),
    ("block_by_non_target", _at_steal_block, 2, "block:captain"),
    ("lose_not_held", _at_coup_lose, 2, "lose:contessa"),
    ("lose_by_other_seat", _at_coup_lose, 1, "lose:assassin"),
    ("keep_not_held", _at_keep, 2, "keep:contessa,duke"),
    ("keep_too_few", _at_keep, 2, "keep:duke"),
    ("answer_twice", _at_tax_challenge_after_pass, 1, "challenge"),
    ("claimant_challenges_itself", _fresh, 0, "challenge"),
    ("show_not_held", _at_show, 1, "show:duke"),
    ("action_at_show", _at_show, 1, "income"),
]


@pytest.mark.parametrize(
    ("make", "seat", "token"), [c[1:] for c in ILLEGAL], ids=[c[0] for c in ILLEGAL]
)
def test_illegal_decision_raises_naming_the_seat_and_changes_nothing(
    make: Callable[[], Game], seat: int, token: str
) -> None:
    game = make()
    before = snapshot(game)
    with pytest.raises(IllegalDecision) as info:
        game.decide(seat, Decision.parse(token))
    assert info.value.seat == seat
    assert f"seat {seat}" in str(info.value)
    assert snapshot(game) == before


def test_an_illegal_loss_after_a_challenge_is_named_as_such() -> None:
    """Seat 1 challenged the true tax and must lose a card: refusing its wrong
    card says so, not that it has already answered (the challenge)."""
    game = rigged()
    play(game, (0, "tax"), (1, "challenge"), (2, "pass"))
    assert game.request is not None and game.request.kind == "lose"
    with pytest.raises(IllegalDecision) as info:
        game.decide(1, Decision.parse("lose:duke"))
    assert info.value.reason == "seat 1 does not hold those cards face down"


def test_game_goes_on_normally_after_an_illegal_decision() -> None:
    game = rigged(coins=(6, 2, 2))
    with pytest.raises(IllegalDecision):
        game.decide(0, Decision.parse("coup:1"))
    play(game, (0, "income"))
    assert game.coins == [7, 2, 2]
    assert game.request is not None and game.request.seats == (1,)


def test_decisions_after_the_game_is_over_raise_game_over() -> None:
    game = rigged(
        hands=(("duke", "captain"), ("contessa",)),
        court=("ambassador",),
        revealed=((), ("assassin",)),
        coins=(7, 2),
    )
    play(game, (0, "coup:1"), (1, "lose:contessa"))
    assert game.over and game.winner == 0
    with pytest.raises(GameOverError):
        game.decide(0, Decision.parse("income"))
    with pytest.raises(GameOverError):
        game.forfeit(0, "crash")


# -- the lists of legal answers ----------------------------------------------------


def test_forced_coup_lists_only_coups_on_seats_still_in() -> None:
    game = rigged(
        hands=(("duke", "captain"), (), ("ambassador", "duke"), ("assassin",)),
        court=("captain", "assassin"),
        revealed=((), ("contessa", "contessa"), (), ("contessa",)),
        coins=(10, 0, 2, 2),
    )
    assert sorted(tokens(game.legal(0))) == ["coup:2", "coup:3"]
    for seat in (1, 2, 3):
        assert game.legal(seat) == ()


def test_forced_coup_with_twelve_coins() -> None:
    game = rigged(coins=(12, 2, 2))
    assert sorted(tokens(game.legal(0))) == ["coup:1", "coup:2"]


@pytest.mark.parametrize(
    ("variant", "coins", "expected"),
    [
        ("ambassador", 2, {"income", "foreign_aid", "tax", "exchange", "steal:1", "steal:2"}),
        (
            "ambassador",
            3,
            {
                "income",
                "foreign_aid",
                "tax",
                "exchange",
                "steal:1",
                "steal:2",
                "assassinate:1",
                "assassinate:2",
            },
        ),
        (
            "ambassador",
            9,
            {
                "income",
                "foreign_aid",
                "tax",
                "exchange",
                "steal:1",
                "steal:2",
                "assassinate:1",
                "assassinate:2",
                "coup:1",
                "coup:2",
            },
        ),
        (
            "inquisitor",
            0,
            {
                "income",
                "foreign_aid",
                "tax",
                "exchange",
                "steal:1",
                "steal:2",
                "examine:1",
                "examine:2",
            },
        ),
    ],
)
def test_action_lists(variant: str, coins: int, expected: set[str]) -> None:
    hands, court = (S3_HANDS, S3_COURT) if variant == "ambassador" else (IQ_HANDS, IQ_COURT)
    game = rigged(hands, court, coins=(coins, 2, 2), variant=variant)
    listed = tokens(game.legal(0))
    assert len(listed) == len(set(listed))
    assert set(listed) == expected


@pytest.mark.parametrize(
    ("variant", "hands", "court", "fifth"),
    [
        ("ambassador", S3_HANDS, S3_COURT, "ambassador"),
        ("inquisitor", IQ_HANDS, IQ_COURT, "inquisitor"),
    ],
)
def test_steal_block_lists_per_variant(variant: str, hands: Any, court: Any, fifth: str) -> None:
    game = rigged(hands, court, variant=variant)
    play(game, (0, "steal:1"))
    assert game.request is not None and game.request.kind == "challenge"
    assert set(game.request.seats) == {1, 2}
    pass_rest(game)
    assert game.request is not None and game.request.kind == "block"
    assert game.request.seats == (1,)
    assert sorted(tokens(game.legal(1))) == sorted(["pass", "block:captain", f"block:{fifth}"])
    assert game.legal(0) == () and game.legal(2) == ()


def test_foreign_aid_block_list_offered_to_every_other_seat() -> None:
    game = rigged()
    play(game, (0, "foreign_aid"))
    assert game.request is not None and game.request.kind == "block"
    assert set(game.request.seats) == {1, 2}
    for seat in (1, 2):
        assert sorted(tokens(game.legal(seat))) == ["block:duke", "pass"]
    assert game.legal(0) == ()


def test_assassination_block_list_is_contessa_for_the_target() -> None:
    game = rigged(coins=(3, 2, 2))
    play(game, (0, "assassinate:2"))
    pass_rest(game)
    assert game.request is not None and game.request.seats == (2,)
    assert sorted(tokens(game.legal(2))) == ["block:contessa", "pass"]


def test_challenge_lists() -> None:
    game = rigged()
    play(game, (0, "tax"))
    assert set(game.request.seats) == {1, 2}  # type: ignore[union-attr]
    for seat in (1, 2):
        assert sorted(tokens(game.legal(seat))) == ["challenge", "pass"]
    assert game.legal(0) == ()


def test_keep_lists_distinct_multisets() -> None:
    # Hand duke, captain; the Exchange draws captain, assassin.
    game = rigged()
    play(game, (0, "exchange"))
    pass_rest(game)
    listed = tokens(game.legal(0))
    assert len(listed) == len(set(listed))
    assert set(listed) == {
        "keep:assassin,captain",
        "keep:assassin,duke",
        "keep:captain,captain",
        "keep:captain,duke",
    }


def test_keep_list_with_one_influence() -> None:
    game = rigged(
        hands=(S3_HANDS[0], S3_HANDS[1], ("ambassador",)), revealed=((), (), ("duke",)), first=2
    )
    play(game, (2, "exchange"))
    pass_rest(game)
    assert sorted(tokens(game.legal(2))) == ["keep:ambassador", "keep:assassin", "keep:captain"]


def test_lose_and_show_list_each_card_once() -> None:
    game = rigged(
        hands=(("duke", "captain"), ("contessa", "contessa"), ("ambassador", "duke")),
        court=("captain", "assassin", "assassin"),
        coins=(7, 2, 2),
    )
    play(game, (0, "coup:1"))
    assert tokens(game.legal(1)) == ["lose:contessa"]
    game = rigged(IQ_HANDS, IQ_COURT, variant="inquisitor")
    play(game, (0, "examine:1"))
    pass_rest(game)
    assert sorted(tokens(game.legal(1))) == ["show:captain", "show:contessa"]


# -- events ------------------------------------------------------------------------


def test_events_of_a_proven_challenge() -> None:
    game = rigged()
    start = len(game.events)
    play(game, (0, "tax"), (1, "challenge"), (2, "pass"))
    assert game.request is not None and game.request.kind == "lose"
    assert game.request.seats == (1,)
    play(game, (1, "lose:assassin"))
    new = game.events[start:]
    wanted = [
        ev.ActionDeclared(0, "tax", None, "duke"),
        ev.Challenged(1, 0, "duke"),
        ev.ClaimProven(0, "duke"),
        ev.CardDrawn(0, "captain"),
        ev.InfluenceLost(1, "assassin"),
        ev.ActionResolved(0, "tax", None),
    ]
    positions = [new.index(event) for event in wanted]
    assert positions == sorted(positions)
    assert not any(isinstance(e, ev.ClaimFailed | ev.ActionFailed) for e in new)
    assert ev.CoinsChanged(0, 3, 5, "tax") in new
    assert game.hands[0] == ["captain", "captain"]
    assert game.court == [*S3_COURT[1:], "duke"]
    assert game.current == 1


def test_events_of_a_failed_bluff_refund() -> None:
    game = rigged(coins=(3, 2, 2))
    start = len(game.events)
    play(game, (0, "assassinate:1"), (2, "challenge"), (1, "pass"), (0, "lose:captain"))
    new = game.events[start:]
    for event in (
        ev.Challenged(2, 0, "assassin"),
        ev.ClaimFailed(0, "assassin"),
        ev.InfluenceLost(0, "captain"),
    ):
        assert event in new
    assert not any(isinstance(e, ev.ClaimProven | ev.ActionResolved) for e in new)
    assert game.coins == [3, 2, 2]


# -- forfeits ----------------------------------------------------------------------


def _forfeited_cleanly(game: Game, seat: int, cards: list[str]) -> None:
    assert not game.alive[seat]
    assert game.hands[seat] == []
    assert Counter(game.revealed[seat]) == Counter(cards)
    assert game.coins[seat] == 0
    assert ev.Forfeited(seat, "crash") in game.events
    if game.request is not None:
        assert seat not in game.request.seats
        assert game.legal(seat) == ()


def test_forfeit_of_the_actor_passes_the_turn() -> None:
    game = rigged()
    game.forfeit(0, "crash")
    _forfeited_cleanly(game, 0, ["duke", "captain"])
    assert game.request is not None and game.request.kind == "action"
    assert game.request.seats == (1,)


def test_forfeit_of_a_seat_not_asked_changes_nothing_else() -> None:
    game = rigged()
    game.forfeit(2, "crash")
    _forfeited_cleanly(game, 2, ["ambassador", "duke"])
    assert game.request is not None and game.request.seats == (0,)
    assert "steal:2" not in tokens(game.legal(0))


def test_forfeit_during_a_challenge_opportunity_offered_to_it() -> None:
    game = rigged()
    play(game, (0, "tax"))
    game.forfeit(1, "crash")
    _forfeited_cleanly(game, 1, ["assassin", "contessa"])
    assert game.request is not None and game.request.kind == "challenge"
    assert game.request.seats == (2,)
    play(game, (2, "pass"))
    assert game.coins == [5, 0, 2]
    assert game.request is not None and game.request.kind == "action"
    assert game.request.seats == (2,)


def test_forfeit_of_the_last_seat_to_answer_resolves_the_opportunity() -> None:
    game = rigged()
    play(game, (0, "tax"), (2, "pass"))
    game.forfeit(1, "crash")
    assert game.coins == [5, 0, 2]
    assert game.request is not None and game.request.seats == (2,)


def test_forfeit_instead_of_a_lose_decision() -> None:
    game = rigged(coins=(7, 2, 2))
    play(game, (0, "coup:1"))
    assert game.request is not None and game.request.kind == "lose"
    game.forfeit(1, "crash")
    _forfeited_cleanly(game, 1, ["assassin", "contessa"])
    assert game.coins == [0, 0, 2]
    assert game.request is not None and game.request.kind == "action"
    assert game.request.seats == (2,)


def test_forfeit_of_the_target_of_a_pending_assassination() -> None:
    game = rigged(coins=(3, 2, 2))
    play(game, (0, "assassinate:1"))
    pass_rest(game)
    assert game.request is not None and game.request.kind == "block"
    assert game.request.seats == (1,)
    game.forfeit(1, "crash")
    _forfeited_cleanly(game, 1, ["assassin", "contessa"])
    assert game.coins == [0, 0, 2]  # the coins paid stay spent
    assert any(isinstance(e, ev.ActionFailed) and e.reason == "target_out" for e in game.events)
    assert not any(isinstance(e, ev.ActionResolved) for e in game.events)
    assert game.request is not None and game.request.seats == (2,)


def test_forfeit_during_keep_returns_the_drawn_cards() -> None:
    game = rigged(first=2)
    play(game, (2, "exchange"))
    pass_rest(game)
    game.forfeit(2, "crash")
    _forfeited_cleanly(game, 2, ["ambassador", "duke"])
    assert sorted(game.court) == sorted(S3_COURT)
    assert len(game.court) == len(S3_COURT)
    assert game.request is not None and game.request.seats == (0,)


def test_forfeit_of_the_examined_target_at_show() -> None:
    game = rigged(IQ_HANDS, IQ_COURT, variant="inquisitor")
    play(game, (0, "examine:1"))
    pass_rest(game)
    assert game.request is not None and game.request.kind == "show"
    game.forfeit(1, "crash")
    _forfeited_cleanly(game, 1, ["captain", "contessa"])
    assert game.court == list(IQ_COURT)
    assert game.request is not None and game.request.kind == "action"
    assert game.request.seats == (2,)


def test_forfeit_of_the_actor_while_its_claim_is_open() -> None:
    game = rigged()
    play(game, (0, "tax"))
    game.forfeit(0, "crash")
    _forfeited_cleanly(game, 0, ["duke", "captain"])
    pass_rest(game)
    assert not any(isinstance(e, ev.ActionResolved) for e in game.events)
    assert game.coins == [0, 2, 2]
    assert game.request is not None and game.request.kind == "action"
    assert game.request.seats == (1,)


def test_forfeit_leaving_one_player_ends_the_game_with_placements() -> None:
    game = rigged(
        hands=(("duke", "captain"), ("assassin",), ("ambassador", "duke")),
        revealed=((), ("contessa",), ()),
        coins=(7, 2, 2),
        court=("captain", "assassin", "contessa", "ambassador", "captain"),
    )
    play(game, (0, "coup:1"), (1, "lose:assassin"))
    assert not game.alive[1]
    assert game.request is not None and game.request.seats == (2,)
    game.forfeit(2, "crash")
    assert game.over and game.request is None
    assert game.result is not None
    assert game.result.reason == ev.LAST_PLAYER
    assert game.result.winner == 0
    assert game.result.placements == (1, 3, 2)
    assert isinstance(game.events[-1], ev.GameOver)


def test_forfeit_of_a_seat_already_out_is_refused() -> None:
    game = rigged()
    game.forfeit(1, "crash")
    with pytest.raises(IllegalDecision):
        game.forfeit(1, "crash")


# -- the end: turn limit and placements ---------------------------------------------


def test_turn_limit_ties_every_survivor() -> None:
    game = Game.new(3, seed=11, turn_limit=3)
    for _ in range(3):
        assert game.request is not None and game.request.kind == "action"
        game.decide(game.current, Decision.parse("income"))
    assert game.over
    assert game.result is not None
    assert game.result.reason == ev.TURN_LIMIT
    assert game.result.turns == 3
    assert game.result.placements == (1, 1, 1)
    assert game.result.winner is None
    assert game.winner is None


def test_turn_limit_places_the_eliminated_after_the_tied_survivors() -> None:
    game = rigged(
        hands=(("duke", "captain"), ("assassin",), ("ambassador", "duke")),
        revealed=((), ("contessa",), ()),
        coins=(7, 2, 2),
        turn_limit=2,
        court=("captain", "assassin", "contessa"),
    )
    play(game, (0, "coup:1"), (1, "lose:assassin"), (2, "income"))
    assert game.result is not None
    assert game.result.reason == ev.TURN_LIMIT
    assert game.result.placements == (1, 3, 1)


def test_placements_follow_the_order_of_elimination() -> None:
    game = rigged(
        hands=(("duke", "captain"), ("assassin",), ("ambassador",), ("contessa",)),
        revealed=((), ("assassin",), ("ambassador",), ("contessa",)),
        court=("captain", "duke"),
        coins=(30, 2, 2, 2),
    )
    play(
        game,
        (0, "coup:1"),
        (1, "lose:assassin"),
        (2, "income"),
        (3, "income"),
        (0, "coup:3"),
        (3, "lose:contessa"),
        (2, "income"),
        (0, "coup:2"),
        (2, "lose:ambassador"),
    )
    assert game.over and game.winner == 0
    assert game.result is not None
    assert game.result.placements == (1, 4, 2, 3)
    assert [e.seat for e in game.events if isinstance(e, ev.PlayerOut)] == [1, 3, 2]


# -- the two-player draft ------------------------------------------------------------


@pytest.mark.parametrize(
    ("variant", "five"), [("ambassador", FIVE_AMBASSADOR), ("inquisitor", FIVE_INQUISITOR)]
)
def test_two_player_draft(variant: str, five: set[str]) -> None:
    game = Game.new(2, seed=5, variant=variant)
    request = game.request
    assert request is not None and request.kind == "draft"
    assert set(request.seats) == {0, 1}
    for seat in (0, 1):
        assert len(game.hands[seat]) == 1
        listed = game.legal(seat)
        assert len(listed) == 5
        assert {d.card for d in listed} == five
        assert all(d.kind == "draft" for d in listed)
    play(game, (0, "draft:duke"), (1, "draft:captain"))
    assert "duke" in game.hands[0] and "captain" in game.hands[1]
    assert [len(h) for h in game.hands] == [2, 2]
    assert len(game.court) == 3
    assert len(game.out_of_game) == 8
    everything = Counter([*game.hands[0], *game.hands[1], *game.court, *game.out_of_game])
    assert everything == Counter({card: 3 for card in five})
    # The cards each seat saw and did not pick are out of the game for good (RULES.md,
    # "Counting cards in the draft"): in play stay one copy of each character, plus
    # the copy each seat picked.
    assert Counter(game.out_of_game) == Counter(five) + Counter(five) - Counter(["duke", "captain"])
    in_play = Counter([*game.hands[0], *game.hands[1], *game.court])
    assert in_play == Counter(five) + Counter(["duke", "captain"])
    assert game.request is not None and game.request.kind == "action"


def test_two_player_plain_deal_is_an_option() -> None:
    game = Game.new(2, seed=5, draft=False)
    assert game.request is not None and game.request.kind == "action"
    assert [len(h) for h in game.hands] == [2, 2]
    assert len(game.court) == 11


def test_plain_deal_for_seven_players_uses_four_copies() -> None:
    game = Game.new(7, seed=3)
    cards = Counter([*(c for h in game.hands for c in h), *game.court])
    assert cards == Counter({card: 4 for card in FIVE_AMBASSADOR})
    assert [len(h) for h in game.hands] == [2] * 7
    assert game.coins == [2] * 7


# -- replays -------------------------------------------------------------------------


def _play_randomly(game: Game, rng: random.Random, limit: int = 2000) -> None:
    for _ in range(limit):
        request = game.request
        if request is None:
            return
        for seat in request.seats:
            if game.request is not request:
                break
            legal = game.legal(seat)
            if legal:
                game.decide(seat, rng.choice(legal))


@pytest.mark.parametrize(
    ("players", "variant"), [(2, "ambassador"), (4, "inquisitor"), (8, "ambassador")]
)
def test_same_seed_and_decisions_replay_identically(players: int, variant: str) -> None:
    config = GameConfig(players, variant, turn_limit=300)
    game = Game.from_config(config, seed=2024)
    _play_randomly(game, random.Random(players))
    record = GameRecord.of(game, config, 2024)
    again = replay(record)
    assert again.events == game.events
    assert again.result == game.result
    from_json = replay(GameRecord.from_json(record.to_json()))
    assert from_json.events == game.events


def test_same_seed_deals_the_same() -> None:
    first, second = Game.new(5, seed=99), Game.new(5, seed=99)
    assert first.hands == second.hands and first.court == second.court
    assert first.current == second.current


def test_stop_ends_the_game_with_the_survivors_tied_and_replays():
    config = GameConfig(4, "ambassador", None, 1000)
    game = Game.from_config(config, 5)
    rng = random.Random(5)
    while not game.over and game.turn < 3:
        for seat in game.request.seats:
            game.decide(seat, rng.choice(game.legal(seat)))
    assert not game.over
    alive = list(game.alive)
    game.stop("time_cap")
    assert game.over and game.request is None and game.result.reason == "time_cap"
    assert [p == 1 for p in game.result.placements] == alive
    with pytest.raises(GameOverError):
        game.stop("time_cap")
    again = replay(GameRecord.from_json(GameRecord.of(game, config, 5).to_json()))
    assert again.events == game.events and again.result == game.result


# -- answers RULES.md and protocol.md give a bot author (issue 10) -----------------

FOUR_HANDS = (("duke", "captain"), ("assassin", "contessa"), ("duke", "ambassador"),
              ("captain", "contessa"))
FOUR_COURT = ("assassin", "ambassador", "captain", "duke", "contessa", "assassin", "ambassador")


def test_several_challenges_of_a_block_the_first_clockwise_from_the_blocker_counts() -> None:
    game = rigged(FOUR_HANDS, FOUR_COURT)
    play(game, (0, "foreign_aid"), (1, "pass"), (2, "block:duke"), (3, "pass"))
    assert game.request is not None and game.request.kind == "challenge"
    assert game.request.seats == (3, 0, 1)  # clockwise from the blocker, not the actor
    start = len(game.events)
    play(game, (1, "challenge"), (0, "pass"), (3, "challenge"))
    new = game.events[start:]
    # Seat 3 is the challenger; seat 1's challenge is void and leaves no event.
    assert [e for e in new if isinstance(e, ev.Challenged)] == [ev.Challenged(3, 2, "duke")]
    assert ev.ClaimProven(2, "duke") in new
    assert game.request is not None and game.request.kind == "lose"
    assert game.request.seats == (3,)
    assert game.hands[1] == ["assassin", "contessa"]


def test_several_blocks_of_foreign_aid_the_first_clockwise_from_the_actor_counts() -> None:
    game = rigged(FOUR_HANDS, FOUR_COURT, first=1)
    start = len(game.events)
    play(game, (1, "foreign_aid"), (0, "block:duke"), (2, "pass"), (3, "block:duke"))
    new = game.events[start:]
    assert [e for e in new if isinstance(e, ev.Blocked)] == [ev.Blocked(3, "duke", 1)]
    assert game.request is not None and game.request.kind == "challenge"
    assert game.request.seats == (0, 1, 2)  # the void blocker 0 may challenge the block


@pytest.mark.parametrize(
    ("hand", "revealed", "expected"),
    [
        (("inquisitor",), ("duke",), ["keep:assassin", "keep:inquisitor"]),
        (("inquisitor", "duke"), (), ["keep:assassin,duke", "keep:assassin,inquisitor",
                                      "keep:duke,inquisitor"]),
    ],
)
def test_inquisitor_exchange_keeps_as_many_as_were_face_down(
    hand: tuple[str, ...], revealed: tuple[str, ...], expected: list[str]
) -> None:
    game = rigged((hand, *IQ_HANDS[1:]), IQ_COURT, revealed=(revealed, (), ()),
                  variant="inquisitor")
    play(game, (0, "exchange"))
    pass_rest(game)
    assert sorted(tokens(game.legal(0))) == expected


def test_examine_of_a_last_card_show_then_force_then_the_swap() -> None:
    game = rigged((IQ_HANDS[0], ("captain",), IQ_HANDS[2]), IQ_COURT,
                  revealed=((), ("contessa",), ()), variant="inquisitor")
    play(game, (0, "examine:1"))
    pass_rest(game)
    # One card face down: the show is still asked, with one answer.
    assert game.request is not None and game.request.kind == "show"
    assert tokens(game.legal(1)) == ["show:captain"]
    play(game, (1, "show:captain"))
    # The examiner gets examine_shown first, then the force request.
    shown = game.events[-1]
    assert shown == ev.ExamineShown(0, 1, "captain")
    assert game.request is not None and game.request.kind == "force"
    assert game.request.seats == (0,)
    assert view(shown, 1).card == "captain" and view(shown, 2).card is None
    start = len(game.events)
    play(game, (0, "force:yes"))
    new = game.events[start:]
    assert new[:2] == [ev.ExamineDecided(0, 1, True), ev.CardDrawn(1, "assassin")]
    assert view(new[1], 1).card == "assassin" and view(new[1], 2).card is None
    assert game.hands[1] == ["assassin"]
