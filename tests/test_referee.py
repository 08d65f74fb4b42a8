"""The referee: what it sends each bot, its clock, and how it handles a bot that faults.

Two halves:

* **Scripted fake bots** (``FakeBot``): an in-memory stand-in for a bot process,
  driven by ``BotPlayer`` exactly as a real one.  The games run under trio's
  ``MockClock`` (autojump), so a bot "thinking" 0.3 s is 0.3 s of virtual time:
  every timing below is exact and nothing depends on the machine's speed.
* **Real broken bots** (``tests/bots/``): one per fault kind, each at a real table
  of 3 with two example bots, through ``BotHost`` and ``play_game``.  Their limits
  leave a well-behaved bot a wide margin (1 s per answer, plus a bank); only the
  bot that hangs waits for a deadline.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

import attrs
import pytest
import trio
import trio.testing

from arena.engine import events as ev
from arena.engine.decisions import ACTION, Decision, Request
from arena.engine.game import GameConfig
from arena.engine.record import replay
from arena.engine.rules import INCOME
from arena.protocol import codec
from arena.protocol.seat_lines import NOTE, seat_lines
from arena.referee.bots import resolve_bots
from arena.referee.lineup import BotHost, open_lineup, start_all
from arena.referee.match import GameReport, play_game
from arena.referee.player import BotFaulted, BotPlayer, Fault
from arena.referee.process import open_bot_process

ROOT = Path(__file__).resolve().parents[1]
TEST_BOTS = Path(__file__).parent / "bots"
RANDOM_BOT = ROOT / "example_bots" / "random.py"

FAKE_LIMITS = codec.Limits(startup_ms=2000, decision_ms=1000, bank_ms=2000, game_ms=60_000)


def mock_clock_test(fn: Callable[..., Awaitable[None]]) -> Callable[..., None]:
    """Run an async test under trio with a virtual clock that jumps when all tasks wait."""

    @functools.wraps(fn)
    def wrapper(*args: object, **kwargs: object) -> None:
        clock = trio.testing.MockClock(autojump_threshold=0)
        trio.run(functools.partial(fn, *args, **kwargs), clock=clock)

    return wrapper


# ----------------------------------------------------------------- fake bots

Journal = list[tuple[str, str, str]]  # ("sent" | "read", bot name, line)


class FakeBot:
    """The process side of a scripted bot, in memory: what ``BotPlayer`` needs.

    ``respond(line)`` is called for every line the referee sends and returns the
    lines the bot writes back, each with its delay in seconds from the moment the
    referee sent the line.  A line becomes readable when its delay has passed; a
    cancelled ``read_line`` loses nothing, as with the real process.
    """

    def __init__(self, name: str, respond: Callable[[str], Sequence[tuple[float, str]]],
                 journal: Journal | None = None) -> None:
        self.name = name
        self.received: list[str] = []
        self.notes: list[str] = []  # the referee's lines in its log
        self.journal: Journal = journal if journal is not None else []
        self._respond = respond
        self._output: list[tuple[float, str]] = []  # (readable at, line), in order
        self._wrote = trio.Event()

    # What BotPlayer and play_game use of a BotProcess.
    returncode: int | None = None
    usable = True
    limit_hit: str | None = None

    def describe_exit(self) -> str:
        return "still running"

    def reset_cpu(self) -> None:
        pass

    def log_note(self, line: str) -> None:
        self.notes.append(line)

    def output_waiting(self) -> bool:
        return bool(self._output) and self._output[0][0] <= trio.current_time()

    async def send_line(self, line: str) -> None:
        await self.send_lines([line])

    async def send_lines(self, lines: Sequence[str]) -> None:
        await trio.lowlevel.checkpoint()
        self.send_lines_nowait(lines)

    def send_lines_nowait(self, lines: Sequence[str]) -> bool:
        now = trio.current_time()
        for line in lines:
            self.received.append(line)
            self.journal.append(("sent", self.name, line))
            for delay, out in self._respond(line):
                self._output.append((now + delay, out))
        self._wrote.set()
        self._wrote = trio.Event()
        return True

    def read_line_nowait(self) -> str | None:
        if not self.output_waiting():
            return None
        _, line = self._output.pop(0)
        self.journal.append(("read", self.name, line))
        return line

    async def read_line(self) -> str:
        while not self._output:
            await self._wrote.wait()
        await trio.sleep_until(self._output[0][0])
        _, line = self._output.pop(0)
        self.journal.append(("read", self.name, line))
        return line


def request_id(line: str) -> int:
    return int(line.split()[1])


def lines_of_game(bot: FakeBot, game: int) -> list[str]:
    """What the bot got (``< ``) and what the referee read from it (``> ``) in
    its game number ``game``."""
    lines = [("< " if kind == "sent" else "> ") + line
             for kind, name, line in bot.journal if name == bot.name]
    start = next(i for i, line in enumerate(lines) if line.startswith(f"< game {game} "))
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("< game ")),
               len(lines))
    return [line for line in lines[start:end] if line != "< quit"]


def rebuilt(report: GameReport, seat: int) -> list[str]:
    """The same, as ``arena replay --raw`` rebuilds it from the game's record."""
    return [f"{line.direction} {line.text}" for line in seat_lines(report.record, seat)
            if line.direction != NOTE]


def scripted(transcript: str, delays: dict[int, float] | None = None
             ) -> tuple[Callable[[str], list[tuple[float, str]]], list[str]]:
    """A bot that follows a transcript: ``<`` lines it expects, ``>`` lines it answers.

    After each line received it writes the ``>`` lines that follow the next ``<``
    line of the transcript, so it answers in order whatever it is sent; the test
    compares what it received with the ``<`` lines.  ``delays``: request id ->
    seconds the answer to that request takes.
    """
    entries = [(ln[0], ln[2:]) for ln in map(str.strip, transcript.splitlines()) if ln]
    assert all(mark in "<>" for mark, _ in entries)
    expected = [text for mark, text in entries if mark == "<"]
    position = 0
    delays = delays or {}

    def respond(line: str) -> list[tuple[float, str]]:
        nonlocal position
        if position < len(entries) and entries[position][0] == "<":
            position += 1
        out = []
        while position < len(entries) and entries[position][0] == ">":
            delay = delays.get(request_id(line), 0.0) if line.startswith("request ") else 0.0
            out.append((delay, entries[position][1]))
            position += 1
        return out

    return respond, expected


def answering(name: str, delays: dict[int, float] | None = None, *,
              first_action: str | None = None) -> Callable[[str], list[tuple[float, str]]]:
    """A bot that says hello and answers every request: income if it can, else the
    first answer listed (pass, for an opportunity).  ``delays``: request id ->
    seconds its answer takes; ``first_action``: its answer to its first action
    request instead, if legal (tax, say, which the others may challenge)."""
    delays = delays or {}
    actions = 0

    def respond(line: str) -> list[tuple[float, str]]:
        nonlocal actions
        fields = line.split()
        if fields[0] == "arena":
            return [(0.0, f"hello {name}")]
        if fields[0] != "request":
            return []
        legal = fields[fields.index(":") + 1:]
        answer = "income" if "income" in legal else legal[0]
        if fields[2] == "action":
            actions += 1
            if actions == 1 and first_action in legal:
                answer = first_action
        return [(delays.get(int(fields[1]), 0.0), f"{fields[1]} {answer}")]

    return respond


async def ready(bots: Sequence[FakeBot], limits: codec.Limits = FAKE_LIMITS) -> list[BotPlayer]:
    players = [BotPlayer(bot.name, bot, limits) for bot in bots]  # type: ignore[arg-type]
    for player in players:
        await player.handshake()
    return players


def requests_in(lines: Sequence[str]) -> list[str]:
    return [line for line in lines if line.startswith("request ")]


# ------------------------------------------- a rigged 3-player game, line by line
#
# Seed 2 deals duke,ambassador / assassin,duke / contessa,assassin and seat 0
# plays first; the turn limit is 2.  Turn 1: seat 0 taxes; seats 1 and 2 both
# challenge, only seat 1's counts (the first after the claimant); seat 0 proves
# its Duke and draws a card the others see as "?"; seat 1 turns up its Duke.
# Turn 2: seat 1 steals from seat 2 (a bluff nobody challenges or blocks).

HANDSHAKE = "< arena 1 startup_ms=2000 decision_ms=1000 bank_ms=2000 game_ms=60000"
GAME_LINE = "game 1 seat {} players 3 variant ambassador names alpha beta gamma"
# Each seat's seed for game seed 2: codec.seat_seed(2, seat), pinned here.
SEEDS = (16303593969368362123, 7779554594473887867, 5556216575700151111)
TAX_CHALLENGE = ("request 1 challenge bank_ms=2000 actor=0 action=tax claimant=0 "
                 "character=duke : pass challenge")
STEAL_CHALLENGE = ("request 2 challenge bank_ms=2000 actor=1 action=steal target=2 claimant=1 "
                   "character=captain : pass challenge")
STEAL_BLOCK = ("request 3 block bank_ms=2000 actor=1 action=steal target=2 : "
               "pass block:captain block:ambassador")
END = """
    < event resolved 1 steal 2
    < event coins 2 -2 0 steal
    < event coins 1 +2 4 steal
    < event end turn_limit 2 1,1,1 -
    < gameover - 1 1 1
"""
ALPHA = f"""
    {HANDSHAKE}
    > hello alpha
    < {GAME_LINE.format(0)}
    < seed {SEEDS[0]}
    < event start 3 ambassador no 0 2,2,2 9
    < event dealt 0 duke,ambassador
    < event dealt 1 ?
    < event dealt 2 ?
    < event turn 1 0
    < request 1 action bank_ms=2000 : income foreign_aid tax exchange steal:1 steal:2
    > 1 tax
    < event action 0 tax - duke
    < event challenge 1 0 duke
    < event proven 0 duke
    < event drew 0 ambassador
    < event lost 1 duke
    < event resolved 0 tax -
    < event coins 0 +3 5 tax
    < event turn 2 1
    < event action 1 steal 2 captain
    < {STEAL_CHALLENGE}
    > 2 pass
    {END}
"""
BETA = f"""
    {HANDSHAKE}
    > hello beta
    < {GAME_LINE.format(1)}
    < seed {SEEDS[1]}
    < event start 3 ambassador no 0 2,2,2 9
    < event dealt 0 ?
    < event dealt 1 assassin,duke
    < event dealt 2 ?
    < event turn 1 0
    < event action 0 tax - duke
    < {TAX_CHALLENGE}
    > 1 challenge
    < event challenge 1 0 duke
    < event proven 0 duke
    < event drew 0 ?
    < request 2 lose bank_ms=2000 : lose:assassin lose:duke
    > 2 lose:duke
    < event lost 1 duke
    < event resolved 0 tax -
    < event coins 0 +3 5 tax
    < event turn 2 1
    < request 3 action bank_ms=2000 : income foreign_aid tax exchange steal:2 steal:0
    > 3 steal:2
    < event action 1 steal 2 captain
    {END}
"""
GAMMA = f"""
    {HANDSHAKE}
    > hello gamma
    < {GAME_LINE.format(2)}
    < seed {SEEDS[2]}
    < event start 3 ambassador no 0 2,2,2 9
    < event dealt 0 ?
    < event dealt 1 ?
    < event dealt 2 contessa,assassin
    < event turn 1 0
    < event action 0 tax - duke
    < {TAX_CHALLENGE}
    > 1 challenge
    < event challenge 1 0 duke
    < event proven 0 duke
    < event drew 0 ?
    < event lost 1 duke
    < event resolved 0 tax -
    < event coins 0 +3 5 tax
    < event turn 2 1
    < event action 1 steal 2 captain
    < {STEAL_CHALLENGE}
    > 2 pass
    < {STEAL_BLOCK}
    > 3 pass
    {END}
"""
RIGGED = GameConfig(3, "ambassador", None, turn_limit=2)
RIGGED_SEED = 2
RIGGED_DECISIONS = ((0, "tax"), (1, "challenge"), (2, "challenge"), (1, "lose:duke"),
                    (1, "steal:2"), (0, "pass"), (2, "pass"), (2, "pass"))


async def play_rigged(delays: Sequence[dict[int, float]], journal: Journal | None = None,
                      ) -> tuple[GameReport, list[FakeBot], list[list[str]]]:
    bots, expected = [], []
    for name, transcript, delay in zip(("alpha", "beta", "gamma"), (ALPHA, BETA, GAMMA), delays,
                                       strict=True):
        respond, lines = scripted(transcript, delay)
        bots.append(FakeBot(name, respond, journal))
        expected.append(lines)
    players = await ready(bots)
    report = await play_game(players, RIGGED, RIGGED_SEED, FAKE_LIMITS)
    return report, bots, expected


@mock_clock_test
async def test_each_seat_gets_exactly_its_view_of_a_rigged_game() -> None:
    report, bots, expected = await play_rigged([{}, {}, {}])
    for bot, lines in zip(bots, expected, strict=True):
        assert bot.received == lines, bot.name
    assert report.faults == (None, None, None)
    assert report.record.decisions == RIGGED_DECISIONS
    assert report.result["placements"] == [1, 1, 1]
    assert [len(t) for t in report.times] == [2, 3, 3]


# The two-player draft (inquisitor, seed 0, turn limit 1): both players are asked
# to draft at once, each with its own request 1; seat 1 then examines seat 0 and
# forces a swap.  Only the two of them see the examined card.
DRAFT_REQUEST = ("request 1 draft bank_ms=2000 : draft:duke draft:assassin draft:captain "
                 "draft:contessa draft:inquisitor")
EXAMINE_CHALLENGE = ("request 2 challenge bank_ms=2000 actor=1 action=examine target=0 "
                     "claimant=1 character=inquisitor : pass challenge")
DRAFT_0 = f"""
    < arena 1 startup_ms=2000 decision_ms=1000 bank_ms=2000 game_ms=60000
    > hello alpha
    < game 1 seat 0 players 2 variant inquisitor names alpha beta
    < seed 486362911971306209
    < event start 2 inquisitor yes 1 2,2 3
    < event dealt 0 contessa
    < event draft_offered 0 duke,assassin,captain,contessa,inquisitor
    < event dealt 1 ?
    < event draft_offered 1 ?
    < {DRAFT_REQUEST}
    > 1 draft:inquisitor
    < event draft_chosen 0 inquisitor
    < event draft_chosen 1 ?
    < event turn 1 1
    < event action 1 examine 0 inquisitor
    < {EXAMINE_CHALLENGE}
    > 2 pass
    < event resolved 1 examine 0
    < request 3 show bank_ms=2000 actor=1 action=examine target=0 : show:contessa show:inquisitor
    > 3 show:inquisitor
    < event examine_shown 1 0 inquisitor
    < event examine_decided 1 0 yes
    < event drew 0 inquisitor
    < event end turn_limit 1 1,1 -
    < gameover - 1 1
"""
DRAFT_1 = f"""
    < arena 1 startup_ms=2000 decision_ms=1000 bank_ms=2000 game_ms=60000
    > hello beta
    < game 1 seat 1 players 2 variant inquisitor names alpha beta
    < seed 14509935074661865286
    < event start 2 inquisitor yes 1 2,2 3
    < event dealt 0 ?
    < event draft_offered 0 ?
    < event dealt 1 duke
    < event draft_offered 1 duke,assassin,captain,contessa,inquisitor
    < {DRAFT_REQUEST}
    > 1 draft:duke
    < event draft_chosen 0 ?
    < event draft_chosen 1 duke
    < event turn 1 1
    < request 2 action bank_ms=2000 : income foreign_aid tax exchange steal:0 examine:0
    > 2 examine:0
    < event action 1 examine 0 inquisitor
    < event resolved 1 examine 0
    < event examine_shown 1 0 inquisitor
    < request 3 force bank_ms=2000 actor=1 action=examine target=0 : force:yes force:no
    > 3 force:yes
    < event examine_decided 1 0 yes
    < event drew 0 ?
    < event end turn_limit 1 1,1 -
    < gameover - 1 1
"""


@mock_clock_test
async def test_the_draft_is_asked_of_both_players_at_once_and_stays_secret() -> None:
    journal: Journal = []
    bots, expected = [], []
    # Seat 0 takes 0.5 s to draft, seat 1 0.25 s: asked at once, the draft takes 0.5 s.
    for name, transcript, delay in (("alpha", DRAFT_0, 0.5), ("beta", DRAFT_1, 0.25)):
        respond, lines = scripted(transcript, {1: delay})
        bots.append(FakeBot(name, respond, journal))
        expected.append(lines)
    players = await ready(bots)
    report = await play_game(players, GameConfig(2, "inquisitor", None, turn_limit=1), 0,
                             FAKE_LIMITS)
    for bot, lines in zip(bots, expected, strict=True):
        assert bot.received == lines, bot.name
    assert report.faults == (None, None)
    assert report.duration == pytest.approx(0.5)
    drafts = [i for i, (what, _, line) in enumerate(journal)
              if what == "sent" and line.startswith("request 1 draft")]
    answers = [i for i, (what, _, line) in enumerate(journal)
               if what == "read" and line.startswith("1 draft:")]
    assert len(drafts) == 2 and len(answers) == 2
    assert max(drafts) < min(answers)


@mock_clock_test
async def test_an_opportunity_is_offered_to_all_seats_at_once() -> None:
    # Seats 1 and 2 each take 0.3 s to answer the challenge; every other answer
    # is instant.  Asked one after the other, the game would take 0.6 s.
    journal: Journal = []
    report, bots, expected = await play_rigged([{}, {1: 0.3}, {1: 0.3}], journal)
    assert [bot.received for bot in bots] == expected
    assert report.duration == pytest.approx(0.3)
    sent = [i for i, (what, _, line) in enumerate(journal)
            if what == "sent" and line == TAX_CHALLENGE]
    read = [i for i, (what, name, line) in enumerate(journal)
            if what == "read" and name != "alpha" and line == "1 challenge"]
    assert len(sent) == 2 and len(read) == 2
    assert max(sent) < min(read), "both requests are sent before either answer is read"
    assert report.times[1][0] == pytest.approx(0.3)
    assert report.times[2][0] == pytest.approx(0.3)


@pytest.mark.parametrize("slow_seat", [1, 2])
@mock_clock_test
async def test_an_answer_there_at_once_is_taken_while_another_seat_thinks(slow_seat: int) -> None:
    # One seat answers the challenge at once, the other after 0.3 s: the prompt
    # answer is taken as it is sent (no wait for it), the other seat's request
    # goes out without waiting for anyone, and each answer has its own time.
    delays: list[dict[int, float]] = [{}, {}, {}]
    delays[slow_seat] = {1: 0.3}
    journal: Journal = []
    report, bots, expected = await play_rigged(delays, journal)
    assert [bot.received for bot in bots] == expected
    assert report.record.decisions == RIGGED_DECISIONS
    assert report.duration == pytest.approx(0.3)
    quick_seat = 3 - slow_seat
    assert report.times[slow_seat][0] == pytest.approx(0.3)
    assert report.times[quick_seat][0] == pytest.approx(0.0)
    sent = [name for what, name, line in journal if what == "sent" and line == TAX_CHALLENGE]
    assert sent == ["beta", "gamma"]  # in seat order, the slow seat's too


@pytest.mark.parametrize("slow_seat", [1, 2])
@mock_clock_test
async def test_answers_are_applied_in_seat_order_whoever_answers_first(slow_seat: int) -> None:
    # Both challenge; seat 1's challenge counts whether it answers first or last.
    delays: list[dict[int, float]] = [{}, {1: 0.1}, {1: 0.1}]
    delays[slow_seat] = {1: 0.4}
    journal: Journal = []
    report, bots, expected = await play_rigged(delays, journal)
    read = [name for what, name, line in journal if what == "read" and line == "1 challenge"]
    assert read == (["gamma", "beta"] if slow_seat == 1 else ["beta", "gamma"])
    assert [bot.received for bot in bots] == expected
    assert report.record.decisions == RIGGED_DECISIONS
    assert report.result["placements"] == [1, 1, 1]


@mock_clock_test
async def test_slow_answers_draw_on_the_time_bank_until_it_runs_out() -> None:
    # decision 1000 ms, bank 2000 ms.  Seat 0 answers its first request in 1.5 s
    # (bank 2000 -> 1500), its second in 2.0 s (-> 500); its third would take 5 s,
    # past 1000 + 500 ms: a timeout at 1.5 s.
    slow = FakeBot("slow", answering("slow", {1: 1.5, 2: 2.0, 3: 5.0}))
    quick = FakeBot("quick", answering("quick"))
    players = await ready([slow, quick])
    config = GameConfig(2, "ambassador", draft=False, turn_limit=50)
    report = await play_game(players, config, 11, FAKE_LIMITS)

    asked = requests_in(slow.received)
    assert [line.split()[3] for line in asked] == ["bank_ms=2000", "bank_ms=1500", "bank_ms=500"]
    assert [request_id(line) for line in asked] == [1, 2, 3]
    assert report.times[0] == pytest.approx((1.5, 2.0))
    fault = report.faults[0]
    assert fault is not None
    assert fault.kind == codec.TIMEOUT
    assert fault.request == asked[2]
    assert fault.elapsed == pytest.approx(1.5)
    assert fault.line is None
    assert "1500 ms (1000 ms + bank 500 ms)" in fault.detail
    assert players[0].broken and not players[1].broken
    assert report.faults[1] is None
    assert report.result["placements"] == [2, 1]
    # The slow bot got nothing after the request it did not answer.
    assert slow.received[-1] == asked[2]
    assert quick.received[-1] == "gameover 1 2 1"
    # The record rebuilds every line, banks included.
    assert rebuilt(report, 0) == lines_of_game(slow, 1)
    assert rebuilt(report, 1) == lines_of_game(quick, 1)


@mock_clock_test
async def test_the_bank_is_full_again_next_game_and_request_ids_go_on() -> None:
    slow = FakeBot("slow", answering("slow", {1: 1.5}))
    quick = FakeBot("quick", answering("quick"))
    players = await ready([slow, quick])
    config = GameConfig(2, "ambassador", draft=False, turn_limit=6)
    first = await play_game(players, config, 5, FAKE_LIMITS)
    asked_first = requests_in(slow.received)
    second = await play_game(players, config, 6, FAKE_LIMITS)
    asked = requests_in(slow.received)
    asked_second = asked[len(asked_first):]
    assert first.faults == second.faults == (None, None)
    assert len(asked_first) >= 2 and asked_second
    assert [line.split()[3] for line in asked_first[:2]] == ["bank_ms=2000", "bank_ms=1500"]
    assert asked_second[0].split()[3] == "bank_ms=2000"
    # One process, one sequence of ids: 1, 2, 3, ... across games, never reused.
    assert [request_id(line) for line in asked] == list(range(1, len(asked) + 1))
    game_lines = [line for line in slow.received if line.startswith("game ")]
    assert [line.split()[1] for line in game_lines] == ["1", "2"]
    # Each record rebuilds its game's lines, with the ids where they were.
    for number, report in ((1, first), (2, second)):
        assert rebuilt(report, 0) == lines_of_game(slow, number)
        assert rebuilt(report, 1) == lines_of_game(quick, number)
    # Each bot's log marks where each game starts.
    assert slow.notes == quick.notes == ["== game 1 ==", "== game 2 =="]


@mock_clock_test
async def test_a_line_before_its_request_is_rebuilt_without_what_was_never_sent() -> None:
    # The bot answers its first request twice: the second line is read before
    # request 2 is sent, so request 2 and the events queued with it never go.
    plain = answering("twice")

    def twice(line: str) -> list[tuple[float, str]]:
        out = plain(line)
        return out * 2 if line.startswith("request 1 ") else out

    bots = [FakeBot("twice", twice), FakeBot("quick", answering("quick"))]
    players = await ready(bots)
    report = await play_game(players, GameConfig(2, "ambassador", draft=False, turn_limit=50),
                             11, FAKE_LIMITS)
    fault = report.faults[0]
    assert fault is not None and fault.kind == codec.PROTOCOL and fault.elapsed is None
    assert len(requests_in(bots[0].received)) == 1
    assert rebuilt(report, 0) == lines_of_game(bots[0], 1)
    first, again = rebuilt(report, 0)[-2:]
    assert first == again and first.startswith("> 1 ")
    assert rebuilt(report, 1) == lines_of_game(bots[1], 1)


@mock_clock_test
async def test_a_game_over_its_time_cap_is_stopped_without_a_fault() -> None:
    # protocol.md, section 9: a game still running after game_ms is stopped and
    # scored as at the turn limit (the players still in share a place); no fault.
    limits = attrs.evolve(FAKE_LIMITS, game_ms=3000)
    thinking = {i: 0.6 for i in range(1, 100)}  # within the decision time, every time
    bots = [FakeBot(name, answering(name, thinking)) for name in ("slow", "slower")]
    players = await ready(bots, limits)
    config = GameConfig(2, "ambassador", draft=False, turn_limit=50)
    report = await play_game(players, config, 3, limits)
    assert report.faults == (None, None)
    assert report.duration == pytest.approx(3.0)
    still_in = [seat for seat in (0, 1) if report.result["placements"][seat] == 1]
    assert still_in == [0, 1]
    # The bot cut off mid-answer gets no gameover: its process is ended and
    # restarted for its next game. The other ends the game as usual.
    cut = [seat for seat in (0, 1) if players[seat].broken]
    assert cut
    for seat, bot in enumerate(bots):
        got_gameover = any(line.startswith("gameover ") for line in bot.received)
        assert got_gameover == (seat not in cut), seat
        assert rebuilt(report, seat) == lines_of_game(bot, 1)
        notes = [line.text for line in seat_lines(report.record, seat)
                 if line.direction == NOTE]
        assert (notes != []) == (seat in cut) and all("time cap" in note for note in notes)


# ------------------------------------------------------------- real broken bots

REAL_LIMITS = codec.Limits(startup_ms=5000, decision_ms=1000, bank_ms=500, game_ms=60_000)
BROKEN_SEAT = 1


def gone(pid: int) -> bool:
    """The process no longer runs: no such pid, or a zombie nobody reaped yet."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rpartition(")")[2].split()[0] in ("Z", "X")


async def play_at_real_table(tmp_path: Path, broken: str, games: int
                             ) -> tuple[list[GameReport], list[BotHost], set[int]]:
    """``games`` games at one table: random, the broken bot (seat 1), random; the
    hosts closed afterwards.  Returns the reports, the hosts and every pid started."""
    specs = resolve_bots([str(RANDOM_BOT), str(TEST_BOTS / broken), str(RANDOM_BOT)])
    reports: list[GameReport] = []
    pids: set[int] = set()
    async with open_lineup(limits=REAL_LIMITS) as lineup:
        hosts = [lineup.host(spec, scratch_dir=tmp_path / "scratch" / spec.name,
                             log_path=tmp_path / "logs" / f"{spec.name}.log") for spec in specs]
        with trio.fail_after(30):  # only a guard against a hang
            for _ in range(games):
                seats: list[BotPlayer | Fault] = await start_all(hosts)
                pids.update(s.process.pid for s in seats if isinstance(s, BotPlayer))
                reports.append(await play_game(seats, GameConfig(3), 100 + len(reports),
                                               REAL_LIMITS))
    return reports, hosts, pids


def first_request(line: str | None) -> bool:
    return line is not None and line.startswith("request 1 ") and " : " in line


def second_request(line: str | None) -> bool:
    return line is not None and line.startswith("request 2 ") and " : " in line


# bot file, fault kind, check of the fault's evidence
BROKEN: list[tuple[str, str, Callable[[Fault], bool]]] = [
    ("hang.py", codec.TIMEOUT, lambda f: (
        f.line is None and first_request(f.request)
        and f.detail == "no answer within 1500 ms (1000 ms + bank 500 ms)"
        and f.elapsed is not None and f.elapsed >= 1.5)),
    ("crash.py", codec.CRASH, lambda f: (
        f.line is None and second_request(f.request) and f.exit == "exited with status 3"
        and "closed its output" in f.detail)),
    ("garbage.py", codec.MALFORMED, lambda f: (
        f.line == "what is this" and first_request(f.request) and "3 fields" in f.detail)),
    ("long_line.py", codec.MALFORMED, lambda f: (
        first_request(f.request)
        and f.detail == "a line longer than 256 bytes (its first 200 bytes are quoted)"
        and f.line == "1 " + "x" * 198)),
    ("illegal.py", codec.ILLEGAL, lambda f: (
        f.line == "1 coup:7" and first_request(f.request) and "not legal now" in f.detail)),
    ("wrong_id.py", codec.PROTOCOL, lambda f: (
        f.line is not None and f.line.startswith("2 ") and first_request(f.request)
        and "request 2, which was never sent" in f.detail)),
    # The second copy of its answer to request 1 is refused when request 2 comes.
    ("twice.py", codec.PROTOCOL, lambda f: (
        f.line is not None and f.line.startswith("1 ") and second_request(f.request))),
]


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
@pytest.mark.parametrize(("bot", "kind", "evidence"), BROKEN, ids=[b[0] for b in BROKEN])
def test_a_fault_forfeits_the_game_which_goes_on_and_the_bot_is_restarted(
        tmp_path: Path, bot: str, kind: str, evidence: Callable[[Fault], bool]) -> None:
    reports, hosts, pids = trio.run(play_at_real_table, tmp_path, bot, 2)
    first, second = reports

    # Game 1: the fault, with its kind and evidence, charged to the broken seat only.
    fault = first.faults[BROKEN_SEAT]
    assert fault is not None
    assert fault.kind == kind, fault
    assert evidence(fault), fault
    assert first.faults[0] is None and first.faults[2] is None
    assert first.record.referee["faults"][BROKEN_SEAT]["kind"] == kind

    # It left the game as if eliminated then: turned up, out with the fault as reason,
    # placed by the players already out; the others played on to the end.
    events = replay(first.record).events
    forfeit = events.index(ev.Forfeited(BROKEN_SEAT, kind))
    out_before = sum(isinstance(e, ev.PlayerOut) for e in events[:forfeit])
    after = events[forfeit + 1:]
    lost = [e for e in after[:2] if isinstance(e, ev.InfluenceLost) and e.seat == BROKEN_SEAT]
    assert lost, "its face-down cards are turned up"
    assert ev.PlayerOut(BROKEN_SEAT, kind) in after
    result = first.result
    assert result["reason"] == ev.LAST_PLAYER
    assert sorted(result["placements"]) == [1, 2, 3]
    assert result["placements"][BROKEN_SEAT] == 3 - out_before
    assert result["winner"] != BROKEN_SEAT
    assert isinstance(events[-1], ev.GameOver)

    # Game 2: a new process (a new handshake), which plays the whole game cleanly.
    assert [host.starts for host in hosts] == [1, 2, 1]
    assert second.faults == (None, None, None)
    assert second.times[BROKEN_SEAT], "the restarted bot answered requests"
    assert sorted(second.result["placements"]) == [1, 2, 3]

    # Nothing is left running: 4 processes were started, all are gone.
    assert len(pids) == 4
    assert all(gone(pid) for pid in pids), [pid for pid in pids if not gone(pid)]
    if bot == "crash.py":  # its last words on stderr reached its log
        assert "giving up on purpose" in (tmp_path / "logs" / "crash.log").read_text()


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_a_faulted_bot_is_ended_during_the_game_not_at_its_next_use(tmp_path: Path) -> None:
    # A bot that timed out may be spinning: its host ends it as soon as it faults.
    async def main() -> None:
        specs = resolve_bots([str(RANDOM_BOT), str(TEST_BOTS / "hang.py")])
        async with open_lineup(limits=REAL_LIMITS) as lineup:
            hosts = [lineup.host(spec, scratch_dir=tmp_path / spec.name,
                                 log_path=tmp_path / f"{spec.name}.log") for spec in specs]
            seats = await start_all(hosts)
            hung = seats[1]
            assert isinstance(hung, BotPlayer)
            report = await play_game(seats, GameConfig(2), 7, REAL_LIMITS)
            fault = report.faults[1]
            assert fault is not None and fault.kind == codec.TIMEOUT
            with trio.fail_after(10):  # a guard: without the fix it waits forever
                await hung.process.wait_closed()
            assert hung.process.returncode is not None
            assert hosts[1].starts == 1  # ended, not restarted: nobody asked for it yet
            assert isinstance(seats[0], BotPlayer) and seats[0].process.usable

    trio.run(main)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_a_bot_may_write_to_stderr_all_game_long(tmp_path: Path) -> None:
    # Its stderr is drained into its log from start to end, over two games (the
    # bot would die of a broken pipe at its first write if nobody read it).
    reports, hosts, pids = trio.run(play_at_real_table, tmp_path, "chatty.py", 2)
    assert [r.faults for r in reports] == [(None, None, None)] * 2
    assert [host.starts for host in hosts] == [1, 1, 1]
    log = (tmp_path / "logs" / "chatty.log").read_text()
    asked = sum(len(r.times[BROKEN_SEAT]) for r in reports)
    assert asked > 0
    assert log.count("chatty got: request ") == asked
    assert log.count("chatty got: gameover ") == 2
    assert "chatty got: quit" in log
    assert "exited with status 0" in log
    assert all(gone(pid) for pid in pids)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_a_game_mark_comes_after_what_the_bot_wrote_to_stderr_before_it(
        tmp_path: Path) -> None:
    # chatty logs each line it gets to stderr before it answers: every request
    # of a game was logged (and answered) before the next game started, so its
    # lines come before that game's mark, although the drain task may not have
    # had a turn (answers taken at once give it none).
    reports, _, _ = trio.run(play_at_real_table, tmp_path, "chatty.py", 6)
    assert [r.faults for r in reports] == [(None, None, None)] * 6
    firsts = [r.record.referee["session"][BROKEN_SEAT][1] for r in reports]
    lines = (tmp_path / "logs" / "chatty.log").read_text().splitlines()
    marks = [i for i, line in enumerate(lines) if line.startswith("== game ")]
    assert len(marks) == 6
    asked = {int(line.split()[3]): i for i, line in enumerate(lines)
             if line.startswith("chatty got: request ")}
    for game in range(1, 6):  # the requests of game `game`, before the next mark
        ids = range(firsts[game - 1], firsts[game])
        assert ids and all(marks[game - 1] < asked[i] < marks[game] for i in ids), game


class CountingBot(FakeBot):
    """A FakeBot that counts the reads that had to wait; ``late`` > 0: each answer
    it hands over without waiting comes that many seconds after its request."""

    def __init__(self, *args: object, late: float = 0.0, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.waited = 0
        self.late = late

    async def read_line(self) -> str:
        self.waited += 1
        return await super().read_line()

    def read_line_nowait(self) -> str | None:
        line = super().read_line_nowait()
        if line is not None and self.late:
            trio.lowlevel.current_clock().jump(self.late)  # type: ignore[attr-defined]
        return line


@mock_clock_test
async def test_an_answer_in_after_one_scheduler_pass_needs_no_wait() -> None:
    prompt = CountingBot("prompt", answering("prompt"))
    slow = CountingBot("slow", answering("slow", {1: 0.2, 2: 0.2}))
    players = await ready([prompt, slow])
    prompt.waited = slow.waited = 0  # the handshake's
    config = GameConfig(2, "ambassador", draft=False, turn_limit=4)
    report = await play_game(players, config, 3, FAKE_LIMITS)
    assert report.faults == (None, None)
    assert len(requests_in(prompt.received)) >= 2
    assert prompt.waited == 0  # every answer was there after one pass
    assert slow.waited == 2  # its first two answers were not: it waited for them
    assert report.times[1][:2] == pytest.approx((0.2, 0.2))


@mock_clock_test
async def test_bots_that_answer_at_once_do_not_starve_other_tasks() -> None:
    # Their answers are taken with no scheduler pass, but a pass comes every
    # 16 answers of a bot: other games, the watchdog and the game's own time
    # cap get their turn.
    players = await ready([FakeBot("a", answering("a")), FakeBot("b", answering("b"))])
    turns = 0

    async def other_task() -> None:
        nonlocal turns
        while True:
            turns += 1
            await trio.lowlevel.checkpoint()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(other_task)
        config = GameConfig(2, "ambassador", draft=False)
        answers = [0, 0]
        for seed in range(8):
            report = await play_game(players, config, seed, FAKE_LIMITS)
            assert report.faults == (None, None)
            answers = [done + len(seat) for done, seat in zip(answers, report.times, strict=True)]
        nursery.cancel_scope.cancel()
    assert min(answers) >= 64
    # A pass at least every 32 answers of the two (none at all would starve the
    # other task), and far fewer passes than answers (one each before).
    assert sum(answers) // 32 <= turns < sum(answers) // 4


@pytest.mark.parametrize(("late", "fault"), [(2.999, None), (3.0, codec.TIMEOUT)])
@mock_clock_test
async def test_an_answer_taken_without_waiting_is_still_timed(late: float,
                                                             fault: str | None) -> None:
    # decision 1000 ms + bank 2000 ms: an answer handed over at 3.0 s is too late,
    # exactly as when the referee waits for it under its cancel scope.
    bot = CountingBot("late", answering("late"), late=late)
    quick = FakeBot("quick", answering("quick"))
    players = await ready([bot, quick])
    config = GameConfig(2, "ambassador", draft=False, turn_limit=2)
    report = await play_game(players, config, 3, FAKE_LIMITS)
    assert bot.waited == 1  # the handshake only
    if fault is None:
        assert report.faults[0] is None
        assert report.times[0][0] == pytest.approx(late)
    else:
        assert report.faults[0] is not None
        assert report.faults[0].kind == fault
        assert report.faults[0].elapsed == pytest.approx(late)
        assert report.faults[0].line is None
        assert players[0].broken


def taxing_once(name: str) -> Callable[[str], list[tuple[float, str]]]:
    """A bot that answers at once: tax at its first action request (the others
    may challenge it), then as ``answering``."""
    return answering(name, first_action="tax")


@pytest.mark.parametrize(("players", "game_ms", "late"), [
    (2, 300, 0.05),  # the cap falls between two single-seat requests
    (3, 250, 0.1),  # ... while an opportunity's answers are taken at once
])
@mock_clock_test
async def test_the_time_cap_cuts_off_only_a_request_the_bot_was_sent(
        players: int, game_ms: int, late: float) -> None:
    # Bots that answer at once give the referee no scheduler pass but every 16
    # asks: the time cap is delivered there.  It must find a request sent and
    # its answer not taken, as `arena replay --raw` rebuilds a cut-off round
    # (never a request still unsent, nor an opportunity whose answers are in).
    limits = attrs.evolve(FAKE_LIMITS, game_ms=game_ms)
    bots = [CountingBot(f"b{i}", taxing_once(f"b{i}"), late=late) for i in range(players)]
    ready_players = await ready(bots, limits)
    config = GameConfig(players, "ambassador", draft=False, turn_limit=200)
    report = await play_game(ready_players, config, 3, limits)
    assert report.result["reason"] == "time_cap"
    assert report.faults == (None,) * players
    for seat, bot in enumerate(bots):
        assert rebuilt(report, seat) == lines_of_game(bot, 1), seat
    # Only the bots cut off mid-answer are restarted; the others got their gameover.
    cut = [seat for seat, player in enumerate(ready_players) if player.broken]
    assert 0 < len(cut) < players
    assert all(any(line.startswith("gameover ") for line in bot.received) == (seat not in cut)
               for seat, bot in enumerate(bots))


@mock_clock_test
async def test_an_opportunity_past_the_time_cap_is_cut_off_whole() -> None:
    # The cap is due as seat 0's tax is read (0.1 s late, cap 50 ms) but not yet
    # delivered; seat 1 would answer the challenge at once, seat 2 after 0.3 s.
    # The round is cut off with both requests out and neither answer taken, as
    # `arena replay --raw` rebuilds it: not with seat 1's answer read and lost.
    limits = attrs.evolve(FAKE_LIMITS, game_ms=50)
    slow = taxing_once("b2")

    def slow_challenge(line: str) -> list[tuple[float, str]]:
        return [(0.3 if line.startswith("request ") else delay, out)
                for delay, out in slow(line)]

    bots = [CountingBot("b0", taxing_once("b0"), late=0.1),
            CountingBot("b1", taxing_once("b1")), CountingBot("b2", slow_challenge)]
    ready_players = await ready(bots, limits)
    config = GameConfig(3, "ambassador", draft=False, turn_limit=200)
    report = await play_game(ready_players, config, 3, limits)
    assert report.result["reason"] == "time_cap"
    assert report.record.decisions[:1] == ((0, "tax"),)
    for seat, bot in enumerate(bots):
        assert rebuilt(report, seat) == lines_of_game(bot, 1), seat
    assert [player.broken for player in ready_players] == [False, True, True]
    assert not any(what == "read" and line.startswith("1 ") for what, _, line in bots[1].journal)

# A crash seen before the deadline stays a crash: the referee's wait for the exit
# status (exit_wait) is its own time, not the bot's. These bots keep running after
# the fault, so that wait runs out in full, past the deadline.
QUITS_AFTER_ANSWERING = """\
import os, sys, time
for line in sys.stdin:
    f = line.split()
    if f[0] == "arena":
        print("hello quits", flush=True)
    elif f[0] == "request":
        print(f[1], f[f.index(":") + 1], flush=True)
        os.close(1)
        time.sleep(3600)
"""
STATUS_RACE = [
    # It closes its stdout at its first request: seen as soon as it does (well
    # within the 2 s deadline, even on a loaded machine).
    ("close_stdout", 2000, 1, "closed its output (still running)"),
    # It closed its stdin before answering request 1: the write of request 2
    # fails at once, so a short deadline does for it.
    ("deaf", 200, 2, "stopped reading its input (still running)"),
    # It closed its stdout after answering request 1: seen at request 2, when the
    # referee looks for output sent unasked (which has 50 ms), or else at once.
    ("quits", 200, 2, "closed its output (still running)"),
]


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
@pytest.mark.parametrize(("bot", "decision_ms", "faulty", "detail"), STATUS_RACE,
                         ids=[s[0] for s in STATUS_RACE])
def test_a_crash_before_the_deadline_is_not_charged_as_a_timeout(
        tmp_path: Path, bot: str, decision_ms: int, faulty: int, detail: str) -> None:
    limits = codec.Limits(startup_ms=10_000, decision_ms=decision_ms, bank_ms=10_000,
                          game_ms=60_000)
    exit_wait = decision_ms / 1000 + 0.5  # longer than the whole deadline
    program = ROOT / "tests" / "hostile" / f"{bot}.py"
    if not program.exists():
        program = tmp_path / f"{bot}.py"
        program.write_text(QUITS_AFTER_ANSWERING)

    async def main() -> Fault:
        (spec,) = resolve_bots([str(program)])
        request = Request(ACTION, (0,), actor=0)
        legal = (Decision.parse(INCOME),)
        with trio.fail_after(30):  # only a guard against a hang
            async with open_bot_process(spec, scratch_dir=tmp_path / "scratch",
                                        log_path=tmp_path / f"{bot}.log",
                                        exit_wait=exit_wait) as process:
                player = BotPlayer(bot, process, limits)
                await player.handshake()
                for _ in range(faulty - 1):  # answered, with a bank to spare
                    await player.ask(request, legal, bank_ms=10_000)
                with pytest.raises(BotFaulted) as faulted:
                    await player.ask(request, legal, bank_ms=0)
                return faulted.value.fault

    fault = trio.run(main)
    assert fault.kind == codec.CRASH, fault
    assert fault.detail == f"bot {bot!r} {detail}", fault
    assert fault.request is not None and fault.request.startswith(f"request {faulty} ")
