"""Work units: the schedule cut for workers, the same games whatever the cutting."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.tournament.schedule import make_schedule
from arena.tournament.units import Dispatcher, make_units


def names(n: int) -> list[str]:
    return [f"bot{i:02d}" for i in range(n)]


def scheduled(plan_units, seed: int) -> list[tuple]:
    return sorted((g.key, g.seed, g.order) for u in plan_units for g in u.groups(seed))


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 14), k=st.integers(2, 5), games=st.integers(1, 11),
       keep=st.integers(2, 40), slots=st.integers(1, 6), seed=st.integers(0, 2**63 - 1),
       gauntlet=st.booleans())
def test_units_hold_exactly_the_schedule_whatever_the_cutting(n, k, games, keep, slots, seed,
                                                              gauntlet) -> None:
    k = min(k, n)
    bots = names(n)
    g = bots[n // 2] if gauntlet and n > k else None
    plan = make_units(bots, players=k, games=games, seed=seed, gauntlet=g, keep=keep,
                      slots=slots)
    whole = make_schedule(bots, players=k, games=games, seed=seed, gauntlet=g)
    assert scheduled(plan.units, seed) == sorted((x.key, x.seed, x.order) for x in whole)
    assert plan.total == sum(len(x.order) for x in whole) == sum(u.games for u in plan.units)
    keys = [key for u in plan.units for key in u.game_keys()]
    assert sorted(keys) == sorted((x.key, i) for x in whole for i in range(k))
    assert [u.id for u in plan.units] == list(range(len(plan.units)))
    lanes = [u.lane for u in plan.units]
    assert lanes == sorted(lanes)


def test_a_lane_holds_three_blocks_and_meets_the_others_block_by_block() -> None:
    bots = names(60)
    plan = make_units(bots, games=2, seed=3, keep=16, slots=2)  # blocks of 4 bots
    assert len(plan.units) >= 8  # enough for both slots, several times over
    rank = {name: i // 4 for i, name in enumerate(sorted(bots))}
    visiting = []
    for unit in plan.units:  # one deal chunk: lane i holds blocks 3i, 3i+1, 3i+2
        for a, b in unit.tables:
            low, high = sorted((rank[a], rank[b]))
            assert low // 3 == unit.lane
            visiting.append((unit.lane, high))
    # Within a lane the other block only moves forward: each is met once, in a row.
    assert visiting == sorted(visiting)


def test_deal_chunks_keep_a_partial_run_even() -> None:
    plan = make_units(names(6), games=24, seed=1, slots=2)  # 12 deals: 3 chunks of 4
    spans = [u.deals for u in plan.units]
    assert sorted(set(spans)) == [(0, 4), (4, 8), (8, 12)]
    assert spans == sorted(spans)  # chunk major


@pytest.mark.parametrize(("bots", "games", "unit_games"), [(2, 600, 32), (3, 400, 96), (3, 20, 8)])
def test_few_tables_make_bigger_chunks(bots: int, games: int, unit_games: int) -> None:
    # One or three tables: 8-game chunks would make units of 8 or 24 games, each
    # costing a hand-over to a worker and back; the chunk grows (up to 32 games
    # of each table) towards the target of 4 units a slot, and still splits
    # every table alike.
    plan = make_units(names(bots), games=games, seed=1, slots=2)
    sizes = [unit.games for unit in plan.units]
    assert sum(sizes) == len(plan.tables) * plan.deals * 2
    assert max(sizes) == unit_games
    assert sum(size < unit_games for size in sizes) <= 1  # the rest, if any
    spans = [unit.deals for unit in plan.units]
    assert spans == sorted(spans)  # chunk major: every table within a chunk of the others


def test_the_dispatcher_hands_out_every_unit_once_and_takes_lost_ones_back() -> None:
    plan = make_units(names(40), games=4, seed=2, keep=8, slots=3)
    dispatcher = Dispatcher(plan.units)
    taken: list[int] = []
    lanes: dict[int, list[int]] = {0: [], 1: [], 2: []}
    lost = None
    while True:
        progress = False
        for slot in range(3):
            unit = dispatcher.take(slot)
            if unit is None:
                continue
            progress = True
            taken.append(unit.id)
            lanes[slot].append(unit.lane)
            if lost is None and len(taken) == 5:
                lost = unit
                dispatcher.give_back(unit)
                dispatcher.leave(slot)
        if not progress:
            break
    assert lost is not None
    assert Counter(taken) == Counter({u.id: 1 for u in plan.units}) + Counter({lost.id: 1})
    assert dispatcher.left == 0
    # A slot stays in its lane while the lane lasts: few lane changes per slot.
    for slot_lanes in lanes.values():
        changes = sum(1 for a, b in zip(slot_lanes, slot_lanes[1:], strict=False) if a != b)
        assert changes <= len(set(slot_lanes)) + 2


def test_count_scheduled_counts_only_games_of_this_schedule() -> None:
    plan = make_units(names(4), games=4, seed=1)
    keys = {key for u in plan.units for key in u.game_keys()}
    done = set(list(keys)[:5]) | {("bot00|zzz#0", 0), ("bot00|bot01#99", 0),
                                  ("bot00|bot01#0", 7), ("garbage", 0)}
    assert plan.count_scheduled(done) == 5
    assert plan.count_scheduled(set()) == 0


def test_bad_games_raise() -> None:
    with pytest.raises(ValueError, match="games must be a positive integer"):
        make_units(names(3), games=0, seed=1)
