"""A Gymnasium environment: one seat of a game against fixed opponents.

The opponents are SDK bots (a ``Bot`` subclass or instance: they get every
hook and their own ``State``, as under the referee) or policy functions
(``policy(observation) -> action index``, given the same observation dict
as the learning seat).  An episode is one game as far as the learning seat
is concerned: it ends (``terminated``) when that seat is out or the game is
over, with the placement reward; every other step's reward is 0.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium
import numpy as np

from arena.env.aec import CoupEnv, IllegalActionError
from arena.sdk import encoding
from arena.sdk.bot import Bot, Request
from arena.sdk.state import State

Opponent = type[Bot] | Bot | Callable[[dict[str, Any]], int]


class SingleSeatEnv(gymnasium.Env):
    """One seat of ``CoupEnv`` (its keyword arguments in ``env_options``).

    ``seat``: the learning seat, or None for a seat drawn at random each
    episode.  ``opponents``: one per other seat, in seat order skipping the
    learning seat; the number of players is ``len(opponents) + 1``.
    """

    metadata = {"render_modes": ["human", "ansi"]}

    def __init__(self, opponents: Sequence[Opponent], seat: int | None = 0,
                 render_mode: str | None = None, **env_options: Any) -> None:
        players = len(opponents) + 1
        self.aec = CoupEnv(players=players, render_mode=render_mode, **env_options)
        self.render_mode = render_mode
        if seat is not None and not 0 <= seat < players:
            raise ValueError(f"seat {seat} is not a seat of a {players}-player game")
        self.fixed_seat = seat
        self._opponents = [bot() if isinstance(bot, type) else bot for bot in opponents]
        self.observation_space = self.aec.observation_space("seat_0")
        self.action_space = self.aec.action_space("seat_0")
        self._seat_rng = random.Random()
        self.seat = 0 if seat is None else seat
        self._players: dict[str, Any] = {}

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[dict[str, np.ndarray], dict]:
        super().reset(seed=seed)
        if seed is not None:
            self._seat_rng = random.Random(seed)
        self.aec.reset(seed=seed)
        if self.fixed_seat is None:
            self.seat = self._seat_rng.randrange(self.aec.players)
        others = [s for s in range(self.aec.players) if s != self.seat]
        self.agent = self.aec.possible_agents[self.seat]
        self._players = {self.aec.possible_agents[s]: player
                         for s, player in zip(others, self._opponents, strict=True)}
        self._requests = 0
        for agent, player in self._players.items():
            if isinstance(player, Bot):
                player.on_game_start(self.aec.state_of(agent))
        observation, _, done, info = self._advance()
        assert not done, "the game cannot end before every seat has acted"
        return observation, info

    def step(self, action: int) -> tuple[dict[str, np.ndarray], float, bool, bool, dict]:
        if self.aec.agent_selection != self.agent:
            raise RuntimeError("the episode is over: call reset()")
        self.aec.step(action)
        observation, reward, done, info = self._advance()
        return observation, reward, done, False, info

    def _advance(self) -> tuple[dict[str, np.ndarray], float, bool, dict]:
        """Play the opponents until the learning seat acts or is done."""
        aec = self.aec
        me = self.agent
        while True:
            if aec.terminations.get(me, True):
                return self._result(done=True)
            agent = aec.agent_selection
            if agent == me:
                return self._result(done=False)
            if aec.terminations[agent]:
                self._finish(agent)
                aec.step(None)
                continue
            aec.step(self._opponent_action(agent))

    def _result(self, done: bool) -> tuple[dict[str, np.ndarray], float, bool, dict]:
        aec = self.aec
        reward = float(aec._cumulative_rewards.get(self.agent, 0.0))
        aec._cumulative_rewards[self.agent] = 0.0
        info = dict(aec.infos.get(self.agent, {}))
        info["seat"] = self.seat
        if done:
            game = aec.game
            assert game is not None
            info["placements"] = game.result.placements if game.result else None
        return aec.observe(self.agent), reward, done, info

    def _opponent_action(self, agent: str) -> int:
        aec = self.aec
        player = self._players[agent]
        game = aec.game
        assert game is not None
        seat = aec.possible_agents.index(agent)
        if not isinstance(player, Bot):
            return int(player(aec.observe(agent)))
        state = aec.state_of(agent, player.on_event)
        legal = game.legal(seat)
        asked = game.request
        assert asked is not None
        self._requests += 1
        request = Request(self._requests, asked.kind, legal, 0, asked.actor, asked.action,
                          asked.target, asked.claimant, asked.character)
        decision = player.decide(state, request)
        if not any(decision is d for d in legal) and decision not in legal:
            raise IllegalActionError(f"opponent {agent} ({type(player).__name__}) answered "
                                     f"{decision!r}, not one of {request.tokens()}")
        return encoding.action_index(decision, seat, aec.players)

    def _finish(self, agent: str) -> None:
        player = self._players.get(agent)
        if isinstance(player, Bot):
            state: State = self.aec.state_of(agent, player.on_event)
            if self.aec.game is not None and self.aec.game.result is not None:
                player.on_game_over(state)

    def render(self) -> str | None:
        return self.aec.render()

    def close(self) -> None:
        self.aec.close()
