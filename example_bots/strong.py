#!/usr/bin/env python3
"""strong: a card-counting, opponent-modelling Coup bot for the arena protocol (version 1).

What it does
------------
It follows the whole game from its input alone: its own face-down cards
(dealt, drafted, drawn, exchanged, examined), every face-up card, the cards it
set aside in the two-player draft, the cards it knows are in the Court (those
it returned), any opponent card it saw by examining, coins, face-down counts,
who is still in, the Court size, and every claim (action or block) each
opponent made since its hand last changed.

How it thinks
-------------
- Card counting.  Unseen copies of a character = deck copies - own hand -
  face-up - set aside - known elsewhere.  Each opponent's possible hands
  (multisets of its face-down count) get a hypergeometric prior over the
  unseen cards; in the two-player draft, one card dealt from the pile that
  dealt mine (any character but mine) and one picked from a full pile, by a
  pick preference learnt per opponent.  Turned-up cards condition it.
- Claims weigh the hands.  Each opponent has a "bluff propensity" b: how much
  likelier it is to claim a character it holds than one it lacks (b near 0:
  an honest player; b = 1: claims say nothing, as with a random player).  A
  hand lacking a claimed character is weighed by b (repeated claims count
  less each), a hand holding a character it declined to claim (no block of a
  Steal, Tax not taken) by about sqrt(b).  So two claims by an honest player
  pin both its cards, and it cannot then block with a third.  A proven card
  shuffled back resets what is known of that character; an Exchange or a
  forced Examine resets the player.  A caught bluff excludes the character;
  all copies seen means a certain bluff.
- Opponent modelling across games.  Statistics are kept per opponent name for
  the whole process: every claim later resolved (challenged, or read off the
  cards a player turns up when it is out) updates a posterior over b on a
  grid; how often it challenges (my claims, and anybody's); how often it
  blocks compared with how often it could hold the blocking card.
- Decisions are expected values in coin units: an influence is worth about
  10-12 coins (much more when it is the last one, the game), a coin 1 for me
  and less for an opponent.  Actions: Coup (early, at 7+), Tax, Steal,
  Assassinate, Exchange (expected gain of the best hand it can keep from the
  unseen cards), Examine, Foreign Aid (weighed by who may block it), Income.
  A claim it holds earns the chance that someone challenges and loses; a bluff
  costs the chance that it is challenged (learnt rate, plus the chance that
  the opponent can see every copy).  Targets: the most valuable, most
  threatening opponent.  Challenges when P(bluff) x gain beats P(true) x loss
  (certain bluffs always); blocks with held cards, and bluff-blocks when
  cheap (a Contessa with one card left: it dies otherwise); loses, shows and
  returns its least useful cards; drafts the card that makes the best hand.
- Safety: every answer is picked among the listed ones; any exception or
  unexpected request falls back to a harmless listed answer (pass, income,
  else a random listed one).  Its random choices come from the game's seed.
  Written on the SDK (arena.sdk), which speaks the protocol and follows the
  hand, coins, face-up cards, influence, who is in and the Court's size from
  the events; the rest of what it follows is its own.  An answer takes about a
  millisecond.  Run with arena's Python: python3 strong.py (STRONG_DEBUG=1
  logs its scores to stderr).
"""

from __future__ import annotations

import math
import os
import random
from collections import Counter

from arena.sdk import Bot, Decision, Request, State, events, log, run

NAME = "strong"

DUKE, ASSASSIN, CAPTAIN, CONTESSA = "duke", "assassin", "captain", "contessa"
AMBASSADOR, INQUISITOR = "ambassador", "inquisitor"

# Bluff propensity grid and its prior weights (favouring a moderate bluffer).
GRID = (0.01, 0.04, 0.1, 0.2, 0.35, 0.5, 0.7, 1.0, 1.4)
PRIOR = (1.0, 1.0, 1.0, 1.2, 1.5, 1.5, 1.2, 1.2, 0.6)
CHALLENGE_PRIOR = 0.15  # assumed challenge rate of an unknown opponent
DEBUG = bool(os.environ.get("STRONG_DEBUG"))  # log the action scores and challenges to stderr

BASE_VALUE = {
    DUKE: 3.0,
    ASSASSIN: 2.4,
    CAPTAIN: 2.4,
    CONTESSA: 2.0,
    AMBASSADOR: 1.4,
    INQUISITOR: 1.8,
}


def safe(request: Request, rng: random.Random) -> Decision:
    """A harmless listed answer: pass or income, else any listed one."""
    for token in ("pass", "income"):
        found = request.find(token)
        if found is not None:
            return found
    return rng.choice(request.legal)


def multisets(u: dict[str, int], k: int) -> list[tuple[tuple[str, ...], float]]:
    """Every hand of k cards drawn from the unseen copies u, with its probability."""
    total = sum(u.values())
    if k <= 0 or total < k:
        return [((), 1.0)] if k <= 0 else []
    denominator = math.comb(total, k)
    chars = [c for c in u if u[c] > 0]
    out = []

    def walk(i: int, left: int, hand: tuple[str, ...], ways: int) -> None:
        if left == 0:
            out.append((hand, ways / denominator))
            return
        if i == len(chars):
            return
        c = chars[i]
        for m in range(min(left, u[c]), -1, -1):
            walk(i + 1, left - m, hand + (c,) * m, ways * math.comb(u[c], m))

    walk(0, k, (), 1)
    return out


# ---------------------------------------------------------------- statistics


class Stats:
    """What this process learnt about one opponent (by name), over all games."""

    def __init__(self) -> None:
        self.loglik = [0.0] * len(GRID)
        self.resolved = 0
        self.chal_me = [0.0, 0.0]  # challenges of my claims: hits, chances
        self.chal_all = [0.0, 0.0]  # challenges of anybody's claims
        self.blocks: dict[str, list[float]] = {}  # action -> [blocks, expected if rho=1]
        # Which card it drafts (pseudo-counts), learnt from hands turned up whole.
        self.draft_pref: dict[str, float] = {
            DUKE: 2.0,
            ASSASSIN: 1.5,
            CAPTAIN: 1.5,
            CONTESSA: 1.0,
            AMBASSADOR: 1.0,
            INQUISITOR: 1.0,
        }
        self._weights: list[float] | None = None

    def resolve(self, h: float, bluff: bool) -> None:
        """A claim made when the base chance of holding was h turned out true or a bluff."""
        h = min(max(h, 0.03), 0.97)
        for i, b in enumerate(GRID):
            pb = (1 - h) * b / (h + (1 - h) * b)
            self.loglik[i] += math.log(max(pb if bluff else 1 - pb, 1e-6))
        self.resolved += 1
        self._weights = None

    def weights(self) -> list[float]:
        if self._weights is None:
            top = max(self.loglik)
            raw = [w * math.exp(ll - top) for w, ll in zip(PRIOR, self.loglik, strict=True)]
            total = sum(raw)
            self._weights = [r / total for r in raw]
        return self._weights

    def beta(self) -> float:
        return sum(w * b for w, b in zip(self.weights(), GRID, strict=True))

    def challenge_rate(self) -> float:
        """How likely this opponent is to challenge a claim of mine."""
        hits, chances = self.chal_all
        overall = (hits + 4 * CHALLENGE_PRIOR) / (chances + 4)
        hits, chances = self.chal_me
        return (hits + 6 * overall) / (chances + 6)

    def block_factor(self, action: str) -> float:
        """Blocks made / blocks expected of a player that blocks when it holds the card."""
        hits, expected = self.blocks.get(action, (0.0, 0.0))
        return min(1.0, max(0.3, (hits + 2.0) / (expected + 2.0)))

    def note_block(self, action: str, blocked: bool, expected: float) -> None:
        entry = self.blocks.setdefault(action, [0.0, 0.0])
        entry[0] += 1.0 if blocked else 0.0
        entry[1] += expected


# ---------------------------------------------------------------- one game


class Table:
    """The state of one game, as this seat sees it, and the decisions."""

    def __init__(self, state: State, stats: dict[str, Stats]):
        self.state = state  # the SDK's view: hand, coins, face-up cards, influence, Court
        self.seat = state.seat
        self.n = state.players
        self.names = list(state.names)
        variant = state.variant
        self.variant = variant if variant in (AMBASSADOR, INQUISITOR) else AMBASSADOR
        self.fifth = self.variant
        self.chars = (DUKE, ASSASSIN, CAPTAIN, CONTESSA, self.fifth)
        self.copies = 4 if self.n >= 7 else 3
        self.stats = stats
        self.court_known: Counter[str] = Counter()  # cards I know are in the Court
        self.known: dict[int, list[str]] = {s: [] for s in range(self.n)}  # seen by examining
        self.claims: dict[int, Counter[str]] = {s: Counter() for s in range(self.n)}
        self.passes: dict[int, Counter[str]] = {s: Counter() for s in range(self.n)}
        self.lacks: dict[int, set[str]] = {s: set() for s in range(self.n)}  # caught bluffing
        self.open: dict[int, list[list]] = {s: [] for s in range(self.n)}  # [card, h, turned up]
        self.pending: dict | None = None  # the action on the table
        self.last_claim: tuple[int, str] | None = None
        self.proven: dict[int, str] = {}  # seat -> card proven, until its replacement is drawn
        self.my_dealt: str | None = None
        self.original = [True] * self.n  # still holds the cards it was dealt (and drafted)
        self.cache: dict = {}  # hand distributions, cleared by every event
        self.shown_to_me: tuple[int, str] | None = None
        self.sync()

    # ------------------------------------------------ what the SDK follows

    def sync(self) -> None:
        """Take what the SDK follows from its State (plain attributes: read often)."""
        state = self.state
        self.hand: list[str] = list(state.hand)
        self.coins = state.coins
        self.fd = state.influence  # face-down cards of each seat
        self.alive = state.alive
        self.court = state.court_size
        self.draft = state.draft
        self.revealed = state.face_up

    @property
    def faceup(self) -> Counter[str]:
        found = self.cache.get("faceup")
        if found is None:
            found = Counter(card for cards in self.state.face_up for card in cards)
            self.cache["faceup"] = found
        return found

    @property
    def set_aside(self) -> Counter[str]:
        """My draft pile, out of the game."""
        found = self.cache.get("set_aside")
        if found is None:
            found = self.cache["set_aside"] = Counter(self.state.set_aside)
        return found

    # ------------------------------------------------------------- helpers

    def stat(self, s: int) -> Stats:
        name = self.names[s] if 0 <= s < self.n else "?"
        if name not in self.stats:
            self.stats[name] = Stats()
        return self.stats[name]

    def opponents(self) -> list[int]:
        return [s for s in range(self.n) if s != self.seat and self.alive[s]]

    def unseen(self) -> dict[str, int]:
        """Copies of each character whose place I do not know."""
        if "unseen" in self.cache:
            return self.cache["unseen"]
        known_elsewhere: Counter[str] = Counter()
        for s, cs in self.known.items():
            if s != self.seat:
                known_elsewhere.update(cs)
        mine = Counter(self.hand)
        self.cache["unseen"] = u = {
            c: max(
                0,
                self.copies
                - mine[c]
                - self.faceup[c]
                - self.set_aside[c]
                - self.court_known[c]
                - known_elsewhere[c],
            )
            for c in self.chars
        }
        return u

    def hand_prior(self, s: int) -> dict[tuple[str, ...], float]:
        """Seat s's possible hands, from card counting alone (and the draft, if dealt so)."""
        key = ("prior", s)
        if key in self.cache:
            return self.cache[key]
        known = list(self.known[s])
        k = self.fd[s] - len(known)
        u = self.unseen()
        prior: dict[tuple[str, ...], float] = {}
        if k <= 0:
            prior = {tuple(sorted(known[: max(self.fd[s], 0)])): 1.0}
        elif self.draft and self.original[s] and not known and self.my_dealt:
            prior = self.draft_prior(s, u)
        if not prior:
            for hand, p in multisets(u, k):
                full = tuple(sorted(hand + tuple(known)))
                prior[full] = prior.get(full, 0.0) + p
        if not prior:
            prior = {(): 1.0}
        self.cache[key] = prior
        return prior

    def draft_prior(self, s: int, u: dict[str, int]) -> dict[tuple[str, ...], float]:
        """Hands of a drafting opponent: a card dealt from the pile that dealt mine (any
        character but mine), and one it chose from a full pile (its learnt preference)."""
        pref = self.stat(s).draft_pref
        lost = Counter(self.revealed[s])
        out: dict[tuple[str, ...], float] = {}
        for d in self.chars:
            if d == self.my_dealt:
                continue
            for r in self.chars:
                pair = Counter((d, r))
                if any(lost[c] > pair[c] for c in lost):
                    continue
                rest = pair - lost
                if any(rest[c] > u.get(c, 0) for c in rest):
                    continue
                hand = tuple(sorted(rest.elements()))
                if len(hand) != self.fd[s]:
                    continue
                out[hand] = out.get(hand, 0.0) + pref.get(r, 1.0)
        total = sum(out.values())
        return {h: w / total for h, w in out.items()} if total > 0 else {}

    def posterior(self, s: int) -> dict[tuple[str, ...], float]:
        """Seat s's possible hands, weighed by its claims and declined claims since it
        last drew, mixed over its bluff propensity."""
        key = ("post", s)
        if key in self.cache:
            return self.cache[key]
        prior = self.hand_prior(s)
        claims = [(c, 1.0 + 0.5 * (n - 1)) for c, n in self.claims[s].items() if n > 0]
        passes = [(c, n) for c, n in self.passes[s].items() if n > 0]
        lacks = self.lacks[s]
        out: dict[tuple[str, ...], float] = {}
        for w, b in zip(self.stat(s).weights(), GRID, strict=True):
            if w < 1e-4:
                continue
            m = min(1.0, max(math.sqrt(b), 0.15))
            post = {}
            for hand, p in prior.items():
                if any(c in hand for c in lacks):
                    continue
                for c, eff in claims:
                    if c not in hand:
                        p *= b**eff
                for c, n in passes:
                    if c in hand:
                        p *= m**n
                post[hand] = p
            z = sum(post.values())
            if z <= 0:
                continue
            for hand, p in post.items():
                out[hand] = out.get(hand, 0.0) + w * p / z
        total = sum(out.values())
        out = {h: p / total for h, p in out.items()} if total > 0 else prior
        self.cache[key] = out
        return out

    def base_hold(self, s: int, chars: tuple[str, ...] | list[str]) -> float:
        """P(seat s holds at least one of chars), from card counting alone."""
        return sum(p for hand, p in self.hand_prior(s).items() if any(c in hand for c in chars))

    def p_hold(self, s: int, c: str) -> float:
        """P(seat s holds c), from card counting and its claims."""
        return self.p_hold_any(s, (c,))

    def p_hold_any(self, s: int, chars: tuple[str, ...]) -> float:
        if self.fd[s] <= 0:
            return 0.0
        return sum(p for hand, p in self.posterior(s).items() if any(c in hand for c in chars))

    def certain_bluff(self, s: int, c: str) -> bool:
        return c not in self.known[s] and (self.unseen().get(c, 0) == 0 or c in self.lacks[s])

    def heads_up(self) -> bool:
        return len(self.opponents()) <= 1

    def threat(self, s: int) -> float:
        return 0.7 + 0.15 * self.fd[s] + 0.05 * self.coins[s] + 0.25 * (self.coins[s] >= 7)

    def inf_value(self, s: int, lost: int = 1) -> float:
        """Value to me (in coins) of seat s losing `lost` influence."""
        if lost <= 0:
            return 0.0
        if s == self.seat:
            if self.fd[s] <= lost:
                return 40.0
            return 10.0 * lost
        if self.heads_up():
            return 40.0 if self.fd[s] <= lost else 12.0 * lost
        kill = 14.0 if self.fd[s] <= lost else 7.0 * lost
        return kill * self.threat(s)

    def coin_value(self, s: int) -> float:
        """Value to me of one coin in seat s's hands (negative for an opponent)."""
        if s == self.seat:
            return 1.0
        return -(0.7 if self.heads_up() else 0.3 * self.threat(s))

    def chal_prob(self, s: int, c: str, bluff: bool) -> float:
        """P(opponent s challenges my claim of c)."""
        q = self.stat(s).challenge_rate()
        if bluff:
            q = q + (1 - q) * self.sees_all(s, c)
        return min(q, 0.98)

    def sees_all(self, s: int, c: str) -> float:
        """P(opponent s can see every copy of c, so knows that my claim is a bluff)."""
        if self.set_aside[c] or self.court_known[c] or c in self.hand:
            return 0.0  # copies it can never see
        r = self.copies - self.faceup[c]
        if r <= 0:
            return 1.0
        u = self.unseen()
        total = sum(u.values())
        k = self.fd[s] + (4 if self.draft else 0)
        if r > k or total <= 0 or k > total:
            return 0.0
        return math.comb(total - r, k - r) / math.comb(total, k)

    def anyone_challenges(self, c: str, bluff: bool, skip: int | None = None) -> float:
        miss = 1.0
        for s in self.opponents():
            if s != skip:
                miss *= 1.0 - self.chal_prob(s, c, bluff)
        return 1.0 - miss

    def challenge_bonus(self, c: str, skip: int | None = None) -> float:
        """Expected gain of a true claim: someone may challenge it and lose an influence."""
        gain = 0.0
        miss = 1.0
        for s in self.opponents():
            if s == skip:
                continue
            q = self.chal_prob(s, c, False)
            gain += miss * q * self.inf_value(s)
            miss *= 1.0 - q
        return gain - (1.0 - miss) * 0.3 * self.card_value(c)  # the shown card is replaced

    def mean_challenge_rate(self) -> float:
        opps = self.opponents()
        if not opps:
            return CHALLENGE_PRIOR
        return sum(self.stat(s).challenge_rate() for s in opps) / len(opps)

    # ------------------------------------------------------------- hand values

    def card_value(self, c: str) -> float:
        v = BASE_VALUE.get(c, 1.0)
        opps = self.opponents()
        if c == CONTESSA and any(self.coins[s] >= 3 or self.claims[s][ASSASSIN] for s in opps):
            v += 1.2
        if c == ASSASSIN and self.coins[self.seat] >= 3:
            v += 0.4
        if c == CAPTAIN and any(self.coins[s] >= 2 for s in opps):
            v += 0.3
        return v

    def hand_value(self, hand: list[str] | tuple[str, ...]) -> float:
        seen: set[str] = set()
        total = 0.0
        for c in sorted(hand, key=self.card_value, reverse=True):
            total += self.card_value(c) * (0.3 if c in seen else 1.0)
            seen.add(c)
        return total

    def best_keep(self, pool: list[str], k: int) -> float:
        best = -1e9
        n = len(pool)
        if k >= n:
            return self.hand_value(pool)
        if k == 1:
            return max(self.hand_value([c]) for c in pool)
        for i in range(n):
            for j in range(i + 1, n):
                best = max(best, self.hand_value([pool[i], pool[j]]))
        return best

    def exchange_gain(self) -> float:
        """Expected gain in hand value of an Exchange, the draws taken from the unseen cards."""
        u = self.unseen()
        # The Court holds the cards I returned, and the rest are like any unseen card.
        known = sum(self.court_known.values())
        unknown = max(0, self.court - known)
        n_unseen = sum(u.values())
        pool = {
            c: self.court_known[c] + (unknown * u[c] / n_unseen if n_unseen else 0.0)
            for c in self.chars
        }
        total = sum(pool.values())
        k = len(self.hand)
        if total <= 0 or k == 0:
            return 0.0
        now = self.hand_value(self.hand)
        draws = 2 if self.variant == AMBASSADOR else 1
        expected = 0.0
        if draws == 1 or total < 2:
            for c, m in pool.items():
                if m:
                    expected += m / total * self.best_keep(self.hand + [c], k)
        else:
            for c1, m1 in pool.items():
                if not m1:
                    continue
                for c2, m2 in pool.items():
                    m2b = m2 - (c1 == c2) * min(1.0, m2)
                    if m2b <= 0:
                        continue
                    p = m1 / total * m2b / (total - 1)
                    expected += p * self.best_keep(self.hand + [c1, c2], k)
        return max(0.0, expected - now)

    # ------------------------------------------------------------- events

    def event(self, e: events.Event) -> None:
        """Follow what the SDK does not: claims, passes, the Court's known cards..."""
        me = self.seat
        self.cache.clear()
        self.sync()
        if isinstance(e, events.CardsDealt):
            if e.seat == me and self.draft and self.state.hand:
                self.my_dealt = self.state.hand[0]
        elif isinstance(e, events.TurnStarted):
            self.pending = None
        elif isinstance(e, events.ActionDeclared):
            self.on_action_event(e.seat, e.action, e.target, e.claim or "-")
        elif isinstance(e, events.Challenged):
            if e.challenger != me:
                st = self.stat(e.challenger)
                st.chal_all[0] += 1
                if e.claimant == me:
                    st.chal_me[0] += 1
        elif isinstance(e, events.ClaimProven):
            self.resolve_claim(e.seat, e.character, bluff=False)
            self.proven[e.seat] = e.character
            self.court_known.clear()  # the Court is shuffled and drawn from
        elif isinstance(e, events.ClaimFailed):
            s, c = e.seat, e.character
            self.resolve_claim(s, c, bluff=True)
            self.lacks[s].add(c)
            self.claims[s][c] = 0
        elif isinstance(e, events.CardDrawn):
            s = e.seat
            if s != me:
                self.court_known.clear()
                self.original[s] = False
                c = self.proven.pop(s, None)
                if c is not None:  # a proven card went back: a fresh card for that character
                    self.claims[s][c] = 0
                    self.passes[s][c] = 0
                    if c in self.known[s]:
                        self.known[s].remove(c)
                else:  # a forced Examine: the new card could be anything
                    self.refresh(s)
                self.lacks[s].clear()
                self.open[s] = []
            self.proven.pop(s, None)
        elif isinstance(e, events.Blocked):
            self.on_block_event(e.blocker, e.character, e.actor)
        elif isinstance(e, events.InfluenceLost):
            s, c = e.seat, e.card
            if s != me:
                if c in self.known[s]:
                    self.known[s].remove(c)
                for record in self.open[s]:
                    record[2].append(c)
                self.claims[s][c] = 0  # the claim is explained by the card turned up
                self.passes[s][c] = 0
        elif isinstance(e, events.PlayerOut):
            s = e.seat
            if s != me:
                for c, h, turned in self.open[s]:
                    self.stat(s).resolve(h, bluff=c not in turned)
                self.open[s] = []
                self.learn_draft(s)
        elif isinstance(e, events.ExchangeDrawn):
            s = e.seat
            if s == me:
                for c in e.cards or ():
                    if self.court_known[c]:
                        self.court_known[c] -= 1
            else:
                self.court_known.clear()
                self.original[s] = False
                self.refresh(s)
        elif isinstance(e, events.ExchangeReturned):
            if e.seat == me:
                self.court_known.update(e.cards or ())
        elif isinstance(e, events.ExamineShown):
            if e.examiner == me and e.card is not None:
                self.shown_to_me = (e.target, e.card)
                self.known[e.target] = [e.card]
        elif isinstance(e, events.ExamineDecided):
            if e.forced and e.examiner == me and e.target != me and self.shown_to_me:
                self.known[e.target] = []
        elif isinstance(e, events.ActionResolved):
            self.on_resolved(e.seat, e.action, e.target)
        elif isinstance(e, events.ActionFailed):
            self.pending = None

    def learn_draft(self, s: int) -> None:
        """A drafting opponent is out with the hand it started with: which card did it pick?"""
        if not (self.draft and self.original[s] and self.my_dealt) or len(self.revealed[s]) != 2:
            return
        x, y = self.revealed[s]
        pref = self.stat(s).draft_pref
        if x == y:
            pref[x] = pref.get(x, 1.0) + 1.0
            return
        # It drafted x (and was dealt y) or the reverse; mine cannot have been dealt to it.
        wx = pref.get(x, 1.0) * (y != self.my_dealt)
        wy = pref.get(y, 1.0) * (x != self.my_dealt)
        if wx + wy > 0:
            pref[x] = pref.get(x, 1.0) + wx / (wx + wy)
            pref[y] = pref.get(y, 1.0) + wy / (wx + wy)

    def refresh(self, s: int) -> None:
        """Seat s has a new hand: what its claims told is void."""
        self.claims[s].clear()
        self.passes[s].clear()
        self.lacks[s].clear()
        self.known[s] = []
        self.open[s] = []

    def note_claim(self, s: int, c: str) -> None:
        """Seat s claims c: record it (for the stats) and open it to challenges."""
        self.last_claim = (s, c)
        for o in range(self.n):
            if o != s and o != self.seat and self.alive[o]:
                st = self.stat(o)
                st.chal_all[1] += 1
                if s == self.seat:
                    st.chal_me[1] += 1
        if s == self.seat:
            return
        h = self.base_hold(s, (c,))
        self.open[s].append([c, h, []])
        self.claims[s][c] += 1

    def resolve_claim(self, s: int, c: str, bluff: bool) -> None:
        if s == self.seat:
            return
        for i, record in enumerate(self.open[s]):
            if record[0] == c:
                self.stat(s).resolve(record[1], bluff)
                del self.open[s][i]
                break

    def on_action_event(self, s: int, action: str, target: int | None, claim: str) -> None:
        self.pending = {"actor": s, "action": action, "target": target, "blocker": None}
        if action in ("steal", "assassinate") and target is not None and target != self.seat:
            chars = (CONTESSA,) if action == "assassinate" else (CAPTAIN, self.fifth)
            self.pending["h_block"] = {target: self.base_hold(target, chars)}
        elif action == "foreign_aid":
            self.pending["h_block"] = {
                o: self.base_hold(o, (DUKE,)) for o in self.opponents() if o != s
            }
        if claim != "-":
            self.note_claim(s, claim)
        if s != self.seat and action in ("income", "foreign_aid"):
            self.passes[s][DUKE] += 0.5  # did not take Tax

    def on_block_event(self, blocker: int, c: str, actor: int) -> None:
        if self.pending is not None:
            self.pending["blocker"] = blocker
            action = self.pending["action"]
            h = self.pending.get("h_block", {}).get(blocker)
            if h is not None and blocker != self.seat:
                st = self.stat(blocker)
                st.note_block(action, True, h + (1 - h) * st.beta())
        self.note_claim(blocker, c)

    def on_resolved(self, s: int, action: str, target: int | None) -> None:
        p = self.pending
        if p is None or p.get("blocker") is not None:
            return
        for o, h in p.get("h_block", {}).items():
            if o == self.seat or not self.alive[o]:
                continue
            st = self.stat(o)
            st.note_block(action, False, h + (1 - h) * st.beta())
            if action == "steal":
                self.passes[o][CAPTAIN] += 1
                self.passes[o][self.fifth] += 1
            elif action == "assassinate":
                self.passes[o][CONTESSA] += 1
            elif action == "foreign_aid":
                self.passes[o][DUKE] += 0.5

    # ------------------------------------------------------------- requests

    def decide(self, request: Request) -> Decision:
        rule = getattr(self, "on_" + request.kind, None)
        choice = rule(request) if rule else None
        return choice if choice in request.legal else safe(request, self.state.rng)

    def p_block(self, t: int, action: str) -> float:
        """P(target t blocks my action)."""
        chars = {
            "steal": (CAPTAIN, self.fifth),
            "assassinate": (CONTESSA,),
            "foreign_aid": (DUKE,),
        }[action]
        st = self.stat(t)
        hold = self.p_hold_any(t, chars)
        bluff_rate = min(1.0, st.beta()) * st.block_factor(action)
        return min(0.995, hold + (1 - hold) * bluff_rate)

    def p_block_bluff(self, t: int, chars: tuple[str, ...]) -> float:
        """P(a block by t claiming one of chars is a bluff), before it is made."""
        hold = self.p_hold_any(t, chars)
        beta = self.stat(t).beta()
        if all(self.certain_bluff(t, c) for c in chars):
            return 1.0
        return (1 - hold) * beta / (hold + (1 - hold) * beta + 1e-9)

    def ev_challenge_block(self, t: int, chars: tuple[str, ...], success: float) -> float:
        """EV of challenging t's block: it loses an influence and my action goes on."""
        pb = self.p_block_bluff(t, chars)
        return pb * (self.inf_value(t) + success) - (1 - pb) * self.inf_value(self.seat)

    def claim_ev(self, c: str, proceed: float) -> float:
        """EV of an action claiming c whose effect (if not caught) is worth `proceed`."""
        if c in self.hand:
            return proceed + self.challenge_bonus(c)
        caught = self.anyone_challenges(c, True)
        return (1 - caught) * proceed - caught * self.inf_value(self.seat)

    def action_value(self, decision: Decision) -> float:
        me = self.seat
        mine = self.coins[me]
        name, t = decision.kind, decision.target
        if name == "income":
            return 1.0
        if name == "foreign_aid":
            blocked = 0.0
            miss = 1.0
            recover = 0.0
            for o in self.opponents():
                pb = self.p_block(o, "foreign_aid")
                recover += miss * pb * max(0.0, self.ev_challenge_block(o, (DUKE,), 2.0))
                miss *= 1 - pb
            blocked = 1 - miss
            return 2.0 * (1 - blocked) + recover
        if name == "coup" and t is not None:
            return self.inf_value(t) - 7.0 + 2.5
        if name == "tax":
            return self.claim_ev(DUKE, 3.0)
        if name == "steal" and t is not None:
            g = min(2, self.coins[t])
            gain = g * (1.0 - self.coin_value(t))
            pb = self.p_block(t, "steal")
            recover = max(0.0, self.ev_challenge_block(t, (CAPTAIN, self.fifth), gain))
            return self.claim_ev(CAPTAIN, (1 - pb) * gain + pb * recover)
        if name == "assassinate" and t is not None:
            hit = self.inf_value(t)
            pb = self.p_block(t, "assassinate")
            recover = max(0.0, self.ev_challenge_block(t, (CONTESSA,), self.inf_value(t, 2) - hit))
            proceed = -3.0 + (1 - pb) * hit + pb * recover
            if mine >= 7:
                proceed -= 1.0  # a Coup cannot be blocked
            return self.claim_ev(ASSASSIN, proceed)
        if name == "exchange":
            scale = 0.4 + 2.0 * self.mean_challenge_rate()
            return self.claim_ev(self.fifth, 0.8 * scale * self.exchange_gain())
        if name == "examine" and t is not None:
            return self.claim_ev(INQUISITOR, 0.6 + 0.25 * self.fd[t] + 0.1 * self.threat(t))
        return -50.0

    def on_action(self, request: Request) -> Decision:
        rng = self.state.rng
        scored = [(self.action_value(d) + rng.uniform(0, 0.05), d) for d in request.legal]
        if DEBUG:
            log(
                f"hand={self.hand} coins={list(self.coins)} "
                + " ".join(f"{d}={val:.2f}" for val, d in sorted(scored, key=_by_score,
                                                                   reverse=True))
            )
        return max(scored, key=_by_score)[1]

    def on_draft(self, request: Request) -> Decision:
        def worth(decision: Decision) -> float:
            return self.hand_value(self.hand + [decision.card or ""])

        return max(request.legal, key=worth)

    def keep_worth(self, decision: Decision) -> float:
        return self.hand_value(list(decision.cards or ()))

    def on_keep(self, request: Request) -> Decision:
        return max(request.legal, key=self.keep_worth)

    def on_lose(self, request: Request) -> Decision:
        legal = request.legal
        if len(legal) == 1:
            return legal[0]

        # Turn up the card whose loss leaves the best hand.
        def left(decision: Decision) -> float:
            rest = list(self.hand)
            c = decision.card or ""
            if c in rest:
                rest.remove(c)
            return self.hand_value(rest)

        return max(legal, key=left)

    def on_show(self, request: Request) -> Decision:
        return min(request.legal, key=lambda d: self.card_value(d.card or ""))

    def on_force(self, request: Request) -> Decision | None:
        if not self.shown_to_me:
            return request.find("force:no") or request.legal[0]
        target, c = self.shown_to_me
        u = self.unseen()
        total = sum(u.values())
        mean = sum(u[x] * BASE_VALUE.get(x, 1.0) for x in u) / total if total else 2.2
        value = BASE_VALUE.get(c, 1.0)
        if c == CONTESSA and (ASSASSIN in self.hand or self.coins[self.seat] >= 3):
            value += 1.0
        return request.find("force:yes" if value > mean + 0.1 else "force:no")

    def on_block(self, request: Request) -> Decision | None:
        me = self.seat
        action = request.action or (self.pending or {}).get("action", "")
        actor = request.actor
        if actor is None and self.pending:
            actor = self.pending["actor"]
        if action == "foreign_aid":
            pass_val = 2.0 * self.coin_value(actor) if actor is not None else -1.0
        elif action == "steal":
            g = min(2, self.coins[me])
            pass_val = -g * (1.0 - (self.coin_value(actor) if actor is not None else -0.5))
        elif action == "assassinate":
            pass_val = -self.inf_value(me)
        else:
            return request.find("pass")
        best, choice = pass_val, request.find("pass")
        for decision in request.of_kind("block"):
            c = decision.card or ""
            if c in self.hand:
                val = self.challenge_bonus(c) + 0.5
            else:
                caught = self.anyone_challenges(c, True)
                if action == "assassinate":
                    loss = self.inf_value(me, 2)
                else:
                    loss = self.inf_value(me) - pass_val
                val = -caught * loss
                # Prefer the bluff with the most unseen copies.
                val += 0.01 * self.unseen().get(c, 0)
            if val > best:
                best, choice = val, decision
        return choice

    def on_challenge(self, request: Request) -> Decision | None:
        return request.find(self.challenge_or_pass(request))

    def challenge_or_pass(self, request: Request) -> str:
        me = self.seat
        claimant = request.claimant
        c = request.character
        if (claimant is None or not c) and self.last_claim:
            claimant, c = self.last_claim
        if claimant is None or not c or claimant == me:
            return "pass"
        if self.certain_bluff(claimant, c):
            return "challenge"
        p_true = self.p_hold(claimant, c)
        p_bluff = 1.0 - p_true
        pend = self.pending or {}
        action = request.action or pend.get("action", "")
        actor = request.actor if request.actor is not None else pend.get("actor")
        target = request.target if request.target is not None else pend.get("target")
        is_block = actor is not None and actor != claimant
        gain = self.inf_value(claimant)
        loss = self.inf_value(me)
        if not is_block:
            if action == "tax":
                gain += -3.0 * self.coin_value(claimant)
            elif action == "steal":
                if target == me:
                    g = min(2, self.coins[me])
                    safe_block = any(x in self.hand for x in (CAPTAIN, self.fifth))
                    if not safe_block:
                        gain += g * (1.0 - self.coin_value(claimant))
                else:
                    gain += -min(2, self.coins[target or 0]) * self.coin_value(claimant) * 0.5
            elif action == "assassinate" and target == me:
                if CONTESSA in self.hand:
                    # A safe block is coming anyway: challenge only when very likely a bluff.
                    loss += 0.0
                else:
                    if self.fd[me] <= 1:
                        # Dead if it is real, unless a bluffed Contessa passes: weigh both.
                        block_survive = 1.0 - self.anyone_challenges(CONTESSA, True)
                        return "challenge" if p_bluff > block_survive else "pass"
                    # If I pass, I lose one card; if I challenge and fail, I lose both.
                    survive = 1.0 - self.anyone_challenges(CONTESSA, True)
                    pass_val = max(-self.inf_value(me), -(1 - survive) * self.inf_value(me, 2))
                    fail_val = -40.0 * (1 - survive) - self.inf_value(me) * survive
                    ev = p_bluff * gain + (1 - p_bluff) * fail_val
                    return "challenge" if ev > pass_val else "pass"
            elif action == "exchange":
                gain += 0.8
            elif action == "examine":
                gain += 1.0 if target == me else 0.3
        else:
            blocker = claimant
            if actor == me:
                if action == "steal":
                    g = min(2, self.coins[blocker])
                    gain += g * (1.0 - self.coin_value(blocker))
                elif action == "assassinate":
                    gain = self.inf_value(blocker, 2)
                elif action == "foreign_aid":
                    gain += 2.0
            else:
                if action == "foreign_aid" and actor is not None:
                    gain += 2.0 * self.coin_value(actor)
                elif action == "assassinate":
                    gain = self.inf_value(blocker, 2) * 0.8
        if not self.heads_up() and target != me and actor != me:
            gain *= 0.75  # somebody else may well do it, and I am not the one hurt
        ev = p_bluff * gain - p_true * loss
        if DEBUG:
            log(
                f"challenge? {claimant} {c} {action} p_bluff={p_bluff:.2f} gain={gain:.1f} "
                f"loss={loss:.1f} beta={self.stat(claimant).beta():.2f}"
            )
        return "challenge" if ev > 0 else "pass"


# ---------------------------------------------------------------- the bot


def _by_score(scored: tuple[float, Decision]) -> tuple[float, str]:
    return scored[0], scored[1].token


class Strong(Bot):
    name = NAME

    def __init__(self) -> None:
        self.stats: dict[str, Stats] = {}  # by opponent name, for the whole process
        self.table: Table | None = None

    def on_game_start(self, state: State) -> None:
        self.table = Table(state, self.stats)

    def on_event(self, state: State, event: events.Event) -> None:
        if self.table is not None:
            self.table.event(event)

    def decide(self, state: State, request: Request) -> Decision:
        try:
            if self.table is None:
                raise RuntimeError("a request outside any game")
            return self.table.decide(request)
        except Exception as exc:  # noqa: BLE001 - never crash, never answer illegally
            log(f"strong: fallback after {exc!r} on request {request.id}")
            return safe(request, state.rng)

    def on_game_over(self, state: State) -> None:
        self.table = None


if __name__ == "__main__":
    run(Strong)
