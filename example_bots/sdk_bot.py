#!/usr/bin/env python3
"""sdk_bot: a short Coup bot on arena's Python SDK, for the arena protocol (version 1).

It claims only what it holds, coups and assassinates the richest, blocks with
its own cards, challenges a claim when it sees every copy, keeps its best cards.
Run with arena's Python (it imports arena.sdk): python3 sdk_bot.py
"""

from arena.engine.rules import ACTIONS
from arena.sdk import Bot, run

GAIN = {"coup": 9, "assassinate": 8, "tax": 3, "steal": 2.5, "foreign_aid": 2, "income": 1}
WORTH = {"duke": 5, "assassin": 4, "captain": 3, "contessa": 2, "ambassador": 1, "inquisitor": 1}


class SdkBot(Bot):
    name = "sdk-bot"

    def decide(self, state, request):
        kind, legal, hand = request.kind, request.legal, state.hand
        if kind == "action":
            mine = [d for d in legal if ACTIONS[state.variant][d.kind].claim in (None, *hand)]
            return max(mine, key=lambda d: (GAIN.get(d.kind, 0), state.coins[d.target or 0]))
        if kind == "challenge":
            return request.find("challenge" if state.unseen(request.character) == 0 else "pass")
        if kind == "block":
            return next((d for d in request.of_kind("block") if d.card in hand), request.safe())
        if kind in ("lose", "show"):
            return min(legal, key=lambda d: WORTH[d.card])
        if kind in ("keep", "draft"):
            return max(legal, key=lambda d: sum(WORTH[c] for c in d.cards or (d.card,)))
        return request.find("force:yes" if WORTH.get(state.known[request.target], 0) >= 4
                            else "force:no")


if __name__ == "__main__":
    run(SdkBot)
