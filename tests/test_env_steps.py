"""arena.env.CoupEnv's own versions of AECEnv's helpers do what AECEnv's do."""

from __future__ import annotations

import copy
import random

import pytest

pytest.importorskip("pettingzoo", reason="needs the rl extra: pip install 'arena[rl]'")

from pettingzoo import AECEnv  # noqa: E402

from arena.env import CoupEnv  # noqa: E402

_STATE = ("agents", "agent_selection", "_skip_agent_selection", "rewards", "_cumulative_rewards",
          "terminations", "truncations", "infos")


def test_a_seat_out_steps_as_with_aecenvs_was_dead_step() -> None:
    """At every dead seat's step of many games (seats out one by one, several out
    at once, the end), the environment after CoupEnv's step is as after
    AECEnv._was_dead_step on a copy."""
    rng = random.Random(1)
    dead_steps = 0
    for players in (2, 3, 4, 6, 8):
        aec = CoupEnv(players=players)
        for game in range(15):
            aec.reset(seed=1000 * players + game)
            for _agent in aec.agent_iter():
                observation, _, terminated, truncated, _ = aec.last()
                if terminated or truncated:
                    theirs = copy.deepcopy(aec)
                    AECEnv._was_dead_step(theirs, None)
                    aec.step(None)
                    assert [getattr(aec, name) for name in _STATE] == [
                        getattr(theirs, name) for name in _STATE]
                    dead_steps += 1
                else:
                    mask = observation["action_mask"].nonzero()[0]
                    aec.step(int(mask[rng.randrange(len(mask))]))
    assert dead_steps > 200
    with pytest.raises(ValueError, match="only valid action is None"):
        aec.reset(seed=1)
        for _agent in aec.agent_iter():
            observation, _, terminated, _, _ = aec.last()
            aec.step(0 if terminated else int(observation["action_mask"].nonzero()[0][0]))


def test_places_are_rewarded_as_with_aecenvs_helpers() -> None:
    """At every step that places seats (eliminations, the end), the rewards are
    added to the cumulative rewards as AECEnv._accumulate_rewards adds them
    (after step() zeroed the stepping agent's), and the first seat placed
    steps next, as after AECEnv._deads_step_first."""
    rng = random.Random(2)
    placings = 0
    for players in (2, 3, 4, 6, 8):
        aec = CoupEnv(players=players)
        for game in range(10):
            aec.reset(seed=100 * players + game)
            for agent in aec.agent_iter():
                observation, _, terminated, truncated, _ = aec.last()
                if terminated or truncated:
                    aec.step(None)
                    continue
                before = dict(aec._cumulative_rewards, **{agent: 0.0})
                out = {other for other in aec.agents if aec.terminations[other]}
                mask = observation["action_mask"].nonzero()[0]
                aec.step(int(mask[rng.randrange(len(mask))]))
                placed = [other for other in aec.agents
                          if aec.terminations[other] and other not in out]
                if not placed:
                    assert not any(aec.rewards.values())
                    continue
                placings += 1
                assert aec._cumulative_rewards == {
                    other: before[other] + aec.rewards[other] for other in aec.agents}
                assert aec.agent_selection == next(
                    other for other in aec.agents if aec.terminations[other])
    assert placings > 100


def test_a_step_after_the_game_warns_as_pettingzoos_wrapper() -> None:
    """Stepping CoupEnv itself once every seat is out warns, as env()'s wrapper
    (whose step() after reset() is the environment's)."""
    from pettingzoo.utils.env_logger import EnvLogger

    aec = CoupEnv(players=3)
    aec.reset(seed=3)
    for _agent in aec.agent_iter():
        observation, _, terminated, truncated, _ = aec.last()
        aec.step(None if terminated or truncated
                 else int(observation["action_mask"].nonzero()[0][0]))
    assert aec.agents == []
    EnvLogger.flush()
    aec.step(0)
    assert "step() called after" in EnvLogger.mqueue[0]
