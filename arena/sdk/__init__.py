"""Write a Coup bot in Python: subclass ``Bot``, write ``decide``, call ``run``.

    from arena.sdk import Bot, run

    class Taxman(Bot):
        name = "taxman"

        def decide(self, state, request):
            return request.find("tax") or request.safe()

    if __name__ == "__main__":
        run(Taxman)

The SDK speaks the protocol (protocol.md) for you: the handshake, many games
per process, the per-game seed (``state.rng``), flushing, and logging to
stderr (``log``).  It keeps ``State``, your seat's view of the game, up to
date from the events; ``decide`` gets it with the ``Request`` and returns one
of ``request.legal``.  ``arena.sdk.encoding`` turns a state and request into
the fixed-size vectors of the training environment (``arena.env``).

Standard library and attrs only: no numpy, no trio.
"""

from arena.engine import events
from arena.engine.decisions import Decision
from arena.sdk.bot import Bot, Request
from arena.sdk.runner import Session, log, run
from arena.sdk.state import Chain, State

__all__ = ["Bot", "Chain", "Decision", "Request", "Session", "State", "events", "log", "run"]
