"""Threads for the kernels that release the GIL: one pool, kept for the process.

numba's ``parallel=True`` runs a loop on numba's own threads, but compiling a
parallel kernel costs seconds more than a plain one; a kernel compiled with
``nogil=True`` and called on these threads runs the same loop as fast.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

import numba

__all__ = ["on_threads", "thread_count", "usable_cores"]

_LOCK = threading.Lock()
_POOL: list[ThreadPoolExecutor] = []


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system has one)."""
    cores = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    return len(cores) if cores else os.cpu_count() or 1


def thread_count() -> int:
    """The threads a kernel runs on: numba's setting (``NUMBA_NUM_THREADS``, or
    `numba.set_num_threads` on this thread)."""
    return numba.get_num_threads()


def on_threads(work: Callable[[int], object], threads: int) -> None:
    """Run ``work(t)`` for every t below ``threads`` at once, and wait for all.

    t = 0 runs on the calling thread, the others on the pool.  ``work`` must
    release the GIL (a ``nogil`` kernel) to run in parallel, and its calls must
    not wait for each other: while the pool is busy with another caller's work
    they queue.  An exception in any is raised once all have finished.
    """
    if threads <= 1:
        work(0)
        return
    with _LOCK:
        if not _POOL:
            _POOL.append(ThreadPoolExecutor(numba.config.NUMBA_NUM_THREADS, "engine-kernel"))
    rest: list[Future] = [_POOL[0].submit(work, t) for t in range(1, threads)]
    try:
        work(0)
    finally:
        for f in rest:
            f.exception()  # wait, whatever happened on this thread
    for f in rest:
        f.result()
