"""A cold start's longest compile, done in a helper process beside the command.

On a first run numba compiles each kernel as the command first calls it, one
after another on one core.  The command line says, before it starts, which of
its kernels take longest (`expect`): on the first compile of the run a helper
process (``python -m engine._coldstart``) starts compiling those, by their
signatures in `KERNELS`, into numba's disk cache, while this process goes on
with the rest.  When this process reaches one of them still uncompiled, it
first compiles the kernels it will need after it (``ahead``), then waits for the
helper and loads the kernel from the cache.  A warm run compiles nothing and
starts no helper; a helper that fails or compiles the wrong signature only
costs this process the compile it would have done anyway.
"""

from __future__ import annotations

import atexit
import importlib
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Sequence

from numba import types

__all__ = ["KERNELS", "compile_kernel", "describe", "enable", "expect", "signature"]

# The kernels a helper compiles, or this process ahead: module, function and the one
# signature the engine calls it with (`signature`'s notation; `describe` writes it).
KERNELS: dict[str, tuple[str, str, str]] = {
    "search_labels": (
        "engine.search._kernels.labels", "search_labels",
        "f8[:] f8[:] i4[:] f8[:] i8 b1 i8[:] i8[:] f8[:] f8[:] f8[:] i8[:] i8[:] "
        "i8[:] f8[:] f8 i8[:] i8[:] i8[:] f8[:] i8 f8[:] i1[:] u1[:] f8[:] f8[:] f8[:] i8[:] "
        "i8[:] i8 i8 f8 f8 b1 f8[:] i4[:] f8[:] i4[:] f4[:,:] f4[:,:] f8[:] i4[:] i4[:] i1[:] "
        "i1[:] f8[:,:] f8[:,:] i4[:] i1[:] i4[:] i4[:,:] f8[:] i4[:]"),
    "trace_labels": ("engine.search._kernels.labels", "trace_labels", "i4[:] i4[:] i8"),
    "walk_path": (
        "engine.search._kernels.trail", "walk_path",
        "f8[:,:] f8 f8[:] f8[:] i4[:] f8[:] f8[:] f8[:] f8[:] i4[:] f8[:] f8[:] "
        "i8[:] i8 i8 f8 i8 f8[:,:] i8[:,:]"),
    **{name: (
        "engine.search._kernels.astar", name,
        "(f8[:] i8 i8[:] i8[:] f8[:] i8[:] i8[:] i8[:] f8[:] i8 f8[:] i4[:] u1[:] f8[:] i8[:] "
        "i8[:] i8 i8 f8 f8 f8[:] i1[:] i4[:] i4[:,:] f4[:,:] f4[:,:])",
    ) for name in ("astar_table", "reach_table")},
    "theta_search": (
        "engine.search._kernels.anyangle", "theta_search",
        "f8[:] f8[:] i4[:] f8[:] f8[:] f8[:] i4[:] f8[:] f8 i8 f8 i8 f8 f8 i8 f8 f8 f8 "
        "i4[:] f8[:] i8[:,:] i4[:] f8[:] f8[:] i4[:] u1[:] f8[:] i4[:] i4[:] i4[:] i8[:] "
        "i8[:]"),
    "many_theta": (
        "engine.search._kernels.many", "many_theta",
        "i8 i8 f8[:] f8[:] i4[:] f8[:] f8[:] f8[:] i4[:] f8[:] f8 i8 f8 i8[:] f8[:,:] f8 i4[:] "
        "f8[:] i8[:,:] i4[:] f8[:] f8[:] i4[:] u1[:] f8[:] i4[:] i4[:] i4[:] i8[:] i8[:] i8[:] "
        "f8[:] i8[:] i8[:] i8[:]"),
    "many_trails": (
        "engine.search._kernels.many", "many_trails",
        "i8 i8 f8[:] f8[:] i4[:] f8[:] f8[:] f8[:] i4[:] f8[:] f8 i8 f8 f8 i8[:] f8[:,:] "
        "f8[:,:] f8[:,:,:] f8 b1 i8[:,:] i4[:] "
        "f8[:] i8[:] f8[:] i8[:] i8[:] i8[:] (f8[:] i4[:] i4[:] i1[:] i1[:] f8[:,:] f8[:,:] "
        "i4[:] i1[:] i4[:] i4[:,:] f8[:] i4[:]) i8[:] i8 i8[:] f8[:] i8[:] i8[:] i8[:] i8[:] "
        "i8[:] f8[:] i8[:] f8[:] f8[:] i8[:] i8[:]"),
    "straighten": (
        "engine.search._kernels.corners", "straighten",
        "f8[:] f8[:] i8 i8 f8[:] f8[:] i4[:] f8[:] f8[:] f8[:] i4[:] i8 f8 i8 b1 b1"),
    "field_band": (
        "engine.search._kernels.flow", "field_band",
        "i8 i8 f8[:] f8[:] i4[:] f8[:] i8 b1 i8[:] i8[:] f8[:] f8[:] f8[:] i8[:] "
        "i8[:] i8[:] f8[:] i8 u1[:] f8[:] f8[:] f8[:] i4[:] f8[:] i8[:] i8[:] i8[:] f8 i8 "
        "i8[:] f8[:] i1[:] u4[:,:,:] i8[:,:,:] i1[:,:,:] f8[:,:,:] i8[:,:] i8[:] i4[:]"),
    "field_rest": (
        "engine.search._kernels.flow", "field_rest",
        "f8[:] f8[:] i4[:] f8[:] i8 b1 i8[:] i8[:] f8[:] f8[:] f8[:] i8[:] i8[:] "
        "i8[:] f8[:] i8 u1[:] f8[:] f8[:] f8[:] i4[:] f8[:] i8[:] i8[:] f8 f8[:] i1[:] "
        "u4[:,:,:] i8[:,:,:] i1[:,:,:] f8[:,:,:] i8[:,:] i4[:]"),
}

_DTYPES = {"f8": types.float64, "f4": types.float32, "i8": types.int64, "i4": types.int32,
           "i1": types.int8, "u4": types.uint32, "u1": types.uint8, "b1": types.boolean}
_CODES = {t: code for code, t in _DTYPES.items()}


def signature(text: str) -> tuple[types.Type, ...]:
    """The argument types written in ``text``: a number type per word (``f8`` float64,
    ``i4`` int32, ``u1`` uint8, ``b1`` bool, ...), ``[:]`` after it for a C-ordered
    array (``[:,:]`` for two dimensions, and so on), ``( ... )`` a tuple."""
    words = iter(text.replace("(", " ( ").replace(")", " ) ").split())

    def until_close() -> list[types.Type]:
        out: list[types.Type] = []
        for word in words:
            if word == ")":
                return out
            if word == "(":
                out.append(types.Tuple(until_close()))
                continue
            name, _, dims = word.partition("[")
            out.append(types.Array(_DTYPES[name], dims.count(":"), "C") if dims
                       else _DTYPES[name])
        return out

    return tuple(until_close())


def describe(sig: tuple[types.Type, ...]) -> str:
    """`signature`'s notation for the argument types ``sig``."""
    def word(t: types.Type) -> str:
        if isinstance(t, types.BaseTuple):
            return "(" + " ".join(word(x) for x in t.types) + ")"
        if isinstance(t, types.Array):
            if t.layout != "C" or not t.mutable:
                raise ValueError(f"{t}: only writable C-ordered arrays have a word")
            return f"{_CODES[t.dtype]}[{','.join(':' * t.ndim)}]"
        return _CODES[t]
    return " ".join(word(t) for t in sig)


def _dispatcher(name: str):
    module, function, _ = KERNELS[name]
    return getattr(importlib.import_module(module), function)


def compile_kernel(name: str) -> None:
    """Compile the kernel ``name`` of `KERNELS` for its signature (or load it from
    numba's disk cache)."""
    _dispatcher(name).compile(signature(KERNELS[name][2]))


class _Helper:
    """The helper process and the kernels it has said it finished."""

    def __init__(self, names: list[str]) -> None:
        import numba

        env = dict(os.environ, NUMBA_CACHE_DIR=str(numba.config.CACHE_DIR))
        self.process = subprocess.Popen(
            [sys.executable, "-m", "engine._coldstart", *names], env=env,
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True)
        self.said: queue.Queue[str | None] = queue.Queue()
        self.done: set[str] = set()
        threading.Thread(target=self._listen, daemon=True).start()
        atexit.register(self.stop)

    def _listen(self) -> None:
        for line in self.process.stdout:
            self.said.put(line.strip())
        self.said.put(None)  # it has ended

    def wait_for(self, name: str, timeout: float = 600.0) -> bool:
        """Wait until the helper has compiled ``name`` (True), or ended or taken
        ``timeout`` seconds without it (False)."""
        deadline = time.monotonic() + timeout
        while name not in self.done:
            try:
                said = self.said.get(timeout=max(deadline - time.monotonic(), 0.0))
            except queue.Empty:
                return False
            if said is None:
                self.said.put(None)
                return False
            self.done.add(said)
        return True

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()


class _Plan:
    """What this process expects to compile: by the helper, and ahead of waiting."""

    def __init__(self) -> None:
        self.enabled = False
        self.helper_names: list[str] = []
        self.ahead: list[str] = []
        self.helper: _Helper | None = None
        self.cold = False  # a kernel has been compiled in this process

    def start(self) -> None:
        """Start the helper, if there is a plan and it has not started."""
        if self.helper is None and self.helper_names:
            self.helper = _Helper(self.helper_names)

    def wait_for(self, name: str) -> bool:
        """Compile the kernels ahead (once), then wait for the helper's ``name``."""
        self.start()
        ahead, self.ahead = self.ahead, []
        for other in ahead:
            compile_kernel(other)
        return self.helper is not None and self.helper.wait_for(name)


_PLAN = _Plan()


def enable() -> None:
    """Let `expect` start a helper on a cold start (the command line does; a
    Python program calling the engine keeps to one process)."""
    from numba.core import event

    if _PLAN.enabled:
        return

    class _FirstCompile(event.Listener):
        def on_start(self, ev: event.Event) -> None:
            if not _PLAN.cold:
                _PLAN.cold = True
                _PLAN.start()

        def on_end(self, ev: event.Event) -> None:
            pass

    _PLAN.enabled = True
    event.register("numba:compile", _FirstCompile())


def expect(helper: Sequence[str], ahead: Sequence[str] = ()) -> None:
    """Say which kernels (names in `KERNELS`) this run will compile longest
    (``helper``: a helper process compiles them, once a first compile shows the
    cache is cold) and which it needs after those (``ahead``: this process
    compiles them while it waits).  Does nothing unless `enable` was called, or
    once a plan is set."""
    if not _PLAN.enabled or _PLAN.helper_names:
        return
    hooked = []
    for name in helper:
        cache = getattr(_dispatcher(name), "_cache", None)
        if cache is None or type(cache).__name__ == "NullCache":
            continue  # numba's cache is off: a helper cannot pass anything on
        original = cache.load_overload

        def load(sig, target_context, name=name, original=original):
            cres = original(sig, target_context)
            if cres is None and _PLAN.wait_for(name):
                cres = original(sig, target_context)
            return cres

        cache.load_overload = load
        hooked.append(name)
    _PLAN.helper_names, _PLAN.ahead = hooked, list(ahead)
    if _PLAN.cold:
        _PLAN.start()


def _main(names: list[str]) -> int:
    """The helper: compile each kernel named, saying its name on stdout when done."""
    for name in names:
        compile_kernel(name)
        print(name, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
