"""`arena run` and `arena rate` end to end, with deterministic bot processes.

The bots are copies of tests/bots/det_hash.py under other names (a copy plays
by its own name, so alpha and beta play differently): the same deal always
plays the same way, so whole results files can be compared across runs.
The CLI runs in-process (arena.cli.main) except where a test must kill it or
see it on a pipe.
"""

from __future__ import annotations

import csv
import gzip
import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path

import pytest

from arena.cli import main
from arena.tournament.store import GAMES, SYNCED, TOURNAMENT, Store

DET_BOT = Path(__file__).parent / "bots" / "det_hash.py"
NAMES = ("alpha", "beta", "gamma", "delta")
TIMING = ("duration", "decision_ms", "record")  # what may differ between equal runs
DEADLINE = 60.0  # seconds: bounds every wait on a subprocess; never reached when all is well


def copy_bots(folder: Path, *names: str) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name in names:
        shutil.copyfile(DET_BOT, folder / f"{name}.py")
        paths.append(str(folder / f"{name}.py"))
    return paths


@pytest.fixture(scope="module")
def bots(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Paths of the four bots, read-only (a test that edits a bot copies its own)."""
    return dict(zip(NAMES, copy_bots(tmp_path_factory.mktemp("bots"), *NAMES), strict=True))


def arena(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    """Run the CLI in-process: exit status, stdout, stderr."""
    capsys.readouterr()
    status = main([str(arg) for arg in argv])
    out, err = capsys.readouterr()
    return status, out, err


def run_ok(capsys: pytest.CaptureFixture[str], out: Path, bot_paths: list[str],
           *options: object) -> str:
    """arena run ... --out OUT, which must succeed; its stderr."""
    status, _, err = arena(capsys, "run", *bot_paths, "--concurrency", 2, "--out", out, *options)
    assert status == 0, err
    return err


def refusal(capsys: pytest.CaptureFixture[str], *argv: object) -> str:
    """Run the CLI, which must refuse: exit 2, no traceback; the one line on stderr."""
    status, _, err = arena(capsys, *argv)
    return refused(status, err)


def refused(status: int, err: str) -> str:
    """The one line of a refusal (exit 2, no traceback)."""
    assert status == 2, err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def games(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / GAMES).read_text().splitlines()]


def core(game: dict) -> str:
    """A game line without its timings and record file, comparable across runs."""
    return json.dumps({k: v for k, v in game.items() if k not in TIMING}, sort_keys=True)


def cores(lines: list[dict]) -> list[str]:
    return sorted(core(g) for g in lines)


def keys(lines: list[dict]) -> list[tuple[str, int]]:
    return [(g["group"], g["index"]) for g in lines]


def table(game: dict) -> str:
    return game["group"].split("#")[0]


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def standings(path: Path) -> dict[str, dict[str, str]]:
    with open(path, newline="") as f:
        return {row["bot"]: row for row in csv.DictReader(f)}


def wait_until(condition: Callable[[], bool], what: str,
               proc: subprocess.Popen | None = None) -> None:
    """Poll for a condition with a bounded deadline (synchronisation, not a fixed sleep)."""
    deadline = time.monotonic() + DEADLINE
    while not condition():
        if proc is not None and proc.poll() is not None:
            pytest.fail(f"arena exited ({proc.returncode}) before {what}")
        if time.monotonic() > deadline:
            pytest.fail(f"gave up after {DEADLINE} s waiting for {what}")
        time.sleep(0.002)


def processes_running(marker: str) -> list[int]:
    """Pids of live processes whose command line contains ``marker``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path("/proc", entry, "cmdline").read_bytes()
        except OSError:  # gone meanwhile
            continue
        if marker.encode() in cmdline:
            found.append(int(entry))
    return found


def complete_lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


# Determinism, resume, damage


def test_same_seed_same_games_whatever_the_concurrency(capsys, bots, tmp_path: Path) -> None:
    three = [bots["alpha"], bots["beta"], bots["gamma"]]
    for concurrency in (1, 3):
        status, _, err = arena(capsys, "run", *three, "--games", 8, "--seed", 11,
                               "--concurrency", concurrency, "--out", tmp_path / f"c{concurrency}")
        assert status == 0, err
    one, many = games(tmp_path / "c1"), games(tmp_path / "c3")
    assert len(one) == len(many) == 3 * 8
    assert len(set(keys(one))) == len(one)
    assert cores(one) == cores(many)
    # Not trivially equal: the bots win and lose, and another seed plays other games.
    assert {(1, 2), (2, 1)} <= {tuple(g["placements"]) for g in one}
    run_ok(capsys, tmp_path / "other", three, "--games", 8, "--seed", 12)
    assert cores(games(tmp_path / "other")) != cores(one)


def test_resume_after_sigkill_loses_and_repeats_nothing(capsys, tmp_path: Path) -> None:
    bot_dir = tmp_path / "killbots"
    two = copy_bots(bot_dir, "alpha", "beta")
    out = tmp_path / "out"
    argv = ["run", *two, "--games", "150", "--seed", "5", "--concurrency", "2", "--out", str(out)]
    with open(tmp_path / "stderr.txt", "wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "arena", *argv], cwd=tmp_path,
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
                                start_new_session=True)
        try:
            wait_until(lambda: complete_lines(out / GAMES) >= 10, "10 games played", proc)
            assert processes_running(str(bot_dir)), "the scan for bot processes finds none"
            os.killpg(proc.pid, signal.SIGKILL)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert 10 <= complete_lines(out / GAMES) < 150, "the run ended before it was killed"
    # The bots see the end of their input and exit: none of them is left behind.
    wait_until(lambda: not processes_running(str(bot_dir)), "the bots of the killed run to exit")

    status, _, err = arena(capsys, *argv)
    assert status == 0, err
    resumed = games(out)
    assert len(resumed) == 150
    assert len(set(keys(resumed))) == 150, "a game was played twice"
    assert len({g["record"] for g in resumed}) == 150, "a record file was reused"
    run_ok(capsys, tmp_path / "whole", two, "--games", 150, "--seed", 5)
    assert cores(resumed) == cores(games(tmp_path / "whole"))


def test_a_second_run_into_a_folder_in_use_is_refused_and_kill_9_frees_it(
        capsys, tmp_path: Path) -> None:
    alpha, beta = copy_bots(tmp_path / "lockbots", "alpha", "beta")
    built = tmp_path / "lockbots" / "built"
    (tmp_path / "lockbots" / "bot.toml").write_text(
        f'name = "beta"\nrun = ["{sys.executable}", "./beta.py"]\n'
        f'build = ["{sys.executable}", "-c", "open(\'{built}\', \'a\').write(\'x\')"]\n')
    out = tmp_path / "out"
    # More games than it can play before it is killed, however fast the machine.
    argv = ["run", alpha, str(tmp_path / "lockbots"), "--games", "5000", "--seed", "5",
            "--out", str(out)]
    with open(tmp_path / "stderr.txt", "wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "arena", *argv], cwd=tmp_path,
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
                                start_new_session=True)
        try:
            wait_until(lambda: complete_lines(out / GAMES) >= 5, "5 games played", proc)
            for again in (argv, ["run", "--resume", str(out)]):
                line = refusal(capsys, *again)
                assert f"{out} is in use by another arena run (pid {proc.pid})" in line
            assert built.read_text() == "x", "refused, yet it built the bots of the run going on"
            # A reader takes no lock: rate shows the games finished so far.
            status, stdout, err = arena(capsys, "rate", out)
            assert status == 0, err
            assert "alpha" in stdout
            assert proc.poll() is None, "the first run ended before the second was refused"
            os.killpg(proc.pid, signal.SIGKILL)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    played = games(out)
    assert len(set(keys(played))) == len(played) < 5000, "a game was played twice"
    # kill -9 let the folder go: the next run takes it at once (and gives it back).
    store = Store(out)
    store.lock()
    store.close()
    wait_until(lambda: not processes_running(str(tmp_path / "lockbots")),
               "the bots of the killed run to exit")


def test_a_torn_last_line_is_dropped_and_its_game_played_again(capsys, bots, tmp_path) -> None:
    out = tmp_path / "out"
    run_ok(capsys, out, [bots["alpha"], bots["beta"]], "--games", 6, "--seed", 3)
    before = games(out)
    lines = (out / GAMES).read_bytes().splitlines(keepends=True)
    assert len(lines) == 6
    torn = b"".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2]
    (out / GAMES).write_bytes(torn)

    status, _, err = arena(capsys, "run", "--resume", out)
    assert status == 0, err
    assert "6 games (5 already played)" in err
    data = (out / GAMES).read_bytes()
    assert data.startswith(b"".join(lines[:-1]))
    after = games(out)
    assert len(after) == 6
    assert core(after[-1]) == core(before[-1])  # the same game, played again
    assert after[-1]["record"] != before[-1]["record"]  # its old record number is not reused


def test_games_whose_records_a_power_cut_lost_are_played_again(capsys, bots, tmp_path) -> None:
    out = tmp_path / "out"
    run_ok(capsys, out, [bots["alpha"], bots["beta"]], "--games", 6, "--seed", 3)
    before = games(out)
    lines = (out / GAMES).read_bytes().splitlines(keepends=True)
    # A power cut after the sync of 4 games: 2 lines reached the disk, their records
    # did not (one empty, one gone), as the kernel may write them in any order.
    (out / SYNCED).write_text(f"{len(b''.join(lines[:4]))}\n")
    (out / before[4]["record"]).write_bytes(b"")
    (out / before[5]["record"]).unlink()

    status, _, err = arena(capsys, "run", "--resume", out)
    assert status == 0, err
    assert "6 games (4 already played)" in err
    assert (out / GAMES).read_bytes().startswith(b"".join(lines[:4]))
    after = games(out)
    assert cores(after) == cores(before)  # the same games, each once
    for game in after:
        with gzip.open(out / game["record"], "rt") as f:
            assert json.load(f)["decisions"]


def test_a_damaged_middle_line_stops_the_run_and_changes_nothing(capsys, bots, tmp_path) -> None:
    out = tmp_path / "out"
    two = [bots["alpha"], bots["beta"]]
    run_ok(capsys, out, two, "--games", 6, "--seed", 3)
    lines = (out / GAMES).read_bytes().splitlines(keepends=True)
    lines[2] = lines[2][:40] + b"\n"  # a line cut short in the middle of the file
    (out / GAMES).write_bytes(b"".join(lines))
    before = snapshot(out)

    for argv in (["run", *two, "--games", 6, "--seed", 3, "--out", out],
                 ["run", *two, bots["gamma"], "--games", 6, "--seed", 3, "--out", out],
                 ["run", "--resume", out], ["rate", out]):
        line = refusal(capsys, *argv)
        assert str(out / GAMES) in line and "line 3" in line
        assert snapshot(out) == before


def test_a_game_twice_or_a_stranger_s_seat_is_refused_with_its_line(capsys, bots,
                                                                    tmp_path) -> None:
    out = tmp_path / "out"
    two = [bots["alpha"], bots["beta"]]
    run_ok(capsys, out, two, "--games", 6, "--seed", 3)
    good = (out / GAMES).read_bytes()
    lines = good.splitlines(keepends=True)
    stranger = json.loads(lines[1])
    stranger["seats"][stranger["seats"].index("beta")] = "mallory"
    for damaged, named in [
        (good + lines[2], "line 7: game"),  # a line written twice counts its game twice
        (lines[0] + json.dumps(stranger).encode() + b"\n" + b"".join(lines[2:]),
         "line 2: seat 'mallory' is no bot of this tournament"),
    ]:
        (out / GAMES).write_bytes(damaged)
        before = snapshot(out)
        for argv in (["run", *two, "--games", 6, "--seed", 3, "--out", out],
                     ["run", "--resume", out], ["rate", out]):
            line = refusal(capsys, *argv)
            assert f"{out / GAMES}, {named}" in line
            assert snapshot(out) == before


def test_a_damaged_tournament_json_gets_one_clear_line(capsys, bots, tmp_path) -> None:
    out = tmp_path / "out"
    two = [bots["alpha"], bots["beta"]]
    run_ok(capsys, out, two, "--games", 2, "--seed", 3)
    good = json.loads((out / TOURNAMENT).read_text())
    damages = [
        (out / TOURNAMENT).read_text()[:200],  # cut short
        "",
        json.dumps([good]),
        json.dumps({k: v for k, v in good.items() if k != "bots"}),
        json.dumps(dict(good, bots=["alpha", "beta"])),
        json.dumps(dict(good, limits=None)),
    ]
    for text in damages:
        (out / TOURNAMENT).write_text(text)
        before = snapshot(out)
        for argv in (["run", *two, "--games", 2, "--seed", 3, "--out", out],
                     ["run", "--resume", out], ["rate", out]):
            line = refusal(capsys, *argv)
            assert str(out / TOURNAMENT) in line, text
            assert snapshot(out) == before


# What goes into an existing folder


def test_games_without_their_tournament_json_are_not_mixed_with_new_ones(
        capsys, bots, tmp_path) -> None:
    out = tmp_path / "out"
    two = [bots["alpha"], bots["beta"]]
    run_ok(capsys, out, two, "--games", 2, "--seed", 3)
    (out / TOURNAMENT).unlink()
    before = snapshot(out)
    line = refusal(capsys, "run", *two, "--games", 2, "--seed", 3, "--out", out)
    assert f"{out} has a {GAMES} but no {TOURNAMENT}" in line
    assert snapshot(out) == before


def test_other_options_into_the_same_folder_are_refused(capsys, bots, tmp_path) -> None:
    out = tmp_path / "out"
    two = [bots["alpha"], bots["beta"]]
    run_ok(capsys, out, two, "--games", 4, "--seed", 3)
    before = snapshot(out)
    for options, named in [
        (["--games", 6], "games was 4, now 6"),
        (["--seed", 4], "seed was 3, now 4"),
        (["--variant", "inquisitor"], 'variant was "ambassador", now "inquisitor"'),
        (["--plain-deal"], "plain_deal was false, now true"),
        (["--gauntlet", "alpha"], 'gauntlet was null, now "alpha"'),
        (["--decision-time", 2], '"decision_ms": 2000'),
        (["--turn-limit", 50], "turn_limit was 1000, now 50"),
    ]:
        line = refusal(capsys, "run", *two, "--games", 4, "--seed", 3, "--out", out, *options)
        assert str(out) in line and named in line
        assert snapshot(out) == before
    # Without --seed, the recorded seed is taken: nothing differs, nothing to play.
    err = run_ok(capsys, out, two, "--games", 4)
    assert "4 games (4 already played), seed 3" in err
    assert keys(games(out)) == keys([json.loads(x) for x in before[GAMES].splitlines()])


def test_a_late_entry_plays_only_its_own_games(capsys, bots, tmp_path) -> None:
    out = tmp_path / "out"
    run_ok(capsys, out, [bots["alpha"], bots["beta"]], "--games", 4, "--seed", 9)
    first = (out / GAMES).read_bytes()
    assert len(games(out)) == 4

    three = [bots["alpha"], bots["beta"], bots["gamma"]]
    err = run_ok(capsys, out, three, "--games", 4, "--seed", 9)
    assert "12 games (4 already played)" in err
    assert (out / GAMES).read_bytes().startswith(first)  # the alpha-beta games untouched
    new = games(out)[4:]
    assert Counter(table(g) for g in new) == {"alpha|gamma": 4, "beta|gamma": 4}
    # And they are the games a run with all three from the start plays.
    run_ok(capsys, tmp_path / "fresh", three, "--games", 4, "--seed", 9)
    assert cores(games(out)) == cores(games(tmp_path / "fresh"))


def test_a_changed_bot_is_refused_unless_its_games_are_played_again(capsys, tmp_path) -> None:
    three = copy_bots(tmp_path / "bots", "alpha", "beta", "gamma")
    out = tmp_path / "out"
    run_ok(capsys, out, three, "--games", 2, "--seed", 4)
    before = games(out)
    with open(three[0], "a") as f:
        f.write("# a comment: the files changed, the play did not\n")
    snap = snapshot(out)

    line = refusal(capsys, "run", *three, "--games", 2, "--seed", 4, "--out", out)
    assert "alpha" in line and "--replay-changed" in line
    assert snapshot(out) == snap

    err = run_ok(capsys, out, three, "--games", 2, "--seed", 4, "--replay-changed")
    assert "4 games dropped" in err
    after = games(out)
    assert len(after) == 6
    untouched = [g for g in before if "alpha" not in g["seats"]]
    assert after[:2] == untouched  # beta-gamma: the same lines, records and all
    old_alpha = [g for g in before if "alpha" in g["seats"]]
    new_alpha = after[2:]
    assert cores(new_alpha) == cores(old_alpha)  # the same deals, played again
    old_records = {g["record"] for g in before}
    assert not old_records & {g["record"] for g in new_alpha}
    # The new hash is recorded: the same command now has nothing to do.
    err = run_ok(capsys, out, three, "--games", 2, "--seed", 4)
    assert "6 games (6 already played)" in err


# The schedule as played


def test_run_from_inside_a_folder_bot_resumes_its_own_results(capsys, monkeypatch, bots,
                                                              tmp_path) -> None:
    me = tmp_path / "me"
    me.mkdir()
    shutil.copyfile(DET_BOT, me / "me.py")
    (me / "bot.toml").write_text(f'run = ["{sys.executable}", "./me.py"]\n')
    monkeypatch.chdir(me)  # arena run . writes under ./results, inside the bot
    run_ok(capsys, Path("results") / "first", [".", bots["alpha"]], "--games", 2, "--seed", 1)
    # Another run's results, and play's, in the bot folder: none of them is the bot.
    run_ok(capsys, Path("elsewhere"), [".", bots["beta"]], "--games", 2, "--seed", 1)
    status, _, err = arena(capsys, "play", ".", bots["beta"], "--seed", 1, "--quiet")
    assert status == 0, err
    assert (me / "results" / "play").is_dir() and (me / "elsewhere" / GAMES).is_file()
    for again in (["run", "--resume", "results/first"],
                  ["run", ".", bots["alpha"], "--games", 2, "--seed", 1, "--out",
                   "results/first"]):
        status, _, err = arena(capsys, *again)
        assert status == 0, err
        assert "2 games (2 already played)" in err
    # The bot's own files still count.
    (me / "me.py").write_text((me / "me.py").read_text() + "# changed\n")
    line = refusal(capsys, "run", "--resume", "results/first")
    assert "bot me changed" in line


def test_heads_up_deals_are_played_twice_with_seats_swapped(capsys, bots, tmp_path) -> None:
    three = [bots["alpha"], bots["beta"], bots["gamma"]]
    run_ok(capsys, tmp_path, three, "--games", 5, "--seed", 6)
    lines = games(tmp_path)
    groups = defaultdict(list)
    for g in lines:
        groups[g["group"]].append(g)
    # 5 games rounded up to 3 deals of 2 games, for each of the 3 pairs.
    assert len(lines) == 18 and len(groups) == 9
    assert Counter(table(g) for g in lines) == {
        "alpha|beta": 6, "alpha|gamma": 6, "beta|gamma": 6}
    for key, group in groups.items():
        by_index = {g["index"]: g for g in group}
        assert sorted(by_index) == [0, 1], key
        assert by_index[1]["seats"] == by_index[0]["seats"][::-1]
        assert "|".join(sorted(by_index[0]["seats"])) == key.split("#")[0]
        assert len({g["seed"] for g in group}) == 1
    assert len({group[0]["seed"] for group in groups.values()}) == 9  # every deal its own


def test_three_player_tables_every_combination_every_rotation(capsys, bots, tmp_path) -> None:
    run_ok(capsys, tmp_path, list(bots.values()), "--players", 3, "--games", 4, "--seed", 2)
    lines = games(tmp_path)
    # 4 games rounded up to 2 deals of 3 rotations, for each of the 4 tables of 3.
    assert Counter(table(g) for g in lines) == {
        "|".join(c): 6 for c in itertools.combinations(sorted(NAMES), 3)}
    groups = defaultdict(list)
    for g in lines:
        groups[g["group"]].append(g)
    assert len(groups) == 8
    for key, group in groups.items():
        assert sorted(g["index"] for g in group) == [0, 1, 2], key
        assert len({g["seed"] for g in group}) == 1
        order = next(g["seats"] for g in group if g["index"] == 0)
        for g in group:
            r = g["index"]
            assert g["seats"] == order[r:] + order[:r]
        for bot in order:  # each bot sat in each seat once
            assert sorted(g["seats"].index(bot) for g in group) == [0, 1, 2]


@pytest.mark.parametrize(("players", "tables"), [
    (2, {"alpha|beta", "beta|delta", "beta|gamma"}),
    (3, {"alpha|beta|delta", "alpha|beta|gamma", "beta|delta|gamma"}),
])
def test_a_gauntlet_plays_only_tables_with_its_bot(capsys, bots, tmp_path, players,
                                                   tables) -> None:
    run_ok(capsys, tmp_path, list(bots.values()), "--gauntlet", "beta", "--players", players,
           "--games", players, "--seed", 1)
    lines = games(tmp_path)
    assert {table(g) for g in lines} == tables
    assert len(lines) == 3 * players
    assert all("beta" in g["seats"] for g in lines)


# Reports and ratings


def test_reports_name_every_bot_and_rate_merges_runs(capsys, bots, tmp_path) -> None:
    three = [bots["alpha"], bots["beta"], bots["gamma"]]
    run_ok(capsys, tmp_path / "one", three, "--games", 10, "--seed", 1)
    run_ok(capsys, tmp_path / "two", three, "--games", 10, "--seed", 2, "--anchor", "beta=1200")
    for run in ("one", "two"):
        markdown = (tmp_path / run / "standings.md").read_text()
        table_csv = standings(tmp_path / run / "standings.csv")
        assert set(table_csv) == {"alpha", "beta", "gamma"}
        assert all(name in markdown for name in table_csv)
        assert all(row["games"] == "20" for row in table_csv.values())
    assert float(standings(tmp_path / "two" / "standings.csv")["beta"]["elo"]) == 1200

    status, out, err = arena(capsys, "rate", tmp_path / "one", tmp_path / "two",
                             "--out", tmp_path / "merged")
    assert status == 0, err
    assert out.startswith("60 games from 2 runs\n")
    merged = standings(tmp_path / "merged" / "standings.csv")
    assert {name: row["games"] for name, row in merged.items()} == {
        "alpha": "40", "beta": "40", "gamma": "40"}
    elos = [float(row["elo"]) for row in merged.values()]
    assert sum(elos) / len(elos) == pytest.approx(1500, abs=0.02)
    markdown = (tmp_path / "merged" / "standings.md").read_text()
    assert "## Tournaments" in markdown and "- seed 1;" in markdown and "- seed 2;" in markdown

    status, _, err = arena(capsys, "rate", tmp_path / "one", tmp_path / "two",
                           "--anchor", "alpha=1000", "--out", tmp_path / "anchored")
    assert status == 0, err
    anchored = standings(tmp_path / "anchored" / "standings.csv")
    assert float(anchored["alpha"]["elo"]) == 1000
    # Anchoring moves the scale, not the differences.
    for name in ("beta", "gamma"):
        assert float(anchored[name]["elo"]) - 1000 == pytest.approx(
            float(merged[name]["elo"]) - float(merged["alpha"]["elo"]), abs=0.02)


def test_rate_counts_a_folder_named_twice_once(capsys, bots, tmp_path, monkeypatch) -> None:
    three = [bots["alpha"], bots["beta"], bots["gamma"]]
    run_ok(capsys, tmp_path / "one", three, "--games", 10, "--seed", 1)
    monkeypatch.chdir(tmp_path)
    status, out, err = arena(capsys, "rate", tmp_path / "one", "one", "./one/",
                             "--out", tmp_path / "again")
    assert status == 0, err
    assert out.startswith("30 games from 1 run\n")
    once = standings(tmp_path / "one" / "standings.csv")
    again = standings(tmp_path / "again" / "standings.csv")
    assert {b: (r["games"], r["elo"], r["ci95"]) for b, r in again.items()} == {
        b: (r["games"], r["elo"], r["ci95"]) for b, r in once.items()}


@pytest.mark.parametrize("anchor", ["beta=1e308", "beta=-100001", "beta=inf"])
def test_anchors_are_range_checked(capsys, bots, tmp_path, anchor) -> None:
    three = [bots["alpha"], bots["beta"], bots["gamma"]]
    run_ok(capsys, tmp_path / "one", three, "--games", 2, "--seed", 1)
    status, out, err = arena(capsys, "rate", tmp_path / "one", "--anchor", anchor)
    assert status == 2 and out == ""
    assert len(err.splitlines()) == 1 and f"--anchor {anchor}" in err


def test_standings_md_tells_seed_limits_times_and_faults(capsys, bots, tmp_path) -> None:
    run_ok(capsys, tmp_path / "one", [bots["alpha"], bots["beta"]], "--games", 4,
           "--seed", 5, "--decision-time", "0.5")
    markdown = (tmp_path / "one" / "standings.md").read_text()
    assert "## Tournament\n" in markdown
    assert "- seed 5; players 2, games 4" in markdown and "decision 500 ms" in markdown
    section = markdown.split("## Decision times")[1].split("## Faults")[0]
    rows = [line for line in section.splitlines() if line.startswith("| alpha")
            or line.startswith("| beta")]
    assert len(rows) == 2 and all(row.rstrip(" |").endswith("500") for row in rows)



# --affinity

AFFINITY_BOT = Path(__file__).parent / "bots" / "affinity.py"
needs_affinity = pytest.mark.skipif(not hasattr(os, "sched_setaffinity"),
                                    reason="needs sched_setaffinity")


@needs_affinity
def test_affinity_pins_each_workers_bots_to_a_cpu_of_its_own(capsys, tmp_path: Path) -> None:
    folder = tmp_path / "bots"
    folder.mkdir()
    paths = []
    for name in ("a", "b", "c"):  # 3 tables of 2 deal groups: both workers get some
        shutil.copyfile(AFFINITY_BOT, folder / f"{name}.py")
        paths.append(str(folder / f"{name}.py"))
    out = tmp_path / "out"
    # One worker with two game slots (run_ok gives --concurrency 2): slots 0 and 1.
    run_ok(capsys, out, paths, "--games", 4, "--seed", 1, "--affinity", "--memory-mb", 100,
           "--workers", 1)
    assert len(games(out)) == 3 * 4
    cpus = sorted(os.sched_getaffinity(0))  # one CPU: every worker on it
    reported: dict[int, set[str]] = defaultdict(set)
    for log in (out / "logs").glob("*.w*.log"):  # NAME.wW.log: game slot W's process of NAME
        worker = int(log.name.split(".w")[-1].removesuffix(".log"))
        reported[worker] |= {line.split()[1] for line in log.read_text().splitlines()
                             if line.startswith("cpus ")}
    assert dict(reported) == {w: {str(cpus[w % len(cpus)])} for w in (0, 1)}
    assert os.sched_getaffinity(0) == set(cpus)  # the referee itself stays free
    # A way to run, like --concurrency, not part of the tournament: not recorded,
    # and the same folder goes on without it.
    assert "affinity" not in json.loads((out / TOURNAMENT).read_text())
    assert "(12 already played)" in run_ok(capsys, out, paths, "--games", 4, "--seed", 1,
                                           "--memory-mb", 100)


def test_affinity_where_cpus_cannot_be_pinned_gets_one_line(capsys, monkeypatch, bots,
                                                             tmp_path) -> None:
    monkeypatch.delattr(os, "sched_setaffinity", raising=False)
    line = refusal(capsys, "run", bots["alpha"], bots["beta"], "--affinity",
                   "--out", tmp_path / "out")
    assert line == ("arena: --affinity: this system cannot pin processes to CPUs "
                    "(no sched_setaffinity); run without --affinity")
    assert not (tmp_path / "out").exists()


# Bad input


BAD_RUNS = [
    (["{missing}", "{alpha}"], "no such file"),
    (["{alpha}", "{beta}", "--players", "9"], "--players 9"),
    (["{alpha}", "{beta}", "--games", "0"], "--games 0"),
    (["{alpha}", "{beta}", "--concurrency", "0"], "--concurrency 0"),
    (["{alpha}", "{beta}", "--gauntlet", "nobody"], "--gauntlet nobody"),
    (["{alpha}", "{beta}", "--anchor", "bad"], "--anchor"),
    (["{alpha}", "{beta}", "--anchor", "alpha"], "BOT=ELO"),
    (["{alpha}", "{beta}", "--anchor", "alpha=inf"], "between -100000 and 100000"),
    (["{alpha}", "{beta}", "--anchor", "nobody=1000"], "nobody"),
    (["{alpha}"], "at least 2"),
    (["{alpha}", "{beta}", "--players", "3"], "at least 3"),
    (["{alpha}", "{beta}", "--seed", "x"], "whole number"),
    (["{alpha}", "{beta}", "--decision-time", "0"], "--decision-time"),
    (["{alpha}", "{beta}", "--decision-time", "0.0001"], "decision_ms must be a whole number"),
    (["{alpha}", "{beta}", "--bogus"], "--bogus"),
    (["--resume", "{missing}"], "tournament.json"),
    (["--resume", "{missing}", "{alpha}"], "--resume"),
]


@pytest.mark.parametrize(("argv", "named"), BAD_RUNS)
@pytest.mark.parametrize("give_out", [True, False])
def test_bad_input_gets_one_line_and_creates_nothing(capsys, monkeypatch, bots, tmp_path,
                                                     argv, named, give_out) -> None:
    monkeypatch.chdir(tmp_path)  # where a default results/ folder would go
    args = [a.format(missing=tmp_path / "missing.py", **bots) for a in argv]
    if give_out:
        args += ["--out", str(tmp_path / "out")]
        if "--resume" in argv:
            named = "give no bots and no --out"
    line = refusal(capsys, "run", *args)
    assert line.startswith("arena") and named in line
    assert list(tmp_path.iterdir()) == []


def test_bad_input_to_rate_gets_one_line(capsys, bots, tmp_path) -> None:
    run_ok(capsys, tmp_path / "done", [bots["alpha"], bots["beta"]], "--games", 2, "--seed", 1)
    (tmp_path / "empty").mkdir()
    for argv, named in [
        (["rate", tmp_path / "nowhere"], "no such folder"),
        (["rate", tmp_path / "empty"], "tournament.json"),
        (["rate", tmp_path / "done", "--anchor", "alpha"], "BOT=ELO"),
        (["rate", tmp_path / "done", "--anchor", "nobody=1"], "nobody"),
        (["rate"], "rate"),
    ]:
        line = refusal(capsys, *argv)
        assert named in line


# Progress


def test_progress_is_printed_on_a_pipe(bots, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "arena", "run", bots["alpha"], bots["beta"], "--games", "6",
         "--seed", "1", "--concurrency", "2", "--out", str(tmp_path / "out")],
        cwd=tmp_path, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=DEADLINE)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert f"{tmp_path / 'out'}: 6 games (0 already played), seed 1, 2 bots" in lines
    assert any(re.fullmatch(r"6/6 games, [0-9.]+ games/s, 0s left, leader \w+ \d+%", line)
               for line in lines), done.stderr
    assert "\r" not in done.stderr and "\x1b" not in done.stderr  # no terminal codes on a pipe
    assert "alpha" in done.stdout and "beta" in done.stdout  # the standings


def test_a_folder_made_before_a_limit_existed_runs_on_with_the_same_command(
        capsys, bots, tmp_path) -> None:
    out = tmp_path / "old"
    two = [bots["alpha"], bots["beta"]]
    run_ok(capsys, out, two, "--games", 2, "--seed", 4)
    meta = json.loads((out / "tournament.json").read_text())
    for key in ("disk_mb", "processes"):  # limits added after the folder was made
        del meta["resources"][key]
    (out / "tournament.json").write_text(json.dumps(meta))
    status, _, err = arena(capsys, "run", *two, "--games", 4, "--seed", 4, "--out", out)
    assert status == 2 and "games was 2, now 4" in err and "resources" not in err
    before = games(out)
    run_ok(capsys, out, two, "--games", 2, "--seed", 4)  # refused as "other options" before
    assert games(out) == before
