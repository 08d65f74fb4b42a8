"""Baseline: complete random games per second with `coupml`, a third-party Coup engine.

coupml (PyPI: ``pip install coupml``, Apache-2.0, the bare Python engine behind
the Coup branch of rlcard) is not a dependency of arena.  Install it by hand to
get the comparison; without it every function here returns None.

How coupml is driven (read from its source, coupml 0.1.1)::

    game = coupml.Coup(players, rng)   # rng: any object with choice() and shuffle()
    game.init_game()                   # deals 2 cards each, picks a random first player
    while not game.is_game_over():
        game.play_action(rng.choice(game.get_legal_actions()))   # list of str tokens
    game.get_state()["game"]["winning_player"]

coupml serialises everything: exactly one player acts at a time
(``player_to_act()``), so challenge and block opportunities are asked seat by
seat, in turn order.  Each ``play_action`` is one decision, as in our engine,
where each seat's answer to a request is one decision.

What coupml enforces, and what it does not (or does differently from our rules):

* Enforced: the 15-card court (3 of each of duke, assassin, captain, contessa,
  ambassador), 2 starting coins, income / foreign aid / coup / tax /
  assassinate / steal / exchange with their costs, the forced coup at 10+
  coins, challenges of every character claim (actions and blocks), blocks of
  foreign aid (anyone, duke), assassination (target, contessa) and steal
  (target, captain or ambassador), a challenged player who shows the claimed
  card shuffling it back and drawing a new one, the Ambassador exchange
  (draw 2, keep as many as you hold), losing an influence on a lost challenge,
  coup or assassination, and a single winner.
* Challenges differ: every other living player is asked in turn and answers
  secretly; if the claim was true *all* challengers lose an influence (the
  official rules have one challenger).
* Foreign-aid blocks differ: everyone may block; if several do, the dealer
  picks one at random.
* A challenged player may reveal a different card from the one claimed
  (deliberately losing the challenge).  The assassin pays 3 only once the
  challenge is won or nobody challenged; the cost is not refunded on a block.
  A thief whose target dies in a challenge gets nothing.
* Not implemented at all: the Inquisitor variant (and ``examine``), any
  two-player rules (no draft), 7-8 players (no 4-copy court), a turn limit or
  draw, per-seat hidden information (the state dict shows everything; the
  ``view`` module masks it separately), timeouts, and any event log or
  record: it keeps only the current state.
* Exchange choices are listed as *distinct* sets of cards to keep, so a
  uniform pick is uniform over sets, not over which physical cards.

Random source: coupml's own example passes a ``numpy.random.RandomState``, whose
``choice`` on a Python list converts it to an array on every call; that costs
more than the engine itself (about 2,100 four-player games/s here against
about 4,900 with :class:`random.Random`).  By default we drive it with a
``random.Random(seed)`` (wrapped, as coupml's dealer calls ``choice(n)`` with an
int), the same kind of generator our benchmark uses for our engine, so the
comparison measures the engines.  ``rng="numpy"`` reproduces coupml's README.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Any

try:
    import coupml
except ImportError:  # pragma: no cover - depends on the machine
    coupml = None

INSTALL_HINT = "coupml is not installed (pip install coupml): skipping the coupml comparison"

# A random game that has not finished after this many decisions is a bug.
_MAX_DECISIONS = 200_000


def available() -> bool:
    return coupml is not None


def version() -> str | None:
    if coupml is None:
        return None
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as _version

    try:
        return _version("coupml")
    except PackageNotFoundError:
        return "unknown"


class _RandomAdapter:
    """``random.Random`` with the numpy-like ``choice`` coupml's dealer expects."""

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng
        self.shuffle = rng.shuffle

    def choice(self, items: Any) -> Any:
        # Dealer.choose() calls choice(len(items)) and wants an index back.
        if isinstance(items, int):
            return self._rng.randrange(items)
        return self._rng.choice(items)


@dataclass
class Run:
    engine: str
    players: int
    games: int
    seconds: float
    decisions: int
    turns: int
    wins: list[int]  # games won by each seat
    no_winner: int = 0  # games stopped without a winner (our engine's turn limit)

    @property
    def games_per_second(self) -> float:
        return self.games / self.seconds

    @property
    def decisions_per_second(self) -> float:
        return self.decisions / self.seconds


def _make_rng(seed: int, rng: str) -> tuple[Any, Any]:
    """(source passed to coupml, function picking a legal action)."""
    if rng == "random":
        r = random.Random(seed)
        return _RandomAdapter(r), r.choice
    if rng == "numpy":
        import numpy as np

        nr = np.random.RandomState(seed)
        return nr, nr.choice
    raise ValueError(f"rng must be 'random' or 'numpy', not {rng!r}")


def _play_one(players: int, source: Any, pick: Any, wins: list[int]) -> tuple[int, int]:
    """Play one complete game; return (decisions, turns)."""
    game = coupml.Coup(players, source)
    game.init_game()
    inner = game.game  # coupml.game.Game: read only to count turns and check the end
    decisions = 0
    turns = 0
    while not game.is_game_over():
        state = inner.state
        if state.action is None:  # a Turn waiting for its initial action
            turns += 1
        game.play_action(pick(game.get_legal_actions()))
        decisions += 1
        if decisions > _MAX_DECISIONS:
            raise RuntimeError(f"coupml game did not finish in {_MAX_DECISIONS} decisions")
    # Check the game really finished with one survivor, and that coupml agrees.
    winner = inner.state.winning_player
    alive = [p for p in range(players) if inner.is_alive(p)]
    if alive != [winner]:
        raise RuntimeError(f"coupml game over with winner {winner!r} but alive {alive}")
    wins[winner] += 1
    return decisions, turns


def coupml_run(
    players: int, seconds: float, seed: int, *, rng: str = "random", warmup: float = 0.3
) -> Run | None:
    """Play complete uniformly random games for ``seconds`` (after a warm-up).

    In-process, one core.  Returns None if coupml is not installed.
    """
    if coupml is None:
        return None
    source, pick = _make_rng(seed, rng)
    scratch = [0] * players
    end = time.perf_counter() + warmup
    while time.perf_counter() < end:
        _play_one(players, source, pick, scratch)

    wins = [0] * players
    games = decisions = turns = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        d, t = _play_one(players, source, pick, wins)
        games += 1
        decisions += d
        turns += t
        now = time.perf_counter()
        if now >= deadline:
            break
    if sum(wins) != games:
        raise RuntimeError("coupml: a game ended without a winner")
    name = "coupml" if rng == "random" else f"coupml ({rng} rng)"
    return Run(name, players, games, now - start, decisions, turns, wins)


def coupml_games_per_second(players: int, seconds: float, seed: int) -> float | None:
    """Complete uniformly random ``players``-player coupml games per second.

    None if coupml is not installed (``pip install coupml``).
    """
    run = coupml_run(players, seconds, seed)
    return None if run is None else run.games_per_second


if __name__ == "__main__":
    if not available():
        print(INSTALL_HINT)
    else:
        for kind in ("random", "numpy"):
            r = coupml_run(4, 2.0, 1, rng=kind)
            assert r is not None
            print(
                f"{r.engine}: {r.games} games in {r.seconds:.2f} s = "
                f"{r.games_per_second:,.0f} games/s, {r.decisions / r.games:.1f} decisions, "
                f"{r.turns / r.games:.1f} turns per game, wins {r.wins}"
            )
