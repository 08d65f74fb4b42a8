"""`arena run --workers N`: worker processes play units, the coordinator stores them.

The same seed gives the same games at any N; a worker killed with kill -9
mid-run has its unit played again, and nothing is lost or stored twice.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from test_tournament import (
    DEADLINE,
    GAMES,
    TOURNAMENT,
    complete_lines,
    copy_bots,
    cores,
    games,
    keys,
    run_ok,
    wait_until,
)

from arena.tournament.transport import worker_cpus

WORKER_MARKER = b"arena.tournament.transport"


def worker_pids(parent: int) -> list[int]:
    """Pids of the worker processes of coordinator ``parent`` (its children only:
    other runs on the machine have workers too)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path("/proc", entry, "stat").read_text()
            cmdline = Path("/proc", entry, "cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(stat.rpartition(")")[2].split()[1])
        if ppid == parent and WORKER_MARKER in cmdline:
            found.append(int(entry))
    return found


def test_same_games_whatever_the_number_of_workers(capsys, tmp_path: Path) -> None:
    three = copy_bots(tmp_path / "bots", "alpha", "beta", "gamma")
    runs = {}
    for workers in (0, 1, 2):
        out = tmp_path / f"w{workers}"
        err = run_ok(capsys, out, three, "--games", 10, "--seed", 7, "--workers", workers)
        assert "bot processes started: " in err
        runs[workers] = games(out)
    assert len(runs[0]) == 30 and len(set(keys(runs[0]))) == 30
    assert cores(runs[0]) == cores(runs[1]) == cores(runs[2])
    meta = json.loads((tmp_path / "w2" / TOURNAMENT).read_text())
    starts = meta["process_starts"]
    # Every bot started at least once; a slot keeps up to 16, so never twice for a reason
    # other than a fault (there are none).
    assert starts["fault"] == starts["again"] == 0
    assert 3 <= starts["total"] == starts["new"] <= 3 * 2 * 2  # bots x slots
    assert set(starts["bots"]) == {"alpha", "beta", "gamma"}


def test_a_worker_killed_mid_run_has_its_unit_played_again(capsys, tmp_path: Path) -> None:
    # Three bots: units of 24 games (three tables, a chunk of 4 deals each), so a
    # worker is nearly always in the middle of one, and the kill hits a unit.
    three = copy_bots(tmp_path / "bots", "alpha", "beta", "gamma")
    out = tmp_path / "out"
    argv = ["run", *three, "--games", "80", "--seed", "5", "--workers", "2", "--out", str(out)]
    with open(tmp_path / "stderr.txt", "wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "arena", *argv], cwd=tmp_path,
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=log, start_new_session=True)
        try:
            wait_until(lambda: len(worker_pids(proc.pid)) == 2, "two workers", proc)
            wait_until(lambda: complete_lines(out / GAMES) >= 10, "10 games played", proc)
            victim = worker_pids(proc.pid)[0]
            os.kill(victim, signal.SIGKILL)
            proc.wait(timeout=DEADLINE)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    err = (tmp_path / "stderr.txt").read_text()
    assert proc.returncode == 0, err
    assert f"worker process {victim} ended" in err and "played again" in err
    played = games(out)
    assert len(played) == 240
    assert len(set(keys(played))) == 240, "a game was stored twice"
    assert len({g["record"] for g in played}) == 240
    # The killed worker's bots' scratch directories go with the run's end, as the others'.
    assert not (out / "scratch").exists(), sorted(p.name for p in (out / "scratch").iterdir())
    run_ok(capsys, tmp_path / "whole", three, "--games", 80, "--seed", 5, "--workers", 0)
    assert cores(played) == cores(games(tmp_path / "whole"))


def test_a_bot_that_keeps_killing_its_worker_ends_the_run_in_lines_naming_it(
        tmp_path: Path) -> None:
    # Without --sandbox a bot can kill the worker playing it; a unit is played again
    # after each death, until MAX_WORKER_DEATHS, and then the run stops in one line.
    hostile = Path(__file__).parent / "hostile" / "kill_worker.py"
    good = copy_bots(tmp_path / "bots", "alpha")
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "arena", "run", str(hostile), *good,
                           "--games", "4", "--workers", "1", "--out", str(out)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=DEADLINE)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert "Traceback" not in done.stderr
    assert lines[-1].startswith("arena: worker processes died 4 times"), lines[-1]
    again = [line for line in lines if "the unit is played again" in line]
    assert len(again) == 4 and all("in a unit of alpha, kill_worker" in line for line in again)
    # Nothing of the bots' is left behind: the dead workers could not remove their scratch.
    assert not (out / "scratch").exists(), sorted(p.name for p in (out / "scratch").iterdir())
    assert (out / TOURNAMENT).exists()


def test_worker_cpus_one_each_while_there_are_enough() -> None:
    assert worker_cpus(2, {0, 1}) == [0, 1]
    assert worker_cpus(1, {5, 2}) == [2]
    assert worker_cpus(3, {0, 1}) is None  # more workers than CPUs: all free
    assert worker_cpus(1, set()) is None


def affinities(pids: list[int]) -> list[set[int]]:
    return [os.sched_getaffinity(pid) for pid in pids]


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="needs sched_getaffinity")
@pytest.mark.parametrize("spare", [0, 1], ids=["a worker a CPU", "more workers than CPUs"])
def test_workers_are_pinned_one_a_cpu_and_their_bots_are_not(tmp_path: Path,
                                                              spare: int) -> None:
    # Each worker on a CPU of its own while there are enough (a bot woken on
    # its worker's CPU answers before the worker's write returns); its bots
    # keep every CPU; with more workers than CPUs every worker stays free.
    everywhere = os.sched_getaffinity(0)
    workers = len(everywhere) + spare
    if workers < 2:
        pytest.skip("needs 2 CPUs")
    two = copy_bots(tmp_path / "bots", "alpha", "beta")
    out = tmp_path / "out"
    argv = ["run", *two, "--games", "2000", "--seed", "3", "--workers", str(workers),
            "--out", str(out)]
    proc = subprocess.Popen([sys.executable, "-m", "arena", *argv], cwd=tmp_path,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_until(lambda: len(worker_pids(proc.pid)) == workers, "the workers", proc)
        # Every worker has played a game, so each has read its first frame.
        wait_until(lambda: complete_lines(out / GAMES) >= 4 * workers, "games played", proc)
        pids = worker_pids(proc.pid)
        found = affinities(pids)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    if spare:
        assert found == [everywhere] * workers
    else:
        assert sorted(min(cpus) for cpus in found) == sorted(everywhere)
        assert all(len(cpus) == 1 for cpus in found)
    # The bots the workers started (slot s's logs are NAME.wS.log; the
    # pre-flight's, started by the coordinator, are not theirs).
    started = [line for log in (out / "logs").glob("*.w*.log")
               for line in log.read_text().splitlines() if "started pid" in line]
    assert started
    cpu_note = "CPU " + ",".join(map(str, sorted(everywhere)))
    assert all((cpu_note in line) != bool(spare) for line in started), started
