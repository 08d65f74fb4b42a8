"""The rules engine: pure, deterministic, no I/O (see game.py)."""

from arena.engine.decisions import Decision, Request
from arena.engine.errors import EngineError, GameOverError, IllegalDecision, SetupError
from arena.engine.game import Game, GameConfig, Result, Setup
from arena.engine.observer import OMNISCIENT, SPECTATOR, view

__all__ = [
    "Decision", "EngineError", "Game", "GameConfig", "GameOverError", "IllegalDecision",
    "OMNISCIENT", "Request", "Result", "SPECTATOR", "Setup", "SetupError", "view",
]
