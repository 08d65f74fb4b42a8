"""Elo ratings fitted by maximum likelihood on all results at once.

Model: Bradley-Terry on the Elo scale, as Ordo and BayesElo use: bot i beats
bot j with probability ``1 / (1 + 10 ** ((r_j - r_i) / 400))``.  A game of K
players counts as its K(K-1)/2 pairwise results: the better place wins and a
shared place is a draw, worth half a win to each.  Results are summed per
pair, then the ratings that maximise the likelihood of every pair at once
are found by Newton's method (full Hessian, backtracking line search; the
log-likelihood is concave), so the order of the games does not matter.
The mean rating is 1500, or an anchor bot has exactly its given rating.
The +- is a 95% confidence interval under that constraint (so it is
relative to the mean, or to the anchor); LOS, the likelihood of superiority
over the next bot down, is ``Phi(d / sd(d))`` for the difference d, using
the covariance of the two.  The model's covariance is the inverse of the
observed Fisher information H, which treats every pairwise result as
independent.  They are not: the pairwise results of one multi-player game
are not (a 4-player game's winner wins three of them), and the games of one
deal group share a deal (and bots are not transitive), at every table size,
as fastchess's pentanomial model says of paired openings.  So each deal group
(the ``group`` of a game line; a multi-player game without one alone) is a
cluster, and the covariance is the sandwich H^-1 M H^-1, M the sum over
clusters of s s^T for each cluster's score vector s (its share of the
gradient) at the fit; a lone heads-up game keeps its model variance in M.
The clusters' s s^T are scaled by G / (G - h), for G clusters that take up h
of the ratings' degrees of freedom (n - 1 if every game is clustered), as the
fit absorbs part of their variation.  No variance is ever reported below the
model's: with all draws the sandwich is zero, with few clusters it can be
narrow by chance, and with G <= h there is nothing to measure it from (then
the model's covariance is used, and a note says so).  bench/ratings.py:
94-95% of true ratings fall inside the 95% intervals at 100 bots, heads-up
and at 4 and 6 players (88% and 82% with the model-based covariance), and
96-97% for 8 bots with 20-80 games.
Cost: one pass over the games, then about five Newton steps of a dense
O(n^3) Cholesky factorisation in pure Python for n rated bots: 100,000 games
among 100 bots fit in about 0.5 s, 300 bots in 1.5 s, 1,000 bots in 30 s.
Multi-player games add a second pass over the games and one more O(n^3)
product: 100,000 4-player games among 100 bots take 1.2 s instead of 0.7 s,
among 300 bots 3.3 s instead of 1.7 s, among 1,000 bots 63 s instead of 32 s.

Not every result set has finite ratings, and we do not invent any:

* Bots that never played each other, even through third parties, fall into
  separate groups (connected components).  Each group is rated on its own,
  with its own mean of 1500 (the anchor's group uses the anchor); the table
  lists the largest group first and says the scales are not comparable.
* Within a group the maximum likelihood exists only if every split of the
  bots into two sides has each side scoring against the other (Zermelo's
  condition).  A bot that won every game fails it, but so does a pair that
  split their games with each other and beat everyone else.  In the spirit
  of Ordo's group-connection analysis we find the strongly connected
  components of the graph "a scored at least half a point against b", rate
  the largest of them, and list every other bot with no rating (``elo is
  None``) and a note saying why: "won every game", "scored 100% against the
  rated bots", and so on; those above the rated bots come first, those
  below last.  Their games against the rated bots are left out of the fit,
  which is what the likelihood does in the limit (they carry no
  information about the rated bots' differences).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final

import attrs

from arena.protocol import codec

DEFAULT_MEAN: Final = 1500.0
ELO_PER_NAT: Final = 400.0 / math.log(10.0)  # Elo points per unit of log-odds
Z95: Final = 1.959963984540054  # two-sided 95% quantile of the standard normal
FAULT_KINDS: Final = codec.FAULTS

# Newton stops when no rating moves by more than this (log-odds; ~4e-8 Elo).
_STEP_TOLERANCE: Final = 1e-10
_MAX_NEWTON_STEPS: Final = 200


@attrs.frozen
class Fault:
    kind: str
    detail: str = ""


@attrs.frozen
class GameResult:
    """The parts of a ``games.jsonl`` record that ratings and reports use."""

    seats: tuple[str, ...]
    placements: tuple[int, ...] | None  # None: the game has no result and is not rated
    faults: tuple[Fault | None, ...]
    # The deal group: games that share a deal share their luck, so their
    # results are one cluster for the intervals.  None: a cluster of its own.
    cluster: str | None = None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> GameResult:
        """Read a game record; extra keys are ignored, a malformed one raises ValueError."""
        seats = data.get("seats")
        if not isinstance(seats, Sequence) or isinstance(seats, str) or len(seats) < 2:
            raise ValueError(f"game record needs 'seats', a list of 2+ names: {seats!r}")
        if not all(isinstance(name, str) for name in seats) or len(set(seats)) != len(seats):
            raise ValueError(f"game record 'seats' must be distinct names: {seats!r}")
        placements = data.get("placements")
        if placements is not None:
            if (
                not isinstance(placements, Sequence)
                or len(placements) != len(seats)
                or not all(
                    isinstance(p, int) and not isinstance(p, bool) and p >= 1 for p in placements
                )
            ):
                raise ValueError(
                    f"game record 'placements' must be one place (1, 2, ...) per seat: "
                    f"{placements!r}"
                )
            placements = tuple(placements)
        raw_faults = data.get("faults")
        if raw_faults is None:
            raw_faults = [None] * len(seats)
        if not isinstance(raw_faults, Sequence) or len(raw_faults) != len(seats):
            raise ValueError(f"game record 'faults' must have one entry per seat: {raw_faults!r}")
        faults: list[Fault | None] = []
        for fault in raw_faults:
            if fault is None:
                faults.append(None)
            elif isinstance(fault, Mapping):
                faults.append(
                    Fault(str(fault.get("kind", "unknown")), str(fault.get("detail") or ""))
                )
            else:
                raise ValueError(f"a fault must be null or an object: {fault!r}")
        group = data.get("group")
        cluster = group if isinstance(group, str) else None
        return cls(tuple(seats), placements, tuple(faults), cluster)


def as_game_results(results: Iterable[GameResult | Mapping[str, Any]]) -> list[GameResult]:
    """Game results from records (dicts) or ``GameResult`` values, in order."""
    return [r if isinstance(r, GameResult) else GameResult.from_json(r) for r in results]


# (a, b) with a < b -> (points a scored against b, pairwise results between them)
PairScores = dict[tuple[str, str], tuple[float, int]]


def pairwise_scores(results: Iterable[GameResult | Mapping[str, Any]]) -> PairScores:
    """Sum every rated game into per-pair scores (multi-player games pair every two seats)."""
    points: dict[tuple[str, str], list[float]] = {}
    for game in as_game_results(results):
        places = game.placements
        if places is None:
            continue
        seats = game.seats
        for i in range(len(seats)):
            for j in range(i + 1, len(seats)):
                a, b, place_a, place_b = seats[i], seats[j], places[i], places[j]
                if b < a:
                    a, b, place_a, place_b = b, a, place_b, place_a
                record = points.get((a, b))
                if record is None:
                    record = points[(a, b)] = [0.0, 0]
                record[0] += 1.0 if place_a < place_b else 0.5 if place_a == place_b else 0.0
                record[1] += 1
    return {pair: (score, int(count)) for pair, (score, count) in points.items()}


def pair_score(pairs: PairScores, bot: str, other: str) -> tuple[float, int]:
    """The points ``bot`` scored against ``other`` and their pairwise results."""
    if bot < other:
        return pairs.get((bot, other), (0.0, 0))
    theirs, count = pairs.get((other, bot), (0.0, 0))
    return count - theirs, count


def expected_score(elo: float, opponent_elo: float) -> float:
    """The probability that a bot rated ``elo`` beats one rated ``opponent_elo``."""
    return _sigmoid((elo - opponent_elo) / ELO_PER_NAT)


def log_likelihood(
    pairs: Mapping[tuple[str, str], tuple[float, int]], elo: Mapping[str, float]
) -> float:
    """The log-likelihood of per-pair scores under the given ratings (natural log)."""
    total = 0.0
    for (a, b), (score, count) in pairs.items():
        x = (elo[a] - elo[b]) / ELO_PER_NAT
        total += score * _log_sigmoid(x) + (count - score) * _log_sigmoid(-x)
    return total


@attrs.frozen
class Rating:
    bot: str
    elo: float | None  # None: no finite rating (see note) or no games
    ci95: float | None  # half-width of the 95% confidence interval
    games: int  # games with a result
    score: float | None  # pairwise points / pairwise results; None without games
    wins: int  # games placed first alone
    draws: int  # games placed first with others
    losses: int  # every other game
    los_next: float | None  # likelihood of superiority over the next rated bot below
    note: str = ""
    group: int | None = None  # 1 = the largest set of bots linked by games; None: no games


@attrs.frozen
class RatingTable:
    ratings: tuple[Rating, ...]  # best first within each group, largest group first
    notes: tuple[str, ...] = ()
    anchor: tuple[str, float] | None = None

    def by_bot(self, bot: str) -> Rating:
        for rating in self.ratings:
            if rating.bot == bot:
                return rating
        raise KeyError(bot)


def fit_ratings(
    results: Iterable[GameResult | Mapping[str, Any]],
    *,
    anchor: tuple[str, float] | None = None,
    bots: Iterable[str] = (),
    robust: bool = True,
) -> RatingTable:
    """Rate every bot in ``results`` (and in ``bots``, which may have no games yet).

    ``anchor=(bot, elo)`` fixes that bot's rating instead of the mean of 1500.
    ``robust=False`` gives the model-based intervals (the inverse information
    alone), which treat the pairwise results of a multi-player game as
    independent and so are too narrow; it is there for comparison.  Heads-up
    results get the same intervals either way.
    """
    games = as_game_results(results)
    pairs = pairwise_scores(games)
    roster = sorted(set(bots) | {name for game in games for name in game.seats})
    if anchor is not None and anchor[0] not in roster:
        raise ValueError(f"anchor bot {anchor[0]!r} has no games and is not among the bots")
    unrated = _unrated_rows(roster, games, pairs)

    notes: list[str] = []
    rows: list[Rating] = []
    components = _components(roster, pairs)
    # Clusters of pairwise results that are not independent, by group (all of
    # a cluster's seats are in one group): the games of a deal group, and any
    # other multi-player game alone.  A lone heads-up game needs none of this.
    clustered: list[list[list[GameResult]]] = [[] for _ in components]
    if robust:
        group_of = {bot: k for k, component in enumerate(components) for bot in component}
        deal_groups: dict[tuple[int, str], list[GameResult]] = {}
        for game in games:
            if game.placements is None:
                continue
            k = group_of[game.seats[0]]
            if game.cluster is None:
                if len(game.seats) > 2:
                    clustered[k].append([game])
                continue
            cluster = deal_groups.get((k, game.cluster))
            if cluster is None:
                cluster = deal_groups[(k, game.cluster)] = []
                clustered[k].append(cluster)
            cluster.append(game)
    anchor_used = False
    for number, component in enumerate(components, start=1):
        group_anchor = anchor if anchor is not None and anchor[0] in component else None
        group_rows, used, degenerate = _rate_group(
            component, pairs, group_anchor, number, unrated, clustered[number - 1]
        )
        anchor_used = anchor_used or used
        rows.extend(group_rows)
        left_out = sum(1 for row in group_rows if row.elo is None)
        where = f"in group {number}, " if len(components) > 1 else ""
        if degenerate:
            notes.append(
                f"{where}the ± and LOS treat every pairwise result as independent: there are "
                f"too few deal groups and multi-player games (no more than the ratings fitted "
                f"from them) to measure how much their results vary together."
            )
        if left_out == len(component):
            notes.append(
                f"{where}none of the {left_out} bots has a finite rating: every result "
                f"between them is one-sided, with no upsets or draws linking them both ways."
            )
        elif left_out:
            one = left_out == 1
            notes.append(
                f"{where}{left_out} of {len(component)} bots {'has' if one else 'have'} no "
                f"finite rating: {'it' if one else 'they'} never lost (or never won) against "
                f"the rated bots, directly or through other unrated bots, so the likelihood "
                f"has no maximum; {'it is' if one else 'they are'} listed without a rating "
                f"and the rest are rated without {'it' if one else 'them'}."
            )
    idle = [bot for bot in roster if unrated[bot].games == 0]
    rows.extend(attrs.evolve(unrated[bot], note="no games") for bot in idle)

    notes = [note[0].upper() + note[1:] for note in notes]
    if len(components) > 1:
        sizes = ", ".join(str(len(c)) for c in components)
        notes.insert(
            0,
            f"The results fall into {len(components)} groups of bots that never played "
            f"each other, even indirectly (sizes {sizes}); each group is rated on its own "
            f"scale, so ratings are comparable only within a group.",
        )
    if anchor is not None and not anchor_used:
        notes.append(
            f"The anchor {anchor[0]} has no finite rating, so the mean is {DEFAULT_MEAN:g} instead."
        )
    if idle:
        notes.append(
            "1 bot has no games with a result yet." if len(idle) == 1
            else f"{len(idle)} bots have no games with a result yet."
        )
    return RatingTable(tuple(rows), tuple(notes), anchor)


def _unrated_rows(
    roster: list[str], games: list[GameResult], pairs: PairScores
) -> dict[str, Rating]:
    """Every bot's counts, with no rating yet."""
    points = dict.fromkeys(roster, 0.0)
    compared = dict.fromkeys(roster, 0)
    for (a, b), (score, count) in pairs.items():
        points[a] += score
        points[b] += count - score
        compared[a] += count
        compared[b] += count
    # wins, draws, losses, games; a "win" is first place alone, a "draw" a shared first place
    tally = {bot: [0, 0, 0, 0] for bot in roster}
    for game in games:
        places = game.placements
        if places is None:
            continue
        first = min(places)
        shared = places.count(first) > 1
        for bot, place in zip(game.seats, places, strict=True):
            counts = tally[bot]
            counts[2 if place != first else 1 if shared else 0] += 1
            counts[3] += 1
    return {
        bot: Rating(
            bot=bot,
            elo=None,
            ci95=None,
            games=tally[bot][3],
            score=points[bot] / compared[bot] if compared[bot] else None,
            wins=tally[bot][0],
            draws=tally[bot][1],
            losses=tally[bot][2],
            los_next=None,
        )
        for bot in roster
    }


def _components(roster: list[str], pairs: PairScores) -> list[list[str]]:
    """Sets of bots linked by games, largest first; bots without games are left out."""
    neighbours: dict[str, list[str]] = {}
    for (a, b), (_, count) in pairs.items():
        if count:
            neighbours.setdefault(a, []).append(b)
            neighbours.setdefault(b, []).append(a)
    seen: set[str] = set()
    components: list[list[str]] = []
    for start in roster:
        if start in seen or start not in neighbours:
            continue
        seen.add(start)
        stack, members = [start], []
        while stack:
            bot = stack.pop()
            members.append(bot)
            for other in neighbours[bot]:
                if other not in seen:
                    seen.add(other)
                    stack.append(other)
        components.append(sorted(members))
    components.sort(key=lambda c: (-len(c), c[0]))
    return components


def _rate_group(
    group: list[str],
    pairs: PairScores,
    anchor: tuple[str, float] | None,
    number: int,
    unrated: dict[str, Rating],
    clustered: Sequence[Sequence[GameResult]] = (),
) -> tuple[list[Rating], bool, bool]:
    """Ratings of one connected group, best first, whether the anchor was used, and
    whether the clusters were too few to measure (model-based intervals instead)."""
    members = set(group)
    group_pairs = {p: v for p, v in pairs.items() if p[0] in members}
    beats: dict[str, set[str]] = {bot: set() for bot in group}  # a -> b: a scored against b
    for (a, b), (score, count) in group_pairs.items():
        if score > 0:
            beats[a].add(b)
        if score < count:
            beats[b].add(a)
    rated = _largest_strong_component(group, beats, group_pairs)
    rated_rows: list[Rating] = []
    anchor_used = degenerate = False
    if len(rated) >= 2:
        elos, ci95, los, degenerate = _fit(sorted(rated), group_pairs, anchor, clustered)
        anchor_used = anchor is not None and anchor[0] in rated
        order = sorted(rated, key=lambda bot: (-elos[bot], bot))
        rated_rows = [
            attrs.evolve(
                unrated[bot],
                elo=elos[bot],
                ci95=ci95[bot],
                los_next=los(bot, order[k + 1]) if k + 1 < len(order) else None,
                group=number,
            )
            for k, bot in enumerate(order)
        ]
    else:
        rated = set()

    # Unrated bots above the rated ones (they reach them along "scored against"
    # edges), below them, or neither; each list by score.
    above = _reaching(rated, beats, reverse=True) - rated
    below = _reaching(rated, beats, reverse=False) - rated
    left_out = {
        bot: attrs.evolve(
            unrated[bot], note=_why_unrated(unrated[bot], rated, group_pairs), group=number
        )
        for bot in group
        if bot not in rated
    }

    def by_score(bots: Iterable[str]) -> list[Rating]:
        return sorted((left_out[b] for b in bots), key=lambda r: (-(r.score or 0.0), r.bot))

    rows = by_score(above) + rated_rows + by_score(below)
    rows += by_score(b for b in left_out if b not in above and b not in below)
    return rows, anchor_used, degenerate


def _why_unrated(rating: Rating, rated: set[str], pairs: PairScores) -> str:
    if rating.score == 1.0:
        return "won every game"
    if rating.score == 0.0:
        return "lost every game"
    if not rated:
        return "no finite rating: every result in its group is one-sided"
    scored = played = 0.0
    for (a, b), (score, count) in pairs.items():
        if a == rating.bot and b in rated:
            scored, played = scored + score, played + count
        elif b == rating.bot and a in rated:
            scored, played = scored + count - score, played + count
    if played and scored == played:
        return "no finite rating: scored 100% against the rated bots"
    if played and scored == 0:
        return "no finite rating: scored 0% against the rated bots"
    return "no finite rating: linked to the rated bots only through unrated bots"


def _largest_strong_component(
    group: list[str], beats: dict[str, set[str]], pairs: PairScores
) -> set[str]:
    """The largest set of bots each of which scored against every other, directly or not.

    Ties go to the set with more results among its bots, then to the first name.
    """
    components = _strong_components(group, beats)
    component_of = {bot: k for k, component in enumerate(components) for bot in component}
    inside = [0] * len(components)
    for (a, b), (_, count) in pairs.items():
        if component_of[a] == component_of[b]:
            inside[component_of[a]] += count
    best = min(
        range(len(components)),
        key=lambda k: (-len(components[k]), -inside[k], min(components[k])),
    )
    return components[best]


def _strong_components(nodes: list[str], edges: dict[str, set[str]]) -> list[set[str]]:
    """Kosaraju's algorithm, iteratively (no recursion limit for 1,000 bots)."""
    finished: list[str] = []
    seen: set[str] = set()
    for start in nodes:
        if start in seen:
            continue
        seen.add(start)
        stack = [(start, iter(edges[start]))]
        while stack:
            node, children = stack[-1]
            for child in children:
                if child not in seen:
                    seen.add(child)
                    stack.append((child, iter(edges[child])))
                    break
            else:
                stack.pop()
                finished.append(node)
    reverse: dict[str, set[str]] = {node: set() for node in nodes}
    for node in nodes:
        for child in edges[node]:
            reverse[child].add(node)
    assigned: set[str] = set()
    components: list[set[str]] = []
    for start in reversed(finished):
        if start in assigned:
            continue
        assigned.add(start)
        component, stack2 = {start}, [start]
        while stack2:
            node = stack2.pop()
            for parent in reverse[node]:
                if parent not in assigned:
                    assigned.add(parent)
                    component.add(parent)
                    stack2.append(parent)
        components.append(component)
    return components


def _reaching(targets: set[str], beats: dict[str, set[str]], *, reverse: bool) -> set[str]:
    """Bots reachable from ``targets`` along "scored against" edges (or against them)."""
    if reverse:
        edges: dict[str, set[str]] = {bot: set() for bot in beats}
        for a, bs in beats.items():
            for b in bs:
                edges[b].add(a)
    else:
        edges = beats
    reached, stack = set(targets), list(targets)
    while stack:
        for other in edges[stack.pop()]:
            if other not in reached:
                reached.add(other)
                stack.append(other)
    return reached


def _fit(
    bots: list[str],
    pairs: PairScores,
    anchor: tuple[str, float] | None,
    clustered: Sequence[Sequence[GameResult]] = (),
) -> tuple[dict[str, float], dict[str, float], Callable[[str, str], float], bool]:
    """Maximum-likelihood Elo, 95% half-widths, LOS(a, b) = P(a stronger than b), and
    whether the clusters were too few to measure.

    ``bots`` must satisfy Zermelo's condition (one strongly connected set).
    ``clustered`` are the clusters of games among them (other seats are
    ignored), whose score vectors make the covariance cluster-robust.  No
    variance is ever below the model-based one (every pairwise result
    independent): with few clusters the sandwich can come out narrower by
    chance, and with all draws it is zero.
    """
    index = {bot: k for k, bot in enumerate(bots)}
    n = len(bots)
    data = [
        (index[a], index[b], score, float(count))
        for (a, b), (score, count) in pairs.items()
        if a in index and b in index and count
    ]
    # One rating is held at 0 (the anchor, if it is here) because only
    # differences are identified; the rest are fitted relative to it.
    ref = index[anchor[0]] if anchor is not None and anchor[0] in index else 0
    free = [k for k in range(n) if k != ref]
    # Start from each bot's log-odds score, which has the right order and
    # roughly the right spread; it saves about two Newton steps over zeros.
    points, compared = [0.0] * n, [0.0] * n
    for i, j, score, count in data:
        points[i] += score
        points[j] += count - score
        compared[i] += count
        compared[j] += count
    theta = [math.log(p / (c - p)) for p, c in zip(points, compared, strict=True)]
    theta = [t - theta[ref] for t in theta]
    ll = _log_likelihood(theta, data)
    low: list[list[float]] = []
    for _ in range(_MAX_NEWTON_STEPS):
        grad, info = _gradient_and_information(theta, data, n)
        low = _cholesky([[info[i][j] for j in free] for i in free])
        step_free = _cholesky_solve(low, [grad[i] for i in free])
        step = [0.0] * n
        for k, i in enumerate(free):
            step[i] = step_free[k]
        size = max(abs(s) for s in step)
        if size < _STEP_TOLERANCE:
            theta = [t + s for t, s in zip(theta, step, strict=True)]
            break
        scale = 1.0
        while True:  # backtrack until the likelihood does not fall
            trial = [t + scale * s for t, s in zip(theta, step, strict=True)]
            trial_ll = _log_likelihood(trial, data)
            if trial_ll >= ll - 1e-12 * (1.0 + abs(ll)) or scale < 1e-12:
                break
            scale *= 0.5
        theta, ll = trial, trial_ll
    else:  # pragma: no cover - the likelihood is concave and Newton converges
        raise ArithmeticError("rating fit did not converge")

    raw = [t * ELO_PER_NAT for t in theta]
    if anchor is not None and anchor[0] in index:
        anchored, shift = True, anchor[1] - raw[ref]
    else:
        anchored, shift = False, DEFAULT_MEAN - sum(raw) / n
    elo = {bot: raw[k] + shift for bot, k in index.items()}

    # Covariance of the free ratings (log-odds^2) = inverse information = L^-T L^-1.
    # Column k of L^-1 is stored from its diagonal down, so entry (i, j) of the
    # covariance, i <= j, is the dot product of column i from row j on with column j.
    columns = _lower_inverse_columns(low)
    position = {bot_index: k for k, bot_index in enumerate(free)}
    estimates = [_model_covariance(columns)]
    degenerate = False
    if clustered:
        outer, h_clusters, clusters = _cluster_scores(clustered, index, position, theta, data)
        if clusters:
            robust = _sandwich(columns, outer, h_clusters, clusters)
            degenerate = robust is None
            if robust is not None:
                estimates.append(robust)

    def cov(estimate: Covariance, a: int, b: int) -> float:  # the reference fixed at 0
        if a == ref or b == ref:
            return 0.0
        return estimate[2](position[a], position[b])

    def variances(estimate: Covariance) -> list[float]:
        var_free, cov_row_sums, _ = estimate
        if anchored:
            return [var_free[position[k]] if k != ref else 0.0 for k in range(n)]
        # Centre on the mean: the variance of r_i - mean(r), from the covariance
        # with the reference fixed (the ratings' differences do not depend on it).
        total = sum(cov_row_sums) / (n * n)
        return [
            total if k == ref
            else var_free[position[k]] - 2.0 * cov_row_sums[position[k]] / n + total
            for k in range(n)
        ]

    floor = [max(column) for column in zip(*map(variances, estimates), strict=True)]
    scale2 = ELO_PER_NAT * ELO_PER_NAT
    ci95 = {bot: Z95 * math.sqrt(max(floor[k], 0.0) * scale2) for bot, k in index.items()}

    def los(better: str, worse: str) -> float:
        a, b = index[better], index[worse]
        var = max(  # of the difference; anchoring-free
            cov(e, a, a) + cov(e, b, b) - 2.0 * cov(e, a, b) for e in estimates
        )
        diff = theta[a] - theta[b]
        if var <= 0.0:  # pragma: no cover - the information matrix is positive definite
            return 0.5 if diff == 0 else float(diff > 0)
        return 0.5 * (1.0 + math.erf(diff / math.sqrt(2.0 * var)))

    return elo, ci95, los, degenerate


# Variances, row sums and entries (i, j) of a covariance of the free ratings.
Covariance = tuple[list[float], list[float], Callable[[int, int], float]]


def _model_covariance(columns: list[list[float]]) -> Covariance:
    """The inverse information L^-T L^-1, from the columns of L^-1."""
    m = len(columns)
    var_free = [sum(x * x for x in col) for col in columns]
    row_sum_l = [0.0] * m  # L^-1 times the ones vector
    for k, col in enumerate(columns):
        for offset, x in enumerate(col):
            row_sum_l[k + offset] += x
    cov_row_sums = [sum(map(operator.mul, col, row_sum_l[k:])) for k, col in enumerate(columns)]

    def cov_free(i: int, j: int) -> float:
        if i > j:
            i, j = j, i
        return sum(map(operator.mul, columns[i][j - i :], columns[j]))

    return var_free, cov_row_sums, cov_free


def _cluster_scores(
    clusters: Sequence[Sequence[GameResult]],
    index: Mapping[str, int],
    position: Mapping[int, int],
    theta: list[float],
    data: list[tuple[int, int, float, float]],
) -> tuple[list[list[float]], list[list[float]], int]:
    """S, H_c and G for the clusters with two or more pairwise results among rated
    bots, on the free ratings.

    S is the sum over those G clusters of s_c s_c^T, where s_c is cluster c's
    score vector, its share of the gradient at the fit: one pass over the
    games.  H_c is their share of the information.  A cluster with a single
    pairwise result is independent of the rest: it keeps the model's variance.
    """
    m, n = len(position), len(theta)
    win = [[0.0] * n for _ in range(n)]  # P(i beats j) at the fit, for the pairs that met
    for i, j, _, _ in data:
        x = theta[i] - theta[j]
        win[i][j], win[j][i] = _sigmoid(x), _sigmoid(-x)
    # The reference rating is not free: its row and column, m, are dropped at the end.
    free = [position.get(k, m) for k in range(n)]
    outer = [[0.0] * (m + 1) for _ in range(m + 1)]
    together = [[0] * n for _ in range(n)]
    measured = 0
    for cluster in clusters:
        score: dict[int, float] = {}
        results = 0
        seatings = []
        for game in cluster:
            places = game.placements
            assert places is not None
            try:  # usually every seat is rated
                seated = [index[bot] for bot in game.seats]
            except KeyError:
                kept = [
                    (index[b], p) for b, p in zip(game.seats, places, strict=True) if b in index
                ]
                seated, places = [i for i, _ in kept], tuple(p for _, p in kept)
            results += len(seated) * (len(seated) - 1) // 2
            seatings.append((seated, places))
        if results < 2:  # one pairwise result is independent of the others: the model's variance
            continue
        measured += 1
        for seated, places in seatings:
            k = len(seated)
            for a in range(k - 1):
                i, place = seated[a], places[a]
                win_i, counts = win[i], together[i]
                total = 0.0
                for b in range(a + 1, k):
                    j, other = seated[b], places[b]
                    residual = (1.0 if place < other else 0.5 if place == other else 0.0) - win_i[j]
                    total += residual
                    score[j] = score.get(j, 0.0) - residual
                    counts[j] += 1
                score[i] = score.get(i, 0.0) + total
        entries = [(free[i], s) for i, s in score.items()]
        for pa, sa in entries:
            row = outer[pa]
            for pb, sb in entries:
                row[pb] += sa * sb
    del outer[m]
    for row in outer:
        del row[m]
    information = [[0.0] * (m + 1) for _ in range(m + 1)]
    for i, counts in enumerate(together):
        row_i, win_i = information[free[i]], win[i]
        for j, count in enumerate(counts):
            if count:
                weight = count * win_i[j] * win[j][i]
                pi, pj = free[i], free[j]
                row_i[pi] += weight
                information[pj][pj] += weight
                row_i[pj] -= weight
                information[pj][pi] -= weight
    del information[m]
    for row in information:
        del row[m]
    return outer, information, measured


def _sandwich(
    columns: list[list[float]],
    outer: list[list[float]],
    h_clusters: list[list[float]],
    clusters: int,
) -> tuple[list[float], list[float], Callable[[int, int], float]] | None:
    """Variances, row sums and entries of the cluster-robust covariance of the free ratings.

    V = Z (H - H_c + c S) Z with Z = H^-1 = L^-T L^-1 (``columns`` are those of
    L^-1 from the diagonal down), H_c the information from the G = ``clusters``
    multi-player games, S the sum of their s_g s_g^T (``outer``) and c the
    small-sample factor: each multi-player game's score varies as observed,
    each heads-up game's as the model says.  Computed as Z + Z D Z with
    D = c S - H_c, so that without multi-player games V is Z exactly.  None if
    there are too few multi-player games to estimate their variance at all.
    """
    m = len(columns)
    z = [[0.0] * m for _ in range(m)]
    for i, col in enumerate(columns):
        row = z[i]
        for j in range(i, m):
            row[j] = z[j][i] = sum(map(operator.mul, col[j - i :], columns[j]))
    # Small-sample factor c: scores at the fitted ratings vary less than at the
    # true ones, as the fit takes up part of each game's variation, its
    # leverage h_g = trace(H_g Z); these add up to h = trace(H_c Z), the number
    # of free ratings when every game is multi-player.  c = G / (G - h) is one
    # over (1 - the average leverage), the CR2 correction with every game's
    # leverage set to the average.  bench/ratings.py: without it (or with
    # G / (G - 1)) small tournaments got 89-94% coverage, with it 95-97% (more
    # when G < 2h).  With G <= h nothing is left to estimate the variance from.
    leverage = sum(
        sum(map(operator.mul, h_row, z_row)) for h_row, z_row in zip(h_clusters, z, strict=True)
    )
    if clusters <= leverage + 1e-9:
        return None
    factor = clusters / (clusters - leverage)
    excess = [
        [factor * s - h for s, h in zip(s_row, h_row, strict=True)]
        for s_row, h_row in zip(outer, h_clusters, strict=True)
    ]
    dz = [[sum(map(operator.mul, d_row, z_row)) for d_row in excess] for z_row in z]  # D z_j
    variances = [z[i][i] + sum(map(operator.mul, z[i], dz[i])) for i in range(m)]
    z_ones = [sum(row) for row in z]
    d_z_ones = [sum(map(operator.mul, d_row, z_ones)) for d_row in excess]
    row_sums = [
        s + sum(map(operator.mul, row, d_z_ones)) for s, row in zip(z_ones, z, strict=True)
    ]

    def cov(i: int, j: int) -> float:
        return z[i][j] + sum(map(operator.mul, z[i], dz[j]))

    return variances, row_sums, cov


def _gradient_and_information(
    theta: list[float], data: list[tuple[int, int, float, float]], n: int
) -> tuple[list[float], list[list[float]]]:
    """Gradient of the log-likelihood and the observed information (minus the Hessian)."""
    grad = [0.0] * n
    info = [[0.0] * n for _ in range(n)]
    for i, j, score, count in data:
        x = theta[i] - theta[j]
        p, q = _sigmoid(x), _sigmoid(-x)
        residual = score - count * p
        grad[i] += residual
        grad[j] -= residual
        weight = count * p * q
        info[i][i] += weight
        info[j][j] += weight
        info[i][j] -= weight
        info[j][i] -= weight
    return grad, info


def _log_likelihood(theta: list[float], data: list[tuple[int, int, float, float]]) -> float:
    total = 0.0
    for i, j, score, count in data:
        x = theta[i] - theta[j]
        total += score * _log_sigmoid(x) + (count - score) * _log_sigmoid(-x)
    return total


def _sigmoid(x: float) -> float:
    if x >= 0.0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def _log_sigmoid(x: float) -> float:
    if x >= 0.0:
        return -math.log1p(math.exp(-x))
    return x - math.log1p(math.exp(x))


def _cholesky(a: list[list[float]]) -> list[list[float]]:
    """Lower-triangular L with L L^T = a, for symmetric positive definite a.

    Row i of L is stored with its i+1 leading entries only: zip-free dot
    products (``map`` stops at the shorter row) then need no slicing, which
    halves the time of the n^3/6 inner loop.
    """
    low: list[list[float]] = []
    for i, a_row in enumerate(a):
        row = [0.0] * (i + 1)
        for j in range(i):
            other = low[j]
            # row[j:] is still zero, so the product runs over k < j only
            row[j] = (a_row[j] - sum(map(operator.mul, row, other))) / other[j]
        diagonal = a_row[i] - sum(map(operator.mul, row, row))
        if diagonal <= 0.0:
            raise ArithmeticError("information matrix is not positive definite")
        row[i] = math.sqrt(diagonal)
        low.append(row)
    return low


def _cholesky_solve(low: list[list[float]], b: list[float]) -> list[float]:
    n = len(low)
    y = [0.0] * n
    for i, row in enumerate(low):
        y[i] = (b[i] - sum(map(operator.mul, row, y))) / row[i]  # y[i:] is still zero
    x = y  # back substitution with L^T, column by column, in place
    for i in reversed(range(n)):
        x[i] /= low[i][i]
        xi = x[i]
        row = low[i]
        for k in range(i):
            x[k] -= row[k] * xi
    return x


def _lower_inverse_columns(low: list[list[float]]) -> list[list[float]]:
    """Columns of L^-1, each from its diagonal entry down (L^-1 is lower triangular)."""
    n = len(low)
    columns = []
    for j in range(n):
        col = [1.0 / low[j][j]]
        for i in range(j + 1, n):
            row = low[i]
            col.append(-sum(map(operator.mul, row[j:i], col)) / row[i])
        columns.append(col)
    return columns
