"""PettingZoo's order-enforcing wrapper, quicker on what a loop asks every step.

PettingZoo's ``OrderEnforcingWrapper`` reaches the environment's attributes
through ``__getattr__`` (two calls, a set and a string test each: eight a
step in an ``agent_iter`` loop) and its ``step``/``observe`` through two
more calls each.  This subclass makes the same checks, with the same errors
and warnings, in properties and methods that go to the environment
directly.  Its ``agent_iter`` is a generator; after ``reset()`` its
``last()`` and ``step()`` are the environment's own: ``CoupEnv.step`` sets
the "stepped since the last agent" flag the iterator checks
(``_has_updated``, kept by the environment) and warns on a step after the
game, as PettingZoo's wrapper does.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from pettingzoo.utils.env_logger import EnvLogger
from pettingzoo.utils.wrappers import OrderEnforcingWrapper as PettingZooOrderEnforcingWrapper

if TYPE_CHECKING:
    from arena.env.aec import CoupEnv


def _before_reset(name: str) -> AttributeError:
    return AttributeError(f"{name} cannot be accessed before reset")


class OrderEnforcingWrapper(PettingZooOrderEnforcingWrapper):
    """PettingZoo's ``OrderEnforcingWrapper``, with its checks, minus its
    indirections on what an ``agent_iter`` loop asks every step."""

    def __init__(self, env: CoupEnv) -> None:
        self.env = env  # first: _has_updated is the environment's (PettingZoo's __init__ sets it)
        super().__init__(env)

    # Whether step() or reset() came since the iterator last gave out an agent:
    # kept by the environment, whose step() sets it, so that after reset() the
    # wrapper's step() can be the environment's own (one call fewer a step).
    @property
    def _has_updated(self) -> bool:
        return self.env._has_updated

    @_has_updated.setter
    def _has_updated(self, value: bool) -> None:
        self.env._has_updated = value

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
        # From now on last() checks nothing, and step() only what the
        # environment's own checks (a step after the game is over warns, and
        # sets _has_updated): the environment's own, a call shorter each.
        self.last = self.env.last  # type: ignore[method-assign]
        self.step = self.env.step  # type: ignore[method-assign]

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

    def agent_iter(self, max_iter: int = 2**63) -> Iterator[str]:  # type: ignore[override]
        if not self._has_reset:
            EnvLogger.error_agent_iter_before_reset()
        return self._agent_iter(max_iter)

    def _agent_iter(self, max_iter: int) -> Iterator[str]:
        """``AECOrderEnforcingIterator`` as a generator, which resumes more cheaply
        than an iterator's ``__next__`` is called (once a step)."""
        env = self.env
        while env.agents and max_iter > 0:
            max_iter -= 1
            assert env._has_updated, "need to call step() or reset() in a loop over `agent_iter`"
            env._has_updated = False
            yield env.agent_selection
