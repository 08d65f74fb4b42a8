"""arena.env: the PettingZoo AEC environment and the single-seat Gymnasium one.

PettingZoo's and Gymnasium's own checks run unchanged.  Of pettingzoo.test,
the ones for AEC environments run here: api_test, seed_test and
render_test.  The others do not apply: bombardment_test compares a
dict observation's array with the whole dict (observation["observation"]
against the first observation, itself a dict) and fails on any environment
whose observation holds an action mask, as PettingZoo advises;
max_cycles_test needs a parallel version and a max_cycles option (Coup is
turn-based, and its turn limit is a rule of the game), parallel_api_test
and parallel_seed_test are for parallel environments, state_test needs a
global state() (a centralised view holding every hidden card, which this
environment does not offer), save_obs_test is for image observations,
manual_control_test for keyboard-played games, and performance_benchmark
asserts nothing (bench/env.py measures the speed).
"""

from __future__ import annotations

import random
import re
import warnings
from collections.abc import Callable

import pytest

pytest.importorskip("pettingzoo", reason="needs the rl extra: pip install 'arena[rl]'")

import numpy as np  # noqa: E402
from gymnasium.utils import env_checker as checker  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from pettingzoo.test import api_test, render_test, seed_test  # noqa: E402
from pettingzoo.utils import wrappers  # noqa: E402
from pettingzoo.utils.env_logger import EnvLogger  # noqa: E402

from arena.engine.decisions import KEEP  # noqa: E402
from arena.engine.observer import OMNISCIENT, SPECTATOR, seat_views, view  # noqa: E402
from arena.env import (  # noqa: E402
    CoupEnv,
    IllegalActionError,
    SingleSeatEnv,
    env,
    winner_reward,
)
from arena.protocol.codec import encode_event, encode_game_start, encode_request  # noqa: E402
from arena.sdk import Bot, Session, encoding  # noqa: E402
from arena.sdk.policy import PolicyBot, observe  # noqa: E402

SETUPS = [
    {"players": 2},  # the draft
    {"players": 2, "variant": "inquisitor", "draft": False},
    {"players": 3, "variant": "inquisitor"},
    {"players": 4},
    {"players": 6, "variant": "inquisitor"},
    {"players": 8},
]


def _id(setup: dict) -> str:
    return "-".join(str(value) for value in setup.values())


# ------------------------------------------------------- PettingZoo's own tests


@pytest.mark.parametrize("setup", SETUPS, ids=_id)
def test_pettingzoo_api_test(setup: dict) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its advice (Box spaces, ...) is not a failure
        api_test(env(**setup), num_cycles=400)


@pytest.mark.parametrize("setup", SETUPS, ids=_id)
def test_pettingzoo_seed_test(setup: dict) -> None:
    seed_test(lambda: env(**setup), num_cycles=400)


def _outcome(call: Callable[[], object]) -> tuple[str, str]:
    try:
        result = call()
    except (AssertionError, AttributeError) as error:
        return type(error).__name__, str(error)
    return "value", repr(result) if not isinstance(result, dict) else repr(sorted(result))


def test_env_wrapper_makes_pettingzoos_order_checks() -> None:
    """``env()``'s quicker wrapper fails, warns and answers as PettingZoo's."""
    ours, theirs = env(players=3), wrappers.OrderEnforcingWrapper(CoupEnv(players=3))
    assert type(ours) is not wrappers.OrderEnforcingWrapper

    def same(ask: Callable[[object], object]) -> tuple[str, str]:
        first, second = _outcome(lambda: ask(ours)), _outcome(lambda: ask(theirs))
        assert first == second
        return first

    before: list[Callable[[object], object]] = [
        lambda e: e.step(0), lambda e: e.observe("seat_0"), lambda e: e.agent_iter(),
        lambda e: e.last(), lambda e: e.last(observe=False), lambda e: e.num_agents,
        lambda e: e.possible_agents, lambda e: str(e), lambda e: e._masks]
    before += [lambda e, name=name: getattr(e, name) for name in
               ("agents", "agent_selection", "rewards", "terminations", "truncations",
                "infos")]
    for ask in before:
        same(ask)
    assert same(lambda e: e.agent_selection)[0] == "AttributeError"
    assert same(lambda e: e.step(0))[0] == "AssertionError"
    for wrapper in (ours, theirs):
        wrapper.reset(seed=7)
    for ask in before[3:]:
        same(ask)
    assert same(lambda e: next(iter(e.agent_iter())))[0] == "value"
    assert same(lambda e: next(iter(e.agent_iter())))[0] == "AssertionError"  # no step between
    assert same(lambda e: e._cumulative_rewards)[0] == "value"
    for wrapper in (ours, theirs):  # the game to its end, stepping seats out with None
        wrapper.reset(seed=7)
        for _agent in wrapper.agent_iter():
            observation, _reward, terminated, truncated, _info = wrapper.last()
            wrapper.step(None if terminated or truncated
                         else int(observation["action_mask"].nonzero()[0][0]))
    assert same(lambda e: (e.agents, e.rewards, e.infos, e.num_agents)) == (
        "value", "([], {}, {}, 0)")
    warned = []
    for wrapper in (ours, theirs):  # PettingZoo's warning, once the game is over
        EnvLogger.flush()
        wrapper.step(0)
        warned.append(EnvLogger.mqueue[:])
    assert warned[0] == warned[1] and "step() called after" in warned[0][0]


def test_pettingzoo_render_test(capsys: pytest.CaptureFixture[str]) -> None:
    render_test(lambda render_mode=None: env(players=3, render_mode=render_mode),
                custom_tests={"ansi": lambda text: "?" not in text})
    assert "game of 3" in capsys.readouterr().out  # human mode printed the game


def test_gymnasium_checks_on_the_single_seat_env() -> None:
    """Gymnasium's env_checker, but for the checks that step with an unmasked random
    action (check_step_determinism, check_returned_data_not_reused): here an illegal
    action raises, by design.  Stepping is checked with a legal action."""
    single = SingleSeatEnv([_FirstLegal, lambda obs: int(np.flatnonzero(
        obs["action_mask"])[-1])], seat=None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # Gymnasium's warnings are failures here
        checker.check_action_space(single.action_space)
        checker.check_observation_space(single.observation_space)
        checker.check_reset_return_info_deprecation(single)
        checker.check_reset_return_type(single)
        checker.check_reset_seed_determinism(single)
        checker.check_reset_options(single)
        observation = checker.env_reset_passive_checker(single, seed=3)[0]
        legal = int(np.flatnonzero(observation["action_mask"])[0])
        checker.env_step_passive_checker(single, legal)


# ------------------------------------------------------------ the rules of use


def test_an_illegal_action_raises_and_changes_nothing() -> None:
    aec = CoupEnv(players=3)
    aec.reset(seed=1)
    agent = aec.agent_selection
    mask = aec.observe(agent)["action_mask"]
    illegal = int(np.flatnonzero(mask == 0)[0])
    before = (list(aec.game.history), len(aec.game.events), aec.agent_selection)
    with pytest.raises(IllegalActionError, match=rf"{agent}: action {illegal} .* not legal now"):
        aec.step(illegal)
    for bad in (None, encoding.ACTION_COUNT, -1, "tax"):
        with pytest.raises(IllegalActionError):
            aec.step(bad)
    assert (list(aec.game.history), len(aec.game.events), aec.agent_selection) == before
    aec.step(int(np.flatnonzero(mask)[0]))  # a legal one still works
    assert len(aec.game.history) == len(before[0]) + 1


def test_reset_with_a_seed_replays_the_game_and_rewards_follow_placements() -> None:
    def play(seed: int) -> tuple[list, dict, tuple]:
        aec = CoupEnv(players=4, variant="inquisitor", reward=winner_reward)
        aec.reset(seed=seed)
        rng = random.Random(5)
        seen, totals = [], {}
        for agent in aec.agent_iter():
            observation, reward, terminated, truncated, _ = aec.last()
            totals[agent] = totals.get(agent, 0.0) + reward
            seen.append((agent, observation["observation"].tobytes()))
            if terminated or truncated:
                aec.step(None)
            else:
                aec.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
        return seen, totals, aec.game.result.placements

    first, totals, placements = play(7)
    assert play(7)[0] == first
    assert play(8)[0] != first
    for seat, place in enumerate(placements):
        assert totals[f"seat_{seat}"] == (1.0 if place == 1 else -1.0)


# ------------------------------------- observations hold only what the seat sees


class _FirstLegal(Bot):
    name = "first"

    def decide(self, state, request):
        return request.legal[0]


class _Observer(_FirstLegal):
    """Keeps what it was asked and the observation an SDK bot computes for it."""

    def decide(self, state, request):
        self.request, self.observation = request, observe(state, request)
        return super().decide(state, request)


@settings(max_examples=30, deadline=None)
@given(players=st.integers(2, 8), variant=st.sampled_from(["ambassador", "inquisitor"]),
       plain=st.booleans(), seed=st.integers(0, 2**32), choices=st.randoms(use_true_random=False))
def test_no_observation_holds_a_card_its_seat_may_not_see(
        players: int, variant: str, plain: bool, seed: int, choices: random.Random) -> None:
    """Each observation equals the one an SDK bot computes from that seat's protocol
    lines alone (the events as observer.view shows them to the seat), and what it
    says of other seats' face-down cards is only what those lines reveal."""
    aec = CoupEnv(players=players, variant=variant, draft=False if plain else None)
    aec.reset(seed=seed)
    game = aec.game
    names = aec.possible_agents
    sessions = [Session(_Observer()) for _ in range(players)]
    for seat, session in enumerate(sessions):
        session.feed(encode_game_start(1, seat, names, variant))
    sent = [0] * players
    ids = [0] * players
    for agent in aec.agent_iter():
        observation, _, terminated, truncated, _ = aec.last()
        seat = names.index(agent)
        lines = [encode_event(view(event, seat)) for event in game.events[sent[seat]:]]
        sent[seat] = len(game.events)
        for line in lines:
            sessions[seat].feed(line)
        state = sessions[seat].state
        if terminated or truncated:
            expected = encoding.observation(state, None)
            assert observation["observation"].tolist() == np.float32(expected).tolist()
            aec.step(None)
            continue
        ids[seat] += 1
        legal = game.legal(seat)
        assert sessions[seat].feed(encode_request(ids[seat], game.request, legal, 1000))
        bot = sessions[seat].bot
        request, expected = bot.request, bot.observation
        assert observation["observation"].tolist() == np.float32(expected["observation"]).tolist()
        assert observation["action_mask"].tolist() == expected["action_mask"]
        _check_hidden_cards(observation["observation"], state, seat, players, game, request)
        aec.step(int(choices.choice(np.flatnonzero(observation["action_mask"]))))


def _check_hidden_cards(vector: np.ndarray, state, seat: int, players: int, game,
                        request) -> None:
    """Own cards as the engine has them; of the others, only face-up and examined cards."""
    offset, _ = encoding.OBSERVATION_FIELDS["hand"]
    hand = list(game.hands[seat]) + (list(game._drawn) if request.kind == KEEP else [])
    for i, card in enumerate(encoding.CARDS):
        assert vector[offset + i] == np.float32(hand.count(card) / 4)
    seats, _ = encoding.OBSERVATION_FIELDS["seats"]
    shown = {}  # what the seat's own lines showed it by examining
    for event in state.history:
        if type(event).__name__ == "ExamineShown" and event.examiner == seat:
            shown[event.target] = event.card
    for slot in range(1, players):
        other = (seat + slot) % players
        base = seats + slot * 23
        face_up = vector[base + 4: base + 10]
        for i, card in enumerate(encoding.CARDS):
            assert face_up[i] == np.float32(game.revealed[other].count(card) / 2)
        known = vector[base + 17: base + 23]
        if known.any():
            card = encoding.CARDS[int(np.flatnonzero(known)[0])]
            assert shown.get(other) == card and card in game.hands[other]


def test_seat_views_gives_each_seat_its_view_of_every_event() -> None:
    """observer.seat_views (each secret blanked once for all seats, as the results
    site's replays use it) gives every seat its view, over the events of env games."""
    rng = random.Random(4)
    seen_secret = 0
    for players, variant in ((2, "ambassador"), (4, "inquisitor"), (6, "inquisitor")):
        aec = CoupEnv(players=players, variant=variant)
        aec.reset(seed=players)
        for _agent in aec.agent_iter():
            observation, _, terminated, truncated, _ = aec.last()
            aec.step(None if terminated or truncated
                     else int(rng.choice(np.flatnonzero(observation["action_mask"]))))
        seats = (SPECTATOR, OMNISCIENT, *range(players))
        for event in aec.game.events:
            views = seat_views(event, seats)
            assert views == [view(event, seat) for seat in seats]
            seen_secret += views[0] != event
    assert seen_secret > 10


# ---------------------------------------------------------- single seat, policies


def test_the_single_seat_env_plays_whole_games_against_sdk_bots_and_policies() -> None:
    def last_legal(observation: dict) -> int:
        return int(np.flatnonzero(observation["action_mask"])[-1])

    single = SingleSeatEnv([_FirstLegal, last_legal, _FirstLegal()], seat=None,
                           variant="inquisitor")
    rng = random.Random(3)
    seats, rewards = set(), []
    for episode in range(12):
        observation, info = single.reset(seed=episode)
        seats.add(info["seat"])
        total, done, steps = 0.0, False, 0
        while not done:
            action = int(rng.choice(np.flatnonzero(observation["action_mask"])))
            observation, reward, done, truncated, info = single.step(action)
            total += reward
            steps += 1
            assert not truncated
        places = info["placements"]
        if places is not None:  # the game is over
            assert total == pytest.approx(1 - 2 * (places[info["seat"]] - 1) / 3)
        else:  # out before the end: the place is already known
            assert total < 1.0
        rewards.append(total)
    assert len(seats) > 1 and len(set(rewards)) > 1
    with pytest.raises(IllegalActionError):
        single.reset(seed=0)
        mask = single.aec.observe(single.agent)["action_mask"]
        single.step(int(np.flatnonzero(mask == 0)[0]))


def test_a_policy_plays_the_same_in_the_env_and_as_an_sdk_bot() -> None:
    """PolicyBot, fed the protocol lines, chooses what the policy chose in the env."""
    weights = np.random.default_rng(1).normal(size=(encoding.OBSERVATION_SIZE,
                                                     encoding.ACTION_COUNT))

    def policy(observation: dict) -> int:
        scores = np.asarray(observation["observation"], np.float32) @ weights
        return int(np.argmax(np.where(np.asarray(observation["action_mask"]) == 1, scores,
                                      -np.inf)))

    aec = CoupEnv(players=3)
    aec.reset(seed=11)
    bots = [Session(PolicyBot(policy, name=f"p{seat}")) for seat in range(3)]
    for seat, session in enumerate(bots):
        session.feed(encode_game_start(1, seat, aec.possible_agents, "ambassador"))
    sent, ids, moves = [0] * 3, [0] * 3, 0
    for agent in aec.agent_iter():
        observation, _, terminated, truncated, _ = aec.last()
        if terminated or truncated:
            aec.step(None)
            continue
        seat = aec.possible_agents.index(agent)
        for event in aec.game.events[sent[seat]:]:
            bots[seat].feed(encode_event(view(event, seat)))
        sent[seat] = len(aec.game.events)
        ids[seat] += 1
        legal = aec.game.legal(seat)
        reply = bots[seat].feed(encode_request(ids[seat], aec.game.request, legal, 1000))
        action = policy(observation)
        assert reply is not None and re.fullmatch(r"\d+ \S+", reply)
        token = reply.split()[1]
        assert encoding.action_index(next(d for d in legal if d.token == token), seat, 3) == action
        aec.step(action)
        moves += 1
    assert moves > 10


def test_every_action_index_names_one_answer() -> None:
    assert encoding.ACTION_COUNT == 87
    assert len(set(encoding.ACTION_KEYS)) == 87
    assert encoding.describe_action(4) == "coup on slot 1"
    assert encoding.describe_action(86) == "force:no"
    assert sum(length for _, length in encoding.OBSERVATION_FIELDS.values()) == 267
