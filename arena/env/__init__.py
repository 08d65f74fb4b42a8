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
    import pettingzoo.utils  # noqa: F401
except ImportError as error:  # pragma: no cover - without the rl extra
    raise ImportError(f"arena.env needs the rl extra ({error.name} is missing): "
                      f"pip install 'arena[rl]'") from None

from arena.env.aec import CoupEnv, IllegalActionError, linear_reward, winner_reward
from arena.env.order_enforcing import OrderEnforcingWrapper
from arena.env.single import SingleSeatEnv

raw_env = CoupEnv


def env(**options: Any) -> OrderEnforcingWrapper:
    """A ``CoupEnv`` in PettingZoo's order-enforcing wrapper, as its own games
    are (``order_enforcing.OrderEnforcingWrapper``: the same checks, quicker)."""
    return OrderEnforcingWrapper(CoupEnv(**options))


__all__ = ["CoupEnv", "IllegalActionError", "SingleSeatEnv", "env", "linear_reward", "raw_env",
           "winner_reward"]
