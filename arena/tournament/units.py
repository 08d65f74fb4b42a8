"""Work units: the schedule cut into pieces that a worker plays with the bot
processes it already has.

A unit is a plain value (a few tables, a range of deals): a worker process
or a Dask task plays it and sends back its games.  Which games a unit holds
never changes what a game is (its key, seed and seating come from the
schedule alone), so the same seed gives the same games whatever the cutting,
the number of workers or the order they finish in.

Locality.  The bots, sorted by name, are cut into blocks of ``keep // 4``.
A table belongs to the blocks of its bots.  Blocks come in *lanes* of three:
a lane holds every table whose lowest block is one of its three, ordered by
the other blocks, so a worker playing a lane keeps the lane's own bots
alive (three blocks) and meets the others one block at a time (the fourth).
Heads-up, a worker thus starts each bot about once per lane it plays instead
of once per game.  Deals come in chunks of ``DEAL_CHUNK_GAMES`` games per
table (more when there are too few tables to fill a unit), chunk major, so a
partial run still has every table within a chunk of the others.
"""

from __future__ import annotations

import bisect
from collections import deque
from collections.abc import Iterator, Sequence
from typing import Final

import attrs

from arena.tournament.schedule import (
    KEY_DEAL_SEPARATOR,
    DealGroup,
    _table_key,
    deal_group,
    deals_per_table,
    first_deals,
    make_tables,
)

DEFAULT_KEEP: Final = 16  # bot processes a worker's game slot keeps alive
LANE_BLOCKS: Final = 3  # blocks a lane holds; one more is visiting
DEAL_CHUNK_GAMES: Final = 8  # games per table in a deal chunk (rounded to whole deals)
MAX_CHUNK_GAMES: Final = 32  # ... when too few tables fill a unit (see cut_units)
MAX_UNIT_GAMES: Final = 256
MIN_UNIT_GAMES: Final = 8
UNITS_PER_SLOT: Final = 4  # at least this many units per game slot, when the games allow


@attrs.frozen
class WorkUnit:
    """Some tables of the schedule, each over the same range of its deals."""

    id: int
    lane: int
    tables: tuple[tuple[str, ...], ...]  # each sorted by name
    first_deals: tuple[int, ...]  # each table's first deal index
    deals: tuple[int, int]  # [start, stop): offsets added to each table's first deal

    @property
    def bots(self) -> frozenset[str]:
        return frozenset(name for table in self.tables for name in table)

    @property
    def games(self) -> int:
        return sum(len(t) for t in self.tables) * (self.deals[1] - self.deals[0])

    def groups(self, seed: int) -> Iterator[DealGroup]:
        """The unit's deal groups, table major: a table's bots play its deals in a row."""
        for table, first in zip(self.tables, self.first_deals, strict=True):
            for d in range(*self.deals):
                yield deal_group(table, first + d, seed)

    def game_keys(self) -> Iterator[tuple[str, int]]:
        """(group key, rotation) of every game, without computing seeds."""
        for table, first in zip(self.tables, self.first_deals, strict=True):
            prefix = _table_key(table) + KEY_DEAL_SEPARATOR
            for d in range(*self.deals):
                key = prefix + str(first + d)
                for index in range(len(table)):
                    yield key, index


@attrs.frozen
class UnitPlan:
    """The units of a run, in locality order, and what the schedule holds."""

    units: tuple[WorkUnit, ...]
    players: int
    deals: int  # per table
    tables: tuple[tuple[str, ...], ...]

    @property
    def total(self) -> int:
        return sum(unit.games for unit in self.units)

    def count_scheduled(self, done: set[tuple[str, int]]) -> int:
        """How many of ``done`` are games of this schedule."""
        if not done:
            return 0
        deals_of: dict[str, int] = {}
        for table in self.tables:
            key = _table_key(table)
            deals_of[key] = deals_of.get(key, 0) + self.deals
        count = 0
        for key, index in done:
            table, _, deal = key.rpartition(KEY_DEAL_SEPARATOR)
            if (deal.isdigit() and int(deal) < deals_of.get(table, 0)
                    and 0 <= index < self.players):
                count += 1
        return count


def make_units(
    bots: Sequence[str],
    *,
    players: int = 2,
    games: int,
    seed: int,
    gauntlet: str | None = None,
    keep: int = DEFAULT_KEEP,
    slots: int = 1,
) -> UnitPlan:
    """The schedule of :func:`~arena.tournament.schedule.make_schedule`, cut into
    units for ``slots`` game slots that each keep ``keep`` bot processes."""
    if isinstance(games, bool) or not isinstance(games, int) or games < 1:
        raise ValueError(f"games must be a positive integer, got {games!r}")
    tables = make_tables(bots, players=players, seed=seed, gauntlet=gauntlet)
    return cut_units(tables, deals_per_table(games, players), players=players,
                     bots=bots, keep=keep, slots=slots)


def cut_units(tables: Sequence[tuple[str, ...]], deals: int, *, players: int,
              bots: Sequence[str], keep: int = DEFAULT_KEEP, slots: int = 1) -> UnitPlan:
    block = max(1, keep // (LANE_BLOCKS + 1))
    rank = {name: i // block for i, name in enumerate(sorted(bots))}
    # Tables drawn twice happen only in sampled (multi-player) designs.
    firsts = first_deals(tables, deals) if players > 2 else [0] * len(tables)
    # One integer per table that sorts lane major, then by the visiting blocks.
    span = max(rank.values(), default=0) + 1
    lane_size = span ** (players - 1) * LANE_BLOCKS  # sort keys per lane
    if players == 2:
        pairs = [(rank[a], rank[b]) for a, b in tables]
        sort_keys = [((x // LANE_BLOCKS) * span + y) * LANE_BLOCKS + x % LANE_BLOCKS if x <= y
                     else ((y // LANE_BLOCKS) * span + x) * LANE_BLOCKS + y % LANE_BLOCKS
                     for x, y in pairs]
    else:
        sort_keys = []
        for table in tables:
            blocks = sorted({rank[n] for n in table})
            value = blocks[0] // LANE_BLOCKS
            for b in blocks[1:]:
                value = value * span + b
            sort_keys.append(value * span ** (players - len(blocks)) * LANE_BLOCKS
                             + blocks[0] % LANE_BLOCKS)
    order = sorted(range(len(tables)), key=sort_keys.__getitem__)
    sort_keys.sort()
    # Where each lane's tables end in ``order``.
    lane_ends = []
    i = 0
    while i < len(order):
        i = bisect.bisect_left(sort_keys, (sort_keys[i] // lane_size + 1) * lane_size, i)
        lane_ends.append(i)

    total = len(tables) * deals * players
    target = max(MIN_UNIT_GAMES, min(MAX_UNIT_GAMES, total // max(1, slots * UNITS_PER_SLOT)))
    # A chunk holds DEAL_CHUNK_GAMES games of each table, or up to four times as
    # many when the tables are too few to fill a unit of ``target`` games: a unit
    # costs the coordinator and a worker the same to hand over however many games
    # it holds, but the last units of a run of slow bots leave slots idle.
    chunk_games = max(DEAL_CHUNK_GAMES,
                      min(MAX_CHUNK_GAMES, target // max(1, len(tables))))
    chunk = max(1, min(deals, chunk_games // players))
    units: list[WorkUnit] = []
    lane = -1
    for start in range(0, deals, chunk):
        deal_span = (start, min(deals, start + chunk))
        per_unit = max(1, -(-target // ((deal_span[1] - deal_span[0]) * players)))
        begin = 0
        for end in lane_ends:
            lane += 1
            for j in range(begin, end, per_unit):
                picked = order[j:min(end, j + per_unit)]
                units.append(WorkUnit(len(units), lane, tuple(tables[k] for k in picked),
                                      tuple(firsts[k] for k in picked), deal_span))
            begin = end
    return UnitPlan(tuple(units), players, deals, tuple(tables))


class Dispatcher:
    """Which unit a game slot plays next: more of its lane while there is any,
    then the next lane nobody has taken, then the end of the longest lane."""

    def __init__(self, units: Sequence[WorkUnit]) -> None:
        lanes = max((u.lane for u in units), default=-1) + 1
        self._lanes: list[deque[WorkUnit]] = [deque() for _ in range(lanes)]
        for unit in units:
            self._lanes[unit.lane].append(unit)
        self._next = 0  # lanes before it have been taken
        self._at: dict[object, tuple[int, bool]] = {}  # slot -> (lane, from its end)
        self.left = len(units)

    def take(self, slot: object) -> WorkUnit | None:
        """The next unit for ``slot``, or None when every unit is out."""
        at = self._at.get(slot)
        if at is not None and self._lanes[at[0]]:
            return self._pop(*at)
        lanes = self._lanes
        while self._next < len(lanes) and not lanes[self._next]:
            self._next += 1
        if self._next < len(lanes):
            self._at[slot] = (self._next, False)
            self._next += 1
            return self._pop(self._next - 1, False)
        longest = max(range(len(lanes)), key=lambda i: len(lanes[i]), default=None)
        if longest is None or not lanes[longest]:
            self._at.pop(slot, None)
            return None
        self._at[slot] = (longest, True)
        return self._pop(longest, True)

    def _pop(self, lane: int, from_end: bool) -> WorkUnit:
        self.left -= 1
        return self._lanes[lane].pop() if from_end else self._lanes[lane].popleft()

    def give_back(self, unit: WorkUnit) -> None:
        """A unit to play again (its worker was lost): first in its lane."""
        self._lanes[unit.lane].appendleft(unit)
        self._next = min(self._next, unit.lane)
        self.left += 1

    def leave(self, slot: object) -> None:
        self._at.pop(slot, None)
