"""`arena run --cluster`: the same units on a real Dask cluster on 127.0.0.1.

A scheduler and two one-thread `dask worker` processes (no nanny), all bound
to 127.0.0.1, started as subprocesses; a test that kills a worker has a
cluster of its own.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_tournament import (
    DEADLINE,
    GAMES,
    TOURNAMENT,
    arena,
    complete_lines,
    copy_bots,
    cores,
    games,
    keys,
    refused,
    run_ok,
    wait_until,
)

from arena.tournament import cluster

# Checked without importing it: distributed makes this (pytest's) process much
# bigger, and test_adversarial reads its subprocesses' peak memory, which on
# Linux starts from the size of the process that forked them.
pytestmark = pytest.mark.skipif(importlib.util.find_spec("distributed") is None,
                                reason="needs distributed: pip install 'arena[dask]'")


@pytest.fixture(scope="module")
def worker_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """HOME of the workers: a bot whose build looks for no-build there fails only
    on the workers."""
    home = tmp_path_factory.mktemp("worker-home")
    (home / "no-build").touch()
    return home


@pytest.fixture(scope="module")
def worker_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """$ARENA_CACHE of the workers: their bots, and the runs' logs and scratch."""
    return tmp_path_factory.mktemp("worker-cache")


@pytest.fixture(scope="module")
def address(tmp_path_factory: pytest.TempPathFactory, worker_home: Path,
            worker_cache: Path) -> str:
    scratch = tmp_path_factory.mktemp("cluster")
    env = {"HOME": str(worker_home), cluster.CACHE_ENV: str(worker_cache)}
    with cluster.local_cluster(2, env=env, scratch=scratch) as (found, _):
        yield found


@pytest.fixture
def bwrap_works() -> None:
    """Skip where bubblewrap cannot run; fail instead if ARENA_TEST_SANDBOX=require (CI)."""
    from arena.referee.sandbox import SandboxUnavailable, check_sandbox

    try:
        check_sandbox()
    except SandboxUnavailable as exc:
        if os.environ.get("ARENA_TEST_SANDBOX") == "require":
            pytest.fail(str(exc))
        pytest.skip(str(exc))


def start_run(tmp_path: Path, argv: list[str]) -> subprocess.Popen:
    log = open(tmp_path / "stderr.txt", "wb")  # noqa: SIM115 - closed by the caller's wait
    return subprocess.Popen([sys.executable, "-m", "arena", *argv], cwd=tmp_path,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
                            start_new_session=True)


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def test_a_cluster_plays_the_same_games_as_a_local_run(capsys, address, tmp_path) -> None:
    three = copy_bots(tmp_path / "bots", "alpha", "beta", "gamma")
    err = run_ok(capsys, tmp_path / "dask", three, "--games", 10, "--seed", 7,
                 "--cluster", address)
    assert "30 games (0 already played)" in err
    run_ok(capsys, tmp_path / "local", three, "--games", 10, "--seed", 7, "--workers", 0)
    on_cluster = games(tmp_path / "dask")
    assert len(on_cluster) == 30 and len(set(keys(on_cluster))) == 30
    assert cores(on_cluster) == cores(games(tmp_path / "local"))
    # The records came back through the cluster, one per game.
    assert len(list((tmp_path / "dask" / "records").glob("*.json.gz"))) == 30


def test_an_unreachable_scheduler_gets_one_line(capsys, tmp_path) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    two = copy_bots(tmp_path / "bots", "alpha", "beta")
    start = time.monotonic()
    status, _, err = arena(capsys, "run", *two, "--cluster", f"tcp://127.0.0.1:{port}",
                           "--out", tmp_path / "out")
    line = refused(status, err)
    assert f"--cluster tcp://127.0.0.1:{port}: no Dask scheduler answered" in line
    assert time.monotonic() - start < cluster.CONNECT_TIMEOUT + 20


def test_a_worker_with_another_version_is_named(capsys, monkeypatch, address, tmp_path) -> None:
    monkeypatch.setattr(cluster, "versions", lambda: ("0.0.0-other", "3.0.0"))
    two = copy_bots(tmp_path / "bots", "alpha", "beta")
    status, _, err = arena(capsys, "run", *two, "--cluster", address, "--out", tmp_path / "out")
    line = refused(status, err)
    assert "--cluster: Dask worker tcp://127.0.0.1:" in line
    assert f"runs arena {cluster.__version__} on Python" in line
    assert "this coordinator runs arena 0.0.0-other on Python 3.0.0" in line


def test_a_bot_that_does_not_build_on_a_worker_is_named_with_the_host(capsys, address,
                                                                     tmp_path) -> None:
    bot = tmp_path / "picky"
    bot.mkdir()
    (bot / "bot.py").write_text(Path(copy_bots(tmp_path / "src", "picky")[0]).read_text())
    (bot / "bot.toml").write_text(
        'run = ["python3", "bot.py"]\nbuild = ["sh", "-c", "test ! -e \\"$HOME/no-build\\""]\n')
    other = copy_bots(tmp_path / "bots", "alpha")
    status, _, err = arena(capsys, "run", str(bot), *other, "--games", 2, "--cluster", address,
                           "--out", tmp_path / "out")
    assert status == 2 and "Traceback" not in err, err
    last = err.strip().splitlines()[-1]  # after the line announcing the games
    assert last.startswith(f"arena: --cluster: bot 'picky' cannot be built on worker host "
                           f"{socket.gethostname()}: build failed with status 1")


def test_a_worker_killed_mid_run_loses_and_doubles_nothing(capsys, tmp_path) -> None:
    two = copy_bots(tmp_path / "bots", "alpha", "beta")
    out = tmp_path / "out"
    with cluster.local_cluster(2, scratch=tmp_path) as (address, workers):
        argv = ["run", *two, "--games", "100", "--seed", "5", "--cluster", address,
                "--out", str(out)]
        proc = start_run(tmp_path, argv)
        try:
            wait_until(lambda: complete_lines(out / GAMES) >= 10, "10 games played", proc)
            workers[0].send_signal(signal.SIGKILL)
            proc.wait(timeout=DEADLINE)
        finally:
            stop(proc)
    err = (tmp_path / "stderr.txt").read_text()
    assert proc.returncode == 0, err
    played = games(out)
    assert len(played) == 100
    assert len(set(keys(played))) == 100, "a game was stored twice"
    run_ok(capsys, tmp_path / "whole", two, "--games", 100, "--seed", 5, "--workers", 0)
    assert cores(played) == cores(games(tmp_path / "whole"))


def test_a_killed_coordinator_resumes_against_the_cluster(capsys, address, tmp_path) -> None:
    two = copy_bots(tmp_path / "bots", "alpha", "beta")
    out = tmp_path / "out"
    argv = ["run", *two, "--games", "100", "--seed", "9", "--cluster", address,
            "--out", str(out)]
    proc = start_run(tmp_path, argv)
    try:
        wait_until(lambda: complete_lines(out / GAMES) >= 10, "10 games played", proc)
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        stop(proc)
    assert proc.returncode == -signal.SIGKILL
    assert 10 <= complete_lines(out / GAMES) < 100, "the run ended before it was killed"
    status, _, err = arena(capsys, *argv)
    assert status == 0, err
    resumed = games(out)
    assert len(resumed) == 100
    assert len(set(keys(resumed))) == 100, "a game was stored twice"
    run_ok(capsys, tmp_path / "whole", two, "--games", 100, "--seed", 9, "--workers", 0)
    assert cores(resumed) == cores(games(tmp_path / "whole"))


def test_limits_and_the_sandbox_apply_on_the_workers(capsys, bwrap_works, address,
                                                    worker_cache, tmp_path) -> None:
    two = copy_bots(tmp_path / "bots", "alpha", "beta")
    run_ok(capsys, tmp_path / "out", two, "--games", 4, "--seed", 3, "--sandbox",
           "--memory-mb", 300, "--cluster", address)
    assert len(games(tmp_path / "out")) == 4
    # The bots' logs stay on the worker host; each start names its limits and sandbox.
    meta = json.loads((tmp_path / "out" / TOURNAMENT).read_text())
    run = cluster.run_id(tmp_path / "out", 3, {b["name"]: b["hash"] for b in meta["bots"]})
    starts = [line for log in (worker_cache / "runs" / run / "logs").glob("*.log")
              for line in log.read_text().splitlines() if " started pid " in line]
    assert starts and all("sandboxed" in line and "memory 300 MB" in line
                          for line in starts), starts


def test_a_worker_without_bubblewrap_refuses_sandboxed_units(capsys, bwrap_works,
                                                              tmp_path) -> None:
    two = copy_bots(tmp_path / "bots", "alpha", "beta")
    env = {"PATH": os.path.dirname(sys.executable)}  # no bwrap there
    with cluster.local_cluster(1, env=env, scratch=tmp_path) as (address, _):
        status, _, err = arena(capsys, "run", *two, "--games", 2, "--sandbox",
                               "--cluster", address, "--out", tmp_path / "out")
    assert status == 2 and "Traceback" not in err, err
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"arena: --cluster: worker host {socket.gethostname()}: "
                           f"--sandbox needs bubblewrap, but bwrap is not on PATH"), last
    assert not (tmp_path / "out" / GAMES).read_text()
