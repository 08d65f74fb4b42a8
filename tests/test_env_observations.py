"""arena.env.observations: the environment's vectors, kept up to date event by
event, are byte for byte what encoding.observation_bytes builds in full from
each seat's SDK State, for every seat at every step."""

from __future__ import annotations

import random

import attrs
import pytest

pytest.importorskip("pettingzoo", reason="needs the rl extra: pip install 'arena[rl]'")

from arena.engine import events as ev  # noqa: E402
from arena.engine.game import Game  # noqa: E402
from arena.engine.observer import view  # noqa: E402
from arena.env.observations import Observations  # noqa: E402
from arena.sdk import encoding  # noqa: E402
from arena.sdk.state import State  # noqa: E402

SETUPS = [(players, variant, draft) for players in range(2, 9)
          for variant in ("ambassador", "inquisitor")
          for draft in ((None, False) if players == 2 else (None,))]


def _play(observations: Observations, variant: str, draft: bool | None, seed: int,
          seen: dict[str, int]) -> None:
    rng = random.Random(seed)
    players = observations.players
    game = Game.new(players, seed, variant, draft)
    names = [f"seat_{seat}" for seat in range(players)]
    states = [State(seat, names, variant) for seat in range(players)]
    observations.restart()  # the last game's Observations, for this one
    followed = 0
    while True:
        for event in game.events[followed:]:
            for seat, state in enumerate(states):
                state.apply(view(event, seat))
            seen[type(event).__name__] = seen.get(type(event).__name__, 0) + 1
        followed = len(game.events)
        observations.follow(game.events)
        for seat, state in enumerate(states):
            request = game.request if game.legal(seat) else None
            full = encoding.observation_bytes(state, request)
            assert observations.vector(seat, request) == full, (seed, seat, game.events[-3:])
            if any(card is not None for card in state.known):
                seen["known"] = seen.get("known", 0) + 1
        if game.over:
            return
        for seat in game.request.seats:  # type: ignore[union-attr]
            legal = game.legal(seat)
            if legal:
                game.decide(seat, rng.choice(legal))
                break


def test_the_kept_vectors_are_the_full_build_at_every_step() -> None:
    seen: dict[str, int] = {}
    for i, (players, variant, draft) in enumerate(SETUPS):
        observations = Observations(players, variant)
        for game in range(12):
            _play(observations, variant, draft, 1000 * i + game, seen)
    # The rare paths were taken: examined cards known, then forgotten;
    # exchanges; the draft; forced swaps after an Examine.
    assert seen["known"] > 50
    for kind in (ev.ExamineShown, ev.ExamineDecided, ev.ExchangeDrawn, ev.ExchangeReturned,
                 ev.DraftChosen, ev.ClaimProven, ev.PlayerOut, ev.Blocked):
        assert seen.get(kind.__name__, 0) > 10, kind.__name__


def test_records_are_followed_as_the_events_they_stand_for() -> None:
    """``follow_records`` (events as (class, fields) pairs, as an engine may keep
    them unbuilt) gives the vectors ``follow`` gives from the built events."""
    rng = random.Random(2)
    for players, variant, draft in SETUPS[::3]:
        game = Game.new(players, rng.getrandbits(32), variant, draft)
        built, recorded = Observations(players, variant), Observations(players, variant)
        records: list[tuple] = []
        while not game.over:
            records += [(type(e), attrs.astuple(e, recurse=False))
                        for e in game.events[len(records):]]
            built.follow(game.events)
            recorded.follow_records(records)
            for seat in range(players):
                request = game.request if game.legal(seat) else None
                assert recorded.vector(seat, request) == built.vector(seat, request)
            seat = next(s for s in game.request.seats if game.legal(s))  # type: ignore[union-attr]
            game.decide(seat, rng.choice(game.legal(seat)))


def test_a_vector_is_a_new_buffer_that_later_events_leave_alone() -> None:
    game = Game.new(4, 5)
    observations = Observations(4, "ambassador")
    observations.follow(game.events)
    first = observations.vector(0, None)
    kept = bytes(first)
    for _ in range(3):  # three turns of Income: the turn, coins and whose turn change
        seat = game.request.seats[0]  # type: ignore[union-attr]
        game.decide(seat, next(d for d in game.legal(seat) if d.kind == "income"))
    observations.follow(game.events)
    assert observations.vector(0, None) != kept
    assert first == kept


def test_the_env_follows_an_engines_records_when_it_keeps_them() -> None:
    """The environment follows ``Game.event_fields`` (the events unbuilt, one list
    growing with the game) instead of the events, to the same observations."""
    from arena.env import CoupEnv

    for players, variant in ((2, "ambassador"), (5, "inquisitor")):
        recording = CoupEnv(players=players, variant=variant)
        recording.reset(seed=players)
        assert recording._records is recording.game.event_fields
        plain = CoupEnv(players=players, variant=variant)
        plain.reset(seed=players)
        plain._records = None  # this one follows the built events
        rng = random.Random(players)
        for agent in plain.agent_iter():
            assert recording.agent_selection == agent
            observation, _, terminated, truncated, _ = plain.last()
            recorded = recording.last()[0]
            assert recorded["observation"].tobytes() == observation["observation"].tobytes()
            assert (recorded["action_mask"] == observation["action_mask"]).all()
            mask = observation["action_mask"].nonzero()[0]
            action = None if terminated or truncated else int(mask[rng.randrange(len(mask))])
            plain.step(action)
            recording.step(action)
        assert recording._observations.followed == len(recording.game.events) > 20


def test_each_observation_of_the_env_is_its_own_and_writable() -> None:
    """Kept observations do not change as the game goes on, and writing to them
    changes nothing the environment keeps (the mask is a copy of the cached one)."""
    from arena.env import CoupEnv

    def play(aec: CoupEnv) -> list[tuple[dict, bytes, bytes]]:
        aec.reset(seed=9)
        kept = []
        for _agent in aec.agent_iter():
            observation, _, terminated, truncated, _ = aec.last()
            kept.append((observation, observation["observation"].tobytes(),
                         observation["action_mask"].tobytes()))
            mask = observation["action_mask"].nonzero()[0]
            aec.step(None if terminated or truncated else int(mask[-1]))
        return kept

    aec = CoupEnv(players=3)
    kept = play(aec)
    assert len(kept) > 20
    for observation, vector, mask in kept:  # as they were when given
        assert observation["observation"].tobytes() == vector
        assert observation["action_mask"].tobytes() == mask
        observation["observation"][:] = 0.5
        observation["action_mask"][:] = 1
    again = play(aec)  # the same game: nothing the environment keeps was written to
    assert [(vector, mask) for _, vector, mask in again] == [
        (vector, mask) for _, vector, mask in kept]


def test_an_env_copied_or_pickled_mid_game_goes_on_alike() -> None:
    """Observations hold views of their buffer, which neither copy nor pickle:
    they are made again, over the copy's own buffer."""
    import copy
    import pickle

    from arena.env import CoupEnv

    aec = CoupEnv(players=4, variant="inquisitor")
    aec.reset(seed=4)
    rng = random.Random(4)
    for _ in range(30):  # into the game
        observation, _, terminated, _, _ = aec.last()
        mask = observation["action_mask"].nonzero()[0]
        aec.step(None if terminated else int(mask[rng.randrange(len(mask))]))
    copies = [copy.deepcopy(aec), pickle.loads(pickle.dumps(aec))]
    for agent in aec.agent_iter():
        observation, _, terminated, truncated, _ = aec.last()
        for other in copies:
            assert other.agent_selection == agent
            assert other.last()[0]["observation"].tobytes() == observation["observation"].tobytes()
        mask = observation["action_mask"].nonzero()[0]
        action = None if terminated or truncated else int(mask[rng.randrange(len(mask))])
        for env_ in (aec, *copies):
            env_.step(action)
    assert all(not other.agents for other in copies)
