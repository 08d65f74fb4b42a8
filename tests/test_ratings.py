"""Maximum-likelihood Elo: known cases, an independent fit, and honest gaps."""

from __future__ import annotations

import itertools
import math
import random

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.tournament.ratings import (
    ELO_PER_NAT,
    Z95,
    GameResult,
    expected_score,
    fit_ratings,
    log_likelihood,
    pairwise_scores,
)


def game(*seats: str, places: tuple[int, ...] | None = None) -> dict:
    """A game record; by default the seats finish in the order given."""
    return {
        "group": 0,
        "index": 0,
        "seats": list(seats),
        "seed": 1,
        "placements": list(places) if places is not None else list(range(1, len(seats) + 1)),
        "turns": 10,
        "end": "last_player",
        "faults": [None] * len(seats),
        "duration": 0.1,
    }


def head_to_head(a: str, b: str, wins: int, draws: int, losses: int) -> list[dict]:
    return (
        [game(a, b) for _ in range(wins)]
        + [game(a, b, places=(1, 1)) for _ in range(draws)]
        + [game(b, a) for _ in range(losses)]
    )


def elos(table) -> dict[str, float]:
    return {r.bot: r.elo for r in table.ratings}


def normal_cdf(z: float) -> float:
    return 0.5 * (1.0 + math.erf(z / math.sqrt(2.0)))


@pytest.mark.parametrize(("wins", "draws", "losses"), [(7, 0, 3), (9, 0, 1), (2, 5, 13), (1, 0, 1)])
def test_two_bots_are_the_logit_of_the_score_apart(wins: int, draws: int, losses: int) -> None:
    table = fit_ratings(head_to_head("A", "B", wins, draws, losses))
    n = wins + draws + losses
    p = (wins + draws / 2) / n
    rating = elos(table)
    assert rating["A"] - rating["B"] == pytest.approx(400 * math.log10(p / (1 - p)), abs=1e-6)
    assert (rating["A"] + rating["B"]) / 2 == pytest.approx(1500, abs=1e-9)


def test_two_bots_interval_and_los_match_the_closed_form() -> None:
    table = fit_ratings(head_to_head("A", "B", 7, 0, 3))
    n, p = 10, 0.7
    sd_diff = ELO_PER_NAT / math.sqrt(n * p * (1 - p))  # Fisher information of the difference
    a, b = table.ratings
    assert a.bot == "A"
    # Each rating is the difference's half, relative to the mean.
    assert a.ci95 == pytest.approx(Z95 * sd_diff / 2, rel=1e-9)
    assert b.ci95 == pytest.approx(Z95 * sd_diff / 2, rel=1e-9)
    assert a.los_next == pytest.approx(normal_cdf((a.elo - b.elo) / sd_diff), rel=1e-9)
    assert b.los_next is None


def test_intervals_and_los_match_an_explicit_inverse_for_three_bots() -> None:
    results = head_to_head("A", "B", 6, 2, 4) + head_to_head("B", "C", 5, 0, 3)
    results += head_to_head("A", "C", 7, 1, 2)
    table = fit_ratings(results)
    theta = {r.bot: (r.elo - 1500) / ELO_PER_NAT for r in table.ratings}
    n = {("A", "B"): 12, ("B", "C"): 8, ("A", "C"): 10}
    w = {}
    for (a, b), count in n.items():
        p = 1 / (1 + math.exp(theta[b] - theta[a]))
        w[a, b] = count * p * (1 - p)
    # Information of (A, B) with C held fixed, inverted by hand.
    i_aa, i_bb, i_ab = w["A", "B"] + w["A", "C"], w["A", "B"] + w["B", "C"], -w["A", "B"]
    det = i_aa * i_bb - i_ab * i_ab
    s_aa, s_bb, s_ab = i_bb / det, i_aa / det, -i_ab / det
    # A - mean = (2A - B - C) / 3 with C = 0
    var_a = (4 * s_aa - 4 * s_ab + s_bb) / 9
    assert table.by_bot("A").ci95 == pytest.approx(Z95 * ELO_PER_NAT * math.sqrt(var_a), rel=1e-9)
    assert [r.bot for r in table.ratings] == ["A", "B", "C"]
    sd_ab = math.sqrt(s_aa + s_bb - 2 * s_ab)
    los = normal_cdf((theta["A"] - theta["B"]) / sd_ab)
    assert table.by_bot("A").los_next == pytest.approx(los, rel=1e-9)
    assert table.by_bot("B").los_next == pytest.approx(
        normal_cdf((theta["B"] - theta["C"]) / math.sqrt(s_bb))
    )


def test_anchor_fixes_one_bot_and_keeps_differences() -> None:
    results = head_to_head("A", "B", 7, 0, 3) + head_to_head("B", "C", 4, 2, 4)
    results += head_to_head("A", "C", 6, 0, 4)
    free = elos(fit_ratings(results))
    table = fit_ratings(results, anchor=("C", 2000.0))
    anchored = elos(table)
    assert anchored["C"] == 2000.0
    for bot in "AB":
        assert anchored[bot] - anchored["C"] == pytest.approx(free[bot] - free["C"], abs=1e-6)
    assert table.by_bot("C").ci95 == 0.0
    assert table.by_bot("A").ci95 > 0
    # the LOS concerns differences, so the anchoring does not change it
    for bot in "AB":
        anchored_los = table.by_bot(bot).los_next
        free_los = fit_ratings(results).by_bot(bot).los_next
        assert (anchored_los is None and free_los is None) or anchored_los == pytest.approx(
            free_los, rel=1e-9
        )


def test_everyone_at_fifty_percent_is_rated_equal() -> None:
    results = []
    for a, b in itertools.combinations("ABCDE", 2):
        results += head_to_head(a, b, 3, 2, 3)
    table = fit_ratings(results)
    for rating in table.ratings:
        assert rating.elo == pytest.approx(1500, abs=1e-9)
        assert rating.score == pytest.approx(0.5)
    assert table.ratings[0].los_next == pytest.approx(0.5)


def random_results(rng: random.Random, bots: str, games_per_pair: int) -> list[dict]:
    """Every pair plays, with at least one win each way, so the fit is finite."""
    strength = {bot: rng.gauss(0, 200) for bot in bots}
    results = []
    for a, b in itertools.combinations(bots, 2):
        results += [game(a, b), game(b, a)]
        for _ in range(games_per_pair):
            u = rng.random()
            p = expected_score(strength[a], strength[b])
            if u > 0.9:
                results.append(game(a, b, places=(1, 1)))
            else:
                results.append(game(a, b) if u < 0.9 * p else game(b, a))
    return results


def slow_gradient_ascent(results: list[dict]) -> dict[str, float]:
    """An independent, obviously-correct fit: plain gradient ascent on the
    Bradley-Terry log-likelihood, game by game, until it stops moving."""
    bots = sorted({bot for g in results for bot in g["seats"]})
    theta = dict.fromkeys(bots, 0.0)
    for _ in range(20000):
        grad = dict.fromkeys(bots, 0.0)
        for g in results:
            seated = zip(g["seats"], g["placements"], strict=True)
            for (a, pa), (b, pb) in itertools.combinations(seated, 2):
                outcome = 1.0 if pa < pb else 0.5 if pa == pb else 0.0
                p = 1.0 / (1.0 + math.exp(theta[b] - theta[a]))
                grad[a] += outcome - p
                grad[b] -= outcome - p
        step = 1.0 / len(results)
        for bot in bots:
            theta[bot] += step * grad[bot]
        if max(abs(v) for v in grad.values()) < 1e-9:
            break
    mean = sum(theta.values()) / len(bots)
    return {bot: 1500 + ELO_PER_NAT * (t - mean) for bot, t in theta.items()}


def test_fit_agrees_with_an_independent_gradient_ascent() -> None:
    results = random_results(random.Random(4), "ABCDEF", 6)
    # a few multi-player games too, which count pairwise
    results += [game("A", "C", "E"), game("F", "B", "D", places=(1, 1, 3))]
    fitted = elos(fit_ratings(results))
    reference = slow_gradient_ascent(results)
    for bot, elo in reference.items():
        assert fitted[bot] == pytest.approx(elo, abs=1e-4)


def test_log_likelihood_gradient_is_zero_at_the_fit() -> None:
    results = random_results(random.Random(7), "ABCDEFGH", 10)
    fitted = elos(fit_ratings(results))
    pairs = pairwise_scores(results)
    h = 1e-3
    for bot in fitted:
        up = dict(fitted, **{bot: fitted[bot] + h})
        down = dict(fitted, **{bot: fitted[bot] - h})
        slope = (log_likelihood(pairs, up) - log_likelihood(pairs, down)) / (2 * h)
        assert abs(slope) < 1e-7
    # and it is a maximum: moving any bot lowers the likelihood
    best = log_likelihood(pairs, fitted)
    assert all(log_likelihood(pairs, dict(fitted, **{b: fitted[b] + 5})) < best for b in fitted)


def test_game_order_does_not_matter() -> None:
    results = random_results(random.Random(3), "ABCDE", 5)
    shuffled = results[:]
    random.Random(1).shuffle(shuffled)
    assert fit_ratings(shuffled) == fit_ratings(results)


def test_multi_player_game_counts_as_its_pairwise_results() -> None:
    multi = [game("A", "B", "C"), game("C", "A", "B"), game("B", "C", "A", places=(1, 1, 3))]
    multi += [game("A", "B", "C", places=(2, 1, 3))]
    heads_up = [
        game("A", "B"), game("A", "C"), game("B", "C"),
        game("C", "A"), game("C", "B"), game("A", "B"),
        game("B", "C", places=(1, 1)), game("B", "A"), game("C", "A"),
        game("B", "A"), game("A", "C"), game("B", "C"),
    ]  # fmt: skip
    assert pairwise_scores(multi) == pairwise_scores(heads_up)
    assert elos(fit_ratings(multi)) == pytest.approx(elos(fit_ratings(heads_up)), abs=1e-9)


def test_wins_draws_and_losses_count_first_places() -> None:
    results = [game("A", "B", "C"), game("A", "B", "C", places=(1, 1, 3))]
    results += [game("A", "B", "C", places=(2, 1, 1)), game("B", "A")]
    table = fit_ratings(results)
    a = table.by_bot("A")
    assert (a.games, a.wins, a.draws, a.losses) == (4, 1, 1, 2)
    c = table.by_bot("C")
    assert (c.games, c.wins, c.draws, c.losses) == (3, 0, 1, 2)
    # score is the share of pairwise points: A got 2 + 1.5 + 0 + 0 of 7
    assert a.score == pytest.approx(3.5 / 7)


def test_disconnected_groups_are_rated_separately_and_flagged() -> None:
    results = head_to_head("A", "B", 3, 0, 1) + head_to_head("B", "C", 2, 0, 2)
    results += head_to_head("X", "Y", 1, 0, 3)
    table = fit_ratings(results)
    assert [r.group for r in table.ratings] == [1, 1, 1, 2, 2]
    assert "2 groups" in table.notes[0]
    rating = elos(table)
    assert (rating["A"] + rating["B"] + rating["C"]) / 3 == pytest.approx(1500)
    assert (rating["X"] + rating["Y"]) / 2 == pytest.approx(1500)
    assert rating["Y"] - rating["X"] == pytest.approx(400 * math.log10(3), abs=1e-6)
    assert table.by_bot("C").los_next is None  # no LOS across groups
    # an unbounded bot in the second group is flagged with its group
    table = fit_ratings([*results, *head_to_head("Z", "X", 2, 0, 0)])
    assert table.by_bot("Z").group == 2 and table.by_bot("Z").elo is None
    assert any(note.startswith("In group 2, 1 of 3 bots") for note in table.notes)


def test_a_bot_that_won_every_game_is_unrated_and_listed_first() -> None:
    rest = head_to_head("B", "C", 3, 1, 2) + head_to_head("C", "D", 2, 0, 2)
    rest += head_to_head("B", "D", 1, 0, 1)
    results = rest + head_to_head("A", "B", 3, 0, 0) + head_to_head("A", "D", 2, 0, 0)
    table = fit_ratings(results)
    top = table.ratings[0]
    assert (top.bot, top.elo, top.ci95, top.note) == ("A", None, None, "won every game")
    assert top.games == 5 and top.score == 1.0
    # the others are rated exactly as if A had not played
    without = elos(fit_ratings(rest))
    for bot in "BCD":
        assert table.by_bot(bot).elo == pytest.approx(without[bot], abs=1e-9)
    assert any("no finite rating" in note for note in table.notes)


def test_a_bot_that_lost_every_game_is_listed_last() -> None:
    results = head_to_head("B", "C", 3, 1, 2) + head_to_head("Z", "B", 0, 0, 4)
    table = fit_ratings(results)
    assert table.ratings[-1].bot == "Z"
    assert table.ratings[-1].elo is None
    assert table.ratings[-1].note == "lost every game"


def test_a_pair_that_beat_everyone_else_is_unbounded_too() -> None:
    # A and B split their games but never dropped a point to C, D or E: no
    # finite rating for them, though neither won every game.
    results = head_to_head("A", "B", 2, 0, 2)
    for top, bottom in itertools.product("AB", "CDE"):
        results += head_to_head(top, bottom, 2, 0, 0)
    results += head_to_head("C", "D", 2, 1, 1) + head_to_head("D", "E", 1, 0, 2)
    results += head_to_head("C", "E", 1, 0, 1)
    table = fit_ratings(results)
    assert [r.bot for r in table.ratings[:2]] == ["A", "B"]
    for bot in "AB":
        rating = table.by_bot(bot)
        assert rating.elo is None
        assert rating.note == "no finite rating: scored 100% against the rated bots"
    assert all(table.by_bot(bot).elo is not None for bot in "CDE")


def test_one_sided_results_rate_nobody() -> None:
    results = head_to_head("A", "B", 2, 0, 0) + head_to_head("B", "C", 2, 0, 0)
    results += head_to_head("A", "C", 1, 0, 0)
    table = fit_ratings(results)
    assert [r.bot for r in table.ratings] == ["A", "B", "C"]
    assert all(r.elo is None for r in table.ratings)
    assert table.by_bot("B").note == "no finite rating: every result in its group is one-sided"
    assert table.notes[0].startswith("None of the 3 bots has a finite rating")


def test_bots_without_games_are_listed_as_such() -> None:
    results = head_to_head("A", "B", 1, 0, 1) + [dict(game("A", "C"), placements=None)]
    table = fit_ratings(results, bots=["D"])
    assert [r.bot for r in table.ratings][-2:] == ["C", "D"]  # C's only game has no result
    for bot in "CD":
        rating = table.by_bot(bot)
        assert (rating.games, rating.elo, rating.note) == (0, None, "no games")
    assert table.by_bot("A").games == 2


def test_anchor_problems() -> None:
    results = head_to_head("A", "B", 1, 0, 1) + head_to_head("C", "A", 2, 0, 0)
    with pytest.raises(ValueError, match="anchor bot 'Q'"):
        fit_ratings(results, anchor=("Q", 1000.0))
    table = fit_ratings(results, anchor=("C", 1000.0))  # C won every game
    assert table.by_bot("C").elo is None
    assert elos(table)["A"] + elos(table)["B"] == pytest.approx(3000)
    assert any("anchor C has no finite rating" in note for note in table.notes)


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"seats": "AB"}, "seats"),
        ({"seats": ["A"]}, "seats"),
        ({"seats": ["A", "A"], "placements": [1, 2]}, "distinct"),
        ({"seats": ["A", "B"], "placements": [1]}, "placements"),
        ({"seats": ["A", "B"], "placements": [0, 1]}, "placements"),
        ({"seats": ["A", "B"], "placements": [1, 2], "faults": [None]}, "faults"),
        ({"seats": ["A", "B"], "placements": [1, 2], "faults": [None, "x"]}, "fault"),
    ],
)
def test_malformed_records_raise(record: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        GameResult.from_json(record)


def test_from_json_reads_faults() -> None:
    record = game("A", "B")
    record["faults"] = [None, {"kind": "timeout", "detail": "slow"}]
    result = GameResult.from_json(record)
    assert result.seats == ("A", "B") and result.placements == (1, 2)
    assert result.faults[0] is None
    assert (result.faults[1].kind, result.faults[1].detail) == ("timeout", "slow")


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(min_value=0, max_value=2**32),
    bots=st.integers(min_value=2, max_value=7),
    games_per_pair=st.integers(min_value=0, max_value=6),
)
def test_random_complete_results_fit_to_a_stationary_point(
    seed: int, bots: int, games_per_pair: int
) -> None:
    results = random_results(random.Random(seed), "ABCDEFG"[:bots], games_per_pair)
    table = fit_ratings(results)
    fitted = elos(table)
    assert all(r.elo is not None and r.note == "" for r in table.ratings)
    assert sum(fitted.values()) / bots == pytest.approx(1500)
    assert [r.elo for r in table.ratings] == sorted(fitted.values(), reverse=True)
    assert all(r.los_next > 0.5 - 1e-9 for r in table.ratings[:-1])  # ties: 0.5
    pairs = pairwise_scores(results)
    for bot in fitted:
        up = dict(fitted, **{bot: fitted[bot] + 1e-3})
        down = dict(fitted, **{bot: fitted[bot] - 1e-3})
        assert abs(log_likelihood(pairs, up) - log_likelihood(pairs, down)) < 2e-9


# Cluster-robust intervals for multi-player games


def plackett_luce(rng: random.Random, strength: dict[str, float], players: int, games: int):
    """Games whose order is drawn place by place in proportion to 10^(elo/400)."""
    bots = sorted(strength)
    results = []
    for _ in range(games):
        seats = rng.sample(bots, players)
        remaining, finish = list(seats), []
        while remaining:
            weights = [10 ** (strength[b] / 400) for b in remaining]
            finish.append(remaining.pop(rng.choices(range(len(remaining)), weights)[0]))
        results.append(game(*seats, places=tuple(finish.index(b) + 1 for b in seats)))
    return results


def known_strengths(bots: str) -> dict[str, float]:
    return {bot: 1500 + 120 * (k - len(bots) / 2) for k, bot in enumerate(bots)}


def matmul2(x, y):
    return [[sum(x[i][k] * y[k][j] for k in range(2)) for j in range(2)] for i in range(2)]


def inverse2(x):
    det = x[0][0] * x[1][1] - x[0][1] * x[1][0]
    return [[x[1][1] / det, -x[0][1] / det], [-x[1][0] / det, x[0][0] / det]]


def sandwich_by_hand(results: list[dict], theta: dict[str, float]):
    """The covariance of (A, B) with C held at 0, straight from the definition:
    Z (H - H_c + c S) Z, Z = H^-1, over the games' score vectors s and
    informations H_g; S and H_c over the games of three, c = G / (G - tr(H_c Z))."""
    h = [[0.0, 0.0], [0.0, 0.0]]
    h_c = [[0.0, 0.0], [0.0, 0.0]]
    s_sum = [[0.0, 0.0], [0.0, 0.0]]
    clusters = 0
    for g in results:
        s = {"A": 0.0, "B": 0.0, "C": 0.0}
        h_g = [[0.0, 0.0], [0.0, 0.0]]
        seated = zip(g["seats"], g["placements"], strict=True)
        for (a, pa), (b, pb) in itertools.combinations(seated, 2):
            won = 1.0 if pa < pb else 0.5 if pa == pb else 0.0
            p = 1 / (1 + math.exp(theta[b] - theta[a]))
            s[a] += won - p
            s[b] -= won - p
            u = [float(a == "A") - float(b == "A"), float(a == "B") - float(b == "B")]
            for i, j in itertools.product(range(2), repeat=2):
                h_g[i][j] += p * (1 - p) * u[i] * u[j]
        for i, j in itertools.product(range(2), repeat=2):
            h[i][j] += h_g[i][j]
            if len(g["seats"]) == 3:
                h_c[i][j] += h_g[i][j]
                s_sum[i][j] += s["AB"[i]] * s["AB"[j]]
        clusters += len(g["seats"]) == 3
    z = inverse2(h)
    leverage = sum(matmul2(h_c, z)[i][i] for i in range(2))
    c = clusters / (clusters - leverage)
    meat = [[h[i][j] - h_c[i][j] + c * s_sum[i][j] for j in range(2)] for i in range(2)]
    return matmul2(matmul2(z, meat), z)


THREE_WAY = [
    game("A", "B", "C"), game("B", "A", "C"), game("B", "C", "A"), game("A", "C", "B"),
    game("C", "B", "A"), game("C", "A", "B", places=(1, 1, 3)), game("A", "B", "C"),
    game("B", "A", "C", places=(1, 2, 2)), game("A", "C", "B"),
]  # fmt: skip


@pytest.mark.parametrize("heads_up", [False, True])
def test_robust_intervals_match_a_hand_computed_sandwich(heads_up: bool) -> None:
    results = THREE_WAY + (head_to_head("A", "B", 2, 1, 1) + head_to_head("C", "B", 1, 0, 2)
                           if heads_up else [])  # fmt: skip
    table = fit_ratings(results)
    theta = {r.bot: (r.elo - 1500) / ELO_PER_NAT for r in table.ratings}
    theta = {bot: t - theta["C"] for bot, t in theta.items()}  # C held at 0
    (v_aa, v_ab), (_, v_bb) = sandwich_by_hand(results, theta)
    # A - mean = (2A - B - C) / 3 and B - mean = (2B - A - C) / 3, with C = 0;
    # C - mean = -(A + B) / 3
    expected = {
        "A": (4 * v_aa - 4 * v_ab + v_bb) / 9,
        "B": (4 * v_bb - 4 * v_ab + v_aa) / 9,
        "C": (v_aa + 2 * v_ab + v_bb) / 9,
    }
    for bot, var in expected.items():
        assert table.by_bot(bot).ci95 == pytest.approx(Z95 * ELO_PER_NAT * math.sqrt(var), rel=1e-7)
    sd = {"AB": math.sqrt(v_aa + v_bb - 2 * v_ab), "AC": math.sqrt(v_aa), "BC": math.sqrt(v_bb)}
    order = [r.bot for r in table.ratings]
    for better, worse in itertools.pairwise(order):
        los = normal_cdf((theta[better] - theta[worse]) / sd["".join(sorted(better + worse))])
        assert table.by_bot(better).los_next == pytest.approx(los, rel=1e-7)
    # anchored at C: A's variance is V_AA itself and C's interval is nil
    anchored = fit_ratings(results, anchor=("C", 1000.0))
    assert anchored.by_bot("A").ci95 == pytest.approx(
        Z95 * ELO_PER_NAT * math.sqrt(v_aa), rel=1e-7
    )
    assert anchored.by_bot("B").ci95 == pytest.approx(
        Z95 * ELO_PER_NAT * math.sqrt(v_bb), rel=1e-7
    )
    assert anchored.by_bot("C").ci95 == 0.0 and anchored.by_bot("C").elo == 1000.0
    for better in order[:-1]:  # the LOS concerns differences only
        assert anchored.by_bot(better).los_next == pytest.approx(
            table.by_bot(better).los_next, rel=1e-9
        )


def test_heads_up_intervals_are_the_model_based_ones() -> None:
    results = random_results(random.Random(11), "ABCDEFG", 8)
    assert fit_ratings(results) == fit_ratings(results, robust=False)
    anchor = ("D", 1700.0)
    assert fit_ratings(results, anchor=anchor) == fit_ratings(results, anchor=anchor, robust=False)


def assert_close(actual: float | None, expected: float | None, **tolerance: float) -> None:
    """Equal within ``tolerance``, or both None (newer pytest's approx refuses None)."""
    if expected is None:
        assert actual is None
    else:
        assert actual == pytest.approx(expected, **tolerance)


def test_multi_player_robust_intervals_are_wider_than_model_based() -> None:
    results = plackett_luce(random.Random(2), known_strengths("ABCDEFGH"), 4, 300)
    robust, model = fit_ratings(results), fit_ratings(results, robust=False)
    assert elos(robust) == elos(model)  # the same ratings, only their uncertainty differs
    for bot in "ABCDEFGH":
        assert robust.by_bot(bot).ci95 > 1.1 * model.by_bot(bot).ci95
    for r, m in zip(robust.ratings[:-1], model.ratings[:-1], strict=True):
        assert 0.5 <= r.los_next < m.los_next  # less sure of each step down


def test_robust_intervals_do_not_depend_on_the_bot_held_fixed() -> None:
    # The fit holds the first bot by name at 0; renaming makes it another one.
    results = plackett_luce(random.Random(3), known_strengths("ABCDEF"), 3, 120)
    results += head_to_head("A", "F", 2, 1, 2)
    renamed = [dict(g, seats=["z" + s if s == "A" else s for s in g["seats"]]) for g in results]
    table, other = fit_ratings(results), fit_ratings(renamed)
    for bot in "ABCDEF":
        mine, theirs = table.by_bot(bot), other.by_bot("zA" if bot == "A" else bot)
        assert theirs.elo == pytest.approx(mine.elo, abs=1e-7)
        assert theirs.ci95 == pytest.approx(mine.ci95, rel=1e-7)
        assert_close(theirs.los_next, mine.los_next, rel=1e-7, abs=1e-12)


def test_an_unrated_bot_drops_out_of_its_games_clusters() -> None:
    # Z won every game, so it is unrated, and each of its 3-player games is
    # left with one pairwise result among the rated bots: a heads-up game.
    rng = random.Random(4)
    rest = plackett_luce(rng, known_strengths("ABCD"), 3, 60)
    pairs = [("A", "B"), ("C", "A"), ("B", "D"), ("D", "C")]
    with_z = rest + [game("Z", a, b) for a, b in pairs]
    without_z = rest + [game(a, b) for a, b in pairs]
    table, reference = fit_ratings(with_z), fit_ratings(without_z)
    assert table.by_bot("Z").elo is None and table.by_bot("Z").note == "won every game"
    for bot in "ABCD":
        assert table.by_bot(bot).elo == pytest.approx(reference.by_bot(bot).elo, abs=1e-9)
        assert table.by_bot(bot).ci95 == pytest.approx(reference.by_bot(bot).ci95, rel=1e-9)


def test_each_group_gets_its_own_robust_intervals() -> None:
    first = plackett_luce(random.Random(5), known_strengths("ABCDE"), 4, 80)
    second = plackett_luce(random.Random(6), known_strengths("VWXYZ"), 3, 60)
    table = fit_ratings(first + second)
    assert {r.group for r in table.ratings} == {1, 2}
    for alone in (fit_ratings(first), fit_ratings(second)):
        for rating in alone.ratings:
            mine = table.by_bot(rating.bot)
            assert mine.ci95 == pytest.approx(rating.ci95, rel=1e-9)
            assert_close(mine.los_next, rating.los_next, rel=1e-9)


def test_too_few_clusters_give_the_model_based_intervals() -> None:
    # 3 games for 3 free ratings: the scores have nothing left to vary with,
    # so the intervals are the model's, and a note says so.
    results = [game("A", "B", "C", "D"), game("D", "C", "B", "A"), game("B", "A", "D", "C")]
    table, model = fit_ratings(results), fit_ratings(results, robust=False)
    assert table == attrs.evolve(model, notes=table.notes)
    assert all(r.ci95 is not None and r.ci95 > 0 for r in table.ratings)
    assert any("too few deal groups and multi-player games" in note for note in table.notes)
    # one more game is enough for an (honestly wide) interval
    table = fit_ratings([*results, game("C", "A", "B", "D")])
    assert all(r.ci95 is not None and r.ci95 > 0 for r in table.ratings)
    assert not table.notes


def test_all_draws_never_give_a_zero_interval() -> None:
    # Every residual is zero, so the sandwich is zero: the interval must not be.
    results = [game(*"ABCD", places=(1, 1, 1, 1)) for _ in range(50)]
    table, model = fit_ratings(results), fit_ratings(results, robust=False)
    assert {r.elo for r in table.ratings} == {1500.0}
    for r in table.ratings:
        assert r.ci95 == pytest.approx(model.by_bot(r.bot).ci95, rel=1e-12) and r.ci95 > 30
    # one decisive game: still never narrower than independent results would give
    results[0] = game(*"ABCD")
    table, model = fit_ratings(results), fit_ratings(results, robust=False)
    for r in table.ratings:
        assert r.ci95 >= model.by_bot(r.bot).ci95 * (1 - 1e-12)


def paired(a: str, b: str, deal: int, first: str, second: str) -> list[dict]:
    """The two games of one heads-up deal group, seats swapped, won by ``first``
    and ``second``."""
    one, two = game(a, b), game(b, a)
    for g, winner in ((one, first), (two, second)):
        g["group"] = f"{a}|{b}#{deal}"
        g["placements"] = [1 if seat == winner else 2 for seat in g["seats"]]
    return [one, two]


def test_heads_up_games_of_a_deal_group_are_one_cluster() -> None:
    # Each deal is won by the same bot in both seats (the deal does not decide
    # it, the matchup does): the pair's two results move together, so the
    # interval is wider than for independent games.
    rng = random.Random(7)
    results = []
    for deal in range(60):
        for a, b in (("A", "B"), ("B", "C"), ("A", "C")):
            winner = a if rng.random() < 0.6 else b
            results += paired(a, b, deal, winner, winner)
    table, model = fit_ratings(results), fit_ratings(results, robust=False)
    assert elos(table) == elos(model)
    for bot in "ABC":
        assert table.by_bot(bot).ci95 > 1.25 * model.by_bot(bot).ci95
    # without deal groups each heads-up game stands alone: the model's intervals
    loose = [dict(g, group=None) for g in results]
    assert fit_ratings(loose) == model
    # split deals (each bot wins one seat) vary less than independent games:
    # never narrower than the model's
    split = []
    for deal in range(40):
        split += paired("A", "B", deal, "A", "B") + paired("B", "C", deal, "B", "B")
        split += paired("A", "C", deal, "C", "A") + paired("A", "B", deal + 100, "A", "A")
    table, model = fit_ratings(split), fit_ratings(split, robust=False)
    for bot in "ABC":
        assert table.by_bot(bot).ci95 == pytest.approx(model.by_bot(bot).ci95, rel=1e-12)


def test_the_deal_group_is_read_from_the_game_line() -> None:
    assert GameResult.from_json(dict(game("A", "B"), group="A|B#3")).cluster == "A|B#3"
    assert GameResult.from_json(game("A", "B")).cluster is None


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(min_value=0, max_value=2**32),
    bots=st.integers(min_value=3, max_value=6),
    players=st.integers(min_value=3, max_value=4),
    games=st.integers(min_value=5, max_value=40),
    ties=st.booleans(),
)
def test_robust_intervals_are_positive_and_independent_of_the_reference(
    seed: int, bots: int, players: int, games: int, ties: bool
) -> None:
    rng = random.Random(seed)
    names = "ABCDEF"[:bots]
    results = plackett_luce(rng, known_strengths(names), min(players, bots), games)
    if ties:  # some shared places
        for g in results[::3]:
            g["placements"] = [min(p, 2) for p in g["placements"]]
    table = fit_ratings(results)
    rated = [r for r in table.ratings if r.elo is not None]
    if len(rated) < bots or rated[0].ci95 is None:
        return  # no finite ratings or too few games: covered elsewhere
    assert elos(table) == elos(fit_ratings(results, robust=False))
    assert all(r.ci95 > 0 for r in rated)
    assert all(0.5 - 1e-9 <= r.los_next <= 1 for r in rated[:-1])
    renamed = [dict(g, seats=["z" + s if s == "A" else s for s in g["seats"]]) for g in results]
    other = fit_ratings(renamed)
    for r in rated:
        twin = other.by_bot("zA" if r.bot == "A" else r.bot)
        assert twin.ci95 == pytest.approx(r.ci95, rel=1e-6)
