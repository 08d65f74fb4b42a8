"""Training environments over the rules engine (needs ``pip install 'arena[rl]'``).

- ``env(**options)`` / ``CoupEnv``: a PettingZoo AEC environment, every seat
  an agent (``aec.py`` documents spaces, rewards and seeding);
- ``SingleSeatEnv``: a Gymnasium environment, one seat against fixed
  opponents (SDK bots or policy functions).

The observation and action encodings are ``arena.sdk.encoding``'s, so an
SDK bot computes the same vectors (``arena.sdk.policy.PolicyBot``).
"""

from __future__ import annotations

from typing import Any

try:
    from pettingzoo.utils import wrappers
except ImportError as error:  # pragma: no cover - without the rl extra
    raise ImportError(f"arena.env needs the rl extra ({error.name} is missing): "
                      f"pip install 'arena[rl]'") from None

from arena.env.aec import CoupEnv, IllegalActionError, linear_reward, winner_reward
from arena.env.single import SingleSeatEnv

raw_env = CoupEnv


def _before_reset(name: str) -> AttributeError:
    return AttributeError(f"{name} cannot be accessed before reset")


class OrderEnforcingWrapper(wrappers.OrderEnforcingWrapper):
    """PettingZoo's order-enforcing wrapper, with the same checks, minus the
    ``__getattr__`` (two calls, a set and a string test) on the attributes a
    training loop reads every step: those are properties here, and ``last()``
    reads the environment's directly."""

    @property
    def agent_selection(self) -> str:
        if not self._has_reset:
            raise _before_reset("agent_selection")
        return self.env.agent_selection

    @property
    def agents(self) -> list[str]:
        if not self._has_reset:
            raise _before_reset("agents")
        return self.env.agents

    @property
    def rewards(self) -> dict[str, float]:
        if not self._has_reset:
            raise _before_reset("rewards")
        return self.env.rewards

    @property
    def terminations(self) -> dict[str, bool]:
        if not self._has_reset:
            raise _before_reset("terminations")
        return self.env.terminations

    @property
    def truncations(self) -> dict[str, bool]:
        if not self._has_reset:
            raise _before_reset("truncations")
        return self.env.truncations

    @property
    def infos(self) -> dict[str, dict[str, Any]]:
        if not self._has_reset:
            raise _before_reset("infos")
        return self.env.infos

    @property
    def _cumulative_rewards(self) -> dict[str, float]:
        return self.env._cumulative_rewards

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if not self._has_reset:  # as PettingZoo's: its last() reads agent_selection first
            raise _before_reset("agent_selection")
        return self.env.last(observe)


def env(**options: Any) -> OrderEnforcingWrapper:
    """A ``CoupEnv`` in PettingZoo's order-enforcing wrapper (as its own games
    are; a subclass that is quicker on the attributes read every step)."""
    return OrderEnforcingWrapper(CoupEnv(**options))


__all__ = ["CoupEnv", "IllegalActionError", "SingleSeatEnv", "env", "linear_reward", "raw_env",
           "winner_reward"]
