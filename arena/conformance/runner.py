"""Runs conformance scenarios (scenarios/README.md) against the engine.

The suite that ships with arena is under ``SHIPPED``: the public scenarios of
the contest (``public/``, kept under their own names) and the project's own.
A scenario file is read into a ``Scenario``; problems with the file itself
(not JSON, a missing field) raise ``ScenarioFileError`` with one line naming
the file.  An invalid *setup* is not a file problem: it is an outcome that a
scenario may expect (``"error": "setup"``).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs

from arena.engine.cards import ALL_CARDS, VARIANTS
from arena.engine.decisions import (
    ACTION,
    BLOCK,
    CHALLENGE,
    CHALLENGE_DECISION,
    FORCE,
    KEEP,
    LOSE,
    PASS_DECISION,
    SHOW,
    Decision,
)
from arena.engine.errors import EngineError, SetupError
from arena.engine.game import Game, Setup
from arena.engine.rules import ACTIONS, INQUISITOR

SHIPPED = Path(__file__).resolve().parent / "scenarios"

_MOVE_KINDS = {"action": ACTION, "challenge": CHALLENGE, "block": BLOCK, "lose": LOSE,
               "keep": KEEP, "show": SHOW, "force": FORCE}
_EXPECT_FIELDS = ("coins", "hands", "revealed", "alive", "court", "turn", "winner", "error")


class ScenarioFileError(Exception):
    """A scenario file that cannot be read as a scenario."""


class MoveError(Exception):
    """A move that is malformed, never asked for, or rejected by the engine."""

    def __init__(self, index: int, reason: str) -> None:
        self.index = index
        self.reason = reason
        super().__init__(f"move {index}: {reason}")


@attrs.frozen
class Scenario:
    name: str
    path: str
    setup: dict[str, Any]
    moves: tuple[dict[str, Any], ...]
    expect: dict[str, Any]


@attrs.frozen
class Outcome:
    scenario: str
    passed: bool
    detail: str = ""  # why it failed

    def line(self) -> str:
        return f"PASS {self.scenario}" if self.passed else f"FAIL {self.scenario}: {self.detail}"


def scenario_files(paths: list[str]) -> Iterator[Path]:
    """The .json files named, and those under the folders named, sorted."""
    for arg in paths:
        path = Path(arg)
        if path.is_dir():
            yield from sorted(path.rglob("*.json"))
        else:
            yield path


def load_scenario(path: Path) -> Scenario:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ScenarioFileError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioFileError(f"{path}: cannot read: {exc}") from None
    except json.JSONDecodeError as exc:
        raise ScenarioFileError(f"{path}: not JSON ({exc.msg}: line {exc.lineno} column "
                                f"{exc.colno})") from None
    if not isinstance(data, dict):
        raise ScenarioFileError(f"{path}: a scenario is a JSON object")
    for field, kind in (("setup", dict), ("moves", list), ("expect", dict)):
        if field not in data:
            raise ScenarioFileError(f"{path}: missing field {field!r}")
        if not isinstance(data[field], kind):
            raise ScenarioFileError(f"{path}: field {field!r} must be a JSON {kind.__name__}")
    unknown = set(data["expect"]) - set(_EXPECT_FIELDS)
    if unknown:
        fields = "field" if len(unknown) == 1 else "fields"
        raise ScenarioFileError(f"{path}: unknown expect {fields} {', '.join(sorted(unknown))}")
    if not all(isinstance(move, dict) for move in data["moves"]):
        raise ScenarioFileError(f"{path}: every move must be a JSON object")
    name = data.get("name") or path.stem
    return Scenario(str(name), str(path), data["setup"], tuple(data["moves"]), data["expect"])


def setup_from_json(data: dict[str, Any]) -> Setup:
    """A ``Setup`` from a scenario's setup object; SetupError if it is invalid."""
    try:
        players = data["players"]
        hands = data["hands"]
        court = data["court"]
    except KeyError as exc:
        raise SetupError(f"setup misses {exc.args[0]!r}") from None
    variant = data.get("variant", VARIANTS[0])
    revealed = data.get("revealed", [[] for _ in range(players)] if _is_int(players) else [])
    coins = data.get("coins", [2] * players if _is_int(players) else [])
    first = data.get("first", 0)
    # The player count's range and the variant are the engine's to check.
    if not _is_int(players):
        raise SetupError(f"players must be a whole number, got {players!r}")
    for field, value in (("hands", hands), ("revealed", revealed), ("coins", coins)):
        if not isinstance(value, list) or len(value) != players:
            raise SetupError(f"{field} must be a list of {players} entries")
    for cards in [*hands, *revealed, court]:
        if not isinstance(cards, list) or not all(card in ALL_CARDS for card in cards):
            raise SetupError(f"unknown card in {cards!r}")
    if not all(_is_int(c) and c >= 0 for c in coins):
        raise SetupError(f"coins must be whole numbers >= 0, got {coins!r}")
    if not _is_int(first):
        raise SetupError(f"first must be a seat number, got {first!r}")
    return Setup(
        hands=tuple(tuple(h) for h in hands),
        court=tuple(court),
        revealed=tuple(tuple(r) for r in revealed),
        coins=tuple(coins),
        first=first,
        variant=variant,
    )


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _decision(index: int, move: dict[str, Any], variant: str) -> tuple[int, str, Decision]:
    """The seat, request kind and decision a move stands for; MoveError if malformed."""
    player = move.get("player")
    keys = [key for key in move if key not in ("player", "target")]
    if not _is_int(player):
        raise MoveError(index, "a move needs a 'player' seat number")
    if len(keys) != 1 or keys[0] not in _MOVE_KINDS:
        raise MoveError(index, f"a move needs exactly one of {', '.join(_MOVE_KINDS)}")
    key = keys[0]
    value = move[key]
    target = move.get("target")
    if key != "action" and "target" in move:
        raise MoveError(index, "'target' only goes with an action")
    if key == "action":
        rule = ACTIONS[INQUISITOR].get(value) if isinstance(value, str) else None
        if rule is None:
            raise MoveError(index, f"unknown action {value!r}")
        if rule.targeted != ("target" in move) or (rule.targeted and not _is_int(target)):
            needs = "needs" if rule.targeted else "takes no"
            raise MoveError(index, f"{value} {needs} target")
        return player, ACTION, Decision(value, target=target)
    if key == "challenge":
        if value is not True:
            raise MoveError(index, "'challenge' must be true")
        return player, CHALLENGE, CHALLENGE_DECISION
    if key in ("block", "lose", "show"):
        if value not in ALL_CARDS:
            raise MoveError(index, f"unknown card {value!r}")
        return player, _MOVE_KINDS[key], Decision(key, card=value)
    if key == "keep":
        if not isinstance(value, list) or not all(card in ALL_CARDS for card in value):
            raise MoveError(index, "'keep' needs a list of card names")
        return player, KEEP, Decision(KEEP, cards=tuple(sorted(value)))
    if not isinstance(value, bool):
        raise MoveError(index, "'force' must be true or false")
    return player, FORCE, Decision(FORCE, force=value)


def play_moves(game: Game, moves: tuple[dict[str, Any], ...]) -> None:
    """Answer the game's requests from the script (README.md, "How a scenario runs").

    Each move is read when its turn comes, so the first move that is an error
    is the first in script order: a malformed move never hides an illegal one
    before it.
    """
    parsed: dict[int, tuple[int, str, Decision]] = {}

    def move(index: int) -> tuple[int, str, Decision]:
        if index not in parsed:
            parsed[index] = _decision(index, moves[index], game.variant)
        return parsed[index]

    i = 0

    def decide(seat: int, decision: Decision) -> None:
        try:
            game.decide(seat, decision)
        except EngineError as exc:
            raise MoveError(i, str(exc)) from None

    while not game.over:
        request = game.request
        assert request is not None
        if request.optional:
            answered: set[int] = set()
            while i < len(moves):
                seat, kind, decision = move(i)
                if kind != request.kind or seat not in request.seats:
                    break
                if seat in answered:
                    raise MoveError(i, f"seat {seat} answers the same opportunity twice")
                decide(seat, decision)
                answered.add(seat)
                i += 1
                if game.request is not request:
                    break  # every seat offered has answered
            if game.request is request:
                for seat in request.seats:
                    if seat not in answered:
                        game.decide(seat, PASS_DECISION)
            continue
        seat = request.seats[0]
        if i < len(moves) and move(i)[:2] == (seat, request.kind):
            decide(seat, move(i)[2])
            i += 1
        elif request.kind == LOSE and len(set(game.hands[seat])) == 1:
            game.decide(seat, Decision(LOSE, card=game.hands[seat][0]))
        elif i < len(moves):
            raise MoveError(i, f"not asked for: the engine asks seat {seat} for a "
                               f"{request.kind} decision")
        else:
            return
    if i < len(moves):
        move(i)  # a malformed move says so first
        raise MoveError(i, "not asked for: the game is over")


def run_scenario(scenario: Scenario) -> Outcome:
    expect = scenario.expect
    expected_error = expect.get("error")
    try:
        game = Game.from_setup(setup_from_json(scenario.setup))
    except SetupError as exc:
        if expected_error == "setup":
            return Outcome(scenario.name, True)
        return Outcome(scenario.name, False, f"error expected {expected_error!r} got "
                                             f"setup ({exc})")
    if expected_error == "setup":
        return Outcome(scenario.name, False, "error expected 'setup' got a valid setup")
    try:
        play_moves(game, scenario.moves)
    except MoveError as exc:
        if expected_error == {"move": exc.index}:
            return Outcome(scenario.name, True)
        expected = json.dumps(expected_error) if expected_error else "no error"
        return Outcome(scenario.name, False,
                       f"error expected {expected} got {{\"move\": {exc.index}}} ({exc.reason})")
    if expected_error is not None:
        return Outcome(scenario.name, False,
                       f"error expected {json.dumps(expected_error)} got no error")
    for field in _EXPECT_FIELDS[:-1]:
        if field in expect:
            want, got = expect[field], _observed(game, field)
            if _normal(field, want) != _normal(field, got):
                return Outcome(scenario.name, False,
                               f"{field} expected {json.dumps(want)} got {json.dumps(got)}")
    return Outcome(scenario.name, True)


def _observed(game: Game, field: str) -> Any:
    if field == "coins":
        return list(game.coins)
    if field in ("hands", "revealed"):
        return [list(cards) for cards in getattr(game, field)]
    if field == "alive":
        return list(game.alive)
    if field == "court":
        return list(game.court)
    if field == "turn":
        return None if game.over else game.current
    return game.winner


def _normal(field: str, value: Any) -> Any:
    """Hands and revealed cards compare as multisets."""
    if field in ("hands", "revealed") and isinstance(value, list):
        return [Counter(cards) if isinstance(cards, list) else cards for cards in value]
    return value


def run_paths(paths: list[str]) -> tuple[list[Outcome], list[str]]:
    """Every scenario under ``paths``: the outcomes, and one line per unreadable file."""
    outcomes: list[Outcome] = []
    problems: list[str] = []
    for path in scenario_files(paths):
        try:
            scenario = load_scenario(path)
        except ScenarioFileError as exc:
            problems.append(str(exc))
            continue
        outcomes.append(run_scenario(scenario))
    return outcomes, problems
