"""Tournament schedules: pairings, fair deals, seeds, late entries and order."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.tournament.schedule import (
    DealGroup,
    deal_seed,
    deals_per_table,
    group_key,
    iter_schedule,
    make_schedule,
    make_tables,
)


def names(n: int) -> list[str]:
    return [f"bot{i:02d}" for i in range(n)]


def games_per_table(schedule: list[DealGroup]) -> Counter[tuple[str, ...]]:
    return Counter(group.table for group in schedule for _ in group.games)


def pair_meetings(tables: list[tuple[str, ...]]) -> Counter[tuple[str, str]]:
    return Counter(pair for table in tables for pair in itertools.combinations(sorted(table), 2))


def check_fair_group(group: DealGroup) -> None:
    """Every bot holds every seat exactly once over the group, all with one deal."""
    k = len(group.table)
    assert len(group.games) == k
    assert [game.index for game in group.games] == list(range(k))
    for seat in range(k):
        assert sorted(game.seats[seat] for game in group.games) == list(group.table)
    for game in group.games:
        assert sorted(game.seats) == list(group.table)
        assert game.seed == group.seed
        assert game.group_key == group.key


def test_heads_up_round_robin_plays_every_pair_with_swapped_seats() -> None:
    bots = names(7)
    schedule = make_schedule(bots, games=4, seed=1)
    assert len(schedule) == math.comb(7, 2) * 2  # 2 deals per pair
    assert games_per_table(schedule) == {pair: 4 for pair in itertools.combinations(bots, 2)}
    for group in schedule:
        check_fair_group(group)
        first, second = group.games
        assert second.seats == first.seats[::-1]


def test_games_round_up_to_whole_rotations() -> None:
    assert deals_per_table(5, 2) == 3
    assert deals_per_table(6, 2) == 3
    assert deals_per_table(1, 4) == 1
    assert deals_per_table(9, 4) == 3
    schedule = make_schedule(names(5), players=4, games=5, seed=3)
    assert set(games_per_table(schedule).values()) == {8}


def test_keys_are_unique_and_name_the_table_and_deal() -> None:
    schedule = make_schedule(names(6), players=3, games=6, seed=2)
    keys = [group.key for group in schedule]
    assert len(set(keys)) == len(keys)
    for group in schedule:
        assert group.key == group_key(group.table, group.deal)
        assert group.table == tuple(sorted(group.table))
        assert group.seed == deal_seed(2, group.table, group.deal)
    assert group_key(("b", "a"), 3) == "a|b#3"


def test_keys_stay_unambiguous_whatever_the_names_hold() -> None:
    assert group_key(["a|b", "c"], 0) != group_key(["a", "b|c"], 0)
    assert group_key(["a#1", "b"], 0) != group_key(["a", "b"], 10)
    assert group_key(["x%7C", "y"], 0) != group_key(["x|", "y"], 0)
    schedule = make_schedule(["a|b", "c", "a", "b|c", "50%"], players=2, games=2, seed=1)
    assert len({group.key for group in schedule}) == len(schedule) == 10
    assert all(group.key == group_key(group.table, group.deal) for group in schedule)


def test_multi_player_tables_rotate_seats_and_vary_the_cyclic_order() -> None:
    schedule = make_schedule(names(4), players=4, games=40, seed=5)
    assert len(schedule) == 10
    for group in schedule:
        check_fair_group(group)
    # Rotations keep the cyclic order; a fresh shuffle per deal changes it.
    cyclic_orders = set()
    for group in schedule:
        order = group.order
        start = order.index(min(order))
        cyclic_orders.add(order[start:] + order[:start])
    assert len(cyclic_orders) > 1


def test_all_combinations_when_few() -> None:
    bots = names(7)
    tables = make_tables(bots, players=3, seed=0)
    assert sorted(tables) == list(itertools.combinations(bots, 3))
    # every pair meets equally often: with the 5 others as third player
    assert set(pair_meetings(tables).values()) == {5}


@pytest.mark.parametrize(("n", "k"), [(30, 4), (40, 6), (25, 5)])
def test_sampled_design_is_balanced(n: int, k: int) -> None:
    bots = names(n)
    assert math.comb(n, k) > 5000  # so the sample is used, not all combinations
    tables = make_tables(bots, players=k, seed=9)
    per_bot = Counter(bot for table in tables for bot in table)
    default = -(-(n - 1) // (k - 1))
    assert len(set(per_bot.values())) == 1  # every bot plays the same number of tables
    assert default <= per_bot[bots[0]] < default + k
    assert all(len(set(table)) == k for table in tables)
    meetings = pair_meetings(tables)
    counts = [meetings.get(pair, 0) for pair in itertools.combinations(bots, 2)]
    assert max(counts) <= 3
    assert counts.count(1) >= 0.6 * len(counts)
    assert counts.count(3) <= 0.02 * len(counts)


def test_sampled_design_respects_tables_per_bot_rounded_to_whole_tables() -> None:
    # 30 bots x 3 tables = 90 seats is not a multiple of 4, so 4 tables each.
    tables = make_tables(names(30), players=4, seed=1, tables_per_bot=3)
    assert len(tables) == 30
    assert set(Counter(bot for table in tables for bot in table).values()) == {4}


def test_sampled_design_depends_on_the_seed_only() -> None:
    bots = names(30)
    first = make_tables(bots, players=4, seed=11)
    assert make_tables(list(reversed(bots)), players=4, seed=11) == first
    assert make_tables(bots, players=4, seed=12) != first


def test_repeated_tables_get_their_own_deals() -> None:
    # 5 possible tables of 4, but 10 drawn: some repeat.
    schedule = make_schedule(names(5), players=4, games=4, seed=4, max_tables=1, tables_per_bot=8)
    tables = [group.table for group in schedule]
    assert len(tables) == 10 and len(set(tables)) < 10
    assert len({group.key for group in schedule}) == 10
    assert len({group.seed for group in schedule}) == 10


def test_heads_up_gauntlet_pairs_the_named_bot_with_every_other() -> None:
    bots = names(6)
    schedule = make_schedule(bots, games=2, seed=3, gauntlet="bot02")
    assert sorted(group.table for group in schedule) == sorted(
        tuple(sorted(("bot02", other))) for other in bots if other != "bot02"
    )


def test_multi_player_gauntlet_tables_all_include_the_named_bot() -> None:
    bots = names(6)
    tables = make_tables(bots, players=3, seed=3, gauntlet="bot00")
    others = [bot for bot in bots if bot != "bot00"]
    assert sorted(tables) == sorted(
        tuple(sorted(("bot00", *pair))) for pair in itertools.combinations(others, 2)
    )
    sampled = make_tables(names(40), players=4, seed=3, gauntlet="bot07", max_tables=50)
    assert all("bot07" in table for table in sampled)
    per_bot = Counter(bot for table in sampled for bot in table if bot != "bot07")
    assert len(per_bot) == 39 and len(set(per_bot.values())) == 1


def test_deal_seed_depends_on_seed_table_names_and_deal_only() -> None:
    base = deal_seed(7, ["b", "a"], 0)
    assert base == deal_seed(7, ("a", "b"), 0)
    assert 0 <= base < 2**63
    assert len({base, deal_seed(8, ["a", "b"], 0), deal_seed(7, ["a", "c"], 0),
                deal_seed(7, ["a", "b"], 1)}) == 4  # fmt: skip


@pytest.mark.parametrize(
    ("players", "gauntlet"), [(2, None), (3, None), (2, "bot01"), (3, "bot01")]
)
def test_late_entries_leave_existing_deals_unchanged(players: int, gauntlet: str | None) -> None:
    bots = names(6)
    before = make_schedule(bots, players=players, games=6, seed=21, gauntlet=gauntlet)
    after = make_schedule([*bots, "late"], players=players, games=6, seed=21, gauntlet=gauntlet)
    old = {(g.key, g.seed, g.order) for g in before}
    new = {(g.key, g.seed, g.order) for g in after}
    assert old <= new
    assert all("late" in g.table for g in after if (g.key, g.seed, g.order) not in old)
    assert len(new - old) > 0


def test_more_games_only_add_deals() -> None:
    few = make_schedule(names(5), games=2, seed=8)
    more = make_schedule(names(5), games=6, seed=8)
    assert {(g.key, g.seed) for g in few} <= {(g.key, g.seed) for g in more}


def test_order_is_deal_major() -> None:
    schedule = make_schedule(names(6), players=3, games=9, seed=2)
    deals = [group.deal for group in schedule]
    assert deals == sorted(deals)


@pytest.mark.parametrize("n", [6, 7])
def test_heads_up_rounds_give_every_bot_one_game_per_round(n: int) -> None:
    bots = names(n)
    schedule = make_schedule(bots, games=2, seed=13)
    per_round = n // 2  # with an odd count one bot sits out each round
    for start in range(0, len(schedule), per_round):
        chunk = schedule[start : start + per_round]
        seated = [bot for group in chunk for bot in group.table]
        assert len(seated) == len(set(seated))


def test_schedule_is_deterministic_and_ignores_input_order() -> None:
    bots = names(9)
    first = make_schedule(bots, games=4, seed=5)
    assert make_schedule(list(reversed(bots)), games=4, seed=5) == first
    assert make_schedule(bots, games=4, seed=6) != first


def test_heads_up_seat_zero_is_not_always_the_first_name() -> None:
    schedule = make_schedule(names(10), games=2, seed=1)
    firsts = Counter(group.order[0] == group.table[0] for group in schedule)
    assert firsts[True] > 0 and firsts[False] > 0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"bots": ["a"], "games": 2}, "at least 2 bots"),
        ({"bots": ["a", "b", "c"], "players": 4, "games": 2}, "at least 4 bots"),
        ({"bots": ["a", "b"], "players": 1, "games": 2}, "players must be 2-8"),
        ({"bots": names(9), "players": 9, "games": 2}, "players must be 2-8"),
        ({"bots": ["a", "b"], "games": 0}, "games must be a positive integer"),
        ({"bots": ["a", "b"], "games": 2, "gauntlet": "z"}, "gauntlet bot 'z'"),
        ({"bots": ["a", "a"], "games": 2}, "more than once"),
        ({"bots": ["a", ""], "games": 2}, "non-empty"),
        ({"bots": "ab", "games": 2}, "not one string"),
        ({"bots": ["a", "b"], "games": 2, "seed": "1"}, "seed must be an integer"),
    ],
)
def test_bad_arguments_raise_value_error(kwargs: dict, message: str) -> None:
    kwargs.setdefault("seed", 0)
    with pytest.raises(ValueError, match=message):
        iter_schedule(**kwargs)  # checked before iteration starts


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(min_value=2, max_value=10),
    k=st.integers(min_value=2, max_value=8),
    games=st.integers(min_value=1, max_value=7),
    seed=st.integers(min_value=0, max_value=2**64),
)
def test_every_table_plays_whole_fair_rotations(n: int, k: int, games: int, seed: int) -> None:
    k = min(k, n)
    schedule = make_schedule(names(n), players=k, games=games, seed=seed)
    assert len({group.key for group in schedule}) == len(schedule)
    assert set(games_per_table(schedule).values()) == {deals_per_table(games, k) * k}
    assert len(games_per_table(schedule)) == math.comb(n, k)
    for group in schedule:
        check_fair_group(group)
