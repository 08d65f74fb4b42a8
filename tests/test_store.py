"""Unit tests of the results folder (arena/tournament/store.py)."""

from __future__ import annotations

import errno
import gzip
import json
import os
from pathlib import Path

import pytest

import arena.files
from arena.engine.record import GameRecord
from arena.errors import UserError
from arena.tournament.store import (
    FORMAT,
    GAMES,
    IDENTITY,
    LOCK,
    RECORDS,
    SYNC_GAMES,
    SYNC_SECONDS,
    SYNCED,
    TOURNAMENT,
    VERSION,
    Store,
    differences,
    read_games,
    read_meta,
)


def game(group: str, index: int, *seats: str) -> dict:
    return {"group": group, "index": index, "seats": list(seats), "placements": [1, 2]}


def jsonl(*games: dict) -> bytes:
    return b"".join(json.dumps(g).encode() + b"\n" for g in games)


def meta(**changes) -> dict:
    base = {"format": FORMAT, "version": VERSION, "bot_args": ["a.py", "b.py"],
            "bots": [{"name": "a", "command": ["a"], "hash": "1"},
                     {"name": "b", "command": ["b"], "hash": "2"},
                     {"name": "c", "command": ["c"], "hash": "3"}],
            "seed": 1, "players": 2, "games": 4, "gauntlet": None, "variant": "ambassador",
            "turn_limit": 1000, "plain_deal": False,
            "limits": {"startup_ms": 1, "decision_ms": 2, "bank_ms": 3, "game_ms": 4},
            "resources": {"memory_mb": 1024, "cpu_seconds": 60.0, "file_size_mb": 64,
                          "open_files": 256, "sandbox": False, "sandbox_ro": []}}
    base.update(changes)
    return base


GAMES_3 = (game("a|b#0", 0, "a", "b"), game("a|b#0", 1, "b", "a"), game("a|c#0", 0, "c", "a"))


# read_games

def test_read_games_of_a_missing_file_is_empty(tmp_path: Path) -> None:
    assert read_games(tmp_path / GAMES) == []
    assert read_games(tmp_path / GAMES, repair=True) == []
    assert not (tmp_path / GAMES).exists()


def test_read_games_drops_a_torn_tail_and_leaves_the_file_without_repair(tmp_path: Path) -> None:
    path = tmp_path / GAMES
    whole = jsonl(*GAMES_3[:2])
    data = whole + jsonl(GAMES_3[2])[:20]  # the third line cut mid-write: no newline
    path.write_bytes(data)
    assert read_games(path) == list(GAMES_3[:2])
    assert path.read_bytes() == data


def test_repair_cuts_exactly_the_torn_tail(tmp_path: Path) -> None:
    path = tmp_path / GAMES
    whole = jsonl(*GAMES_3[:2])
    path.write_bytes(whole + b'{"group": "a|c#0", "ind')
    assert read_games(path, repair=True) == list(GAMES_3[:2])
    assert path.read_bytes() == whole


def test_repair_of_a_file_that_is_only_a_torn_line_empties_it(tmp_path: Path) -> None:
    path = tmp_path / GAMES
    path.write_bytes(b'{"group"')
    assert read_games(path, repair=True) == []
    assert path.read_bytes() == b""


def test_repair_leaves_a_whole_file_alone(tmp_path: Path) -> None:
    path = tmp_path / GAMES
    data = jsonl(*GAMES_3) + b"\n"  # a blank line is skipped, not an error
    path.write_bytes(data)
    assert read_games(path, repair=True) == list(GAMES_3)
    assert path.read_bytes() == data


@pytest.mark.parametrize("bad", [b"{not json", b"[1, 2]", b'{"group": "a|b#1"}', b"\xff\xfe"])
def test_a_damaged_middle_line_is_named_and_nothing_is_cut(tmp_path: Path, bad: bytes) -> None:
    path = tmp_path / GAMES
    data = jsonl(GAMES_3[0]) + bad + b"\n" + jsonl(*GAMES_3[1:])
    path.write_bytes(data)
    with pytest.raises(UserError) as caught:
        read_games(path, repair=True)
    message = str(caught.value)
    assert str(path) in message and "line 2" in message
    assert "\n" not in message
    assert path.read_bytes() == data


def test_a_game_twice_is_refused_with_both_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / GAMES
    data = jsonl(*GAMES_3, GAMES_3[1])
    path.write_bytes(data)
    for read in (lambda: read_games(path), lambda: read_games(path, repair=True),
                 lambda: Store(tmp_path).open(meta())):
        with pytest.raises(UserError) as caught:
            read()
        assert str(caught.value) == (f"{path}, line 4: game 1 of a|b#0 again (it is on line 2 "
                                     "too); delete one of the two lines, then run again")
    assert path.read_bytes() == data


def test_a_seat_naming_no_bot_of_the_tournament_is_refused(tmp_path: Path) -> None:
    path = tmp_path / GAMES
    path.write_bytes(jsonl(GAMES_3[0], game("a|b#0", 1, "b", "mallory"), GAMES_3[2]))
    assert len(read_games(path)) == 3  # without the names there is nothing to check
    for read in (lambda: read_games(path, bots=["a", "b", "c"]),
                 lambda: Store(tmp_path).open(meta())):
        with pytest.raises(UserError) as caught:
            read()
        assert str(caught.value) == (f"{path}, line 2: seat 'mallory' is no bot of this "
                                     "tournament; fix or delete that line, then run again")


def test_a_torn_copy_of_a_game_at_the_end_is_still_only_a_torn_tail(tmp_path: Path) -> None:
    path = tmp_path / GAMES
    path.write_bytes(jsonl(*GAMES_3) + jsonl(GAMES_3[2])[:-1])  # a repeat, but no newline
    assert read_games(path, repair=True, bots=["a", "b", "c"]) == list(GAMES_3)


# rewrite_without, append and record numbers

def test_append_writes_the_record_then_a_numbered_line(tmp_path: Path) -> None:
    store = Store(tmp_path / "t")
    assert store.open(meta()) == []
    for g in GAMES_3:
        store.append(dict(g), GameRecord(decisions=((0, "income"),)))
    store.close()
    lines = read_games(tmp_path / "t" / GAMES)
    assert [line["record"] for line in lines] == [f"{RECORDS}/{n:06d}.json.gz" for n in (1, 2, 3)]
    assert [{k: v for k, v in line.items() if k != "record"} for line in lines] == list(GAMES_3)
    for line in lines:
        with gzip.open(tmp_path / "t" / line["record"], "rt") as f:
            assert json.load(f)["decisions"] == [[0, "income"]]
    assert json.loads((tmp_path / "t" / TOURNAMENT).read_text()) == meta()
    assert not list((tmp_path / "t").glob("*.tmp"))


def test_open_repairs_a_torn_tail_and_returns_the_games_played(tmp_path: Path) -> None:
    folder = tmp_path / "t"
    folder.mkdir()
    (folder / GAMES).write_bytes(jsonl(*GAMES_3[:2]) + b'{"gro')
    store = Store(folder)
    assert store.open(meta()) == list(GAMES_3[:2])
    store.append(dict(GAMES_3[2]), GameRecord(decisions=()))
    store.close()
    # The new line starts on a line of its own: the torn bytes are gone.
    assert [g["group"] for g in read_games(folder / GAMES)] == ["a|b#0", "a|b#0", "a|c#0"]


def test_rewrite_without_keeps_the_others_and_numbers_are_never_reused(tmp_path: Path) -> None:
    folder = tmp_path / "t"
    store = Store(folder)
    store.open(meta())
    for g in GAMES_3:
        store.append(dict(g), GameRecord(decisions=()))
    store.close()
    before = read_games(folder / GAMES)

    store = Store(folder)
    assert store.rewrite_without(["c"]) == 1
    assert read_games(folder / GAMES) == before[:2]  # the others, unchanged and in order
    assert store.rewrite_without(["nobody"]) == 0
    assert read_games(folder / GAMES) == before[:2]

    store.open(meta())
    store.append(dict(GAMES_3[2]), GameRecord(decisions=()))
    store.close()
    after = read_games(folder / GAMES)
    # The dropped game's record 3 is kept on disk; the replayed game gets 4.
    assert [g["record"] for g in after] == [f"{RECORDS}/{n:06d}.json.gz" for n in (1, 2, 4)]
    assert (folder / RECORDS / "000003.json.gz").exists()


def test_record_numbers_skip_a_record_whose_line_was_never_written(tmp_path: Path) -> None:
    folder = tmp_path / "t"
    store = Store(folder)
    store.open(meta())
    store.append(dict(GAMES_3[0]), GameRecord(decisions=()))
    store.close()
    # A crash between saving a record and writing its line leaves record 2 alone.
    (folder / RECORDS / "000002.json.gz").write_bytes(b"")
    store = Store(folder)
    store.open(meta())
    store.append(dict(GAMES_3[1]), GameRecord(decisions=()))
    store.close()
    assert [g["record"] for g in read_games(folder / GAMES)] == [
        f"{RECORDS}/000001.json.gz", f"{RECORDS}/000003.json.gz"]


def test_record_numbers_are_not_reused_after_record_files_are_deleted(tmp_path: Path) -> None:
    folder = tmp_path / "t"
    store = Store(folder)
    store.open(meta())
    for g in GAMES_3[:2]:
        store.append(dict(g), GameRecord(decisions=()))
    store.close()
    for path in (folder / RECORDS).iterdir():
        path.unlink()  # a host saving disk space by hand
    store = Store(folder)
    store.open(meta())
    store.append(dict(GAMES_3[2]), GameRecord(decisions=()))
    store.close()
    assert read_games(folder / GAMES)[-1]["record"] == f"{RECORDS}/000003.json.gz"


def test_rewrite_without_refuses_a_damaged_file_and_changes_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "t"
    folder.mkdir()
    data = jsonl(GAMES_3[0]) + b"oops\n" + jsonl(GAMES_3[2])
    (folder / GAMES).write_bytes(data)
    with pytest.raises(UserError, match="line 2"):
        Store(folder).rewrite_without(["c"])
    assert (folder / GAMES).read_bytes() == data


# differences and read_meta

def test_differences_names_each_identity_option_that_differs() -> None:
    old = meta()
    assert differences(old, meta()) == []
    # Bots, command and version are not identity options.
    assert differences(old, meta(bots=[], command=["x"], arena="9")) == []
    found = differences(old, meta(games=6, variant="inquisitor"))
    assert found == ['games was 4, now 6', 'variant was "ambassador", now "inquisitor"']
    limits = dict(old["limits"], decision_ms=5)
    assert differences(old, meta(limits=limits)) == [
        'limits was {"startup_ms": 1, "decision_ms": 2, "bank_ms": 3, "game_ms": 4}, '
        'now {"startup_ms": 1, "decision_ms": 5, "bank_ms": 3, "game_ms": 4}']
    missing = {k: v for k, v in old.items() if k != "gauntlet"}
    assert differences(missing, meta(gauntlet="a")) == ['gauntlet was null, now "a"']
    assert set(IDENTITY) >= {"seed", "players", "games", "limits"}


def test_read_meta_reads_what_open_wrote(tmp_path: Path) -> None:
    store = Store(tmp_path)
    store.open(meta())
    store.close()
    assert read_meta(tmp_path) == meta()


@pytest.mark.parametrize(("text", "expected"), [
    (None, "no tournament.json here"),
    ('{"format": "arena-tourn', "damaged"),
    ("[1]", "not an arena tournament file"),
    (json.dumps(meta(format="other")), "not an arena tournament file"),
    (json.dumps({k: v for k, v in meta().items() if k != "bots"}), "damaged (bots"),
    (json.dumps(meta(bots=["a", "b"])), "damaged (each of bots"),
    (json.dumps(meta(bot_args="a.py")), "damaged (bot_args"),
    (json.dumps(meta(limits={"startup_ms": 1})), "damaged (limits"),
    (json.dumps(meta(seed="1")), "damaged (seed"),
    (json.dumps(meta(limits=dict(meta()["limits"], decision_ms=-5))),
     "damaged (limits: decision_ms must be a whole number >= 1, not -5)"),
    (json.dumps(meta(limits=dict(meta()["limits"], bank_ms=1.5))), "damaged (limits: bank_ms"),
    (json.dumps(meta(turn_limit=0)), "damaged (turn_limit"),
], ids=["missing", "cut", "list", "format", "no-bots", "bots-strings", "bot_args", "limits",
        "seed", "limit-range", "limit-type", "turn-limit"])
def test_read_meta_says_what_is_wrong_in_one_line(tmp_path: Path, text: str | None,
                                                  expected: str) -> None:
    if text is not None:
        (tmp_path / TOURNAMENT).write_text(text)
    with pytest.raises(UserError) as caught:
        read_meta(tmp_path)
    assert expected in str(caught.value)
    assert "\n" not in str(caught.value)


def test_open_writes_nothing_when_games_jsonl_is_damaged(tmp_path: Path) -> None:
    folder = tmp_path / "t"
    folder.mkdir()
    data = jsonl(GAMES_3[0]) + b"oops\n" + jsonl(GAMES_3[2])
    (folder / GAMES).write_bytes(data)
    store = Store(folder)
    with pytest.raises(UserError, match="line 2"):
        store.open(meta())
    store.close()
    assert sorted(p.name for p in folder.iterdir()) == [LOCK, GAMES]  # the lock is no data
    assert (folder / GAMES).read_bytes() == data


# The lock

def test_one_writer_at_a_time_and_close_lets_the_folder_go(tmp_path: Path) -> None:
    first, second = Store(tmp_path / "t"), Store(tmp_path / "t")
    first.open(meta())
    for take in (second.lock, lambda: second.open(meta()), lambda: second.rewrite_without(["a"])):
        with pytest.raises(UserError) as caught:
            take()
        assert str(caught.value) == (f"{tmp_path / 't'} is in use by another arena run "
                                     f"(pid {os.getpid()}); let it finish or stop it, or use "
                                     "another --out")
    first.close()
    assert second.open(meta()) == []
    second.close()


# Writes cut short

def test_a_record_cut_short_by_a_full_disk_is_not_left_behind(tmp_path: Path,
                                                              monkeypatch) -> None:
    folder = tmp_path / "t"
    store = Store(folder)
    store.open(meta())
    store.append(dict(GAMES_3[0]), GameRecord(decisions=()))
    before = (folder / GAMES).read_bytes()

    def half_then_full(fd: int, data: bytes) -> None:
        os.write(fd, data[: len(data) // 2])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(arena.files, "write_all", half_then_full)
    with pytest.raises(UserError) as caught:
        store.append(dict(GAMES_3[1]), GameRecord(decisions=((0, "income"),)))
    assert str(caught.value) == (f"cannot write {folder / RECORDS / '000002.json.gz'}: the disk "
                                 "is full; free some space, then run the same command again "
                                 "(what was written before is kept)")
    store.close()
    assert sorted(p.name for p in (folder / RECORDS).iterdir()) == ["000001.json.gz"]
    assert (folder / GAMES).read_bytes() == before


# Group sync and the check of what a power cut may have lost

def synced_size(folder: Path) -> int:
    return int((folder / SYNCED).read_text())


@pytest.mark.parametrize("syncfs", [True, False], ids=["syncfs", "fsync each"])
def test_games_are_synced_in_groups_records_first_then_lines_then_the_size(
        tmp_path: Path, monkeypatch, syncfs: bool) -> None:
    folder = tmp_path / "t"
    store = Store(folder)
    store.open(meta())
    synced: list[str] = []
    real_fsync, real_syncfs = os.fsync, arena.files.sync_file_system

    def fsync(fd: int) -> None:
        synced.append(os.path.basename(os.readlink(f"/proc/self/fd/{fd}")))
        real_fsync(fd)

    def sync_file_system(fd: int) -> bool:
        if not syncfs:
            return False  # as where there is no syncfs
        synced.append("syncfs " + os.path.basename(os.readlink(f"/proc/self/fd/{fd}")))
        real_syncfs(fd)  # on Linux, where syncfs is trusted with tmp_path's file system
        return True

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(arena.files, "sync_file_system", sync_file_system)
    for n in range(SYNC_GAMES - 1):
        store.append(game("a|b#0", n, "a", "b"), GameRecord(decisions=()))
    assert synced == []  # not one sync a game: a group
    assert synced_size(folder) == 0
    store.append(game("a|b#0", SYNC_GAMES - 1, "a", "b"), GameRecord(decisions=()))
    group = [f"{n:06d}.json.gz" for n in range(1, SYNC_GAMES + 1)] + [GAMES]
    assert synced == ([f"syncfs {GAMES}"] if syncfs else group)  # one call for them all
    assert synced_size(folder) == (folder / GAMES).stat().st_size
    synced.clear()
    store.append(game("a|b#0", SYNC_GAMES, "a", "b"), GameRecord(decisions=()))
    store.close()  # syncs what is left
    assert synced == ([f"syncfs {GAMES}"] if syncfs
                      else [f"{SYNC_GAMES + 1:06d}.json.gz", GAMES])
    assert synced_size(folder) == (folder / GAMES).stat().st_size
    assert len(read_games(folder / GAMES)) == SYNC_GAMES + 1
    assert open_files_in(folder / RECORDS) == []  # closed once synced


def open_files_in(folder: Path) -> list[str]:
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue  # the listing's own descriptor, closed meanwhile
        if target.startswith(f"{folder}/"):
            found.append(target)
    return found


def test_a_failed_sync_is_one_line_and_leaves_the_synced_size(tmp_path: Path,
                                                             monkeypatch) -> None:
    folder = tmp_path / "t"
    store = Store(folder)
    store.open(meta())

    def sync_file_system(fd: int) -> bool:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(arena.files, "sync_file_system", sync_file_system)
    for n in range(SYNC_GAMES - 1):
        store.append(game("a|b#0", n, "a", "b"), GameRecord(decisions=()))
    with pytest.raises(UserError, match=f"cannot write {folder}: Input/output error"):
        store.append(game("a|b#0", SYNC_GAMES - 1, "a", "b"), GameRecord(decisions=()))
    assert synced_size(folder) == 0  # a resume checks every record
    assert len(read_games(folder / GAMES)) == SYNC_GAMES


def test_a_sync_is_due_when_the_oldest_game_not_synced_is_sync_seconds_old(
        tmp_path: Path) -> None:
    now = [100.0]
    store = Store(tmp_path / "t", clock=lambda: now[0])
    store.open(meta())
    assert not store.sync_due()  # nothing stored
    store.append(dict(GAMES_3[0]), GameRecord(decisions=()))
    now[0] += SYNC_SECONDS / 2
    store.append(dict(GAMES_3[1]), GameRecord(decisions=()))
    assert not store.sync_due()
    now[0] += SYNC_SECONDS / 2
    assert store.sync_due()  # the first game's age counts, not the last one's
    store.sync()
    assert not store.sync_due()
    assert synced_size(tmp_path / "t") == (tmp_path / "t" / GAMES).stat().st_size
    store.close()


def power_cut(folder: Path, synced_lines: int) -> list[bytes]:
    """The folder as a power cut may leave it: .synced at the end of line
    ``synced_lines``, the lines after it written; the lines of games.jsonl."""
    lines = (folder / GAMES).read_bytes().splitlines(keepends=True)
    (folder / SYNCED).write_text(f"{len(b''.join(lines[:synced_lines]))}\n")
    return lines


def test_recover_drops_the_lines_after_the_sync_whose_record_is_lost(tmp_path: Path) -> None:
    folder = tmp_path / "t"
    store = Store(folder)
    store.open(meta())
    four = (*GAMES_3, game("b|c#0", 0, "b", "c"))
    for g in four:
        store.append(dict(g), GameRecord(decisions=((0, "income"),)))
    store.close()
    lines = power_cut(folder, 1)
    names = [json.loads(line)["record"] for line in lines]
    (folder / names[0]).write_bytes(b"")  # damaged before the sync: by hand, not a power cut
    (folder / names[1]).unlink()
    (folder / names[3]).write_bytes(b"")  # as ext4 leaves a file whose data was not written

    store = Store(folder)
    assert store.recover() == [("a|b#0", 1), ("b|c#0", 0)]
    # The line before the sync and the whole record after it stay, byte for byte.
    assert (folder / GAMES).read_bytes() == lines[0] + lines[2]
    assert synced_size(folder) == (folder / GAMES).stat().st_size
    assert store.recover() == []  # nothing left to check
    assert store.open(meta()) == [{**GAMES_3[0], "record": names[0]},
                                  {**GAMES_3[2], "record": names[2]}]
    store.append(dict(GAMES_3[1]), GameRecord(decisions=()))
    store.close()
    # The dropped games' numbers are not reused.
    assert read_games(folder / GAMES)[-1]["record"] == f"{RECORDS}/000005.json.gz"


def test_recover_after_a_kill_keeps_every_line_written(tmp_path: Path) -> None:
    folder = tmp_path / "t"
    store = Store(folder)
    store.open(meta())
    for g in GAMES_3:
        store.append(dict(g), GameRecord(decisions=()))
    store.close()
    lines = power_cut(folder, 0)  # killed before the first sync: all still in the page cache
    store = Store(folder)
    assert store.recover() == []
    assert (folder / GAMES).read_bytes() == b"".join(lines)
    store.open(meta())
    store.close()
    assert synced_size(folder) == len(b"".join(lines))


def test_recover_leaves_a_folder_of_an_older_arena_alone(tmp_path: Path) -> None:
    # Older versions synced every game and wrote no .synced.
    folder = tmp_path / "t"
    store = Store(folder)
    store.open(meta())
    store.append(dict(GAMES_3[0]), GameRecord(decisions=()))
    store.close()
    (folder / SYNCED).unlink()
    (folder / RECORDS / "000001.json.gz").unlink()  # deleted by hand
    data = (folder / GAMES).read_bytes()
    store = Store(folder)
    assert store.recover() == []
    assert store.open(meta()) == [{**GAMES_3[0], "record": f"{RECORDS}/000001.json.gz"}]
    store.close()
    assert (folder / GAMES).read_bytes() == data
    assert synced_size(folder) == len(data)


# Where syncfs would not do what an fsync of each file does, the store fsyncs.
SYNCFS_UNTRUSTED = {
    # FUSE's syncfs reaches its server's disk only for virtiofs: success, nothing kept.
    "fuse": {"type": "fuse.sshfs"},
    # Before Linux 5.8 syncfs never reported a failed write: a lost record unseen.
    "old kernel": {"release": "5.4.0-150-generic"},
    # Refused by a seccomp filter (a container): not a disk error that stops the run.
    "refused": {"errno": errno.ENOSYS},
    "not permitted": {"errno": errno.EPERM},
}


@pytest.mark.skipif(not os.path.exists("/proc/self/mountinfo"), reason="needs Linux")
@pytest.mark.parametrize("case", list(SYNCFS_UNTRUSTED))
def test_a_group_is_fsynced_file_by_file_where_syncfs_cannot_be_trusted(
        tmp_path: Path, monkeypatch, case: str) -> None:
    how = SYNCFS_UNTRUSTED[case]
    calls: list[int] = []

    def syncfs(fd: int) -> int:
        import ctypes

        calls.append(fd)
        if "errno" in how:
            ctypes.set_errno(how["errno"])
            return -1
        return 0

    real_uname = os.uname
    if "release" in how:
        fields = list(real_uname())
        fields[2] = how["release"]  # (sysname, nodename, release, version, machine)
        monkeypatch.setattr(os, "uname", lambda: os.uname_result(fields))
        monkeypatch.setattr(arena.files, "_SYNCFS", [])  # looked up again
    else:
        monkeypatch.setattr(arena.files, "_SYNCFS", [syncfs])
    monkeypatch.setattr(arena.files, "_SYNCS_TO_DISK", {}, raising=False)
    if "type" in how:
        monkeypatch.setattr(arena.files, "file_system_type", lambda device: how["type"],
                            raising=False)
    fsynced: list[str] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        fsynced.append(os.path.basename(os.readlink(f"/proc/self/fd/{fd}")))
        real_fsync(fd)

    folder = tmp_path / "t"
    store = Store(folder)
    store.open(meta())
    monkeypatch.setattr(os, "fsync", fsync)
    for n in range(SYNC_GAMES):
        store.append(game("a|b#0", n, "a", "b"), GameRecord(decisions=()))
    # The group's sync: each record, then the lines, then their size.
    assert fsynced == [f"{n:06d}.json.gz" for n in range(1, SYNC_GAMES + 1)] + [GAMES]
    assert synced_size(folder) == (folder / GAMES).stat().st_size
    store.close()
    assert len(calls) == (1 if "errno" in how else 0)  # once refused, not asked again
