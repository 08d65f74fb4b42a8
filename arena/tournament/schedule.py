"""Tournament schedules: which tables play, in which seats, with which deals.

The unit of scheduling, storage and resumption is the *deal group*: one deal
(a seed) played by one table of K bots once per seat rotation, so every bot
holds every seat's cards once and luck of the deal cancels out.  A table
therefore plays its ``games`` rounded up to a multiple of K (K deals give K
games each; heads-up, a deal is played twice with seats swapped).  For K >= 3
the rotation-0 seating of each deal is a seeded shuffle of the table, so the
cyclic order (who acts right after whom) also varies from deal to deal.

Which tables play:

* heads-up round robin: every pair of bots.
* K players (3-8): every K-combination of bots when there are at most
  ``max_tables`` of them (default 5000).  Otherwise a seeded greedy design:
  bots are dealt out in passes (each pass a fresh shuffle of all bots, so
  table counts never differ by more than one during generation and every bot
  ends with exactly ``tables_per_bot`` tables); each free seat goes to a
  bot of the pass, drawn at random among those who have met the bots already
  at the table least often (a pair's meetings counted up to twice).  The default
  ``tables_per_bot`` is the smallest
  count that lets every pair meet once on average, ``ceil((N-1)/(K-1))``,
  rounded up so that ``N * tables_per_bot`` fills whole tables.  Measured
  balance at that default: 60-75% of pairs meet exactly once for 25-50 bots,
  82-94% for 100-1,000 bots; nearly all the rest meet 0 or 2 times, under 2%
  three times (independent shuffles would leave 37% of pairs unmet).  Raise
  ``tables_per_bot`` for more meetings per pair.
* gauntlet: one named bot G against the field; heads-up the pairs (G, X) for
  every other X; with K seats, G plus every (K-1)-combination of the others,
  or G plus a balanced sample of them chosen as above.

Seeds: everything follows from the tournament seed S.  A deal's seed depends
only on S, the table's bot names and the deal index (sha256 of the group key),
so adding bots later (late entries) leaves the deals of existing tables
unchanged and only the new tables need playing; raising ``games`` only adds
deal indices.  This holds for round robins, gauntlets and all-combination
tables; a sampled design is redrawn when the field changes.

Order: deal index major, tables minor, so a partial run has every table at
``d`` or ``d + 1`` deals.  Heads-up round-robin pairs come in circle-method
rounds (every bot once per round, bots shuffled by S), so any prefix of a
deal index gives all bots the same number of games, within one; other table
lists are shuffled by S.  ``arena run`` plays the same groups in work units
(units.py): chunks of a few deals, chunk major, and within a chunk the tables
in an order that lets a worker keep its bots' processes.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import random
from collections.abc import Iterator, Sequence
from typing import Final

import attrs

from arena.engine.cards import MAX_PLAYERS, MIN_PLAYERS

MAX_FULL_TABLES: Final = 5000
# Characters that separate the parts of a group key.  Names are percent-escaped
# in keys, so that a key names exactly one (table, deal) whatever the names hold.
KEY_TABLE_SEPARATOR: Final = "|"
KEY_DEAL_SEPARATOR: Final = "#"


@attrs.frozen
class ScheduledGame:
    """One game of a deal group: the seating for one rotation of the deal."""

    group_key: str
    index: int  # rotation within the group, 0..K-1
    seats: tuple[str, ...]  # bot name at each seat
    seed: int  # the deal seed, shared by every game of the group


@attrs.frozen
class DealGroup:
    """One deal played by one table in every seat rotation."""

    key: str  # stable: "<sorted, %-escaped names joined by |>#<deal>", see group_key
    table: tuple[str, ...]  # the table's bots, sorted by name
    deal: int
    seed: int
    order: tuple[str, ...]  # seating of rotation 0; rotation r shifts it by r seats

    @property
    def seatings(self) -> tuple[tuple[str, ...], ...]:
        """The seating of each rotation: every bot sits in every seat once."""
        order = self.order
        return tuple(order[r:] + order[:r] for r in range(len(order)))

    @property
    def games(self) -> tuple[ScheduledGame, ...]:
        # Built on demand: a 1,000-bot round robin has half a million groups.
        return tuple(
            ScheduledGame(self.key, index, seats, self.seed)
            for index, seats in enumerate(self.seatings)
        )


def group_key(table: Sequence[str], deal: int) -> str:
    """The stable key of a deal group: the table's sorted names and the deal index.

    For example ``"alice|bob#3"``; a ``%``, ``|`` or ``#`` in a name is
    written ``%25``, ``%7C`` or ``%23``.
    """
    return _table_key(sorted(table)) + KEY_DEAL_SEPARATOR + str(deal)


def _table_key(sorted_table: Sequence[str]) -> str:
    return KEY_TABLE_SEPARATOR.join(
        name.replace("%", "%25").replace("|", "%7C").replace("#", "%23") for name in sorted_table
    )


def deal_seed(seed: int, table: Sequence[str], deal: int) -> int:
    """A 63-bit deal seed from the tournament seed, the table's names and the deal index.

    Independent of every other bot in the tournament, so late entries do not
    change the deals of tables that have already played.
    """
    return _key_seed(seed, group_key(table, deal))


def _key_seed(seed: int, key: str) -> int:
    digest = hashlib.sha256(f"{seed}/{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def deals_per_table(games: int, players: int) -> int:
    """Deals a table plays: ``games`` rounded up to whole rotations, divided by the seats."""
    return -(-games // players)


def make_schedule(
    bots: Sequence[str],
    *,
    players: int = 2,
    games: int,
    seed: int,
    gauntlet: str | None = None,
    max_tables: int = MAX_FULL_TABLES,
    tables_per_bot: int | None = None,
) -> list[DealGroup]:
    """The whole schedule as a list; see :func:`iter_schedule`."""
    return list(
        iter_schedule(
            bots,
            players=players,
            games=games,
            seed=seed,
            gauntlet=gauntlet,
            max_tables=max_tables,
            tables_per_bot=tables_per_bot,
        )
    )


def iter_schedule(
    bots: Sequence[str],
    *,
    players: int = 2,
    games: int,
    seed: int,
    gauntlet: str | None = None,
    max_tables: int = MAX_FULL_TABLES,
    tables_per_bot: int | None = None,
) -> Iterator[DealGroup]:
    """Deal groups in play order (deal index major, tables minor).

    ``games`` is the number of games per table, rounded up to a multiple of
    ``players``.  ``max_tables`` and ``tables_per_bot`` only matter for
    multi-player tables (see the module docstring).  Arguments are checked
    at once, not when iteration starts.
    """
    if isinstance(games, bool) or not isinstance(games, int) or games < 1:
        raise ValueError(f"games must be a positive integer, got {games!r}")
    tables = make_tables(
        bots,
        players=players,
        seed=seed,
        gauntlet=gauntlet,
        max_tables=max_tables,
        tables_per_bot=tables_per_bot,
    )
    return _deal_groups(tables, deals_per_table(games, players), seed)


def make_tables(
    bots: Sequence[str],
    *,
    players: int = 2,
    seed: int,
    gauntlet: str | None = None,
    max_tables: int = MAX_FULL_TABLES,
    tables_per_bot: int | None = None,
) -> list[tuple[str, ...]]:
    """The tables that play (each sorted by name), in play order within a deal index.

    A table can appear more than once only in a sampled design.
    """
    names = _check_bots(bots)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"seed must be an integer, got {seed!r}")
    if isinstance(players, bool) or not isinstance(players, int):
        raise ValueError(f"players must be an integer, got {players!r}")
    if not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise ValueError(f"players must be {MIN_PLAYERS}-{MAX_PLAYERS}, got {players}")
    if len(names) < players:
        raise ValueError(f"{players}-player tables need at least {players} bots, got {len(names)}")
    if gauntlet is not None and gauntlet not in names:
        raise ValueError(f"gauntlet bot {gauntlet!r} is not among the bots")
    if max_tables < 1:
        raise ValueError(f"max_tables must be at least 1, got {max_tables}")
    if tables_per_bot is not None and tables_per_bot < 1:
        raise ValueError(f"tables_per_bot must be at least 1, got {tables_per_bot}")

    rng = random.Random(f"arena-schedule/{seed}")
    if gauntlet is not None:
        others = sorted(name for name in names if name != gauntlet)
        if players == 2:
            tables = [tuple(sorted((gauntlet, other))) for other in others]
            rng.shuffle(tables)
            return tables
        groups = _choose_tables(others, players - 1, rng, max_tables, tables_per_bot)
        return [tuple(sorted((gauntlet, *group))) for group in groups]
    if players == 2:
        return list(_circle_pairs(sorted(names), rng))
    return _choose_tables(sorted(names), players, rng, max_tables, tables_per_bot)


def _check_bots(bots: Sequence[str]) -> list[str]:
    if isinstance(bots, str):
        raise ValueError("bots must be a sequence of names, not one string")
    names = list(bots)
    seen: set[str] = set()
    for name in names:
        if not isinstance(name, str) or not name:
            raise ValueError(f"bot names must be non-empty strings, got {name!r}")
        if name in seen:
            raise ValueError(f"bot name {name!r} appears more than once")
        seen.add(name)
    return names


def _circle_pairs(names: list[str], rng: random.Random) -> Iterator[tuple[str, ...]]:
    """Every pair once, in rounds where each bot plays once (the circle method)."""
    ring: list[str | None] = list(names)
    rng.shuffle(ring)
    if len(ring) % 2:
        ring.append(None)  # the bye
    n = len(ring)
    fixed, rest = ring[0], ring[1:]
    for r in range(n - 1):
        lineup = [fixed, *rest[r:], *rest[:r]]
        for i in range(n // 2):
            a, b = lineup[i], lineup[n - 1 - i]
            if a is not None and b is not None:
                yield (a, b) if a < b else (b, a)


def _choose_tables(
    pool: list[str],
    size: int,
    rng: random.Random,
    max_tables: int,
    tables_per_bot: int | None,
) -> list[tuple[str, ...]]:
    """All ``size``-combinations of ``pool`` if few enough, else a balanced sample."""
    if math.comb(len(pool), size) <= max_tables:
        tables = list(itertools.combinations(pool, size))
        rng.shuffle(tables)
        return tables
    per_bot = tables_per_bot or -(-(len(pool) - 1) // (size - 1))
    # Every table has `size` seats, so len(pool) * per_bot must be a multiple of size.
    step = size // math.gcd(len(pool), size)
    per_bot = -(-per_bot // step) * step
    return _balanced_sample(pool, size, per_bot, rng)


def _balanced_sample(
    pool: list[str], size: int, per_bot: int, rng: random.Random
) -> list[tuple[str, ...]]:
    # Sets of bots are Python ints used as bit sets (bit i: pool[i]), so finding
    # the bots who met nobody at the table is a few machine-word operations.
    n = len(pool)
    bits = [1 << i for i in range(n)]
    everyone = (1 << n) - 1
    met = [0] * n  # bit c of met[b]: b and c met at least once
    met_twice = [0] * n  # ... at least twice
    unmet_by = [everyone & ~bits[b] for b in range(n)]  # bots b has not met
    pending = 0  # the current pass: bots not yet seated in it
    tables: list[list[int]] = []
    random_place = rng.random
    for _ in range(n * per_bot // size):
        table: list[int] = []
        seated = 0
        free = pending  # bots of the pass not at this table
        while len(table) < size:
            if not free:
                pending = everyone  # a new pass (maybe mid-table)
                free = everyone & ~seated
            unmet = free
            for member in table:
                unmet &= unmet_by[member]
            if not unmet:
                unmet = _least_met(free, table, met, met_twice)
            # The first of them at or after a random place, wrapping.
            start = int(random_place() * n)
            high = unmet >> start
            pick = (start + (high & -high).bit_length() - 1 if high
                    else (unmet & -unmet).bit_length() - 1)
            table.append(pick)
            bit = bits[pick]
            seated |= bit
            free &= ~bit
            pending &= ~bit
        for a, b in itertools.combinations(table, 2):
            if met[a] & bits[b]:
                met_twice[a] |= bits[b]
                met_twice[b] |= bits[a]
            else:
                met[a] |= bits[b]
                met[b] |= bits[a]
                unmet_by[a] &= ~bits[b]
                unmet_by[b] &= ~bits[a]
        tables.append(table)
    chosen = [tuple(sorted(pool[i] for i in table)) for table in tables]
    rng.shuffle(chosen)
    return chosen


def _least_met(free: int, table: list[int], met: list[int], met_twice: list[int]) -> int:
    """The bots of ``free`` with the fewest meetings with the table (each pair
    counted up to twice), by bit-sliced addition over all of them at once."""
    total = [0, 0, 0, 0]  # bit k of each bot's count (up to 2 * 7 = 14)
    for member in table:
        low, high = met[member] & ~met_twice[member], met_twice[member]  # 1 or 2
        carry = total[0] & low
        total[0] ^= low
        digit = total[1] ^ high
        carry, total[1] = (total[1] & high) | (digit & carry), digit ^ carry
        carry, total[2] = total[2] & carry, total[2] ^ carry
        total[3] |= carry
    for count in range(1, 16):
        found = free
        for k in range(4):
            found &= total[k] if count >> k & 1 else ~total[k]
        if found:
            return found
    return free  # not reached: a count is at most 14


def first_deals(tables: Sequence[tuple[str, ...]], deals: int) -> list[int]:
    """The first deal index of each table: a table drawn twice by a sampled design
    takes the next block of deal indices, so keys stay unique and its deals differ."""
    first: list[int] = []
    occurrences: dict[tuple[str, ...], int] = {}
    for table in tables:
        count = occurrences.get(table, 0)
        occurrences[table] = count + 1
        first.append(count * deals)
    return first


def deal_group(table: tuple[str, ...], deal: int, seed: int) -> DealGroup:
    """The deal group of a (sorted) table and deal index under tournament seed ``seed``."""
    key = _table_key(table) + KEY_DEAL_SEPARATOR + str(deal)
    group_seed = _key_seed(seed, key)
    return DealGroup(key, table, deal, group_seed, _first_seating(table, group_seed))


def _deal_groups(tables: list[tuple[str, ...]], deals: int, seed: int) -> Iterator[DealGroup]:
    first_deal = first_deals(tables, deals)
    for d in range(deals):
        for table, first in zip(tables, first_deal, strict=True):
            yield deal_group(table, first + d, seed)


def _first_seating(table: tuple[str, ...], seed: int) -> tuple[str, ...]:
    if len(table) == 2:
        # Which bot takes seat 0 first, so a run cut after rotation 0 is not
        # biased towards alphabetically early names.
        return table if seed & 1 == 0 else (table[1], table[0])
    order = list(table)
    random.Random(seed).shuffle(order)
    return tuple(order)
