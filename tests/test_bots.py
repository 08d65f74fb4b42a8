"""Resolving bot arguments, building bots, and hashing their files."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arena.protocol import codec
from arena.referee.bots import (
    MAX_HASH_BYTES,
    BotSpecError,
    BuildError,
    bot_hash,
    build_bot,
    resolve_bot,
    resolve_bots,
)


def write(path: Path, text: str = "", mode: int = 0o644) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(mode)
    return path


def bot_dir(tmp_path: Path, manifest: str, name: str = "greedy") -> Path:
    directory = tmp_path / name
    write(directory / "bot.toml", manifest)
    return directory


def spec_error(arg: Path | str) -> str:
    """The message of the BotSpecError for ``arg``, checked to be one line naming it."""
    with pytest.raises(BotSpecError) as info:
        resolve_bot(str(arg))
    message = str(info.value)
    assert "\n" not in message
    assert repr(str(arg)) in message
    return message


def test_python_script_runs_unbuffered_under_this_python(tmp_path: Path) -> None:
    script = write(tmp_path / "random.py", "print('hi')\n", mode=0o755)  # extension wins
    spec = resolve_bot(str(script))
    assert spec.name == "random"
    assert spec.argv == (sys.executable, "-u", "-P", str(script))
    assert spec.path == script
    assert spec.workdir == tmp_path
    assert spec.build is None


@pytest.mark.parametrize(
    ("ext", "program"),
    [(".js", "node"), (".sh", "bash"), (".rb", "ruby"), (".pl", "perl"), (".lua", "lua")],
)
def test_scripts_run_with_the_interpreter_found_on_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ext: str, program: str
) -> None:
    bin_dir = tmp_path / "bin"
    interpreter = write(bin_dir / program, "#!/bin/sh\n", mode=0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    script = write(tmp_path / f"my.bot{ext}")
    spec = resolve_bot(str(script))
    assert spec.name == "my.bot"
    assert spec.argv == (str(interpreter), str(script))


def test_missing_interpreter_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    message = spec_error(write(tmp_path / "bot.lua"))
    assert "'lua', which is not on PATH" in message
    assert "install lua" in message


def test_executable_runs_as_is(tmp_path: Path) -> None:
    program = write(tmp_path / "c_bot", "#!/bin/sh\n", mode=0o755)
    spec = resolve_bot(str(program))
    assert (spec.name, spec.argv) == ("c_bot", (str(program),))


def test_relative_argument_becomes_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path / "bots" / "x.py")
    monkeypatch.chdir(tmp_path)
    spec = resolve_bot("bots/x.py")
    assert spec.argv[-1] == str(tmp_path / "bots" / "x.py")


def test_missing_path(tmp_path: Path) -> None:
    assert "no such file or directory" in spec_error(tmp_path / "nope.py")


def test_non_executable_file_with_unknown_extension(tmp_path: Path) -> None:
    message = spec_error(write(tmp_path / "notes.txt"))
    assert "chmod +x" in message and "bot.toml" in message


def test_directory_without_manifest(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    assert "has no bot.toml" in spec_error(tmp_path / "empty")


@pytest.mark.parametrize(
    ("manifest", "fragment"),
    [
        ("run = [", "not valid TOML"),
        ('name = "x"\n', "`run` is missing"),
        ('run = "python3 bot.py"\n', "`run` must be a non-empty list of strings"),
        ('run = ["./bot", 3]\n', "`run` must be a non-empty list of strings"),
        ("run = []\n", "`run` must be a non-empty list of strings"),
        ('run = ["./bot"]\nbuild = "make"\n', "`build` must be a non-empty list of strings"),
        ('run = ["./bot"]\nbuid = ["make"]\n', "unknown key 'buid'"),
        ('name = "a/b"\nrun = ["./bot"]\n', "`name`"),
        ('name = ""\nrun = ["./bot"]\n', "`name`"),
        ('run = ["./bot"]\nbuild_timeout = 0\n', "`build_timeout`"),
        ('run = ["./bot"]\nbuild_timeout = true\n', "`build_timeout`"),
        ('run = ["./bot"]\nbuild_timeout = "60"\n', "`build_timeout`"),
        ('run = ["no-such-command-xyz"]\n', "'no-such-command-xyz' is not on PATH"),
    ],
)
def test_bad_manifest(tmp_path: Path, manifest: str, fragment: str) -> None:
    message = spec_error(bot_dir(tmp_path, manifest))
    assert "bot.toml" in message
    assert fragment in message


def test_unknown_key_message_lists_allowed_keys(tmp_path: Path) -> None:
    message = spec_error(bot_dir(tmp_path, 'run = ["./bot"]\nruns = 1\n'))
    assert "allowed keys are build, build_timeout, name, run" in message


def test_manifest_paths_resolve_against_the_bot_directory(tmp_path: Path) -> None:
    directory = bot_dir(
        tmp_path,
        'name = "Greedy"\n'
        'run = ["bash", "play.sh", "--fast", "./out/bot", "data", "level"]\n'
        'build = ["./build.sh", "-O2"]\n'
        "build_timeout = 5\n",
    )
    write(directory / "play.sh")
    (directory / "data").mkdir()
    spec = resolve_bot(str(directory))
    assert spec.name == "Greedy"
    assert spec.path == spec.workdir == directory
    assert spec.argv == (
        shutil.which("bash"),
        str(directory / "play.sh"),
        "--fast",
        str(directory / "out" / "bot"),  # created by the build: resolved all the same
        str(directory / "data"),
        "level",  # not a path in the bot directory: left alone
    )
    assert spec.build == (str(directory / "build.sh"), "-O2")
    assert spec.build_timeout == 5.0


def test_name_defaults_to_the_directory_name(tmp_path: Path) -> None:
    directory = bot_dir(tmp_path, 'run = ["/bin/true"]\n', name="lazy")
    spec = resolve_bot(str(directory))
    assert (spec.name, spec.argv) == ("lazy", ("/bin/true",))


def test_repeated_names_are_told_apart_in_argument_order(tmp_path: Path) -> None:
    args = [
        write(tmp_path / "a" / "random.py"),
        write(tmp_path / "b" / "random.py"),
        write(tmp_path / "random-2.py"),  # a bot really called random-2 keeps its name
        write(tmp_path / "a" / "random.py"),  # the same bot twice is allowed
    ]
    names = [spec.name for spec in resolve_bots(str(arg) for arg in args)]
    assert names == ["random", "random-3", "random-2", "random-4"]


def test_names_are_told_apart_as_the_game_line_shows_them(tmp_path: Path) -> None:
    # Other characters become "_" in the game line: "my bot" would pose as
    # "my_bot" there, and any unicode name as a run of underscores.
    named = [("one", "my bot"), ("two", "my_bot"), ("three", "é🙂"), ("four", "__"),
             ("five", "x" * 64), ("six", "x" * 64)]
    args = [bot_dir(tmp_path / folder, f'name = "{name}"\nrun = ["/bin/true"]\n')
            for folder, name in named]
    names = [spec.name for spec in resolve_bots(str(arg) for arg in args)]
    assert names[:4] == ["my bot", "my_bot-2", "é🙂", "__-2"]
    assert names[4] == "x" * 64 and names[5] == "x" * 62 + "-2"
    wire = [codec.wire_name(name) for name in names]
    assert len(set(wire)) == len(wire)


def test_build_runs_in_the_bot_directory_before_the_bot(tmp_path: Path) -> None:
    directory = bot_dir(tmp_path, 'run = ["./out/bot"]\nbuild = ["bash", "build.sh"]\n')
    write(
        directory / "build.sh",
        "mkdir -p out\nprintf '#!/bin/sh\\necho built bot\\n' > out/bot\nchmod +x out/bot\n",
    )
    spec = resolve_bot(str(directory))
    build_bot(spec)
    result = subprocess.run(spec.argv, cwd=tmp_path, capture_output=True, text=True, check=True)
    assert result.stdout == "built bot\n"


def test_run_may_name_what_the_build_creates(tmp_path: Path) -> None:
    # As `javac -d classes` then `java -cp classes Bot`: "classes" does not exist
    # until the build has run, and the bot runs in another directory.
    directory = bot_dir(
        tmp_path,
        'run = ["bash", "out/bot.sh", "--data", "made.txt"]\n'
        'build = ["bash", "-c", "mkdir -p out && echo \'cat \\"$2\\"\' > out/bot.sh '
        '&& echo made > made.txt"]\n',
    )
    spec = build_bot(resolve_bot(str(directory)))
    assert spec.argv[1:] == (str(directory / "out/bot.sh"), "--data",
                             str(directory / "made.txt"))
    elsewhere = tmp_path / "scratch"
    elsewhere.mkdir()
    result = subprocess.run(spec.argv, cwd=elsewhere, capture_output=True, text=True, check=True)
    assert result.stdout == "made\n"


def test_failed_build_shows_the_tail_of_its_output(tmp_path: Path) -> None:
    directory = bot_dir(
        tmp_path,
        'run = ["./bot"]\n'
        'build = ["bash", "-c", "for i in $(seq 1 30); do echo line $i; done; exit 3"]\n',
    )
    with pytest.raises(BuildError) as info:
        build_bot(resolve_bot(str(directory)))
    assert isinstance(info.value, BotSpecError)  # the CLI reports both the same way
    first, *rest = str(info.value).splitlines()
    assert first.startswith("bot 'greedy': build failed with status 3")
    assert "fix the build" in first
    assert rest[-20:] == [f"  | line {i}" for i in range(11, 31)]


def test_build_that_times_out_is_killed_with_its_children(tmp_path: Path) -> None:
    directory = bot_dir(
        tmp_path,
        'run = ["./bot"]\n'
        'build = ["bash", "-c", "echo compiling; sleep 60 & echo $! > child.pid; wait"]\n'
        "build_timeout = 0.5\n",
    )
    with pytest.raises(BuildError) as info:
        build_bot(resolve_bot(str(directory)))
    message = str(info.value)
    assert "build timed out after 0.5 s" in message
    assert "raise build_timeout in bot.toml" in message
    assert "  | compiling" in message
    child = int((directory / "child.pid").read_text())
    stat = Path(f"/proc/{child}/stat")
    assert not stat.exists() or stat.read_text().rpartition(")")[2].split()[0] in ("Z", "X")


def test_build_is_a_no_op_without_a_build_command(tmp_path: Path) -> None:
    build_bot(resolve_bot(str(write(tmp_path / "x.py"))))


def test_file_hash_follows_content(tmp_path: Path) -> None:
    script = write(tmp_path / "x.py", "print(1)\n")
    first = bot_hash(resolve_bot(str(script)))
    assert bot_hash(resolve_bot(str(script))) == first
    script.write_text("print(2)\n")
    assert bot_hash(resolve_bot(str(script))) != first


def test_directory_hash_covers_files_but_not_dot_entries_or_caches(tmp_path: Path) -> None:
    directory = bot_dir(tmp_path, 'run = ["./bot"]\n')
    write(directory / "src" / "main.c", "int main;\n")
    spec = resolve_bot(str(directory))
    first = bot_hash(spec)
    write(directory / ".git" / "HEAD", "ref\n")
    write(directory / ".main.c.swp", "junk")
    write(directory / "src" / "__pycache__" / "x.pyc", "junk")
    assert bot_hash(spec) == first
    # The same files elsewhere hash the same.
    copy = tmp_path / "copy"
    shutil.copytree(directory, copy)
    assert bot_hash(resolve_bot(str(copy))) == first
    # A renamed file is a change even with the same bytes.
    os.rename(directory / "src" / "main.c", directory / "src" / "bot.c")
    assert bot_hash(spec) != first


def test_the_hash_of_plain_files_is_what_it_was_so_old_tournaments_resume(tmp_path: Path) -> None:
    directory = bot_dir(tmp_path, 'run = ["./bot"]\n')
    write(directory / "src" / "main.c", "int main;\n")
    expected = hashlib.sha256()
    for rel, data in [("bot.toml", b'run = ["./bot"]\n'), ("src/main.c", b"int main;\n")]:
        expected.update(rel.encode() + b"\0" + len(data).to_bytes(8, "big") + data)
    assert bot_hash(resolve_bot(str(directory))) == expected.hexdigest()


def test_a_symlink_counts_by_where_it_points_never_by_what_is_there(tmp_path: Path) -> None:
    outside = write(tmp_path / "outside" / "secret.txt", "one\n")
    for n in range(5):
        write(tmp_path / "outside" / "many" / f"{n}.txt", "x")
    directory = bot_dir(tmp_path, 'run = ["./bot"]\n')
    (directory / "secret").symlink_to(outside)
    (directory / "tree").symlink_to(tmp_path / "outside" / "many")
    spec = resolve_bot(str(directory))
    first = bot_hash(spec, max_files=3)  # the linked tree is not walked
    outside.write_text("two\n")
    write(tmp_path / "outside" / "many" / "new.txt", "y")
    assert bot_hash(spec) == first
    (directory / "secret").unlink()
    (directory / "secret").symlink_to(tmp_path / "outside" / "many" / "0.txt")
    assert bot_hash(spec) != first


def test_hashing_stops_at_a_cap_on_files_and_bytes_in_one_line(tmp_path: Path) -> None:
    directory = bot_dir(tmp_path, 'run = ["./bot"]\n')
    for n in range(3):
        write(directory / "out" / f"{n}.o", "x" * 100 * (n + 1))
    spec = resolve_bot(str(directory))
    bot_hash(spec, max_files=4, max_bytes=700)
    with pytest.raises(BotSpecError) as info:
        bot_hash(spec, max_files=3)
    assert str(info.value) == (f"bot 'greedy': more than 3 files in {directory}, more than arena "
                               "reads to tell a changed bot; delete build outputs, or move them "
                               "out of the bot's folder")
    with pytest.raises(BotSpecError) as info:
        bot_hash(spec, max_bytes=599)
    assert str(info.value) == ("bot 'greedy': its files hold 616 bytes, more than the 599 bytes "
                               "arena reads to tell a changed bot (out/2.o alone is 300 bytes); "
                               "delete big build outputs, or move them out of the bot's folder")


def test_a_build_that_leaves_a_sparse_terabyte_is_refused_at_once(tmp_path: Path) -> None:
    build = [sys.executable, "-c", "open('big.bin', 'wb').truncate(1 << 40)"]
    directory = bot_dir(tmp_path, f'run = ["./bot"]\nbuild = {json.dumps(build)}\n')
    other = write(tmp_path / "other.py", "")
    try:
        done = subprocess.run([sys.executable, "-m", "arena", "run", str(directory), str(other),
                               "--out", str(tmp_path / "out")], cwd=tmp_path, timeout=60,
                              capture_output=True, text=True, stdin=subprocess.DEVNULL)
    finally:
        (directory / "big.bin").unlink(missing_ok=True)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        "building greedy…",  # arena run's progress line
        f"arena: bot 'greedy': its files hold 1.0 TB, more than the "
        f"{MAX_HASH_BYTES / 2**30:.1f} GB arena reads to tell a changed bot (big.bin alone is "
        "1.0 TB); delete big build outputs, or move them out of the bot's folder"]
    assert not (tmp_path / "out").exists()


def test_an_unreadable_file_in_a_bot_folder_is_one_line(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    directory = bot_dir(tmp_path, 'run = ["./bot"]\n')
    os.mkfifo(directory / "pipe")  # not a file to read: skipped, never waited on
    bot_hash(resolve_bot(str(directory)))
    secret = write(directory / "secret.key", "k", mode=0o000)
    real_open = os.open

    def open_as_nobody(path, flags, *args):  # root would read it anyway
        if Path(path) == secret:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", open_as_nobody)
    with pytest.raises(BotSpecError) as info:
        bot_hash(resolve_bot(str(directory)))
    assert str(info.value) == (f"bot 'greedy': cannot read {secret} (Permission denied); make "
                               "it readable, or move it out of the bot's folder")


@pytest.mark.parametrize("name", ["evil\u202egnp.exe", "zero\u200bwidth", "isolate\u2067x"])
def test_a_name_with_invisible_or_direction_characters_is_refused(
        tmp_path: Path, name: str) -> None:
    directory = bot_dir(tmp_path, f'name = "{name}"\nrun = ["/bin/true"]\n')
    assert "invisible, control or direction characters" in spec_error(directory)
