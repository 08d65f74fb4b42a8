"""Typed engine errors.

As h11 separates local from remote protocol errors, we separate a caller
that misuses the engine or gives an impossible setup from a *player* whose
decision breaks the rules: the referee charges only the latter to a bot.
"""

from __future__ import annotations


class EngineError(Exception):
    """Base class for errors raised by the rules engine."""


class SetupError(EngineError):
    """A game setup (options or rigged position) that the rules do not allow."""


class IllegalDecision(EngineError):
    """A player's decision that the rules do not allow now.

    The game state is left exactly as it was before the decision.
    """

    def __init__(self, seat: int, decision: object, reason: str) -> None:
        self.seat = seat
        self.decision = decision
        self.reason = reason
        super().__init__(f"seat {seat}: {decision} is illegal: {reason}")


class GameOverError(EngineError):
    """A decision or forfeit given to a game that has ended."""
