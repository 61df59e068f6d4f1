"""Running a batch: its jobs on a Dask cluster, its results streamed to a file.

The cluster is a ``LocalCluster`` of this machine's cores (worker processes of
one thread each: numba's kernels release the GIL only inside themselves, and
its threads would compete), or a running scheduler and its workers.  Each task
is submitted with retries; a task whose worker dies is run again elsewhere by
the scheduler, and one that kills worker after worker is split into its jobs,
so that only the job that kills them is lost, with an error line saying so.
Results are written as tasks finish, a line each, flushed; `--resume` reads
the ids already answered and asks only the others.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Hashable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._threads import usable_cores
from ..answers import strict
from ..errors import InputError
from .jobs import Job, Line, movingai_jobs, read_jobs, result_key, tasks
from .work import answer_task

__all__ = ["Summary", "run_batch"]

# The share of a worker's memory limit its battlefields and grids may hold.
CACHE_SHARE = 0.25
# Battlefields and grids a worker keeps when its memory is not limited.
CACHE_DEFAULT = 2**30
# How long to wait for the scheduler to answer, and for a first worker to join it.
CONNECT_SECONDS = 10
WORKER_SECONDS = 60
# Times a task is run again when it raises (a worker lost is rescheduled anyway).
RETRIES = 2


@dataclass
class Summary:
    """What a batch did.

    ``jobs`` counts the lines of the job file (or the jobs of a Moving AI folder),
    ``skipped`` those already answered in the results (``resume``), ``answered``
    those answered now, ``failed`` the error lines among all of them (before and
    now); ``scenarios`` and ``matched`` total the Moving AI jobs' results.
    """

    jobs: int = 0
    skipped: int = 0
    answered: int = 0
    failed: int = 0
    scenarios: int = 0
    matched: int = 0
    seconds: float = 0.0
    workers: int = 0

    def line(self, out: str) -> str:
        """One line for the user."""
        rate = self.answered / self.seconds if self.seconds > 0 else 0.0
        text = (f"{self.jobs} jobs: {self.answered} answered in {self.seconds:.1f} s "
                f"({rate:.1f} jobs/s"
                + (f" on {self.workers} worker(s))" if self.workers else ")")
                + (f", {self.skipped} already in {out}" if self.skipped else "")
                + f"; {self.failed} failed")
        if self.scenarios:
            text += (f"; Moving AI: {self.matched} of {self.scenarios} scenarios match the "
                     "optimal length")
        return text + f"; results in {out}"


def _tally(summary: Summary, line: dict, movingai: bool) -> None:
    """Count a result line in ``summary``."""
    if "error" in line:
        summary.failed += 1
    elif movingai:
        summary.scenarios += line["result"]["scenarios"]
        summary.matched += line["result"]["matched"]


def _answered(out: Path) -> dict[Hashable, dict]:
    """The lines of a results file by what they answer (`result_key`).  A last line
    cut short (the batch was killed while writing it) is cut off the file.

    Raises
    ------
    InputError
        A whole line of the file is not a result line.
    """
    try:
        data = out.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise InputError(f"cannot read {str(out)!r}: {exc.strerror or exc}") from None
    *whole, partial = data.split(b"\n")
    if partial:
        with open(out, "r+b") as f:
            f.truncate(len(data) - len(partial))
    found: dict[Hashable, dict] = {}
    for n, text in enumerate(whole, start=1):
        try:
            line = json.loads(text)
            if not isinstance(line, dict) or not ({"result", "error"} & set(line)):
                raise ValueError("not an object with a result or an error")
        except ValueError:
            raise InputError(f"{out}: line {n} is not a result line of engine batch; "
                             "not resuming over it") from None
        found[result_key(line)] = line
    return found


@contextmanager
def _deaf_to_interrupts() -> Iterator[None]:
    """Processes started in this block ignore Ctrl-C (SIGINT), which only this one
    handles: it stops the cluster itself, and the workers say nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


@contextmanager
def _quiet_callbacks() -> Iterator[None]:
    """distributed's and tornado's logs silenced (jobs' failures are in their result
    lines): a Ctrl-C raises in whichever of distributed's waits it lands in, and
    the cluster's loop thread then logs the cancelled callbacks and the keys it
    could not gather beside the command's one line "interrupted".  Interrupted,
    they stay silenced: that thread may log after this has returned, while the
    command prints its line and ends.  (distributed sets its logs' levels when
    first imported, so it is imported first.)"""
    import distributed  # noqa: F401

    names = ["distributed", "tornado", *(n for n in logging.root.manager.loggerDict
                                         if n.startswith(("distributed.", "tornado.")))]
    logs = [logging.getLogger(name) for name in names]
    before = [log.level for log in logs]
    for log in logs:
        log.setLevel(logging.CRITICAL + 1)
    try:
        yield
    except KeyboardInterrupt:
        raise
    except BaseException:
        for log, level in zip(logs, before, strict=True):
            log.setLevel(level)
        raise
    for log, level in zip(logs, before, strict=True):
        log.setLevel(level)


@contextmanager
def _client(scheduler: str | None, workers: int | None) -> Iterator[Any]:
    """A Dask client: of a local cluster of ``workers`` processes, or of the
    scheduler at ``scheduler``."""
    with _quiet_callbacks():
        yield from _connect(scheduler, workers)


def _connect(scheduler: str | None, workers: int | None) -> Iterator[Any]:
    """`_client`'s body."""
    from distributed import Client, LocalCluster

    if scheduler is None:
        # One thread a worker, and numba's threads too (NUMBA_NUM_THREADS).
        with _deaf_to_interrupts():
            cluster = LocalCluster(n_workers=workers or usable_cores(), threads_per_worker=1,
                                   processes=True, host="127.0.0.1", dashboard_address=None,
                                   # no dashboard; its HTTP server on any free port
                                   scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
                                   # the workers' own logs too: a worker whose scheduler
                                   # went with a Ctrl-C logs its failed heartbeat
                                   silence_logs=logging.CRITICAL,
                                   env={"NUMBA_NUM_THREADS": "1"})
        with cluster, Client(cluster) as client:
            yield client
        return
    try:
        client = Client(scheduler, timeout=f"{CONNECT_SECONDS}s")
    except (OSError, TimeoutError, ValueError) as exc:
        raise InputError(f"cannot reach the Dask scheduler at {scheduler}: "
                         f"{' '.join(str(exc).split())[:200]}") from None
    except MemoryError:  # Dask read what answered as the length of a message, and a huge one
        raise InputError(f"cannot reach the Dask scheduler at {scheduler}: what answers "
                         "there is not a Dask scheduler") from None
    with client:
        try:
            client.wait_for_workers(1, timeout=WORKER_SECONDS)
        except TimeoutError:
            raise InputError(f"no Dask worker joined the scheduler at {scheduler} within "
                             f"{WORKER_SECONDS} s (start some with `dask worker "
                             f"{scheduler}`)") from None
        yield client


def _cache_bytes(client: Any) -> int:
    """What each worker's battlefields may hold: `CACHE_SHARE` of the smallest
    worker's memory limit."""
    limits = [w.get("memory_limit") or 0
              for w in client.scheduler_info(n_workers=-1)["workers"].values()]
    limits = [m for m in limits if m > 0]
    return int(min(limits) * CACHE_SHARE) if limits else CACHE_DEFAULT


def _lost(exc: BaseException) -> str:
    """The error line of a job whose task could not be run."""
    from distributed.scheduler import KilledWorker

    if isinstance(exc, KilledWorker):
        return ("the workers answering this job died each time (out of memory, or "
                "killed); it was tried on its own")
    what = " ".join(str(exc).split())[:200]
    return f"internal error: {type(exc).__name__}: {what} (please report it)"


def _stream(client: Any, todo: list[Job], write, bar) -> None:
    """Answer ``todo`` on ``client``'s cluster, each task's lines handed to
    ``write(job, line)`` as the task finishes."""
    from distributed import as_completed
    from distributed.scheduler import KilledWorker

    workers = sum(client.nthreads().values())
    budget = _cache_bytes(client)
    running: dict[Any, list[Job]] = {}

    def submit(task: list[Job]) -> Any:
        future = client.submit(answer_task, task, budget, pure=False, retries=RETRIES)
        running[future] = task
        return future

    done = as_completed([submit(t) for t in tasks(todo, workers)], loop=client.loop,
                        with_results=True, raise_errors=False)
    try:
        for future, result in done:
            task = running.pop(future)
            if future.status == "error":
                exc = future.exception()
                if isinstance(exc, KilledWorker) and len(task) > 1:
                    done.update([submit([job]) for job in task])  # find the job that kills
                    continue
                result = [{"id": job.id, "error": _lost(exc)} for job in task]
            for job, line in zip(task, result, strict=True):
                write(job, line)
            bar.update(len(task))
    finally:  # interrupted: nothing left waiting on the cluster as it stops
        done.clear()
        client.cancel(list(running))


def run_batch(jobs: str | os.PathLike | None, out: str | os.PathLike, *,
              movingai: str | os.PathLike | None = None, scheduler: str | None = None,
              workers: int | None = None, resume: bool = False,
              progress: bool | None = None) -> Summary:
    """Answer every job of a JSON Lines file on a Dask cluster, writing one result
    line per job to ``out`` as they finish.

    Parameters
    ----------
    jobs : path, optional
        The job file (`engine.batch.jobs.read_jobs`); or None with ``movingai``.
    out : path
        The results, JSON Lines: ``{"id", "result"}`` or ``{"id", "error"}`` each.
    movingai : path, optional
        Instead of a job file: every Moving AI ``X.map`` with its ``X.map.scen``
        in this folder (`engine.batch.jobs.movingai_jobs`).
    scheduler : str, optional
        A running Dask scheduler (``tcp://HOST:PORT``); default a local cluster.
    workers : int, optional
        The local cluster's worker processes (default: this machine's cores).
    resume : bool
        Continue ``out``: skip the jobs it answers.  Without it, an ``out`` that
        holds anything is refused.
    progress : bool, optional
        A progress bar on stderr (default: when stderr is a terminal).

    Returns
    -------
    Summary

    Raises
    ------
    InputError
        A job file that cannot be read or repeats an id, an ``out`` that holds
        results without ``resume`` (or is not a results file), a scheduler that
        cannot be reached or has no workers.
    """
    from tqdm import tqdm

    started = time.perf_counter()
    out = Path(out)
    entries = movingai_jobs(movingai) if movingai is not None else read_jobs(jobs)
    if out.is_dir():
        raise InputError(f"{str(out)!r} is a folder: give the results file's name")
    if not resume and out.exists() and out.stat().st_size > 0:
        raise InputError(f"{str(out)!r} already holds results: --resume continues it, or "
                         "remove it")
    before = _answered(out) if resume else {}
    summary = Summary(jobs=len(entries))
    for entry in entries:
        if entry.key in before:
            summary.skipped += 1
            _tally(summary, before[entry.key], entry.command == "movingai")
    fresh = not out.exists()
    try:
        sink = open(out, "a", encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot write {str(out)!r}: {exc.strerror or exc}") from None

    def write(entry: Job | Line, line: dict) -> None:
        sink.write(json.dumps(strict(line), allow_nan=False) + "\n")
        sink.flush()
        summary.answered += 1
        _tally(summary, line, entry.command == "movingai")

    todo = [e for e in entries if isinstance(e, Job) and e.key not in before]
    with sink:
        try:
            # The cluster first: a batch refused for want of one writes nothing.
            with _client(scheduler, workers) if todo else nullcontext() as client:
                for entry in entries:
                    if isinstance(entry, Line) and entry.key not in before:
                        write(entry, entry.result())
                show = sys.stderr.isatty() if progress is None else progress
                with tqdm(total=len(todo), unit="job", disable=not show, file=sys.stderr,
                          dynamic_ncols=True, desc="engine batch") as bar:
                    if client is not None:
                        summary.workers = sum(client.nthreads().values())
                        _stream(client, todo, write, bar)
        except InputError:
            if fresh and sink.tell() == 0:
                out.unlink(missing_ok=True)
            raise
    summary.seconds = time.perf_counter() - started
    return summary
