"""`arena run --cluster tcp://HOST:8786`: units played on a Dask cluster.

The same units and the same ``GameSlot.play`` as local workers; only the
transport differs.  Needs ``pip install 'arena[dask]'`` (``distributed``) on
the coordinator and on every worker host.

* **Bots travel with the work**, content-addressed: each bot's files go to
  the cluster once (``client.scatter``) as a gzipped tar keyed by the hash in
  tournament.json.  A worker host unpacks and builds each bot once, into
  ``$ARENA_CACHE/bots/<hash>`` (default ``~/.cache/arena``), shared by its
  worker processes (a file lock); a build that fails there is one line
  naming the bot and the host.
* **A worker process keeps its bots** from unit to unit: a background thread
  runs one trio loop with the game slots of the run, and each task (a unit)
  is played in the slot its coordinator slot used last.  Bots' logs and
  scratch directories stay on the worker host, under ``$ARENA_CACHE/runs``.
* **Faults**: a unit whose worker died is run again by Dask (or, after
  Dask gives up on it, given to another slot by the coordinator); results are
  accepted once.  A scheduler that cannot be reached within
  ``CONNECT_TIMEOUT``, a worker with another arena or Python version, a
  missing bubblewrap with ``--sandbox``: one line, exit status 2.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import io
import os
import platform
import shutil
import socket
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Final

import attrs
import trio

from arena import __version__
from arena.errors import UserError
from arena.referee.bots import BotSpec, BotSpecError, build_bot, resolve_bot
from arena.tournament.units import WorkUnit
from arena.tournament.worker import (
    Assignment,
    GameSlot,
    RunContext,
    UnitResult,
    open_slots,
    refusal,
)

CONNECT_TIMEOUT: Final = 3.0  # seconds to reach the scheduler
CACHE_ENV: Final = "ARENA_CACHE"


class UnitRefused(Exception):
    """A worker cannot play units of this run (one line: which worker, and why)."""


@attrs.frozen
class BotBundle:
    """One bot's files as a gzipped tar, named by their hash."""

    name: str
    hash: str
    entry: str  # the file or directory the tar holds, as the bot argument names it
    data: bytes


def versions() -> tuple[str, str]:
    """arena's version and Python's major.minor here: a worker must match the
    coordinator (units, results and the code are pickled between them)."""
    major, minor, _ = platform.python_version_tuple()
    return __version__, f"{major}.{minor}"


def bundle(spec: BotSpec, digest: str) -> BotBundle:
    """The bot's files (those bot_hash reads: no dot files, no __pycache__)."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:

        def keep(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
            parts = Path(info.name).parts[1:]
            if any(p.startswith(".") or p == "__pycache__" for p in parts):
                return None
            return info

        tar.add(spec.path, arcname=spec.path.name, filter=keep)
    return BotBundle(spec.name, digest, spec.path.name, out.getvalue())


def cache_root() -> Path:
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "arena")


def unpack_and_build(item: BotBundle, context: RunContext) -> BotSpec:
    """The bot's spec on this host: unpacked and built once per hash (in the
    sandbox, with --sandbox, as on the coordinator)."""
    home = cache_root() / "bots" / item.hash
    home.parent.mkdir(parents=True, exist_ok=True)
    with open(str(home) + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one unpacker and builder per host
        done = home / ".built"
        if not done.exists():
            shutil.rmtree(home, ignore_errors=True)
            home.mkdir()
            with tarfile.open(fileobj=io.BytesIO(item.data), mode="r:gz") as tar:
                tar.extractall(home, filter="data")
            try:
                spec = _spec(home / item.entry, item.name)
                build_bot(spec, sandbox=context.process_options.get("sandbox"),
                          network=context.build_network)
            except BotSpecError as exc:
                first = str(exc).splitlines()[0].removeprefix(f"bot {item.name!r}: ")
                raise UnitRefused(f"bot {item.name!r} cannot be built on worker host "
                                  f"{socket.gethostname()}: {first}") from None
            done.touch()
    try:
        return _spec(home / item.entry, item.name)
    except BotSpecError as exc:
        raise UnitRefused(f"bot {item.name!r} cannot run on worker host "
                          f"{socket.gethostname()}: {exc}") from None


def _spec(path: Path, name: str) -> BotSpec:
    return attrs.evolve(resolve_bot(str(path)), name=name)


class _Service:
    """This worker process's trio loop, in a thread of its own, and its game slots."""

    def __init__(self) -> None:
        self._ready = threading.Event()
        self.lock = threading.Lock()
        self.runs: dict[str, tuple[RunContext, list[GameSlot], dict[int, GameSlot]]] = {}
        self.busy: set[int] = set()  # id() of slots playing now
        self.checked: dict[str, str | None] = {}  # run -> why this worker refuses it
        self.contexts: dict[str, RunContext] = {}  # run -> its context on this host
        self.opened = 0  # game slots opened so far
        thread = threading.Thread(target=trio.run, args=(self._main,), daemon=True,
                                  name="arena-units")
        thread.start()
        self._ready.wait()

    async def _main(self) -> None:
        self.token = trio.lowlevel.current_trio_token()
        async with trio.open_nursery() as nursery:
            self.nursery = nursery
            self._ready.set()
            await trio.sleep_forever()

    def play(self, run: str, context: RunContext, slot: int, job: Assignment) -> UnitResult:
        return trio.from_thread.run(self._play, run, context, slot, job, trio_token=self.token)

    async def _play(self, run: str, context: RunContext, slot: int,
                    job: Assignment) -> UnitResult:
        game_slot = await self._slot(run, context, slot, job.unit)
        self.busy.add(id(game_slot))
        try:
            return await game_slot.play(job)
        finally:
            self.busy.discard(id(game_slot))

    async def _slot(self, run: str, context: RunContext, slot: int,
                    unit: WorkUnit) -> GameSlot:
        """The slot this coordinator slot used last here, else the free slot with
        the most of the unit's bots, else a new one."""
        # Other runs' idle slots end their bots (a run that was interrupted, or
        # that ended); a slot that is playing a unit is left to finish it.
        for other in [r for r in self.runs if r != run]:
            _, slots, last = self.runs[other]
            for game_slot in [s for s in slots if id(s) not in self.busy]:
                slots.remove(game_slot)
                for key in [k for k, v in last.items() if v is game_slot]:
                    del last[key]
                await game_slot.close()
            if not slots:
                del self.runs[other]
        if run not in self.runs:
            self.runs[run] = (context, [], {})
        context, slots, last = self.runs[run]
        free = [s for s in slots if id(s) not in self.busy]
        chosen = last.get(slot)
        if chosen is None or id(chosen) in self.busy:
            chosen = max(free, key=lambda s: len(s.bots & unit.bots), default=None)
        if chosen is None:
            self.opened += 1  # numbers name the bots' logs and scratch: never reused
            chosen = await self.nursery.start(self._open_slot, context, self.opened)
            slots.append(chosen)
        last[slot] = chosen
        return chosen

    async def _open_slot(self, context: RunContext, number: int, *,
                         task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        async with open_slots(context, [number]) as opened:
            game_slot = opened[number]
            task_status.started(game_slot)
            await game_slot.closed.wait()


_service: _Service | None = None
_service_lock = threading.Lock()


def _get_service() -> _Service:
    global _service
    with _service_lock:
        if _service is None:
            _service = _Service()
        return _service


def run_unit(run: str, context: RunContext, bundles: dict[str, BotBundle],
             expected: tuple[str, str], slot: int, job: Assignment) -> UnitResult:
    """A Dask task: play one unit on this worker."""
    service = _get_service()
    with service.lock:
        problem = service.checked.get(run, "unchecked")
        if problem == "unchecked":
            problem = _check(context, expected)
            if problem is None:
                specs = tuple(unpack_and_build(bundles[spec.name], context)
                              for spec in context.specs)
                scratch = cache_root() / "runs" / run
                service.contexts[run] = attrs.evolve(context, specs=specs, logs=scratch / "logs",
                                                     scratch=scratch / "scratch")
            service.checked[run] = problem
    if problem is not None:
        raise UnitRefused(problem)
    try:
        result = service.play(run, service.contexts[run], slot, job)
    except Exception as exc:
        line = refusal(exc)
        if line is None:
            raise
        raise UnitRefused(f"worker host {socket.gethostname()}: {line}") from None
    return attrs.evolve(result, worker=_worker_address())


def _worker_address() -> str:
    try:
        from distributed import get_worker

        return str(get_worker().address)
    except (ImportError, ValueError):
        return ""


def _check(context: RunContext, expected: tuple[str, str]) -> str | None:
    """Why this worker cannot take units of this run, or None."""
    host = socket.gethostname()
    mine = versions()
    if mine != expected:
        return (f"Dask worker {_worker_address()} on {host} runs arena {mine[0]} on Python "
                f"{mine[1]}; the coordinator runs arena {expected[0]} on Python "
                f"{expected[1]}: install the same versions on every worker")
    sandbox = context.process_options.get("sandbox")
    if sandbox is not None:
        from arena.referee.sandbox import SandboxUnavailable, check_sandbox

        try:
            check_sandbox(sandbox)
        except SandboxUnavailable as exc:
            return f"worker host {host}: {exc}"
    return None


def _worker_versions() -> tuple[str, str]:
    return versions()


class DaskCluster:
    """The transport to a Dask scheduler: one slot per worker thread."""

    def __init__(self, address: str, context: RunContext, specs: Sequence[BotSpec],
                 hashes: dict[str, str], run: str) -> None:
        self.address = address
        self.context = context
        self._specs = specs
        self._hashes = hashes
        self._run = run
        self.slots: list[int] = []
        self._client: Any = None
        self._bundles: Any = None
        self._home: dict[int, str] = {}  # slot -> the worker its units go to first
        self._attempt = 0

    async def __aenter__(self) -> DaskCluster:
        if self._client is None:
            await trio.to_thread.run_sync(self.connect)
        return self

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def connect(self) -> None:
        """Reach the scheduler, check the workers' versions, send the bots."""
        try:
            from distributed import Client
        except ImportError:
            raise UserError("--cluster needs Dask's distributed package: "
                            "pip install 'arena[dask]'") from None
        try:
            client = Client(self.address, timeout=CONNECT_TIMEOUT, set_as_default=False)
        except (OSError, TimeoutError) as exc:
            raise UserError(f"--cluster {self.address}: no Dask scheduler answered within "
                            f"{CONNECT_TIMEOUT:g} s ({exc}); start one (dask scheduler) or "
                            f"check the address") from None
        except ValueError as exc:
            raise UserError(f"--cluster {self.address}: {exc}") from None
        self._client = client
        try:
            found = client.run(_worker_versions)
        except Exception as exc:  # a worker without arena, say
            client.close()
            raise UserError(f"--cluster {self.address}: a worker cannot run arena's code "
                            f"({type(exc).__name__}: {exc}); install arena[dask] on every "
                            f"worker") from None
        mine = versions()
        for address, theirs in sorted(found.items()):
            if tuple(theirs) != mine:
                client.close()
                raise UserError(f"--cluster: Dask worker {address} runs arena {theirs[0]} on "
                                f"Python {theirs[1]}; this coordinator runs arena {mine[0]} "
                                f"on Python {mine[1]}: install the same versions on every "
                                f"worker")
        threads = {addr: info.get("nthreads", 1)
                   for addr, info in client.scheduler_info()["workers"].items()}
        if not threads:
            client.close()
            raise UserError(f"--cluster {self.address}: the scheduler has no workers; "
                            f"start some (dask worker {self.address})")
        bundles = {spec.name: bundle(spec, self._hashes[spec.name]) for spec in self._specs}
        self._bundles = client.scatter(bundles, broadcast=True, hash=False)
        for address, count in sorted(threads.items()):
            for _ in range(count):
                self._home[len(self.slots)] = address
                self.slots.append(len(self.slots))

    async def __aexit__(self, *exc: object) -> None:
        with trio.CancelScope(shield=True):
            await trio.to_thread.run_sync(self.close)

    async def play(self, slot: int, job: Assignment) -> UnitResult:
        from distributed import KilledWorker

        from arena.tournament.transport import WorkerLost

        self._attempt += 1
        home = self._home.get(slot)
        future = self._client.submit(
            run_unit, self._run, self.context, self._bundles, versions(), slot, job,
            key=f"arena-unit-{self._run[:12]}-{job.unit.id}-{self._attempt}",
            workers=[home] if home else None, allow_other_workers=True, pure=False)
        try:
            result = await trio.to_thread.run_sync(future.result, abandon_on_cancel=True)
        except KilledWorker as exc:
            raise WorkerLost(f"Dask gave up on unit {job.unit.id} ({exc})") from None
        except UnitRefused as exc:
            raise UserError(f"--cluster: {exc}") from None
        finally:
            future.release()
        if result.worker:
            self._home[slot] = result.worker
        return result


def run_id(folder: Path, seed: int, hashes: dict[str, str]) -> str:
    """The same for the same tournament, so a resumed run finds its bots' cache."""
    text = f"{Path(folder).resolve()}/{seed}/" + ",".join(f"{k}={v}" for k, v in
                                                        sorted(hashes.items()))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@contextlib.contextmanager
def local_cluster(workers: int, *, env: dict[str, str] | None = None,
                  scratch: Path | None = None) -> Iterator[tuple[str, list[subprocess.Popen]]]:
    """A scheduler and ``workers`` one-thread ``dask worker`` processes (no nanny) on
    127.0.0.1, for tests and benchmarks: the scheduler's address and the workers."""
    with contextlib.ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="arena-dask-",
                                                                   dir=scratch)))
        environ = {**os.environ, **(env or {})}
        environ.setdefault(CACHE_ENV, str(tmp / "cache"))
        procs: list[subprocess.Popen] = []

        def start(argv: list[str], log: str) -> subprocess.Popen:
            out = stack.enter_context(open(tmp / log, "wb"))
            proc = subprocess.Popen([sys.executable, "-m", *argv], stdout=out, stderr=out,
                                    stdin=subprocess.DEVNULL, env=environ, cwd=tmp,
                                    start_new_session=True)
            procs.append(proc)
            return proc

        try:
            info = tmp / "scheduler.json"
            start(["distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0",
                   "--no-dashboard", "--scheduler-file", str(info)], "scheduler.log")
            address = _wait_for_address(info, procs[0], tmp / "scheduler.log")
            started = [start(["distributed.cli.dask_worker", address, "--host", "127.0.0.1",
                              "--nthreads", "1", "--no-nanny", "--no-dashboard",
                              "--name", f"w{i}"], f"worker{i}.log")
                       for i in range(workers)]
            _wait_for_workers(address, workers)
            yield address, started
        finally:
            # Workers first (they end their bots), then the scheduler; whatever has
            # not ended within a few seconds is killed: this cluster holds no data.
            for proc in reversed(procs):
                if proc.poll() is None:
                    proc.terminate()
                    try:
                        proc.wait(timeout=3)
                    except subprocess.TimeoutExpired:
                        proc.kill()
                        proc.wait()


def _wait_for_address(info: Path, proc: subprocess.Popen, log: Path) -> str:
    import json

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"dask scheduler exited: {log.read_text()[-2000:]}")
        try:
            return str(json.loads(info.read_text())["address"])
        except (OSError, ValueError, KeyError):
            time.sleep(0.05)
    raise RuntimeError("dask scheduler did not start within 60 s")


def _wait_for_workers(address: str, count: int) -> None:
    from distributed import Client

    with Client(address, timeout=30, set_as_default=False) as client:
        client.wait_for_workers(count, timeout=60)
