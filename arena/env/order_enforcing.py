"""PettingZoo's order-enforcing wrapper, quicker on what a loop asks every step.

PettingZoo's ``OrderEnforcingWrapper`` reaches the environment's attributes
through ``__getattr__`` (two calls, a set and a string test each: eight a
step in an ``agent_iter`` loop) and its ``step``/``observe`` through two
more calls each.  This subclass makes the same checks, with the same errors
and warnings, in properties and methods that go to the environment
directly.
"""

from __future__ import annotations

from typing import Any

from pettingzoo.utils.env_logger import EnvLogger
from pettingzoo.utils.wrappers import OrderEnforcingWrapper as PettingZooOrderEnforcingWrapper
from pettingzoo.utils.wrappers.order_enforcing import (
    AECOrderEnforcingIterable,
    AECOrderEnforcingIterator,
)


def _before_reset(name: str) -> AttributeError:
    return AttributeError(f"{name} cannot be accessed before reset")


class OrderEnforcingWrapper(PettingZooOrderEnforcingWrapper):
    """PettingZoo's ``OrderEnforcingWrapper``, with its checks, minus its
    indirections on what an ``agent_iter`` loop asks every step."""

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

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        super().reset(seed=seed, options=options)
        # From now on last() checks nothing: the environment's own, a call shorter.
        self.last = self.env.last  # type: ignore[method-assign]

    def __str__(self) -> str:
        # PettingZoo's names its own class, not subclasses, by the environment's name.
        return str(self.env) if hasattr(self, "metadata") else repr(self)

    def step(self, action: Any) -> None:
        if not self._has_reset:
            EnvLogger.error_step_before_reset()
        elif not self.env.agents:
            self._has_updated = True
            EnvLogger.warn_step_after_terminated_truncated()
        else:
            self._has_updated = True
            self.env.step(action)

    def agent_iter(self, max_iter: int = 2**63) -> AECOrderEnforcingIterable:
        if not self._has_reset:
            EnvLogger.error_agent_iter_before_reset()
        return _Iterable(self, max_iter)


class _Iterable(AECOrderEnforcingIterable):
    def __iter__(self) -> AECOrderEnforcingIterator:
        return _Iterator(self.env, self.max_iter)


class _Iterator(AECOrderEnforcingIterator):
    """``AECOrderEnforcingIterator``'s ``__next__`` in one call."""

    def __next__(self) -> str:
        wrapper = self.env
        env = wrapper.env
        if not env.agents or self.iters_til_term <= 0:
            raise StopIteration
        self.iters_til_term -= 1
        assert wrapper._has_updated, "need to call step() or reset() in a loop over `agent_iter`"
        wrapper._has_updated = False
        return env.agent_selection
