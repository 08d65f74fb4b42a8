"""A policy over ``arena.sdk.encoding``'s vectors, played as an SDK bot."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from arena.engine.decisions import Decision
from arena.sdk.bot import Bot, Request
from arena.sdk.encoding import action_mask, decision_for, observation
from arena.sdk.state import State

# observation {"observation": [267 floats], "action_mask": [87 ints]} -> action index
Policy = Callable[[dict[str, Any]], int]


def observe(state: State, request: Request) -> dict[str, list[Any]]:
    """The environment's observation of this seat for this request, as lists."""
    return {"observation": observation(state, request),
            "action_mask": action_mask(request.legal, state.seat, state.players)}


class PolicyBot(Bot):
    """Plays ``policy``, a function of the observation (as the environment gives
    it, with lists for arrays) returning an action index.  An index that is
    not legal is logged by the SDK and answered with ``request.safe()``."""

    def __init__(self, policy: Policy, name: str = "policy-bot") -> None:
        self.policy = policy
        self.name = name  # type: ignore[misc]

    def decide(self, state: State, request: Request) -> Decision:
        index = int(self.policy(observe(state, request)))
        decision = decision_for(index, request.legal, state.seat, state.players)
        if decision is None:
            raise ValueError(f"the policy chose action {index}, which is not legal now")
        return decision
