"""A full, read-only or foreign results folder: one line, a non-zero exit, and
what was written before stays whole (issue 11, item 11).

The errors are the kernel's own: bubblewrap mounts a tiny tmpfs (ENOSPC),
binds the folder read-only (EROFS), or runs arena as a user without write
permission (EACCES, which root would ignore).  Each arena runs in a subprocess
inside bubblewrap; what it leaves is copied out before the mount goes away.
"""

from __future__ import annotations

import functools
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arena.engine.record import load
from arena.tournament.store import GAMES, RECORDS

DET_BOT = Path(__file__).parent / "bots" / "det_hash.py"
DEADLINE = 120.0  # seconds: bounds each bubblewrap run; never reached when all is well
ARENA = [sys.executable, "-m", "arena"]


@functools.cache
def _bwrap_problem() -> str | None:
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bubblewrap (bwrap) is not installed"
    probe = subprocess.run([bwrap, "--dev-bind", "/", "/", "--unshare-user", "--uid", "4242",
                            "--size", "65536", "--tmpfs", "/mnt", "true"],
                           capture_output=True, text=True, timeout=DEADLINE)
    if probe.returncode != 0:
        return f"bwrap cannot mount a tmpfs or map a user here: {probe.stderr.strip()}"
    return None


def need_bwrap() -> None:
    """Skip where bubblewrap cannot run; fail instead if ARENA_TEST_SANDBOX=require (CI)."""
    problem = _bwrap_problem()
    if problem is not None:
        if os.environ.get("ARENA_TEST_SANDBOX") == "require":
            pytest.fail(problem)
        pytest.skip(problem)


def bwrap(options: list[str], script: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run a shell script in bubblewrap over the whole file system, plus ``options``."""
    return subprocess.run(["bwrap", "--dev-bind", "/", "/", *options, "sh", "-c", script],
                          cwd=cwd, capture_output=True, text=True, timeout=DEADLINE,
                          stdin=subprocess.DEVNULL)


def bots(folder: Path, *names: str) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        shutil.copyfile(DET_BOT, folder / f"{name}.py")
    return [str(folder / f"{name}.py") for name in names]


def arena_line(argv: list[str]) -> str:
    return shlex.join([*ARENA, *argv])


def run(tmp_path: Path, argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ARENA, *argv], cwd=tmp_path, capture_output=True, text=True,
                          timeout=DEADLINE, stdin=subprocess.DEVNULL)


def the_one_line(status: int, err: str) -> str:
    """The refusal: a non-zero exit, no traceback, one `arena:` line and it comes last."""
    assert status == 2, err
    assert "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert [line for line in lines if line.startswith("arena")] == lines[-1:], err
    return lines[-1]


def lines(folder: Path) -> list[dict]:
    data = (folder / GAMES).read_bytes() if (folder / GAMES).exists() else b""
    whole = data[: data.rfind(b"\n") + 1]  # a torn last line is the resume's to drop
    return [json.loads(line) for line in whole.splitlines()]


def core(game: dict) -> str:
    return json.dumps({k: v for k, v in game.items()
                       if k not in ("duration", "decision_ms", "record")}, sort_keys=True)


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


# The free room left on a 1 MB tmpfs (room enough for the whole results folder,
# its site included): the disk fills at different points of a run
# (tournament.json, a bot's log, a record, a game line, the standings, the site).
DISK = 1_000_000
@pytest.mark.parametrize("room", [10_000, 30_000, 60_000, 200_000])
def test_a_full_disk_stops_the_run_in_one_line_and_the_rerun_completes(tmp_path: Path,
                                                                     room: int) -> None:
    need_bwrap()
    two = bots(tmp_path / "bots", "alpha", "beta")
    disk = tmp_path / "disk"
    disk.mkdir()
    argv = ["run", *two, "--games", "40", "--seed", "1", "--out", str(disk / "res")]
    script = f"""
        head -c {DISK - room} /dev/zero > {disk}/filler || exit 9
        {arena_line(argv)} 2> failed.err > /dev/null; echo $? > failed.status
        cp -a {disk}/res failed
        rm {disk}/filler
        {arena_line(argv)} 2> again.err > /dev/null; echo $? > again.status
        cp -a {disk}/res again
    """
    done = bwrap(["--size", str(DISK), "--tmpfs", str(disk)], script, tmp_path)
    assert done.returncode == 0, done.stderr

    err = (tmp_path / "failed.err").read_text()
    line = the_one_line(int((tmp_path / "failed.status").read_text()), err)
    assert line.startswith(f"arena: cannot write {disk / 'res'}/"), line
    assert "the disk is full; free some space, then run the same command again" in line
    failed = tmp_path / "failed"
    # Whole or not at all: every record there loads, every line names a record there.
    records = sorted((failed / RECORDS).iterdir()) if (failed / RECORDS).exists() else []
    assert all(not p.name.startswith(".") for p in records), records
    for path in records:
        load(path)
    played = lines(failed)
    assert {failed / g["record"] for g in played} <= set(records)

    again = (tmp_path / "again.err").read_text()
    assert int((tmp_path / "again.status").read_text()) == 0, again
    if played:
        assert f"40 games ({len(played)} already played)" in again
    finished = lines(tmp_path / "again")
    assert len({(g["group"], g["index"]) for g in finished}) == len(finished) == 40
    assert [core(g) for g in finished[:len(played)]] == [core(g) for g in played]
    whole = run(tmp_path, ["run", *two, "--games", "40", "--seed", "1",
                           "--out", str(tmp_path / "whole")])
    assert whole.returncode == 0, whole.stderr
    assert sorted(map(core, finished)) == sorted(map(core, lines(tmp_path / "whole")))


def test_a_read_only_folder_is_refused_in_one_line_and_rate_still_reads_it(
        tmp_path: Path) -> None:
    need_bwrap()
    three = bots(tmp_path / "bots", "alpha", "beta", "gamma")
    res = tmp_path / "res"
    done = run(tmp_path, ["run", *three[:2], "--games", "2", "--seed", "3", "--out", str(res)])
    assert done.returncode == 0, done.stderr
    before = snapshot(res)
    script = "; ".join([
        f"{arena_line(['run', *three, '--games', '2', '--seed', '3', '--out', str(res)])} "
        "2> late.err; echo $? > late.status",
        f"{arena_line(['run', '--resume', str(res)])} 2> resume.err; echo $? > resume.status",
        f"{arena_line(['rate', str(res)])} > rate.out 2> rate.err; echo $? > rate.status",
    ])
    done = bwrap(["--ro-bind", str(res), str(res)], script, tmp_path)
    assert done.returncode == 0, done.stderr
    for name in ("late", "resume"):
        line = the_one_line(int((tmp_path / f"{name}.status").read_text()),
                            (tmp_path / f"{name}.err").read_text())
        assert line == (f"arena: cannot write {res}/.lock: the file system is read-only; make "
                        "it writable, or write somewhere else (what was written before is kept)")
    rate_err = (tmp_path / "rate.err").read_text()
    assert (tmp_path / "rate.status").read_text().strip() == "0", rate_err
    assert "alpha" in (tmp_path / "rate.out").read_text()
    assert snapshot(res) == before


def test_no_permission_on_records_stops_in_one_line_and_the_rerun_completes(
        tmp_path: Path) -> None:
    need_bwrap()
    three = bots(tmp_path / "bots", "alpha", "beta", "gamma")
    res = tmp_path / "res"
    done = run(tmp_path, ["run", *three[:2], "--games", "2", "--seed", "3", "--out", str(res)])
    assert done.returncode == 0, done.stderr
    before = lines(res)
    (res / RECORDS).chmod(0o555)
    late = ["run", *three, "--games", "2", "--seed", "3", "--out", str(res)]
    # As another user (root would ignore the mode): the caller mapped to uid 4242.
    done = bwrap(["--unshare-user", "--uid", "4242", "--gid", "4242"],
                 f"{arena_line(late)} 2> late.err; echo $? > late.status", tmp_path)
    assert done.returncode == 0, done.stderr
    line = the_one_line(int((tmp_path / "late.status").read_text()),
                        (tmp_path / "late.err").read_text())
    assert line.startswith(f"arena: cannot write {res / RECORDS}/0000"), line
    assert line.endswith(".json.gz: permission denied; give this user write access, or write "
                         "somewhere else (what was written before is kept)"), line
    assert lines(res) == before
    assert len(list((res / RECORDS).iterdir())) == 2

    (res / "tournament.json").chmod(0o000)
    done = bwrap(["--unshare-user", "--uid", "4242", "--gid", "4242"],
                 f"{arena_line(['rate', str(res)])} 2> rate.err; echo $? > rate.status", tmp_path)
    assert done.returncode == 0, done.stderr
    line = the_one_line(int((tmp_path / "rate.status").read_text()),
                        (tmp_path / "rate.err").read_text())
    assert line == (f"arena: {res}/tournament.json: cannot read it (Permission denied); give "
                    "this user read access, then run again")

    (res / "tournament.json").chmod(0o644)
    (res / RECORDS).chmod(0o755)
    done = run(tmp_path, late)
    assert done.returncode == 0, done.stderr
    assert "6 games (2 already played)" in done.stderr
    assert lines(res)[:2] == before and len(lines(res)) == 6
