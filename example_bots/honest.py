#!/usr/bin/env python3
"""honest: a Coup bot that never bluffs, for the arena protocol (version 1).

Written on the SDK (arena.sdk), which speaks the protocol and follows its
own face-down cards and the table from the events; then:
- claims only characters it holds: Coup at 7+ coins, else Assassinate with an
  Assassin, Tax with a Duke, Steal with a Captain, Exchange a hand with no
  Duke, Assassin or Captain, else Foreign Aid (Income once a Duke is about);
- blocks only with a card it holds;
- challenges only certain bluffs: a claim of a character whose every copy it
  can see (its own hand, the face-up cards, the cards it set aside in the
  two-player draft);
- loses, shows and returns its least useful cards.
Any request it has no rule for gets a safe legal answer (pass, or the first
one listed).  Run with arena's Python: python3 honest.py
"""

from arena.sdk import Bot, Decision, Request, State, events, run

# How much a card is worth keeping (the higher, the better).
VALUE = {"duke": 6, "assassin": 5, "captain": 4, "contessa": 3, "ambassador": 2, "inquisitor": 2}


class Honest(Bot):
    name = "honest"

    def on_game_start(self, state: State) -> None:
        self.dukes: set[int] = set()  # seats that claimed a Duke: they may block Foreign Aid
        self.last_claim: tuple[int, str] | None = None

    def on_event(self, state: State, event: events.Event) -> None:
        if isinstance(event, events.ActionDeclared) and event.claim is not None:
            self.note_claim(event.seat, event.claim)
        elif isinstance(event, events.Blocked):
            self.note_claim(event.blocker, event.character)

    def note_claim(self, seat: int, character: str) -> None:
        self.last_claim = (seat, character)
        if character == "duke":
            self.dukes.add(seat)

    def decide(self, state: State, request: Request) -> Decision:
        rule = getattr(self, "on_" + request.kind, None)
        choice = rule(state, request) if rule else None
        return choice if choice in request.legal else request.safe()

    def on_action(self, state: State, request: Request) -> Decision | None:
        me = state.seat
        foes = [s for s in range(state.players) if state.alive[s] and s != me]
        # The most dangerous opponent: most influence, then most coins.
        foe = max(foes, key=lambda s: (state.influence[s], state.coins[s]), default=None)
        richest = max(foes, key=lambda s: state.coins[s], default=None)
        hand = set(state.hand)
        wishes = [f"coup:{foe}"]  # listed from 7 coins on, and alone from 10
        wishes += [d.token for d in request.of_kind("coup")]
        if "assassin" in hand:
            wishes.append(f"assassinate:{foe}")
        if "duke" in hand:
            wishes.append("tax")
        if "captain" in hand and richest is not None and state.coins[richest] >= 2:
            wishes.append(f"steal:{richest}")
        if hand & {"ambassador", "inquisitor"} and not hand & {"duke", "assassin", "captain"}:
            wishes.append("exchange")
        if not self.dukes & set(foes):
            wishes.append("foreign_aid")
        wishes.append("income")
        return next((d for t in wishes if (d := request.find(t))), None)

    def on_challenge(self, state: State, request: Request) -> Decision | None:
        character = request.character or (self.last_claim or (0, ""))[1]
        certain = character and state.seen(character) >= state.copies
        return request.find("challenge" if certain else "pass")

    def on_block(self, state: State, request: Request) -> Decision | None:
        for decision in request.of_kind("block"):
            if decision.card in state.hand:
                return decision
        return request.find("pass")

    def on_lose(self, state: State, request: Request) -> Decision:
        return min(request.legal, key=lambda d: VALUE.get(d.card or "", 0))

    on_show = on_lose

    def on_keep(self, state: State, request: Request) -> Decision:
        def worth(decision: Decision) -> int:
            kept = decision.cards or ()
            return sum(VALUE.get(c, 0) for c in kept) + 3 * len(set(kept))  # variety helps

        return max(request.legal, key=worth)

    def on_force(self, state: State, request: Request) -> Decision | None:
        shown = state.known[request.target] if request.target is not None else None
        strong = VALUE.get(shown or "", 0) >= VALUE["assassin"]
        return request.find("force:yes" if strong else "force:no")

    def on_draft(self, state: State, request: Request) -> Decision:
        def worth(decision: Decision) -> int:
            card = decision.card or ""
            return VALUE.get(card, 0) - 10 * (card in state.hand)  # a pair is weak

        return max(request.legal, key=worth)


if __name__ == "__main__":
    run(Honest)
