"""Game records: everything needed to replay a game, as JSON.

A record holds the game's options and seed (or a rigged setup), every
decision in order as ``[seat, token]`` (a forfeit is ``[seat,
"forfeit:<reason>"]``; a game the referee stopped ends with ``[-1,
"stop:<reason>"]``), and the result.  The referee adds what it knows
(bot names, faults, timings) under ``"referee"``; replay ignores it.
Documented for bot authors in protocol.md ("Game records").
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from arena.engine.decisions import Decision, DecisionSyntaxError
from arena.engine.errors import EngineError
from arena.engine.game import STOP, Game, GameConfig, Result, Setup
from arena.files import write_whole

FORMAT = "arena-game"
VERSION = 1
_FORFEIT = "forfeit:"
# Fast compression: a tournament writes a record per game, and level 1 is within a
# few percent of the best size on these small JSON texts at a fraction of the time.
_GZIP_LEVEL = 1


class RecordError(Exception):
    """A record that cannot be read, or that does not replay."""


class ReplayError(RecordError):
    """A recorded decision the rules refuse."""

    def __init__(self, index: int, reason: str) -> None:
        self.index = index
        self.reason = reason
        super().__init__(f"decision {index}: {reason}")


@attrs.frozen
class GameRecord:
    decisions: tuple[tuple[int, str], ...]
    config: GameConfig | None = None
    seed: int | None = None
    setup: Setup | None = None
    result: dict[str, Any] | None = None
    referee: dict[str, Any] = attrs.field(factory=dict)

    @classmethod
    def of(cls, game: Game, config: GameConfig | None = None, seed: int | None = None,
           setup: Setup | None = None, referee: dict[str, Any] | None = None) -> GameRecord:
        decisions = tuple([(seat, d if isinstance(d, str) else d.token)
                           for seat, d in game.history])
        return cls(decisions, config, seed, setup, _result_json(game.result), referee or {})

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"format": FORMAT, "version": VERSION}
        if self.config is not None:
            data["config"] = attrs.asdict(self.config)
            data["seed"] = self.seed
        if self.setup is not None:
            data["setup"] = attrs.asdict(self.setup)
        data["decisions"] = [list(d) for d in self.decisions]
        data["result"] = self.result
        if self.referee:
            data["referee"] = self.referee
        return data

    @classmethod
    def from_json(cls, data: Any) -> GameRecord:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise RecordError(f"not an arena game record (no \"format\": \"{FORMAT}\")")
        if data.get("version") != VERSION:
            raise RecordError(f"record version {data.get('version')!r}, this arena reads "
                              f"{VERSION}")
        try:
            config = seed = setup = None
            if "config" in data:
                config = GameConfig(**data["config"])
                seed = int(data["seed"])
            elif "setup" in data:
                s = data["setup"]
                setup = Setup(
                    hands=tuple(map(tuple, s["hands"])), court=tuple(s["court"]),
                    revealed=tuple(map(tuple, s["revealed"])) if s.get("revealed") else None,
                    coins=tuple(s["coins"]) if s.get("coins") else None,
                    first=s.get("first", 0), variant=s.get("variant", "ambassador"),
                    turn_limit=s.get("turn_limit", 1000))
            else:
                raise RecordError("a record needs \"config\" and \"seed\", or \"setup\"")
            decisions = tuple((int(seat), str(token)) for seat, token in data["decisions"])
        except (KeyError, TypeError, ValueError) as exc:
            raise RecordError(f"malformed record: {type(exc).__name__}: {exc}") from None
        return cls(decisions, config, seed, setup, data.get("result"), data.get("referee") or {})

    def new_game(self) -> Game:
        if self.config is not None:
            assert self.seed is not None
            return Game.from_config(self.config, self.seed)
        assert self.setup is not None
        return Game.from_setup(self.setup)


# Token -> the engine's own decision object, once seen among the legal answers:
# a replay then parses no token twice, and the engine's check that a decision
# is legal finds it by identity, not by attrs' __eq__.  Bounded (records are input).
_DECISIONS: dict[str, Decision] = {}
_DECISIONS_KEPT = 4096


def apply_decision(game: Game, seat: int, token: str) -> None:
    """Play one of a record's decisions: an answer, a forfeit or the referee's stop."""
    decision = _DECISIONS.get(token)
    if decision is not None:
        game.decide(seat, decision)
    elif token.startswith(_FORFEIT):
        game.forfeit(seat, token[len(_FORFEIT):])
    elif token.startswith(STOP):
        game.stop(token[len(STOP):])
    else:
        decision = Decision.parse(token)
        for option in game.legal(seat):
            if option == decision:
                if len(_DECISIONS) >= _DECISIONS_KEPT:
                    _DECISIONS.clear()
                decision = _DECISIONS[token] = option
                break
        game.decide(seat, decision)


def replay(record: GameRecord, after: Callable[[Game], None] | None = None) -> Game:
    """Play the record's decisions again; ReplayError names the first one refused.

    ``after``, if given, is called with the game once dealt and again after
    each decision (the results site shows the game step by step, the deal
    first)."""
    try:
        game = record.new_game()
    except EngineError as exc:
        raise RecordError(f"the record's setup is refused: {exc}") from None
    if after is not None:
        after(game)
    known = _DECISIONS
    for index, (seat, token) in enumerate(record.decisions):
        try:
            decision = known.get(token)  # apply_decision's first look, one call less
            if decision is not None:
                game.decide(seat, decision)
            else:
                apply_decision(game, seat, token)
        except (EngineError, DecisionSyntaxError) as exc:
            raise ReplayError(index, f"seat {seat} {token}: {exc}") from None
        if after is not None:
            after(game)
    if record.result is not None:
        got = _result_json(game.result)
        if got != record.result:
            raise RecordError(f"the decisions replay to {_describe(got)}, but the record says "
                              f"{_describe(record.result)}")
    return game


def _result_json(result: Result | None) -> dict[str, Any] | None:
    """A game's result as a record holds it (``attrs.asdict``, placements a list)."""
    if result is None:
        return None
    return {"reason": result.reason, "turns": result.turns,
            "placements": list(result.placements), "winner": result.winner}


def _describe(result: Any) -> str:
    """A game result in words (a record's "result" may be anything: it is input)."""
    if not isinstance(result, dict):
        return "no result" if result is None else f"a result that is not an object ({result!r})"
    parts = []
    if "placements" in result:
        parts.append(f"placements {' '.join(map(str, result['placements']))}")
    if "winner" in result:
        parts.append("no winner" if result["winner"] is None else f"winner seat {result['winner']}")
    if "turns" in result:
        parts.append(f"after {result['turns']} turns")
    if "reason" in result:
        parts.append(f"({str(result['reason']).replace('_', ' ')})")
    return " ".join(parts) or "an empty result"


def gzipped(record: GameRecord) -> bytes:
    """The record as the bytes of a .json.gz file (one gzip member, readable by
    ``load``, ``gzip`` and ``zcat``)."""
    text = json.dumps(record.to_json(), separators=(",", ":"))
    # wbits 31: a gzip header and trailer around the deflate stream, in one call.
    return zlib.compress(text.encode("utf-8"), _GZIP_LEVEL, 31)


def save(record: GameRecord, path: Path) -> None:
    """Write a record whole or not at all; a name ending in .gz is compressed."""
    if path.suffix == ".gz":
        write_whole(path, gzipped(record))
    else:
        text = json.dumps(record.to_json(), separators=(",", ":"))
        write_whole(path, (text + "\n").encode("utf-8"))


def load(path: Path) -> GameRecord:
    """Read a record (plain or .gz).  RecordError with one line if it cannot."""
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rt", encoding="utf-8") as f:
                text = f.read()
        else:
            text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RecordError(f"{path}: no such file") from None
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise RecordError(f"{path}: cannot read: {exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecordError(f"{path}: not JSON ({exc.msg}: line {exc.lineno} column "
                          f"{exc.colno})") from None
    try:
        return GameRecord.from_json(data)
    except RecordError as exc:
        raise RecordError(f"{path}: {exc}") from None
