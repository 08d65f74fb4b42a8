"""protocol.md section 14, "How a bot is run": the facts it states, checked.

One `arena play` game with a bot that reports what it finds: its working
directory and environment, whether it can import a module beside it, the
names on the `game` line; it says hello before reading the handshake and
never flushes (a `.py` bot runs unbuffered).  Then builds, bot.toml paths,
and how a challenge of a block reads on the wire.
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest

from arena.cli import main
from arena.engine.decisions import PASS_DECISION, Decision
from arena.engine.game import Game, Setup
from arena.protocol import codec
from arena.referee.bots import build_bot, resolve_bot

ROOT = Path(__file__).resolve().parents[1]

REPORTER = '''\
import json, os, sys
sys.stdout.write("hello someone-else\\n")  # before reading anything, and no flush
facts = {"cwd": os.getcwd(), "env": dict(os.environ)}
try:
    import helper  # lies beside this file
    facts["sibling_import"] = True
except ImportError:
    facts["sibling_import"] = False
for line in sys.stdin:
    f = line.split()
    if not f:
        continue
    if f[0] in ("arena", "game", "seed"):
        facts[f[0]] = line.strip()
    elif f[0] == "request":
        print(f[1], f[-1])  # no flush: -u makes it leave at once
    elif f[0] == "gameover":  # to its log: the scratch folder goes with the run
        print("facts:", json.dumps(facts), file=sys.stderr, flush=True)
    elif f[0] == "quit":
        break
'''


@pytest.fixture(scope="module")
def facts(tmp_path_factory: pytest.TempPathFactory) -> dict:
    tmp_path = tmp_path_factory.mktemp("run")
    bots = tmp_path / "bots"
    bots.mkdir()
    (bots / "reporter.py").write_text(REPORTER)
    (bots / "helper.py").write_text("")
    record = tmp_path / "game.json.gz"
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(tmp_path)  # arena play writes results/ here
        status = main(["play", str(bots / "reporter.py"),
                       str(ROOT / "example_bots" / "random.py"),
                       "--seed", "3", "--quiet", "--record", str(record)])
    assert status == 0
    with gzip.open(record) as f:
        assert json.load(f)["referee"]["faults"] == [None, None]
    [log] = list((tmp_path / "results").rglob("logs/reporter.log"))
    [line] = [line for line in log.read_text().splitlines() if line.startswith("facts: ")]
    scratch = log.parent.parent / "scratch" / "reporter"
    return {**json.loads(line.removeprefix("facts: ")), "scratch": str(scratch)}


def test_a_bot_runs_in_its_scratch_folder_with_four_variables(facts: dict) -> None:
    scratch = facts["scratch"]
    assert not Path(scratch).exists()  # removed after the run
    assert os.path.realpath(facts["cwd"]) == os.path.realpath(scratch)
    assert Path(scratch).name == "reporter" and Path(scratch).parent.name == "scratch"
    env = facts["env"]
    assert set(env) == {"PATH", "HOME", "TMPDIR", "LANG"}
    assert env["HOME"] == env["TMPDIR"] == scratch
    assert env["LANG"] == "C.UTF-8" and env["PATH"] == os.environ["PATH"]


def test_a_py_bot_cannot_import_a_file_beside_it(facts: dict) -> None:
    assert facts["sibling_import"] is False


def test_hello_may_come_first_and_an_unflushed_py_bot_still_plays(facts: dict) -> None:
    # The fixture's game had no fault although the bot never flushed and said
    # hello before it read the handshake, which it still got.
    assert facts["arena"].startswith("arena 1 ")


def test_the_contest_name_is_the_file_name_not_the_hello_name(facts: dict) -> None:
    names = facts["game"].split(" names ")[1].split()
    assert sorted(names) == ["random", "reporter"]
    assert facts["seed"].split()[0] == "seed"


def test_a_build_runs_in_the_bot_folder_with_path_home_and_lang(tmp_path: Path) -> None:
    folder = tmp_path / "built"
    folder.mkdir()
    (folder / "bot.toml").write_text(
        'build = ["sh", "-c", "pwd > where.txt; env > env.txt"]\nrun = ["./bot"]\n')
    build_bot(resolve_bot(str(folder)))
    assert (folder / "where.txt").read_text().strip() == os.path.realpath(folder)
    env = dict(line.split("=", 1) for line in (folder / "env.txt").read_text().splitlines())
    assert set(env) - {"PWD", "SHLVL", "_", "OLDPWD"} == {"PATH", "HOME", "LANG"}
    assert env["HOME"] == os.environ["HOME"]


def test_a_toml_argument_names_the_bot_folder_only_if_it_exists_or_starts_with_dot(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "javaish"
    folder.mkdir()
    (folder / "data").mkdir()
    (folder / "bot.toml").write_text(
        'run = ["sh", "./classes", "classes", "data", "-flag", "plain"]\n')
    spec = resolve_bot(str(folder))
    assert spec.argv[1:] == (str(folder / "classes"), "classes", str(folder / "data"),
                             "-flag", "plain")


def test_a_challenge_of_a_block_names_the_blocker_as_claimant() -> None:
    game = Game.from_setup(Setup(
        hands=(("duke", "captain"), ("captain", "contessa"), ("assassin", "duke")),
        court=("ambassador",) * 3))
    game.decide(0, Decision("steal", target=1))
    for seat in (1, 2):
        game.decide(seat, PASS_DECISION)  # nobody challenges the Captain of seat 0
    game.decide(1, Decision("block", card="captain"))
    request = game.request
    assert request is not None and request.seats == (2, 0)  # the actor may challenge too
    seen_by_actor = codec.encode_request(7, request, game.legal(0), 1000)
    assert seen_by_actor == ("request 7 challenge bank_ms=1000 actor=0 action=steal target=1 "
                             "claimant=1 character=captain : pass challenge")
    assert codec.encode_event(game.events[-1]) == "event block 1 captain 0"
