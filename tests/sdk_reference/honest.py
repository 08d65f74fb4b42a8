#!/usr/bin/env python3
"""honest: a Coup bot that never bluffs, for the arena protocol (version 1).

It follows its own face-down cards from the event lines (dealt, drawn,
exchanged, lost), and then:
- claims only characters it holds: Coup at 7+ coins, else Assassinate with an
  Assassin, Tax with a Duke, Steal with a Captain, Exchange a hand with no
  Duke, Assassin or Captain, else Foreign Aid (Income once a Duke is about);
- blocks only with a card it holds;
- challenges only certain bluffs: a claim of a character whose every copy it
  can see (its own hand, the face-up cards, the cards it set aside in the
  two-player draft);
- loses, shows and returns its least useful cards.
Any request it has no rule for gets a safe legal answer (pass, or the first
one listed).  Unknown lines are ignored.  Python standard library only.
Run: python3 honest.py
"""

import sys

NAME = "honest"
# How much a card is worth keeping (the higher, the better).
VALUE = {"duke": 6, "assassin": 5, "captain": 4, "contessa": 3, "ambassador": 2, "inquisitor": 2}


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def safe(legal: list[str]) -> str:
    """An answer that claims nothing, when the bot has no better one."""
    return next((t for t in ("pass", "income") if t in legal), legal[0])


def cards(field: str) -> list[str]:
    """A card-list field: `duke,captain`; `?` (hidden) and `-` (none) give []."""
    return [] if field in ("?", "-") else field.split(",")


class Honest:
    def __init__(self, seat: int = 0, players: int = 3) -> None:
        self.seat = seat
        self.players = players
        self.hand: list[str] = []  # my face-down cards
        self.seen: list[str] = []  # face-up cards, and draft cards set aside (out of play)
        self.coins = [2] * players
        self.influence = [2] * players
        self.alive = set(range(players))
        self.dukes: set[int] = set()  # seats that claimed a Duke: they may block Foreign Aid
        self.offered: list[str] = []  # my draft pile
        self.shown_to_me: str | None = None  # as the examiner
        self.shown_by_me: str | None = None  # as the examined target
        self.last_claim: tuple[int, str] | None = None

    # ---- events: keep the hand and the table up to date

    def event(self, kind: str, f: list[str]) -> None:
        me = str(self.seat)
        if kind == "start":
            self.coins = [int(c) for c in f[4].split(",")]
        elif kind == "dealt" and f[0] == me:
            self.hand = cards(f[1])
        elif kind == "draft_offered" and f[0] == me:
            self.offered = cards(f[1])
        elif kind == "draft_chosen" and f[0] == me and f[1] != "?":
            self.hand.append(f[1])
            self.offered.remove(f[1])
            self.seen += self.offered  # the rest of my pile is out of the game
        elif kind == "coins":
            self.coins[int(f[0])] = int(f[2])
        elif kind == "action" and f[3] != "-":
            self.last_claim = (int(f[0]), f[3])
            if f[3] == "duke":
                self.dukes.add(int(f[0]))
        elif kind == "block":
            self.last_claim = (int(f[0]), f[1])
            if f[1] == "duke":
                self.dukes.add(int(f[0]))
        elif kind == "proven" and f[0] == me:
            self.drop(f[1])  # shuffled into the Court; a "drew" follows
        elif kind == "drew" and f[0] == me and f[1] != "?":
            self.hand.append(f[1])
        elif kind == "lost":
            self.seen.append(f[1])
            self.influence[int(f[0])] -= 1
            if f[0] == me:
                self.drop(f[1])
        elif kind in ("out", "forfeit"):
            self.alive.discard(int(f[0]))
        elif kind == "exchange_drawn" and f[0] == me:
            self.hand += cards(f[2])
        elif kind == "exchange_returned" and f[0] == me:
            for card in cards(f[2]):
                self.drop(card)
        elif kind == "examine_shown":
            if f[0] == me:
                self.shown_to_me = f[2]
            if f[1] == me:
                self.shown_by_me = f[2]
        elif kind == "examine_decided" and f[1] == me and f[2] == "yes" and self.shown_by_me:
            self.drop(self.shown_by_me)  # forced back into the Court; a "drew" follows

    def drop(self, card: str) -> None:
        if card in self.hand:
            self.hand.remove(card)

    # ---- requests

    def decide(self, kind: str, ctx: dict[str, str], legal: list[str]) -> str:
        rule = getattr(self, "on_" + kind, None)
        choice = rule(ctx, legal) if rule else None
        return choice if choice in legal else safe(legal)

    def on_action(self, ctx: dict[str, str], legal: list[str]) -> str:
        foes = sorted(self.alive - {self.seat})
        # The most dangerous opponent: most influence, then most coins.
        foe = max(foes, key=lambda s: (self.influence[s], self.coins[s]), default=None)
        richest = max(foes, key=lambda s: self.coins[s], default=None)
        hand = set(self.hand)
        wishes = [f"coup:{foe}"]  # listed from 7 coins on, and alone from 10
        wishes += [t for t in legal if t.startswith("coup:")]
        if "assassin" in hand:
            wishes.append(f"assassinate:{foe}")
        if "duke" in hand:
            wishes.append("tax")
        if "captain" in hand and richest is not None and self.coins[richest] >= 2:
            wishes.append(f"steal:{richest}")
        if hand & {"ambassador", "inquisitor"} and not hand & {"duke", "assassin", "captain"}:
            wishes.append("exchange")
        if not self.dukes & (self.alive - {self.seat}):
            wishes.append("foreign_aid")
        wishes.append("income")
        return next((t for t in wishes if t in legal), safe(legal))

    def on_challenge(self, ctx: dict[str, str], legal: list[str]) -> str:
        character = ctx.get("character") or (self.last_claim or (0, ""))[1]
        copies = 4 if self.players >= 7 else 3
        visible = self.hand.count(character) + self.seen.count(character)
        return "challenge" if character and visible >= copies else "pass"

    def on_block(self, ctx: dict[str, str], legal: list[str]) -> str:
        for token in legal:
            if token.startswith("block:") and token[6:] in self.hand:
                return token
        return "pass"

    def resync(self, legal: list[str]) -> None:
        """lose/show list my face-down cards: trust them over my own tracking."""
        listed = sorted({token.split(":", 1)[1] for token in legal})
        if sorted(set(self.hand)) != listed:
            self.hand = listed * (2 if len(listed) == 1 and len(self.hand) == 2 else 1)

    def on_lose(self, ctx: dict[str, str], legal: list[str]) -> str:
        self.resync(legal)
        return min(legal, key=lambda t: VALUE.get(t.split(":", 1)[1], 0))

    def on_show(self, ctx: dict[str, str], legal: list[str]) -> str:
        self.resync(legal)
        return min(legal, key=lambda t: VALUE.get(t.split(":", 1)[1], 0))

    def on_keep(self, ctx: dict[str, str], legal: list[str]) -> str:
        def worth(token: str) -> int:
            kept = token.split(":", 1)[1].split(",")
            return sum(VALUE.get(c, 0) for c in kept) + 3 * len(set(kept))  # variety helps

        return max(legal, key=worth)

    def on_force(self, ctx: dict[str, str], legal: list[str]) -> str:
        strong = VALUE.get(self.shown_to_me or "", 0) >= VALUE["assassin"]
        return "force:yes" if strong else "force:no"

    def on_draft(self, ctx: dict[str, str], legal: list[str]) -> str:
        def worth(token: str) -> int:
            card = token.split(":", 1)[1]
            return VALUE.get(card, 0) - 10 * (card in self.hand)  # a pair is weak

        return max(legal, key=worth)


def main() -> None:
    bot = Honest()
    for line in sys.stdin:
        f = line.split()
        if not f:
            continue
        try:
            if f[0] == "arena":
                say(f"hello {NAME}")
            elif f[0] == "game":
                bot = Honest(seat=int(f[3]), players=int(f[5]))
            elif f[0] == "event" and len(f) > 1:
                bot.event(f[1], f[2:])
            elif f[0] == "request":
                colon = f.index(":")
                ctx = dict(kv.split("=", 1) for kv in f[3:colon] if "=" in kv)
                legal = f[colon + 1 :]
                try:
                    choice = bot.decide(f[2], ctx, legal)
                except (ValueError, IndexError, KeyError):
                    choice = safe(legal)
                say(f"{f[1]} {choice}")
            elif f[0] == "quit":
                break
        except (ValueError, IndexError, KeyError):
            pass  # a line this bot does not understand: ignore it


if __name__ == "__main__":
    main()
