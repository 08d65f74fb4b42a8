"""A PettingZoo AEC environment over the rules engine, in-process.

Agents are ``seat_0`` ... ``seat_{n-1}``.  Each step, ``agent_selection`` is
a seat the engine waits for; when the engine asks several seats at once (a
challenge or block opportunity, the draft), they act one after the other,
and none sees the others' answers before the opportunity is resolved, as
in the referee.  Actions and observations are ``arena.sdk.encoding``'s:

- action space: ``Discrete(87)``, with ``observation["action_mask"]``
  (int8) marking the legal answers; an illegal action raises
  ``IllegalActionError`` and changes nothing;
- observation: ``{"observation": Box(0, 1, (267,), float32), "action_mask":
  Box(0, 1, (87,), int8)}``: what ``encoding.observation`` computes for an
  SDK bot in that seat from its protocol lines, never from the engine's
  hidden state.  Each event is followed once for all seats
  (``observations.Observations``: the vectors' blocks, each made again
  when an event changes it; a secret card goes only to the seats
  ``observer.view`` shows it to).  Each observation's arrays are its own
  (a new vector, a copy of the cached mask), writable: a replay buffer may
  keep them across steps, and a caller may write to them.
  ``state_of(agent)`` gives the whole SDK State of a seat, ``lines(agent)``
  its events as protocol lines; with ``info_lines=True`` they are in
  ``infos[agent]["lines"]``.

Rewards come from placements: ``reward(place, players)`` (default
``linear_reward``: 1 for first, -1 for last, evenly between) is given when
the place is known, i.e. when the seat is out or the game ends; a seat that
is out is terminated then (it steps once more with ``None``, as PettingZoo
asks), and every seat left is terminated at the end of the game (the turn
limit is a rule of the game: termination, not truncation).  A step once
every seat is out warns, as PettingZoo's order-enforcing wrapper does.

``reset(seed=n)`` replays the same game for the same actions: the game seeds
come from a ``random.Random(n)``, one per reset; ``reset()`` without a seed
goes on with the next one.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any, Final

import gymnasium
import numpy as np
from pettingzoo import AECEnv
from pettingzoo.utils.env_logger import EnvLogger

from arena.engine.cards import DEFAULT_VARIANT, MAX_PLAYERS, MIN_PLAYERS, VARIANTS
from arena.engine.decisions import Decision
from arena.engine.game import Game
from arena.engine.observer import SPECTATOR, view
from arena.engine.rules import DEFAULT_TURN_LIMIT
from arena.env.observations import _HANDLERS as observations_handlers
from arena.env.observations import Observations
from arena.protocol.codec import encode_event, seat_seed
from arena.sdk import encoding
from arena.sdk.state import State
from arena.transcript import Transcript

Reward = Callable[[int, int], float]

# Looked up once, not at every observation (a dtype, not the type: frombuffer
# takes it some 40 ns sooner).
_frombuffer: Final = np.frombuffer
_FLOAT32: Final = np.dtype(np.float32)
_route: Final = observations_handlers.get


class IllegalActionError(ValueError):
    """An action that is not a legal answer now (see the action mask)."""


def linear_reward(place: int, players: int) -> float:
    """1 for first place, -1 for last, evenly spaced between (ties share a place)."""
    return 1.0 - 2.0 * (place - 1) / (players - 1)


def winner_reward(place: int, players: int) -> float:
    """1 for first place (alone or tied), -1 for every other place."""
    return 1.0 if place == 1 else -1.0


class CoupEnv(AECEnv):
    """Coup for 2-8 players.  See the module docstring."""

    metadata = {"name": "arena_coup_v0", "render_modes": ["human", "ansi"],
                "is_parallelizable": False}

    def __init__(self, players: int = 4, variant: str = DEFAULT_VARIANT,
                 draft: bool | None = None, turn_limit: int = DEFAULT_TURN_LIMIT,
                 reward: Reward = linear_reward, info_lines: bool = False,
                 render_mode: str | None = None) -> None:
        super().__init__()
        if not MIN_PLAYERS <= players <= MAX_PLAYERS:
            raise ValueError(f"{players} players: Coup is for {MIN_PLAYERS} to {MAX_PLAYERS}")
        if variant not in VARIANTS:
            raise ValueError(f"unknown variant {variant!r}: use {' or '.join(VARIANTS)}")
        if draft and players != 2:
            raise ValueError("the draft setup is for 2 players only")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode {render_mode!r}: use human, ansi or None")
        self.players = players
        self.variant = variant
        self.draft = draft
        self.turn_limit = turn_limit
        self.reward = reward
        self.info_lines = info_lines
        self.render_mode = render_mode
        self.possible_agents = [f"seat_{seat}" for seat in range(players)]
        self._seat = {agent: seat for seat, agent in enumerate(self.possible_agents)}
        # What reset() copies (a copy is quicker than dict.fromkeys).
        self._zeros = dict.fromkeys(self.possible_agents, 0.0)
        self._falses = dict.fromkeys(self.possible_agents, False)
        observation = gymnasium.spaces.Dict({
            "observation": gymnasium.spaces.Box(0.0, 1.0, (encoding.OBSERVATION_SIZE,),
                                                np.float32),
            "action_mask": gymnasium.spaces.Box(0, 1, (encoding.ACTION_COUNT,), np.int8),
        })
        self.observation_spaces = {agent: observation for agent in self.possible_agents}
        self.action_spaces = {agent: gymnasium.spaces.Discrete(encoding.ACTION_COUNT)
                              for agent in self.possible_agents}
        self._seeds = random.Random()
        self._masks: list[dict[int, tuple[Any, np.ndarray, dict[int, Decision]]]] = [
            {} for _ in range(players)]
        # The agent observe() last looked up (until a decision), its seat and its
        # legal answers by action index.
        self._observed_agent: str | None = None
        self._observed_seat = -1
        self._observed: dict[int, Decision] = {}
        self._has_updated = False  # env()'s wrapper's, kept here: see step()
        self.game: Game | None = None
        self.game_seed: int | None = None
        self._observations: Observations | None = None

    def observation_space(self, agent: str) -> gymnasium.spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.spaces.Space:
        return self.action_spaces[agent]

    # -- the game ------------------------------------------------------------

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None:
            self._seeds = random.Random(seed)
        self.game_seed = self._seeds.getrandbits(64)
        game = self.game = Game.new(self.players, self.game_seed, self.variant, self.draft,
                                    self.turn_limit)
        # Every seat's observation vector, following each event once, as the
        # engine keeps it (Game.event_fields: no event built).
        if self._observations is None:
            self._observations = Observations(self.players, self.variant)
        else:
            self._observations.restart()
        self._records: list[tuple[type, tuple[Any, ...]]] | None = game.event_fields
        self._states: list[State | None] = [None] * self.players  # state_of's, when asked
        self._seen = [0] * self.players  # events each of those has taken in
        self._rendered = 0
        self._placed: set[int] = set()
        self.agents = self.possible_agents[:]
        self.rewards = self._zeros.copy()
        self._cumulative_rewards = self._zeros.copy()
        self.terminations = self._falses.copy()
        self.truncations = self._falses.copy()
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in self.agents}
        self._skip_agent_selection = None
        self._rewarded = False
        self._observed_agent = None
        self._select(game)

    def state_of(self, agent: str,
                 on_event: Callable[[State, Any], None] | None = None) -> State:
        """The SDK ``State`` of a seat, up to date: what an SDK bot in it would know.

        ``on_event(state, event)`` is called after each event it takes in.
        """
        seat = self._seat[agent]
        state = self._states[seat]
        if state is None:
            state = self._states[seat] = State(seat, self.possible_agents, self.variant,
                                               seed=seat_seed(self.game_seed, seat))
        events = self.game.events  # type: ignore[union-attr]
        seen = self._seen[seat]
        self._seen[seat] = len(events)
        for event in events[seen:]:
            event = view(event, seat)
            state.apply(event)
            if on_event is not None:
                on_event(state, event)
        return state

    def lines(self, agent: str) -> list[str]:
        """Every event of this game so far as protocol lines, as ``agent`` sees them."""
        return [encode_event(event) for event in self.state_of(agent).history]

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        # AECEnv.last, with observe() inline (asked once a step: two calls fewer).
        agent = self.agent_selection
        records = self._records
        if not observe or records is None or self.info_lines:
            return (self.observe(agent) if observe else None, self._cumulative_rewards[agent],
                    self.terminations[agent], self.truncations[agent], self.infos[agent])
        game = self.game
        observations = self._observations
        followed = observations.followed
        if followed != len(records):  # observations.follow_records, inline
            route = _route
            for kind, fields in records[followed:]:
                handler = route(kind)
                if handler is not None:
                    handler(observations, fields)
            observations.followed = len(records)
        seat = self._seat[agent]
        legal = game.legal(seat)
        found = self._masks[seat].get(id(legal)) or self._legal_of(legal, seat)
        self._observed_agent = agent
        self._observed_seat = seat
        self._observed = found[2]
        return ({"observation": _frombuffer(observations.vector(seat, game.request if legal
                                                                else None), _FLOAT32),
                 "action_mask": found[1].copy()}, self._cumulative_rewards[agent],
                self.terminations[agent], self.truncations[agent], self.infos[agent])

    def agent_iter(self, max_iter: int = 2**63) -> Iterator[str]:  # type: ignore[override]
        """AECEnv's iterator as a generator, which resumes more cheaply than an
        iterator's ``__next__`` is called (once a step)."""
        while self.agents and max_iter > 0:
            max_iter -= 1
            yield self.agent_selection

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        game = self.game
        assert game is not None
        observations = self._observations
        records = self._records
        if records is None:
            events = game.events
            if observations.followed != len(events):
                observations.follow(events)
        elif observations.followed != len(records):
            observations.follow_records(records)
        seat = self._seat[agent]
        legal = game.legal(seat)
        found = self._masks[seat].get(id(legal)) or self._legal_of(legal, seat)
        # What step() will most likely be asked about (forgotten at each decision).
        self._observed_agent = agent
        self._observed_seat = seat
        self._observed = found[2]
        if self.info_lines and agent in self.infos:
            self.infos[agent]["lines"] = self.lines(agent)
        return {"observation": _frombuffer(observations.vector(seat, game.request if legal
                                                               else None), _FLOAT32),
                "action_mask": found[1].copy()}

    def _legal_of(self, legal: tuple[Decision, ...],
                  seat: int) -> tuple[Any, np.ndarray, dict[int, Decision]]:
        """(legal, its action mask, index -> decision), made once per list of answers.

        The engine shares its lists of legal answers, so they are keyed by id
        (one dict per seat, as targets are relative); the cache keeps each
        list alive, so that its id stays its own.
        """
        masks = self._masks[seat]
        found = masks.get(id(legal))
        if found is None:
            if len(masks) > 20_000:
                masks.clear()
            indices = encoding.legal_indices(legal, seat, self.players)
            mask = np.zeros(encoding.ACTION_COUNT, np.int8)
            mask[indices] = 1
            found = masks[id(legal)] = (legal, mask, dict(zip(indices, legal, strict=True)))
        return found

    def step(self, action: int | None) -> None:
        # For env()'s order check (order_enforcing): a step since the last agent
        # given out, set here so that the wrapper's step() can be this one.
        self._has_updated = True
        agent = self.agent_selection
        # Mostly the agent last() just observed, with an action it listed as
        # legal: then it is in the game (a seat out has no legal answer).
        decision = (self._observed.get(action)
                    if agent is self._observed_agent and type(action) is int else None)
        if decision is None:
            try:
                dead = self.terminations[agent] or self.truncations[agent]
            except KeyError:  # no seat left (each leaves with its own entries)
                if self.agents:
                    raise
                EnvLogger.warn_step_after_terminated_truncated()  # as PettingZoo's wrapper
                return
            if dead:
                self._was_dead_step(action)
                return
            seat = self._seat[agent]
            if type(action) is int:
                decision = self._legal_of(self.game.legal(seat), seat)[2].get(action)
            if decision is None:  # not an int listed as legal
                decision = self._decision(agent, seat, action)
        else:
            seat = self._observed_seat
        game = self.game
        # A seat in the game has no reward to collect (rewards come with its
        # place, and a placed seat only steps out): _cumulative_rewards[agent]
        # is 0 already.
        self._observed_agent = None
        game.decide(seat, decision)
        if self._rewarded:  # rewards only come with placements: mostly nothing to clear
            self._clear_rewards()
            self._rewarded = False
        if game.result is not None or game.alive.count(False) != len(self._placed):
            self._place_finished(game)
        else:
            seats = game.request.seats  # type: ignore[union-attr]
            if len(seats) == 1:  # mostly: one seat asked
                self.agent_selection = self.possible_agents[seats[0]]
            else:  # the first seat still to answer
                legal = game.legal
                for other in seats:
                    if legal(other):
                        self.agent_selection = self.possible_agents[other]
                        break
        if self.render_mode == "human":
            self.render()

    def _decision(self, agent: str, seat: int, action: Any) -> Decision:
        """The legal answer ``action`` stands for, when it is not an int listed as
        legal: the one of its index if it is a number of another type (a numpy
        int), else IllegalActionError."""
        if action is None:
            raise IllegalActionError(f"{agent} is in the game and must act: None is no action")
        try:
            index = int(action)
        except (TypeError, ValueError):
            raise IllegalActionError(f"{agent}: {action!r} is not an action index") from None
        legal = self.game.legal(seat)  # type: ignore[union-attr]
        decision = self._legal_of(legal, seat)[2].get(index)
        if decision is None:
            what = (encoding.describe_action(index) if 0 <= index < encoding.ACTION_COUNT
                    else "out of range")
            listed = ", ".join(f"{encoding.action_index(d, seat, self.players)} ({d.token})"
                               for d in legal)
            raise IllegalActionError(f"{agent}: action {index} ({what}) is not legal now; "
                                     f"legal: {listed}")
        return decision

    def _was_dead_step(self, action: Any) -> None:
        # AECEnv._was_dead_step, the same steps, in fewer operations (it runs for
        # every seat that goes out): the seat stepping is terminated (step()
        # checked), and _skip_agent_selection always exists (reset() sets it).
        if action is not None:
            raise ValueError("when an agent is dead, the only valid action is None")
        agent = self.agent_selection
        terminations, truncations = self.terminations, self.truncations
        del terminations[agent], truncations[agent], self.rewards[agent]
        del self._cumulative_rewards[agent], self.infos[agent]
        self.agents.remove(agent)
        for other in self.agents:  # the next seat out steps next
            if terminations[other] or truncations[other]:
                if self._skip_agent_selection is None:
                    self._skip_agent_selection = agent
                self.agent_selection = other
                break
        else:
            if self._skip_agent_selection is not None:
                self.agent_selection = self._skip_agent_selection
            self._skip_agent_selection = None
        if self._rewarded:  # else every reward is 0 already
            rewards = self.rewards
            for other in rewards:
                rewards[other] = 0
            self._rewarded = False

    def _place_finished(self, game: Game) -> None:
        """Reward and terminate every seat whose place became known, and have the
        first of them step next: AECEnv's ``_accumulate_rewards`` (the other
        seats' rewards are 0) and ``_deads_step_first``, in fewer operations."""
        n = self.players
        placed = self._placed
        if game.result is not None:
            places = game.result.placements
            done = [seat for seat in range(n) if seat not in placed]
        else:
            alive = game.alive
            done = [seat for seat in range(n) if not alive[seat] and seat not in placed]
            # An eliminated seat's place: one more than the seats still in.
            places = [alive.count(True) + 1] * n
        rewards, cumulative = self.rewards, self._cumulative_rewards
        terminations, truncations = self.terminations, self.truncations
        for seat in done:
            agent = self.possible_agents[seat]
            placed.add(seat)
            reward = rewards[agent] = float(self.reward(places[seat], n))
            cumulative[agent] += reward
            terminations[agent] = True
        self._rewarded = True
        self._select(game)
        for agent in self.agents:
            if terminations[agent] or truncations[agent]:
                self._skip_agent_selection = self.agent_selection
                self.agent_selection = agent
                break

    def _select(self, game: Game) -> None:
        """The next agent: a seat the engine waits for (terminated seats step first:
        ``_deads_step_first``)."""
        request = game.request
        if request is not None:
            seats = request.seats
            if len(seats) == 1:
                self.agent_selection = self.possible_agents[seats[0]]
                return
            for seat in seats:
                if game.legal(seat):
                    self.agent_selection = self.possible_agents[seat]
                    return
        elif self.agents:
            self.agent_selection = self.agents[0]

    # -- rendering -----------------------------------------------------------

    def render(self) -> str | None:
        """The new events in plain words, as a spectator sees them (no hidden card)."""
        if self.render_mode is None:
            gymnasium.logger.warn("render() without a render_mode: pass render_mode='ansi'")
            return None
        game = self.game
        if game is None:
            return "" if self.render_mode == "ansi" else None
        transcript = Transcript(self.possible_agents)
        text = "\n".join(transcript.line(view(event, SPECTATOR))
                         for event in game.events[self._rendered:])
        self._rendered = len(game.events)
        if self.render_mode == "ansi":
            return text
        if text:
            print(text)
        return None

    def close(self) -> None:
        self.game = None
