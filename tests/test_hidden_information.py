"""A bot learns nothing the rules keep from it: checked on every line a spy received.

``tests/bots/spy.py`` plays at random and logs every line the referee sends it.
It plays 30 real games (2-player draft games, tables of 3 and 4, both
variants) against the example bots, in one process.  Each game's record is
then replayed, omniscient, and every line the spy received is held against
the truth, with visibility rules written out here independently of the
engine's observer:

* every ``event`` line has the same keyword and fields as the true event, and
  each field equals the truth, except the secret field of ``dealt``,
  ``draft_offered``, ``draft_chosen``, ``drew``, ``exchange_drawn``,
  ``exchange_returned`` (secret to the seat concerned) and ``examine_shown``
  (secret to the examiner and the target), which is ``?`` unless the spy is
  entitled to it.  So a card name in an event is either public (a claim, a
  face-up card) or one of the spy's own cards;
* every ``request`` comes after exactly the events that happened before it (none
  from the future); its answers are the engine's legal answers, and the cards
  they name are the spy's own: its hand (``lose``, ``show``), its hand and what
  it drew (``keep``), its own draft pile (``draft``), or the characters that may
  block (``block``); its ``character=`` is the claim just made in public;
* the ``game`` and ``gameover`` lines are exactly what the record says (the
  variant, the names, the placements).

The Court's order is never shown: the only fields that can carry a card from
the Court are the spy's own ``drew`` and ``exchange_drawn``, which hold what it
drew and nothing more; the ``start`` line gives only the Court's size.
"""

from __future__ import annotations

import collections
import shutil
from pathlib import Path

import pytest
import trio

from arena.engine import events as ev
from arena.engine.cards import ALL_CARDS, VARIANTS
from arena.engine.decisions import Decision
from arena.engine.game import Game, GameConfig
from arena.engine.record import GameRecord, replay
from arena.protocol import codec
from arena.referee.bots import resolve_bots
from arena.referee.lineup import BotHost, open_lineup, start_all
from arena.referee.match import GameReport, play_game

ROOT = Path(__file__).resolve().parents[1]
SPY = Path(__file__).parent / "bots" / "spy.py"
HONEST = ROOT / "example_bots" / "honest.py"
SPIES = 4
LIMITS = codec.Limits(startup_ms=5000, decision_ms=1000, bank_ms=5000, game_ms=60_000)

# 30 games: (players, variant), every size and both variants.
TABLES = [(players, VARIANTS[i % 2]) for i, players in enumerate([2] * 8 + [3] * 11 + [4] * 11)]


def seating(number: int, players: int) -> list[int]:
    """Who sits where in game ``number`` (from 0): host indexes in seat order.
    Hosts 0-3 are spies, host 4 is honest, at a seat that moves round the table."""
    spies = [(number + k) % SPIES for k in range(players - 1)]
    spies.insert(number % players, SPIES)
    return spies


# keyword -> (index of the secret field, the seats entitled to it, from the fields)
SECRETS = {
    "dealt": (1, lambda f: {f[0]}),
    "draft_offered": (1, lambda f: {f[0]}),
    "draft_chosen": (1, lambda f: {f[0]}),
    "drew": (1, lambda f: {f[0]}),
    "exchange_drawn": (2, lambda f: {f[0]}),
    "exchange_returned": (2, lambda f: {f[0]}),
    "examine_shown": (2, lambda f: {f[0], f[1]}),
}


def card_names(text: str) -> list[str]:
    words = text.replace(",", " ").replace(":", " ").replace("=", " ").split()
    return [w for w in words if w in ALL_CARDS]


async def play_all(tmp_path: Path) -> tuple[list[GameReport], list[BotHost]]:
    """Play every table; each spy's received.log is kept in ``tmp_path/received``
    (its scratch directory goes with the lineup)."""
    specs = resolve_bots([*[str(SPY)] * SPIES, str(HONEST)])
    reports = []
    async with open_lineup(limits=LIMITS) as lineup:
        hosts = [lineup.host(spec, scratch_dir=tmp_path / "scratch" / spec.name,
                             log_path=tmp_path / "logs" / f"{spec.name}.log") for spec in specs]
        with trio.fail_after(60):  # only a guard against a hang
            for number, (players, variant) in enumerate(TABLES):
                seats = await start_all([hosts[i] for i in seating(number, players)])
                reports.append(await play_game(seats, GameConfig(players, variant), 7000 + number,
                                               LIMITS))
        await lineup.close_all()  # each spy has written its quit line
        (tmp_path / "received").mkdir()
        for host in hosts[:SPIES]:
            shutil.copyfile(host.scratch_dir / "received.log",
                            tmp_path / "received" / f"{host.spec.name}.log")
    return reports, hosts


def check_event(seen: str, true: str, seat: int, seen_kinds: collections.Counter[str]) -> None:
    got, want = seen.split(), true.split()
    assert got[:2] == want[:2] and len(got) == len(want), (seen, true)
    keyword, fields, truth = got[1], got[2:], want[2:]
    secret = SECRETS.get(keyword)
    for i, (field, real) in enumerate(zip(fields, truth, strict=True)):
        if secret is not None and i == secret[0]:
            entitled = seat in {int(s) for s in secret[1](truth)}
            seen_kinds[f"{keyword} {'own' if entitled else 'hidden'}"] += 1
            assert field == (real if entitled else codec.HIDDEN), (seen, true)
        else:
            assert field == real, (seen, true)


def check_request(line: str, game: Game, seat: int, last_claim: str | None) -> None:
    request = codec.decode_request(line)
    asked = game.request
    assert asked is not None and seat in asked.seats
    assert request.kind == asked.kind
    assert request.legal == game.legal(seat), line
    hand = game.hands[seat]
    drawn = [e for e in game.events if isinstance(e, ev.ExchangeDrawn) and e.seat == seat]
    offered = [e for e in game.events if isinstance(e, ev.DraftOffered) and e.seat == seat]
    for decision in request.legal:
        named = card_names(decision.token)
        if decision.kind in ("lose", "show"):
            assert named and set(named) <= set(hand), line
        elif decision.kind == "keep":
            assert drawn and drawn[-1].cards is not None
            pool = collections.Counter(hand + list(drawn[-1].cards))
            assert not collections.Counter(named) - pool, line
        elif decision.kind == "draft":
            assert offered and offered[-1].cards is not None
            assert set(named) <= set(offered[-1].cards), line
        elif decision.kind != "block":  # a block names the character it would claim
            assert not named, line
    for key, value in request.context.items():
        if key == "character":
            assert value == asked.character == last_claim, line
        else:
            assert not card_names(value), line


def check_game(lines: list[str], record: GameRecord, seat: int, number: int,
               seen_kinds: collections.Counter[str]) -> None:
    config = record.config
    assert config is not None
    names = record.referee["names"]
    assert lines[0] == (f"game {number} seat {seat} players {config.players} "
                        f"variant {config.variant} names {' '.join(names)}")
    assert record.seed is not None
    # The seat's own seed, derived from the deal seed: nothing else of it.
    assert lines[1] == codec.encode_seed(codec.seat_seed(record.seed, seat))
    assert lines[-1] == codec.encode_game_over(record.result["placements"])
    body = lines[2:-1]
    assert all(line.startswith(("event ", "request ")) for line in body), body

    # Events: the spy's view of each true event, field by field.
    truth = [codec.encode_event(e) for e in replay(record).events]
    seen = [line for line in body if line.startswith("event ")]
    assert len(seen) == len(truth)
    for got, want in zip(seen, truth, strict=True):
        check_event(got, want, seat, seen_kinds)

    # Requests: replay the decisions one by one; at each of the spy's decisions,
    # its request must be the next one it received, after exactly the events so far.
    game = record.new_game()
    positions = [i for i, line in enumerate(body) if line.startswith("request ")]
    asked = 0
    for who, token in record.decisions:
        if who == seat and not token.startswith("forfeit:"):
            position = positions[asked]
            before = body[:position]
            assert sum(line.startswith("event ") for line in before) == len(game.events)
            claims = [ln.split() for ln in before if ln.startswith(("event action ",
                                                                      "event block "))]
            last = claims[-1] if claims else None
            last_claim = None if last is None else last[5] if last[1] == "action" else last[3]
            check_request(body[position], game, seat, last_claim)
            seen_kinds[f"request {game.request.kind}"] += 1  # type: ignore[union-attr]
            asked += 1
        if token.startswith("forfeit:"):
            game.forfeit(who, token.removeprefix("forfeit:"))
        else:
            game.decide(who, Decision.parse(token))
    assert asked == len(positions)


def split_session(path: Path, games: int) -> list[list[str]]:
    """The lines of each game in one spy's log, checking the session around them."""
    received = path.read_text().splitlines()
    assert received[0] == codec.encode_handshake(LIMITS)
    assert received[-1] == codec.QUIT
    starts = [i for i, line in enumerate(received) if line.startswith("game ")]
    ends = [i for i, line in enumerate(received) if line.startswith("gameover ")]
    assert len(starts) == len(ends) == games
    assert [e + 1 for e in ends[:-1]] == starts[1:], "nothing comes between games"
    assert starts[0] == 1 and ends[-1] == len(received) - 2
    return [received[start:end + 1] for start, end in zip(starts, ends, strict=True)]


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_spies_see_only_what_the_rules_show_them(tmp_path: Path) -> None:
    reports, hosts = trio.run(play_all, tmp_path)
    seen_kinds: collections.Counter[str] = collections.Counter()
    checked = 0
    for spy in range(SPIES):
        played = [(report, table.index(spy))
                  for number, ((players, _), report) in enumerate(zip(TABLES, reports,
                                                                       strict=True))
                  if spy in (table := seating(number, players))]
        assert hosts[spy].starts == 1
        assert all(report.faults[seat] is None for report, seat in played)
        sessions = split_session(tmp_path / "received" / f"{hosts[spy].spec.name}.log",
                                 len(played))
        for number, ((report, seat), lines) in enumerate(zip(played, sessions, strict=True), 1):
            check_game(lines, report.record, seat, number, seen_kinds)
            checked += 1
    assert checked == sum(players - 1 for players, _ in TABLES)

    # The games did put the rules to the test: the spies saw others' secrets
    # hidden and their own shown, in the deal, the draft, the draws, the
    # exchanges and the examinations, and were asked every kind of request.
    for kind in SECRETS:
        assert seen_kinds[f"{kind} own"] > 0, (kind, seen_kinds)
        assert seen_kinds[f"{kind} hidden"] > 0, (kind, seen_kinds)
    for kind in ("draft", "action", "challenge", "block", "lose", "keep", "show", "force"):
        assert seen_kinds[f"request {kind}"] > 0, (kind, seen_kinds)
